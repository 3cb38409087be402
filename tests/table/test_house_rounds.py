"""House-game rounds through gRPC (issue 16): the cashier on PostgreSQL and fairness as processes, the
table on port 0. Every finished round is checked against the library's settlement for the deck
fairness revealed, the wallet change against the settlement, and the cashier audit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.table.v1 import table_pb2
from service_runtime.testing import reason_of
from tests.table.conftest import ServiceProcess, TableWorld, table_world, unique, wait_for
from tests.table.house_players import (
    BUY_GAME,
    CALL,
    EXCHANGE,
    FOLD,
    INSURE,
    SIXTH,
    TAKE_ANTE,
    HouseClient,
    fund_house,
    house_balances,
    house_room,
    library_settlement,
    lines_of,
    revealed_deck,
    view_lines,
)

HOLDEM = common_pb2.GAME_VARIANT_CASINO_HOLDEM
RUSSIAN = common_pb2.GAME_VARIANT_RUSSIAN_POKER
FUNDS = 1_000_000


@pytest.fixture
async def house_world(backends: dict[str, ServiceProcess], tmp_path: Path) -> AsyncIterator[TableWorld]:
    async with table_world(
        backends, house_journal=str(tmp_path / "journal.jsonl"), house_decision_seconds=30.0
    ) as built:
        yield built


async def player_at(world: TableWorld, variant: int, funds: int = FUNDS, **room: Any) -> HouseClient:
    table_id = world.add_room(house_room(unique("house"), variant, **room))
    player = HouseClient(unique("hp"), table_id, world.table, variant)
    if funds:
        await world.fund(player.player_id, funds)
    return player


async def finish(
    world: TableWorld, client: HouseClient, round_view: table_pb2.HouseRoundView, before: int
) -> None:
    """The round settled: lines as the library settles the revealed deck, the wallet moved by exactly
    the settlement, the record in history, the pool balanced."""
    assert round_view.phase == "COMPLETE", round_view
    deck = await revealed_deck_when_ready(world, round_view.round_id)
    settlement = library_settlement(client.variant, deck, client.player_id, client.boxes, client.sent)
    assert view_lines(round_view) == lines_of(settlement)
    after = await world.wallet(client.player_id)
    assert after - before == settlement.player_deltas()[client.player_id]
    assert round_view.paid_out - round_view.staked == after - before
    await wait_for(lambda: round_view.round_id in world.history.hands)
    record = world.history.hands[round_view.round_id]
    assert record.seats[0].net_result == after - before
    assert record.seed_reveal_reference == round_view.round_id
    assert sum(len(b.lines) for b in record.house_game.boxes) == sum(len(b.lines) for b in settlement.boxes)
    audit = await world.audit()
    assert audit.balanced


async def revealed_deck_when_ready(world: TableWorld, round_id: str) -> list[int]:
    for _ in range(200):
        try:
            return await revealed_deck(world, round_id)
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.02)
    raise AssertionError("round never revealed")


def box(number: int, ante: int, *, dark: bool = False, bonus: int = 0) -> table_pb2.HouseBox:
    return table_pb2.HouseBox(box=number, ante=ante, dark=dark, bonus_bet=bonus)


async def expect(reason: str, code: grpc.StatusCode, call: Callable[[], Awaitable[Any]]) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call()
    assert caught.value.code() == code, caught.value
    assert reason_of(caught.value) == reason, caught.value


async def test_casino_holdem_call_and_fold_settle_as_the_library_says(house_world: TableWorld) -> None:
    world = house_world
    await fund_house(world, 10_000_000)
    client = await player_at(world, HOLDEM)
    before = await world.wallet(client.player_id)
    placed = await client.bet(box(1, 10), box(3, 25))
    assert placed.staked.amount == 35
    view = placed.round
    assert len(view.board) == 3
    assert not view.dealer_cards
    assert {b.box: len(b.cards) for b in view.boxes} == {1: 2, 3: 2}
    options = {b.box: {(o.decision, o.cost) for o in b.options} for b in view.boxes}
    assert options == {1: {(CALL, 20), (FOLD, 0)}, 3: {(CALL, 50), (FOLD, 0)}}
    assert view.HasField("deadline")
    assert await world.wallet(client.player_id) == before - 35
    view = await client.decide(view, 3, CALL)
    assert await world.wallet(client.player_id) == before - 85
    view = await client.decide(view, 1, FOLD)
    assert len(view.board) == 5
    assert len(view.dealer_cards) == 2
    await finish(world, client, view, before)


def options_of(view: table_pb2.HouseRoundView, number: int) -> dict[int, table_pb2.HouseDecisionOption]:
    return {o.decision: o for o in next(b for b in view.boxes if b.box == number).options}


async def no_game_choice(
    client: HouseClient, view: table_pb2.HouseRoundView, kind: int
) -> table_pb2.HouseRoundView:
    if view.phase == "NO_GAME_CHOICES":
        assert set(options_of(view, view.box_to_act)) == {BUY_GAME, TAKE_ANTE}
        view = await client.decide(view, view.box_to_act, kind)
    return view


async def test_russian_poker_exchange_sixth_card_play_fold_and_no_game_choices(
    house_world: TableWorld,
) -> None:
    world = house_world
    await fund_house(world, 10_000_000)
    client = await player_at(world, RUSSIAN)
    seen: set[str] = set()
    # Each path on a fresh round until every one was taken (the deck decides where the dealer has no game).
    for attempt in range(60):
        before = await world.wallet(client.player_id)
        view = (await client.bet(box(1, 20))).round
        assert len(view.dealer_cards) == 1, "the dealer's up card"
        offered = options_of(view, 1)
        assert offered[CALL].cost == 40
        assert offered[FOLD].cost == 0
        assert offered[EXCHANGE].cost == 20
        assert offered[SIXTH].cost == 20
        path = ["exchange-play", "sixth-fold", "play-buy", "play-take", "exchange-fold", "sixth-play"][
            attempt % 6
        ]
        if path.startswith("exchange"):
            view = await client.decide(view, 1, EXCHANGE, indexes=(0, 2, 4))
            assert EXCHANGE not in options_of(view, 1)
            assert SIXTH not in options_of(view, 1)
        elif path.startswith("sixth"):
            view = await client.decide(view, 1, SIXTH)
            assert len(view.boxes[0].cards) == 6
        view = await client.decide(view, 1, FOLD if path.endswith("fold") else CALL)
        if view.phase == "NO_GAME_CHOICES":
            seen.add("no-game")
            view = await no_game_choice(client, view, BUY_GAME if path == "play-buy" else TAKE_ANTE)
        await finish(world, client, view, before)
        seen.add(path)
        if len(seen) == 7:
            break
    assert len(seen) == 7, seen


async def test_russian_poker_insurance_dark_boxes_bonus_and_jackpot(house_world: TableWorld) -> None:
    world = house_world
    await fund_house(world, 10_000_000)
    await fund_house(world, 5_000, jackpot=True)
    client = await player_at(world, RUSSIAN)
    view_all = await client.snapshot()
    assert view_all.house.jackpot_balance >= 5_000
    # A dark box with a bonus bet: ante, bet and bonus all taken before the deal; no decision to take.
    before = await world.wallet(client.player_id)
    placed = await client.bet(box(2, 10, dark=True, bonus=5))
    assert placed.staked.amount == 10 + 20 + 5
    view = placed.round
    assert not options_of(view, 2) or set(options_of(view, 2)) <= {BUY_GAME, TAKE_ANTE}
    view = await no_game_choice(client, view, TAKE_ANTE)
    assert view.phase == "COMPLETE"
    assert any(line.item == "BONUS" for line in view.boxes[0].settlement)
    await finish_with_jackpot(world, client, view, before, jackpot_before=None)
    # Insurance: play rounds until a box holds three of a kind (about one round in fifty).
    for _ in range(400):
        before = await world.wallet(client.player_id)
        view = (await client.bet(box(1, 10))).round
        insure = options_of(view, 1).get(INSURE)
        if insure is None:
            view = await client.decide(view, 1, FOLD)
            continue
        assert insure.min_amount == 10
        assert insure.max_amount >= 10
        assert insure.cost == 20
        view = await client.decide(view, 1, INSURE, amount=insure.min_amount)
        view = await no_game_choice(client, view, TAKE_ANTE)
        await finish(world, client, view, before)
        assert any(line.item == "INSURANCE" for line in view.boxes[0].settlement)
        return
    raise AssertionError("no three of a kind in 400 rounds")


async def test_a_lost_bonus_feeds_the_jackpot_and_the_bank_keeps_the_rest(house_world: TableWorld) -> None:
    """Decision 9: the default 25% of a lost bonus stake goes wallet -> jackpot in the round's linked
    settlement batch, the rest stays with the house bank; the view shows the line and the new balance."""
    world = house_world
    await fund_house(world, 10_000_000)
    client = await player_at(world, RUSSIAN)
    for _ in range(40):  # a bonus loses about 12 rounds in 13
        bank_before, jackpot_before = await house_balances(world)
        before = await world.wallet(client.player_id)
        view = (await client.bet(box(1, 10, dark=True, bonus=8))).round
        view = await no_game_choice(client, view, TAKE_ANTE)
        assert view.phase == "COMPLETE"
        await finish_with_jackpot(world, client, view, before, jackpot_before=jackpot_before)
        bank_after, jackpot_after = await house_balances(world)
        wallet_change = await world.wallet(client.player_id) - before
        # Conservation of this round: wallet + bank + jackpot unchanged (the audit checks the ledger).
        assert wallet_change + (bank_after - bank_before) + (jackpot_after - jackpot_before) == 0
        lines = {line.item: line for line in view.boxes[0].settlement}
        if lines["BONUS"].outcome != "LOST":
            assert "JACKPOT_CONTRIBUTION" not in lines
            continue
        contribution = lines["JACKPOT_CONTRIBUTION"]
        assert (contribution.stake, contribution.amount, contribution.outcome) == (2, -2, "LOST")
        assert contribution.reason == "JACKPOT_CONTRIBUTION_25_PERCENT"
        assert (lines["BONUS"].stake, lines["BONUS"].amount) == (6, -6)
        # The jackpot grew by the contribution; the bank by the rest of what the player lost.
        assert jackpot_after - jackpot_before == 2
        assert bank_after - bank_before == -wallet_change - 2
        record = world.history.hands[view.round_id]
        assert record.house_game.jackpot_change == 2
        assert record.house_game.house_bank_change == bank_after - bank_before
        # The table's public view shows the jackpot with the contribution.
        assert (await client.snapshot()).house.jackpot_balance == jackpot_after
        return
    raise AssertionError("no lost bonus in 40 rounds")


async def finish_with_jackpot(
    world: TableWorld,
    client: HouseClient,
    view: table_pb2.HouseRoundView,
    before: int,
    jackpot_before: int | None,
) -> None:
    """Like `finish`, for rounds with a bonus bet (the library needs the jackpot balance before)."""
    await wait_for(lambda: view.round_id in world.history.hands)
    record = world.history.hands[view.round_id]
    jackpot = (
        -record.house_game.jackpot_change + (await house_balances(world))[1]
        if jackpot_before is None
        else jackpot_before
    )
    deck = await revealed_deck_when_ready(world, view.round_id)
    settlement = library_settlement(
        client.variant, deck, client.player_id, client.boxes, client.sent, jackpot=jackpot
    )
    assert view_lines(view) == lines_of(settlement)
    assert await world.wallet(client.player_id) - before == settlement.player_deltas()[client.player_id]
    assert (await world.audit()).balanced


async def test_several_boxes_of_one_player(house_world: TableWorld) -> None:
    world = house_world
    await fund_house(world, 10_000_000)
    client = await player_at(world, RUSSIAN)
    before = await world.wallet(client.player_id)
    view = (await client.bet(box(3, 10), box(4, 10))).round
    # Several boxes: no exchange, no sixth card, no insurance; one box at a time in dealing order.
    assert set(options_of(view, 3)) == {CALL, FOLD}
    assert view.box_to_act == 3
    view = await client.decide(view, 3, CALL)
    assert view.box_to_act == 4
    view = await client.decide(view, 4, FOLD)
    await finish(world, client, view, before)
    holdem = await player_at(world, HOLDEM)
    before = await world.wallet(holdem.player_id)
    view = (await holdem.bet(*(box(n, 10 * n) for n in range(1, 8)))).round
    for number in (7, 2, 5, 1, 3, 6, 4):
        view = await holdem.decide(view, number, CALL if number % 2 else FOLD)
    await finish(world, holdem, view, before)


async def test_bad_input_each_with_its_reason_and_nothing_moved(house_world: TableWorld) -> None:
    world = house_world
    await fund_house(world, 10_000_000)
    russian = await player_at(world, RUSSIAN, funds=500)
    holdem = await player_at(world, HOLDEM, funds=500)
    invalid, failed = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION
    wallets = (await world.wallet(russian.player_id), await world.wallet(holdem.player_id))
    bank = await house_balances(world)
    cases: list[tuple[str, grpc.StatusCode, Callable[[], Awaitable[Any]]]] = [
        ("TOO_MANY_BOXES", invalid, lambda: holdem.bet(*(box(n, 10) for n in range(1, 9)))),
        ("BAD_BOX", invalid, lambda: holdem.bet(box(8, 10))),
        ("BAD_BOX", invalid, lambda: holdem.bet(box(0, 10))),
        ("NO_BOXES", invalid, lambda: holdem.bet()),
        ("DUPLICATE_BOX", invalid, lambda: holdem.bet(box(1, 10), box(1, 10))),
        ("ANTE_OUT_OF_RANGE", invalid, lambda: holdem.bet(box(1, 5))),
        ("ANTE_OUT_OF_RANGE", invalid, lambda: holdem.bet(box(1, 1001))),
        ("AMOUNT_INVALID", invalid, lambda: holdem.bet(box(1, 0))),
        ("NOT_IN_THIS_GAME", invalid, lambda: holdem.bet(box(1, 10, dark=True))),
        ("UNEQUAL_LIGHT_ANTES", invalid, lambda: russian.bet(box(1, 10), box(2, 20))),
        ("BOXES_NOT_ADJACENT", invalid, lambda: russian.bet(box(1, 10), box(3, 10))),
        ("TOO_MANY_LIGHT_BOXES", invalid, lambda: russian.bet(box(1, 10), box(2, 10), box(3, 10))),
        ("BONUS_ON_LIGHT_BOX", invalid, lambda: russian.bet(box(1, 10, bonus=5))),
        ("INSUFFICIENT_FUNDS", failed, lambda: russian.bet(box(1, 400, dark=True))),
        (
            "NOT_A_HOUSE_TABLE",
            failed,
            lambda: HouseClient(russian.player_id, world.add_room(cash_room()), world.table).bet(box(1, 10)),
        ),
    ]
    for reason, code, call in cases:
        await expect(reason, code, call)
    # A cash-table RPC at a house table.
    await expect(
        "HOUSE_GAME_TABLE",
        failed,
        lambda: world.table.SitDown(
            table_pb2.SitDownRequest(request_id="s", table_id=holdem.table_id, buy_in=100),
            metadata=holdem.metadata,
        ),
    )
    # Decisions out of order, of the other game, on another round, and a retry.
    view = (await russian.bet(box(1, 10), box(2, 10))).round
    await expect("NOT_THIS_BOX_TURN", failed, lambda: russian.decide(view, 2, CALL))
    holdem_before = await world.wallet(holdem.player_id)
    await expect("DECISION_NOT_ALLOWED", failed, lambda: holdem_decide_exchange(holdem))
    await finish(world, holdem, holdem.last_view, holdem_before)
    await expect("UNKNOWN_BOX", grpc.StatusCode.NOT_FOUND, lambda: russian.decide(view, 5, CALL))
    await expect("EXCHANGE_ON_MULTI_BOX", failed, lambda: russian.decide(view, 1, EXCHANGE, indexes=(0,)))
    await expect("ROUND_IN_PROGRESS", failed, lambda: russian.bet(box(1, 10)))
    other = table_pb2.HouseRoundView(round_id="not-this-round", boxes=view.boxes)
    await expect("HAND_IS_OVER", failed, lambda: russian.decide(other, 1, CALL))
    first = await russian.decide(view, 1, CALL, request_id="same")
    again = await russian.decide(view, 1, CALL, request_id="same")
    assert again == first
    await expect(
        "IDEMPOTENCY_CONFLICT",
        grpc.StatusCode.ALREADY_EXISTS,
        lambda: russian.decide(view, 2, FOLD, request_id="same"),
    )
    final = await russian.decide(first, 2, FOLD)
    final = await no_game_choice_all(russian, final)
    assert final.phase == "COMPLETE"
    # Only the one round moved chips, by exactly its settlement; the rest changed nothing.
    russian.sent = dedupe(russian.sent)
    await finish(world, russian, final, wallets[0])
    assert bank[1] == (await house_balances(world))[1]
    # A decision's extra stake over the wallet: refused, the box may still fold.
    poor = await player_at(world, HOLDEM, funds=25)
    before = await world.wallet(poor.player_id)
    view = (await poor.bet(box(1, 10))).round
    await expect("INSUFFICIENT_FUNDS", failed, lambda: poor.decide(view, 1, CALL))
    assert await world.wallet(poor.player_id) == before - 10
    await finish(world, poor, await poor.decide(view, 1, FOLD), before)


def dedupe(sent: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in sent:
        if not seen or (item.box, item.kind) != (seen[-1].box, seen[-1].kind):
            seen.append(item)
    return seen


async def no_game_choice_all(client: HouseClient, view: table_pb2.HouseRoundView) -> table_pb2.HouseRoundView:
    while view.phase == "NO_GAME_CHOICES" and view.box_to_act:
        view = await client.decide(view, view.box_to_act, TAKE_ANTE)
    return view


async def holdem_decide_exchange(holdem: HouseClient) -> None:
    view = (await holdem.bet(box(1, 10))).round
    try:
        await holdem.decide(view, 1, EXCHANGE, indexes=(0,))
    finally:
        holdem.last_view = await holdem.decide(view, 1, FOLD)


def cash_room() -> Any:
    from tests.table.conftest import nl_room

    return nl_room(unique("cash"))


async def test_the_stream_shows_the_callers_round_and_nobody_elses(house_world: TableWorld) -> None:
    world = house_world
    await fund_house(world, 10_000_000)
    await fund_house(world, 777, jackpot=True)
    alice = await player_at(world, HOLDEM)
    bob = HouseClient(unique("hp"), alice.table_id, world.table, HOLDEM)
    await world.fund(bob.player_id, FUNDS)
    streams = {
        who.player_id: who.stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=alice.table_id), metadata=who.metadata
        )
        for who in (alice, bob)
    }
    first = {name: await call.read() for name, call in streams.items()}
    for message in first.values():
        assert message.view.house.jackpot_balance >= 777
        assert (message.view.house.min_ante, message.view.house.max_ante) == (10, 1000)
        assert not message.view.house.round.round_id
    # Alice opens a seed commitment first, then plays: her stream shows it all, Bob's nothing of it.
    seeded = await world.table.SetPlayerSeed(
        table_pb2.SetPlayerSeedRequest(request_id="s1", table_id=alice.table_id, client_seed="alice's luck"),
        metadata=alice.metadata,
    )
    committed = await streams[alice.player_id].read()
    assert committed.view.house.next_round_id == seeded.hand_id
    assert len(committed.view.house.next_seed_commitment) == 64
    before = await world.wallet(alice.player_id)
    placed = await alice.bet(box(2, 10))
    assert placed.round_id == seeded.hand_id, "the round is dealt from the committed, seeded hand"
    started = await streams[alice.player_id].read()
    assert [e.notice.code for e in started.events] == ["ROUND_STARTED"]
    own = started.view.house.round
    assert own.round_id == placed.round_id
    assert own.seed_commitment == committed.view.house.next_seed_commitment
    assert [c.index for c in own.boxes[0].cards] == [c.index for c in placed.round.boxes[0].cards]
    assert own.boxes[0].options
    assert own.HasField("deadline")
    view = await alice.decide(own, 2, CALL)
    await finish(world, alice, view, before)
    bob_view = (await bob.snapshot()).house
    assert not bob_view.round.round_id
    assert not bob_view.round.boxes
    for call in streams.values():
        call.cancel()
