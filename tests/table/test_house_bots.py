"""Bots play house-game rounds through gRPC with the library's basic strategy (issue 16).

Per game: every pool is conserved (the bots' wallets + house bank + jackpot never change in total,
and the cashier audit balances), every round verifies against its revealed seed with the cards it
showed, and the observed return to player lies within the 99% interval the simulator gives for
that strategy and that many rounds. `POKER_HOUSE_BOT_ROUNDS` sets the rounds per game (CI: 300;
the issue's full run: 2000).
"""

from __future__ import annotations

import asyncio
import math
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc
import pytest

from house_games import (
    BoxWager,
    CasinoHoldemRound,
    CasinoHoldemSettings,
    RussianPhase,
    RussianPokerRound,
    RussianPokerSettings,
    assess_hand,
)
from house_games.basic_strategy import (
    holdem_should_call,
    russian_cards_to_exchange,
    russian_should_buy_game,
    russian_should_play,
)
from house_games.simulate import simulate_casino_holdem, simulate_russian_poker
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from tests.table.conftest import ADMIN, ServiceProcess, TableWorld, table_world, unique, wait_for
from tests.table.house_players import (
    BUY_GAME,
    CALL,
    EXCHANGE,
    FOLD,
    TAKE_ANTE,
    HouseClient,
    fund_house,
    house_balances,
    house_room,
    revealed_deck,
)

# A whole cluster for a minute or more: the whole-cluster tier (`make test-cluster`; CI runs it after `make test`).
pytestmark = pytest.mark.cluster

T = TypeVar("T")
ROUNDS = int(os.environ.get("POKER_HOUSE_BOT_ROUNDS", "300"))
BOTS = 6
ANTE = 10
FUNDS = 200_000
SIMULATED = 10_000
Z95, Z99, Z9999 = 1.959963984540054, 2.5758293035489004, 3.890591886413094
# The check is the 99% interval, at the full count (POKER_HOUSE_BOT_ROUNDS=2000). The decks
# are random, so a 99% check fails by chance once in a hundred runs per game: CI's smaller run uses
# the 99.99% interval instead (the exact per-round check above it is what proves the payouts).
FULL_COUNT = 2000
Z_CHECK = Z99 if ROUNDS >= FULL_COUNT else Z9999


@dataclass
class Played:
    round_id: str
    commitment: str
    staked: int
    paid_out: int
    dealt: list[tuple[int, int]] = field(default_factory=list)  # (deck position, card)


@pytest.fixture
async def bot_world(backends: dict[str, ServiceProcess], tmp_path: Path) -> AsyncIterator[TableWorld]:
    async with table_world(
        backends, house_journal=str(tmp_path / "journal.jsonl"), house_decision_seconds=60.0
    ) as built:
        yield built


async def retrying(call: Callable[[str], Awaitable[T]]) -> T:
    """A client's retry: UNAVAILABLE (a dependency slow on a loaded machine) is sent again with the
    same request id, which the table answers idempotently."""
    request_id = uuid.uuid4().hex
    for _ in range(50):
        try:
            return await call(request_id)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            await asyncio.sleep(0.2)
    raise AssertionError("the table stayed unavailable")


async def bet(client: HouseClient) -> table_pb2.HouseRoundView:
    reply = await retrying(lambda rid: client.bet(table_pb2.HouseBox(box=1, ante=ANTE), request_id=rid))
    return reply.round


async def decide(
    client: HouseClient, view: table_pb2.HouseRoundView, kind: int, indexes: tuple[int, ...] = ()
) -> table_pb2.HouseRoundView:
    return await retrying(lambda rid: client.decide(view, 1, kind, indexes=indexes, request_id=rid))


async def play_holdem(client: HouseClient) -> Played:
    view = await bet(client)
    hole = [c.index for c in view.boxes[0].cards]
    flop = [c.index for c in view.board]
    view = await decide(client, view, CALL if holdem_should_call(hole, flop) else FOLD)
    view = await settled(client, view)
    dealer = [c.index for c in view.dealer_cards]
    board = [c.index for c in view.board]
    dealt = list(enumerate(hole + dealer + board))
    return Played(view.round_id, view.seed_commitment, view.staked, view.paid_out, dealt)


async def settled(client: HouseClient, view: table_pb2.HouseRoundView) -> table_pb2.HouseRoundView:
    """The round once the cashier acknowledged its settlement (it may wait for a slow cashier)."""
    while view.phase == "SETTLING":
        await asyncio.sleep(0.05)
        view = (await retrying(lambda rid: client.snapshot())).house.round
    assert view.phase == "COMPLETE", view
    return view


async def play_russian(client: HouseClient) -> Played:
    view = await bet(client)
    first = [c.index for c in view.boxes[0].cards]
    dealt = list(enumerate(first))
    upcard = (5, view.dealer_cards[0].index)
    discard = russian_cards_to_exchange(assess_hand(first))
    position = 10
    if discard:
        indexes = tuple(first.index(card) for card in discard)
        view = await decide(client, view, EXCHANGE, indexes)
        now = [c.index for c in view.boxes[0].cards]
        # The new cards come from the next deck positions, in the order of the box's cards.
        for i in sorted(indexes):
            dealt.append((position, now[i]))
            position += 1
    hand = assess_hand([c.index for c in view.boxes[0].cards])
    view = await decide(client, view, CALL if russian_should_play(hand) else FOLD)
    bought = False
    if view.phase == "NO_GAME_CHOICES":
        bought = russian_should_buy_game(hand)
        view = await decide(client, view, BUY_GAME if bought else TAKE_ANTE)
    view = await settled(client, view)
    if bought:
        dealt.append(upcard)
    else:
        dealt += [(5 + i, c.index) for i, c in enumerate(view.dealer_cards)]
    return Played(view.round_id, view.seed_commitment, view.staked, view.paid_out, dealt)


def simulated_round(game: str, deck: list[int]) -> int:
    """The player's net of one round as the simulator plays it (same strategy) on `deck`."""
    if game == "holdem":
        holdem = CasinoHoldemRound(deck, [BoxWager(1, "sim", ANTE)], CasinoHoldemSettings())
        if holdem_should_call(holdem.hole_cards(1), holdem.flop):
            holdem.call(1)
        else:
            holdem.fold(1)
        return holdem.settle().boxes[0].player_delta
    russian = RussianPokerRound(deck, [BoxWager(1, "sim", ANTE)], RussianPokerSettings())
    discard = russian_cards_to_exchange(russian.hand(1))
    if discard:
        russian.exchange(1, discard)
    if russian_should_play(russian.hand(1)):
        russian.play(1)
    else:
        russian.fold(1)
    if russian.phase is RussianPhase.NO_GAME_CHOICES:
        if russian_should_buy_game(russian.hand(1)):
            russian.buy_game(1)
        else:
            russian.take_ante(1)
    return russian.settle().boxes[0].player_delta


def simulated_interval(game: str, rounds: int) -> tuple[float, float, float]:
    """The simulator's RTP for the basic strategy and its interval (99%, or 99.99% below the full
    count) for `rounds` observed rounds (the spread of `rounds` rounds, widened by the simulation's
    own uncertainty)."""
    if game == "holdem":
        tally = simulate_casino_holdem(SIMULATED, 2026, CasinoHoldemSettings(), ANTE)
    else:
        tally = simulate_russian_poker(SIMULATED, 2026, RussianPokerSettings(), ANTE, False, 0, 0)
    rtp, half95 = tally.return_to_player()
    sim_half99 = half95 * Z_CHECK / Z95
    observed_half99 = sim_half99 * math.sqrt(SIMULATED / rounds)
    half = math.hypot(sim_half99, observed_half99)
    return rtp, rtp - half, rtp + half


@pytest.mark.parametrize("game", ["holdem", "russian"])
async def test_bots_play_house_rounds_with_the_basic_strategy(bot_world: TableWorld, game: str) -> None:
    world = bot_world
    variant = (
        common_pb2.GAME_VARIANT_CASINO_HOLDEM if game == "holdem" else common_pb2.GAME_VARIANT_RUSSIAN_POKER
    )
    await fund_house(world, 50_000_000)
    await fund_house(world, 10_000, jackpot=True)
    table_id = world.add_room(house_room(unique(f"bots-{game}"), variant))
    bots = [HouseClient(unique("bot"), table_id, world.table, variant) for _ in range(BOTS)]
    for bot in bots:
        await world.fund(bot.player_id, FUNDS)
    bank_before = sum(await house_balances(world))
    play = play_holdem if game == "holdem" else play_russian
    played: list[Played] = []

    async def run(bot: HouseClient, count: int) -> None:
        for _ in range(count):
            played.append(await play(bot))

    share = [ROUNDS // BOTS + (1 if i < ROUNDS % BOTS else 0) for i in range(BOTS)]
    await asyncio.gather(*(run(bot, n) for bot, n in zip(bots, share, strict=True)))
    assert len(played) == ROUNDS

    # Conservation: wallets + house bank + jackpot as before, and the audit balances.
    wallets = sum([await world.wallet(bot.player_id) for bot in bots])
    assert wallets + sum(await house_balances(world)) == FUNDS * BOTS + bank_before

    # Rounds refunded after an outage (if any) net zero once their refunds are through.
    async def wallets_match() -> bool:
        now = sum([await world.wallet(bot.player_id) for bot in bots])
        return now - FUNDS * BOTS == sum(p.paid_out - p.staked for p in played)

    await wait_for(wallets_match, within=30)
    audit = await world.audit()
    assert audit.balanced

    # Every round: recorded, revealed, and its cards are the revealed deck's at their positions.
    await wait_for(lambda: all(p.round_id in world.history.hands for p in played), within=60)
    for p in played:
        verdict = await world.fairness.VerifyHand(
            fairness_pb2.VerifyHandRequest(
                hand_id=p.round_id,
                shown_commitment=p.commitment,
                dealt_cards=[fairness_pb2.DealtCard(position=pos, card_index=card) for pos, card in p.dealt],
            ),
            metadata=ADMIN,
        )
        assert verdict.verdict == fairness_pb2.VERDICT_PASS, (p.round_id, verdict.first_mismatch)
        # The simulator's own round on the revealed deck gives the player exactly what the table paid.
        deck = await revealed_deck(world, p.round_id)
        assert simulated_round(game, deck) == p.paid_out - p.staked, p.round_id

    # Return to player per chip staked within the simulator's interval for this many rounds.
    observed = sum(p.paid_out for p in played) / sum(p.staked for p in played)
    expected, low, high = simulated_interval(game, ROUNDS)
    print(
        f"{game}: {ROUNDS} rounds, RTP {observed:.4f}; simulator {expected:.4f}, "
        f"{'99' if Z_CHECK == Z99 else '99.99'}% [{low:.4f}, {high:.4f}]"
    )
    assert low <= observed <= high
