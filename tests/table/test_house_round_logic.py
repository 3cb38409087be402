"""The pure round logic of house-game tables (services/table/house/house_round.py), by hypothesis: for any
deck, boxes and legal decisions, the settlement batch pays the wallet back exactly the library's
player result on top of what the round took, never a negative amount, with unique derived ids; the
default decision is always legal; a replay from the logged decisions settles identically."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from house_games import Account
from services.table.cash.hand_record import SeenPositions, seen_positions
from services.table.house.house_round import (
    BoxBet,
    Decision,
    HouseGame,
    HouseRoom,
    LiveRound,
    check_bets,
    largest_payout,
    paid_back,
)
from services.table.house.house_views import RoundRun, round_record

ROOMS = {
    game: HouseRoom(f"r-{game.value}", game, 1, boxes=7, min_ante=10, max_ante=1000, max_payout=5_000)
    for game in HouseGame
}


@st.composite
def rounds(draw: st.DrawFn) -> tuple[HouseGame, list[BoxBet], list[int], int]:
    game = draw(st.sampled_from(list(HouseGame)))
    count = draw(st.integers(1, 2 if game is HouseGame.RUSSIAN_POKER else 7))
    first = draw(st.integers(1, 8 - count))
    ante = draw(st.integers(10, 1000))
    dark = game is HouseGame.RUSSIAN_POKER and count == 1 and draw(st.booleans())
    bonus = draw(st.integers(0, 50)) if dark else 0
    bets = [BoxBet(first + i, ante, dark=dark, bonus=bonus) for i in range(count)]
    deck = list(range(52))
    random.Random(draw(st.integers(0, 2**32))).shuffle(deck)
    return game, bets, deck, draw(st.integers(0, 2**32))


def shown(live: LiveRound) -> set[int]:
    """Every card the player's view shows at this point of the round (its boxes, the dealer's
    visible and replaced cards, the board)."""
    cards = set(live.dealer_visible()) | set(live.dealer_replaced()) | set(live.board_visible())
    for wager in live.wagers:
        cards |= set(live.cards(wager.box))
    return cards


def play_out(live: LiveRound, chooser: random.Random) -> set[int]:
    """Random legal decisions (now and then the clock's) until the round is complete; every card
    the player was shown on the way."""
    seen = shown(live)
    steps = 0
    while not live.complete:
        box = chooser.choice(live.due_boxes())
        options = live.options(box)
        if chooser.random() < 0.1:
            taken = live.default_decision(box)  # the clock's choice is always a legal one
        else:
            option = chooser.choice(options)
            held = len(live.cards(box))
            indexes = tuple(sorted(chooser.sample(range(min(held, 5)), chooser.randint(1, min(held, 5)))))
            amount = (
                chooser.randint(option.min_amount, option.max_amount)
                if option.decision is Decision.INSURE
                else 0
            )
            taken = live.prepare(
                box, option.decision, indexes if option.decision is Decision.EXCHANGE else (), amount
            )
            assert taken.cost == option.cost + amount
        live.apply(taken)
        seen |= shown(live)
        steps += 1
        assert steps < 40
    return seen


@settings(max_examples=300, deadline=None)
@given(rounds(), st.integers(0, 100_000))
def test_settlement_batch_pays_back_stakes_plus_the_library_result(
    drawn: tuple[HouseGame, list[BoxBet], list[int], int], jackpot: int
) -> None:
    game, bets, deck, choice_seed = drawn
    room = ROOMS[game]
    wagers = check_bets(room, "p", bets)
    assert largest_payout(room, wagers) >= room.max_payout * len(wagers)
    live = LiveRound(game, "round-1", "p", wagers, tuple(deck), room, jackpot_before=jackpot)
    play_out(live, random.Random(choice_seed))
    settlement = live.settle()
    staked = sum(live.staked.values())
    assert staked == sum(line.stake for box in settlement.boxes for line in box.lines)
    transfers = live.settlement_transfers(settlement)
    # Everything is paid to the wallet except the jackpot's part of a lost bonus, wallet -> jackpot.
    assert all(t.amount > 0 for t in transfers)
    assert all(t.to_player or (t.house_account == "jackpot" and ":jc:" in t.transfer_id) for t in transfers)
    assert len({t.transfer_id for t in transfers}) == len(transfers)
    assert paid_back(transfers) - staked == settlement.player_deltas().get("p", 0)
    change = {"bank": 0, "jackpot": 0}
    wallet = 0  # the stakes already left the wallet: the batch, in order, never needs more than it gave
    for t in transfers:
        sign = 1 if t.to_player else -1
        wallet += sign * t.amount
        change[t.house_account] -= sign * t.amount
        assert wallet >= 0
    assert change["jackpot"] == settlement.delta(Account.JACKPOT)
    assert change["bank"] + staked == settlement.delta(Account.HOUSE_BANK)
    assert sum(t.amount for t in live.refund_transfers()) == staked
    replay = LiveRound(
        game,
        "round-1",
        "p",
        wagers,
        tuple(deck),
        room,
        jackpot_before=jackpot,
        decisions=list(live.decisions),
    )
    assert replay.settle() == settlement


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_fairness_opens_to_the_player_every_position_the_round_showed_and_no_other(
    drawn: tuple[HouseGame, list[BoxBet], list[int], int],
) -> None:
    """Issue 24: a house round's player gets openings of exactly the cards the round showed them,
    exchanged-out cards and the dealer's replaced cards included (the record holds only the final
    hands), so the player's own check of every card they saw passes."""
    game, bets, deck, choice_seed = drawn
    room = ROOMS[game]
    live = LiveRound(game, "round-1", "p", check_bets(room, "p", bets), tuple(deck), room)
    seen = play_out(live, random.Random(choice_seed))
    run = RoundRun(live=live, chain="chain", commitment="c0", started_at=1_700_000_000.0, cover=0)
    run.settlement = live.settle()
    record = round_record("t.1", room, "p", run, now=run.started_at + 1)
    where = {card: position for position, card in enumerate(deck)}
    assert seen_positions(record, tuple(deck)) == SeenPositions(
        seen=(("p", tuple(sorted(where[c] for c in seen))),)
    )
