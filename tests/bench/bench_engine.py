"""Engine benchmark (``make bench``): 7-card evaluations and random-action hands per second, side by side.

Everything is measured in this one run on this machine: poker_engine against treys, pokerkit,
phevaluator and eval7 for single-call 7-card evaluation, and poker_engine against PokerKit for complete
6-handed no-limit hands driven by the same random legal-action policy. Each evaluator figure is the
best of five runs with the median beside it; the hands run in alternating slices of poker_engine and
PokerKit (tests/bench/harness.py), printed as the rate and CPU ratio with the rounds' spread (goal:
>= 20x PokerKit). Not a test: it asserts nothing and prints a table. Runs in about a minute.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench import harness

SEED = 20261130
EVAL_HANDS = 100_000
REPEATS = 5
# Issue 28: the engine plays hands at least 20x as fast as PokerKit, same policy, same machine, same run.
HANDS_TARGET = 20.0


Rate = tuple[float, float]  # (best, median) items per second


def measure(run: Callable[[], int], repeats: int = REPEATS) -> Rate:
    """Best and median items per second over ``repeats`` runs (``run`` returns how many items it did)."""
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        count = run()
        rates.append(count / (time.perf_counter() - started))
    return max(rates), sorted(rates)[len(rates) // 2]


def row(name: str, rate: Rate, note: str = "") -> str:
    return f"  {name:<58} {rate[0]:>12,.0f} /s  (median {rate[1]:>11,.0f}) {note}"


def evaluator_rates(hands: Sequence[tuple[int, ...]]) -> list[tuple[str, Rate, str]]:
    from poker_engine.cards import card_text
    from poker_engine.evaluator import evaluate, strength7

    rows: list[tuple[str, Rate, str]] = []

    def ours_fast() -> int:
        for hand in hands:
            strength7(*hand)
        return len(hands)

    def ours_full() -> int:
        subset = hands[: len(hands) // 5]
        for hand in subset:
            evaluate(hand)
        return len(subset)

    rows.append(("poker_engine strength7 (pure Python, table lookup)", measure(ours_fast), ""))
    rows.append(("poker_engine evaluate (validated, best five, HandValue)", measure(ours_full), ""))
    texts = [[card_text(card) for card in hand] for hand in hands]

    try:
        import treys

        treys_evaluator = treys.Evaluator()
        treys_hands = [
            ([treys.Card.new(t) for t in text[:2]], [treys.Card.new(t) for t in text[2:]]) for text in texts
        ]
        subset_t = treys_hands[: len(hands) // 4]

        def run_treys() -> int:
            for hole, board in subset_t:
                treys_evaluator.evaluate(hole, board)
            return len(subset_t)

        rows.append(("treys (pure Python)", measure(run_treys), ""))
    except ImportError as missing:
        rows.append(("treys", (0.0, 0.0), f"not installed: {missing}"))

    try:
        from pokerkit import Card, StandardHighHand

        kit_hands = [
            (list(Card.parse("".join(text[:2]))), list(Card.parse("".join(text[2:])))) for text in texts
        ]
        subset_k = kit_hands[:2_000]

        def run_pokerkit() -> int:
            for hole, board in subset_k:
                StandardHighHand.from_game(hole, board)
            return len(subset_k)

        rows.append(("pokerkit StandardHighHand.from_game (pure Python)", measure(run_pokerkit), ""))
    except ImportError as missing:
        rows.append(("pokerkit", (0.0, 0.0), f"not installed: {missing}"))

    try:
        from phevaluator import evaluate_cards

        def run_phevaluator() -> int:
            for hand in hands:  # same card ints (4 * rank + suit) as poker_engine
                evaluate_cards(*hand)
            return len(hands)

        rows.append(("phevaluator evaluate_cards (C extension)", measure(run_phevaluator), ""))
    except ImportError as missing:
        rows.append(("phevaluator", (0.0, 0.0), f"not installed: {missing}"))

    try:
        import eval7

        eval7_hands = [[eval7.Card(t) for t in text] for text in texts]

        def run_eval7() -> int:
            for hand in eval7_hands:
                eval7.evaluate(hand)
            return len(eval7_hands)

        rows.append(("eval7 evaluate (Cython)", measure(run_eval7), ""))
    except ImportError as missing:
        rows.append(("eval7", (0.0, 0.0), f"not installed: {missing}"))
    return rows


# Random-action policy shared by both engines: facing a bet, fold 15%; bet or raise (uniform amount in
# the legal range) 25%; otherwise check or call. Six players, 1,000 chips each, blinds 5/10, step 1.
FOLD_CHANCE = 0.15
RAISE_CHANCE = 0.25
PLAYERS = 6
STACK = 1000


class HandPlayer:
    """Plays one complete hand per call under the shared random policy; counts the actions."""

    actions = 0
    hands = 0

    def actions_per_hand(self) -> float:
        return self.actions / max(self.hands, 1)


class OurHands(HandPlayer):
    def __init__(self) -> None:
        from poker_engine.config import HandConfig, SeatConfig, Variant
        from poker_engine.hand import Hand

        self._hand, self._config, self._variant = Hand, HandConfig, Variant.NO_LIMIT
        self._rng = random.Random(SEED)
        self._seats = tuple(SeatConfig(seat, f"p{seat}", STACK) for seat in range(PLAYERS))
        self._deck = list(range(52))

    def play(self) -> int:
        rng = self._rng
        rng.shuffle(self._deck)
        hand = self._hand(
            self._config(self._variant, self._seats, self.hands % PLAYERS, 5, 10, tuple(self._deck))
        )
        while not hand.is_over:
            legal = hand.legal_actions()
            assert legal is not None
            roll = rng.random()
            if legal.can_call and roll < FOLD_CHANCE:
                hand.fold(legal.seat)
            elif (legal.can_bet or legal.can_raise) and roll < FOLD_CHANCE + RAISE_CHANCE:
                to = rng.randint(legal.min_to, legal.max_to)
                (hand.bet if legal.can_bet else hand.raise_to)(legal.seat, to)
            elif legal.can_call:
                hand.call(legal.seat)
            else:
                hand.check(legal.seat)
            self.actions += 1
        self.hands += 1
        return 1


class PokerKitHands(HandPlayer):
    def __init__(self) -> None:
        from pokerkit import Automation, Mode, NoLimitTexasHoldem

        self._create, self._mode = NoLimitTexasHoldem.create_state, Mode.CASH_GAME
        self._automations = (
            Automation.ANTE_POSTING,
            Automation.BET_COLLECTION,
            Automation.BLIND_OR_STRADDLE_POSTING,
            Automation.CARD_BURNING,
            Automation.HOLE_DEALING,
            Automation.BOARD_DEALING,
            Automation.RUNOUT_COUNT_SELECTION,
            Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
            Automation.HAND_KILLING,
            Automation.CHIPS_PUSHING,
            Automation.CHIPS_PULLING,
        )
        self._rng = random.Random(SEED)

    def play(self) -> int:
        rng = self._rng
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            state: Any = self._create(
                self._automations, True, 0, (5, 10), 10, (STACK,) * PLAYERS, PLAYERS, mode=self._mode
            )
            while state.status:
                roll = rng.random()
                facing = state.checking_or_calling_amount > 0
                if facing and roll < FOLD_CHANCE:
                    state.fold()
                elif state.can_complete_bet_or_raise_to() and roll < FOLD_CHANCE + RAISE_CHANCE:
                    low = state.min_completion_betting_or_raising_to_amount
                    high = state.max_completion_betting_or_raising_to_amount
                    state.complete_bet_or_raise_to(rng.randint(low, high))
                else:
                    state.check_or_call()
                self.actions += 1
        self.hands += 1
        return 1


async def hands_against_pokerkit(rounds: int, slice_seconds: float) -> harness.Comparison:
    ours, kit = OurHands(), PokerKitHands()
    cpu = [harness.this_process()]
    comparison = await harness.interleave(
        harness.Side(
            "pokerkit NoLimitTexasHoldem (same policy)", lambda s: harness.run_for(s, kit.play), cpu
        ),
        harness.Side("poker_engine Hand", lambda s: harness.run_for(s, ours.play), cpu),
        rounds=rounds,
        slice_seconds=slice_seconds,
    )
    print(
        f"  actions per hand: poker_engine {ours.actions_per_hand():.1f}, pokerkit {kit.actions_per_hand():.1f} "
        "(the same policy)"
    )
    return comparison


def main() -> int:
    started = time.perf_counter()
    import_started = time.perf_counter()
    import poker_engine.evaluator  # noqa: F401  (timed: builds the lookup tables)

    import_seconds = time.perf_counter() - import_started
    rng = random.Random(SEED)
    hands = [tuple(rng.sample(range(52), 7)) for _ in range(EVAL_HANDS)]
    print(
        f"python {sys.version.split()[0]}; poker_engine evaluator tables built at import in {import_seconds:.2f}s"
    )
    print()
    print("7-card evaluations per second, single call (best of 5; target >= 1,000,000 for poker_engine)")
    rows = evaluator_rates(hands)
    for name, rate, note in rows:
        print(row(name, rate, note))
    print()
    print(f"Complete {PLAYERS}-handed no-limit hands per second, random legal actions, in alternating slices")
    try:
        comparison = asyncio.run(hands_against_pokerkit(rounds=6, slice_seconds=1.5))
    except ImportError as missing:
        print(f"  pokerkit not installed: {missing}")
    else:
        harness.report(
            "engine", f"{PLAYERS}-handed NL hands vs PokerKit", comparison, unit="hands", goal=HANDS_TARGET
        )
    print()
    print(f"total bench time {time.perf_counter() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
