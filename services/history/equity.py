"""Pot equity of known hole cards (pure, deterministic): the share of the pot each live hand wins on
average over the board cards still to come, for the fair-play detectors, which see every hand.

The river is exact, the turn enumerates every river card; earlier streets sample a fixed number of
board completions from a generator seeded by the caller (the hand id), so the same record always
gives the same figures and the cost per call is bounded (`samples` evaluations per live hand).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

from poker_engine.evaluator import strength7

SAMPLES = 32


def _shares(holes: Mapping[int, tuple[int, int]], board: Sequence[int], into: dict[int, float]) -> None:
    best = -1
    winners: list[int] = []
    for seat, (first, second) in holes.items():
        strength = strength7(first, second, *board)
        if strength > best:
            best, winners = strength, [seat]
        elif strength == best:
            winners.append(seat)
    share = 1.0 / len(winners)
    for seat in winners:
        into[seat] += share


def _completions(rest: Sequence[int], need: int, rng: random.Random, samples: int) -> Iterable[Sequence[int]]:
    if need == 1:
        return ([card] for card in rest)
    return (rng.sample(rest, need) for _ in range(samples))


def equities(
    holes: Mapping[int, tuple[int, int]], board: Sequence[int], *, seed: str, samples: int = SAMPLES
) -> dict[int, float]:
    """Each seat's expected share of a pot contested by exactly these hands (shares sum to 1)."""
    if len(holes) == 1:
        return dict.fromkeys(holes, 1.0)
    totals = dict.fromkeys(holes, 0.0)
    need = 5 - len(board)
    if need == 0:
        _shares(holes, board, totals)
        return totals
    used = set(board)
    for first, second in holes.values():
        used.update((first, second))
    rest = [card for card in range(52) if card not in used]
    rng = random.Random(seed)
    count = 0
    for extra in _completions(rest, need, rng, samples):
        _shares(holes, (*board, *extra), totals)
        count += 1
    return {seat: total / count for seat, total in totals.items()}
