"""Main and side pots, rake, and splitting a pot among equal hands (rules 10 and 11).

Works on hand indexes (0..n-1 in the hand's clockwise seat order); ``hand`` maps them to seats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pot:
    """Chips in one pot and the indexes of the players who may win it (all who matched its level)."""

    amount: int
    eligible: tuple[int, ...]


def build_pots(
    contributed: Sequence[int], folded: Sequence[bool], dead: Sequence[int] | None = None
) -> list[Pot]:
    """Split the total contributions into a main pot and side pots.

    A player all-in for less competes only for what they matched: each distinct live contribution level
    of a player still in the hand closes a pot; folded players' chips count toward the pots they reach
    but give no claim. Chips above the highest live level (only possible for a folded player's dead
    money) join the last pot. Pots with the same eligible players are merged.

    ``dead`` is each player's dead money (a dead small blind, rules 8), part of ``contributed``: it is
    not a bet, so it sets no level and gives its poster no claim of its own; it goes into the main pot.
    """
    dead = dead or [0] * len(contributed)
    live = [amount - out for amount, out in zip(contributed, dead, strict=True)]
    pots = _layer(live, folded, lambda i, level: not folded[i] and live[i] >= level)
    dead_total = sum(dead)
    if dead_total:
        if pots:
            pots[0] = Pot(pots[0].amount + dead_total, pots[0].eligible)
        else:
            pots = [Pot(dead_total, tuple(i for i in range(len(live)) if not folded[i]))]
    return pots


def live_pots(
    contributed: Sequence[int], folded: Sequence[bool], all_in: Sequence[bool], dead: Sequence[int]
) -> list[Pot]:
    """The pots of a running hand as the players see them (issue 25 item 4b): split only where a
    player still in is all-in, each pot contested by the players still in who are all-in at or above
    its level or can still put chips in. Once the hand is over (uncalled bets returned) these are the
    pots ``build_pots`` settles."""
    live = [amount - out for amount, out in zip(contributed, dead, strict=True)]
    # A player who can still bet has no level yet: they reach every pot that is still open.
    top = max(live, default=0)
    reach = [
        top if not (out or capped) else amount
        for amount, out, capped in zip(live, folded, all_in, strict=True)
    ]
    pots = _layer(
        live,
        folded,
        lambda i, level: not folded[i] and reach[i] >= level,
        levels=sorted({reach[i] for i in range(len(live)) if not folded[i]}),
    )
    dead_total = sum(dead)
    if dead_total:
        eligible = pots[0].eligible if pots else tuple(i for i in range(len(live)) if not folded[i])
        pots[:1] = [Pot((pots[0].amount if pots else 0) + dead_total, eligible)]
    return pots


def _layer(
    contributed: Sequence[int],
    folded: Sequence[bool],
    claims: Callable[[int, int], bool],
    levels: Sequence[int] | None = None,
) -> list[Pot]:
    if levels is None:
        levels = sorted({amount for amount, out in zip(contributed, folded, strict=True) if not out})
    pots: list[Pot] = []
    previous = 0
    top_all = max(contributed, default=0)
    for number, level in enumerate(levels):
        top = level if number < len(levels) - 1 else max(top_all, level)
        amount = sum(min(c, top) - min(c, previous) for c in contributed)
        eligible = tuple(i for i in range(len(contributed)) if claims(i, level))
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        elif amount:
            pots.append(Pot(amount, eligible))
        previous = top
    return pots


def rake_for(total: int, basis_points: int, cap: int, flop_dealt: bool) -> int:
    """Rake of a hand: floor(total * basis_points / 10000), at most ``cap``; none without a flop."""
    if not flop_dealt or basis_points == 0:
        return 0
    return min(cap, total * basis_points // 10_000)


def take_rake(pots: Sequence[Pot], rake: int) -> list[int]:
    """Rake taken from each pot: from the main pot first, then each side pot in order."""
    taken: list[int] = []
    left = rake
    for pot in pots:
        part = min(left, pot.amount)
        taken.append(part)
        left -= part
    return taken


def split_pot(amount: int, winners_clockwise: Sequence[int]) -> list[tuple[int, int]]:
    """Equal shares; each odd chip goes one by one to the winners clockwise from the button's left.

    ``winners_clockwise`` must already be in that order. Returns (index, amount) pairs in that order.
    """
    share, odd = divmod(amount, len(winners_clockwise))
    return [(winner, share + (1 if place < odd else 0)) for place, winner in enumerate(winners_clockwise)]
