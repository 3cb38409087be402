"""How a bot decides: pure functions from what the bot sees to one legal action (no I/O, no grpc).

`Situation` is the part of a table view a decision needs; a strategy returns a `Decision` that is
always one of the offered actions with an amount inside the offered range on the offered step.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from poker.common.v1 import common_pb2
from poker.table.v1 import table_pb2
from poker_engine.evaluator import HandCategory, category_of, strength_of

FOLD = table_pb2.ACTION_KIND_FOLD
CHECK = table_pb2.ACTION_KIND_CHECK
CALL = table_pb2.ACTION_KIND_CALL
BET = table_pb2.ACTION_KIND_BET
RAISE = table_pb2.ACTION_KIND_RAISE
ALL_IN = table_pb2.ACTION_KIND_ALL_IN


@dataclass(frozen=True)
class Situation:
    """One decision: the offered actions with their amounts, the bot's cards, the board and the pot."""

    actions: frozenset[int]
    call_amount: int
    min_amount: int
    max_amount: int
    step: int
    hole_cards: tuple[int, ...]
    board: tuple[int, ...]
    pot: int
    stack: int
    no_limit: bool


@dataclass(frozen=True)
class Decision:
    kind: int
    amount: int = 0


class Strategy(Protocol):
    name: str

    def decide(self, situation: Situation, rng: random.Random) -> Decision: ...


def sized(situation: Situation, target: int) -> int:
    """`target` clamped to the offered range and put on the offered step from the minimum."""
    low, high = situation.min_amount, situation.max_amount
    if high <= low:
        return low
    step = max(1, situation.step)
    steps = (min(max(target, low), high) - low) // step
    return low + steps * step


def _aggressive(situation: Situation, target: int) -> Decision | None:
    for kind in (RAISE, BET):
        if kind in situation.actions and situation.max_amount >= situation.min_amount > 0:
            return Decision(kind, sized(situation, target))
    return None


def _passive(situation: Situation) -> Decision:
    if CHECK in situation.actions:
        return Decision(CHECK)
    if CALL in situation.actions:
        return Decision(CALL)
    return Decision(FOLD)


class RandomLegal:
    """Any offered action, weighted towards checks and calls; bets on random steps of the range."""

    name = "random"
    WEIGHTS: ClassVar[dict[int, float]] = {
        FOLD: 1.0,
        CHECK: 4.0,
        CALL: 4.0,
        BET: 2.0,
        RAISE: 2.0,
        ALL_IN: 0.3,
    }

    def decide(self, situation: Situation, rng: random.Random) -> Decision:
        kinds = sorted(situation.actions)
        kind = rng.choices(kinds, [self.WEIGHTS.get(k, 1.0) for k in kinds])[0]
        if kind in (BET, RAISE):
            if situation.max_amount < situation.min_amount or situation.min_amount <= 0:
                return _passive(situation)
            steps = (situation.max_amount - situation.min_amount) // max(1, situation.step)
            return Decision(
                kind, situation.min_amount + max(1, situation.step) * rng.randint(0, min(steps, 6))
            )
        return Decision(kind)


def preflop_score(hole: Sequence[int]) -> float:
    """A Chen-style score of two hole cards (card index = 4 * rank + suit, rank 0 = deuce, 12 = ace).

    High card counts most (A 10, K 8, Q 7, J 6, else half the rank), pairs double (at least 5), suited
    adds 2, gaps subtract, connected low cards add 1. Ranges from about -1 (72o) to 20 (AA).
    """
    if len(hole) != 2:
        return 0.0
    ranks = sorted((card // 4 for card in hole), reverse=True)
    high, low = ranks
    face = {12: 10.0, 11: 8.0, 10: 7.0, 9: 6.0}
    score = face.get(high, (high + 2) / 2)
    if high == low:
        return max(score * 2, 5.0)
    if hole[0] % 4 == hole[1] % 4:
        score += 2
    gap = high - low - 1
    score -= {0: 0, 1: 1, 2: 2, 3: 4}.get(gap, 5)
    if gap <= 1 and high < 10:
        score += 1
    return score


BLUFF_SHARE = 0.35


class TightAggressive:
    """Plays few hands and plays them hard: raises strong starts and made hands, folds the rest.

    Pre-flop by `preflop_score`: 10+ raises (about three times the call, or a third of the pot more),
    7+ calls or opens, weaker hands check or fold. After the flop by the made hand of hole cards and
    board: two pair or better bets about the pot; one pair checks, calls, or bets when checked to;
    nothing checks (bets half the pot as a bluff about a third of the time), calls a small bet now
    and then, else folds.
    """

    name = "tag"

    def decide(self, situation: Situation, rng: random.Random) -> Decision:
        pot = max(situation.pot, situation.call_amount, 1)
        if not situation.board:
            score = preflop_score(situation.hole_cards)
            if score >= 10:
                return _aggressive(situation, situation.call_amount * 3 + pot // 3) or _passive(situation)
            if score >= 7:
                if situation.call_amount == 0:
                    return _aggressive(situation, pot) or _passive(situation)
                return _passive(situation)
            return Decision(CHECK) if CHECK in situation.actions else Decision(FOLD)
        cards = list(situation.hole_cards) + list(situation.board)
        made = category_of(strength_of(cards)) if len(cards) >= 5 else HandCategory.HIGH_CARD
        if made >= HandCategory.TWO_PAIR:
            return _aggressive(situation, pot) or _passive(situation)
        if made == HandCategory.ONE_PAIR:
            if situation.call_amount == 0:
                return _aggressive(situation, pot // 2) or _passive(situation)
            if situation.call_amount <= pot // 2 or rng.random() < 0.3:
                return _passive(situation)
            return Decision(FOLD)
        if CHECK in situation.actions:
            # A bluff now and then (a player who never bets without a hand reads as soft play to the
            # fair-play detector when two of them meet heads-up).
            if rng.random() < BLUFF_SHARE:
                return _aggressive(situation, pot // 2) or Decision(CHECK)
            return Decision(CHECK)
        if situation.call_amount * 4 <= pot and rng.random() < 0.25 and CALL in situation.actions:
            return Decision(CALL)
        return Decision(FOLD)


STRATEGIES: dict[str, Strategy] = {"random": RandomLegal(), "tag": TightAggressive()}


def situation_of(view: table_pb2.TableView, seat: int) -> Situation:
    """The decision the view offers the player in `seat`."""
    legal = view.legal_actions
    mine = next((s for s in view.seats if s.seat == seat), None)
    hole = tuple(c.index for c in mine.hole_cards if not c.hidden) if mine is not None else ()
    pot = sum(p.amount for p in view.pots) + sum(s.bet_this_round for s in view.seats)
    return Situation(
        actions=frozenset(legal.actions),
        call_amount=legal.call_amount,
        min_amount=legal.min_amount,
        max_amount=legal.max_amount,
        step=legal.step,
        hole_cards=hole,
        board=tuple(c.index for c in view.board),
        pot=pot,
        stack=mine.stack if mine is not None else 0,
        no_limit=view.variant == common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
    )
