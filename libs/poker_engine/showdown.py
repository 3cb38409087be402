"""Settling a finished hand: pots, rake, winners of each pot, odd chips, and who shows or mucks.

Works on hand indexes (0..n-1 in clockwise seat order) and the plain lists ``hand.Hand`` keeps, so the
rules of the end of a hand read in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from poker_engine.config import RakeRule
from poker_engine.evaluator import describe_strength, strength7
from poker_engine.events import (
    CardsMucked,
    CardsShown,
    Event,
    HandEnded,
    PotAwarded,
    SeatResult,
    UncalledBetReturned,
)
from poker_engine.pots import build_pots, rake_for, split_pot, take_rake


def settle_hand(
    *,
    seat_numbers: Sequence[int],
    player_ids: Sequence[str],
    starting: Sequence[int],
    stacks: list[int],
    contributed: Sequence[int],
    dead: Sequence[int],
    folded: Sequence[bool],
    hole: Sequence[tuple[int, ...]],
    board: Sequence[int],
    from_button_left: Sequence[int],
    rake_rule: RakeRule,
    flop_dealt: bool,
    uncalled: Sequence[UncalledBetReturned],
    showdown: bool,
) -> list[Event]:
    """Award every pot (adding the winnings to ``stacks``) and return the closing events.

    ``showdown`` False means everyone else folded: the last player takes every pot without showing.
    """
    pots = build_pots(contributed, folded, dead)
    # Rules 11: rake only if a flop was dealt, at most the cap, taken from the main pot first.
    rake = rake_for(sum(contributed), rake_rule.basis_points, rake_rule.cap, flop_dealt)
    raked = take_rake(pots, rake)
    live = [i for i in from_button_left if not folded[i]]
    all_in_showdown = sum(1 for i in live if stacks[i] > 0) < 2
    strengths = {i: strength7(*hole[i], *board) for i in live} if showdown else {}
    events: list[Event] = []
    awards: list[PotAwarded] = []
    winners_any: set[int] = set()
    for number, (pot, pot_rake) in enumerate(zip(pots, raked, strict=True)):
        # Each pot is decided on its own, only among players who matched its level (rules 10).
        contenders = [i for i in from_button_left if i in pot.eligible]
        description = ""
        if showdown:
            best = max(strengths[i] for i in contenders)
            winners = [i for i in contenders if strengths[i] == best]
            # A pot with one contender is won without a contest, yet its hand is on the table.
            description = describe_strength(best)
        else:
            winners = contenders
        # Equal hands split; odd chips to the first winners clockwise from the button's left (rules 4).
        shares = split_pot(pot.amount - pot_rake, winners)
        winners_any.update(winners)
        for i, amount in shares:
            stacks[i] += amount
        awards.append(
            PotAwarded(
                index=number,
                amount=pot.amount - pot_rake,
                rake=pot_rake,
                eligible=tuple(seat_numbers[i] for i in contenders),
                winners=tuple((seat_numbers[i], amount) for i, amount in shares),
                hand_description=description,
            )
        )
    if showdown:
        # Hands are turned up when an all-in closed the betting; otherwise every hand that wins a share
        # is shown and the others are mucked (kept in the full record, hidden in other views).
        for i in live:
            if i in winners_any or all_in_showdown:
                events.append(CardsShown(seat_numbers[i], hole[i], describe_strength(strengths[i])))
            else:
                events.append(CardsMucked(seat_numbers[i], hole[i]))
    events.extend(awards)
    results = tuple(
        SeatResult(seat, player, start, stack)
        for seat, player, start, stack in zip(seat_numbers, player_ids, starting, stacks, strict=True)
    )
    events.append(HandEnded(results, rake, tuple(awards), tuple(uncalled)))
    return events
