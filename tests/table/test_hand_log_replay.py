"""Replaying a hand's log at any cut point gives exactly the hand the table had there (issue 30).

A seeded property over random hands (2 to 6 seats, random stacks, decks and decisions, timeouts and
leaves among them): the log is written as the table writes it (the engine's config, the table's
entry, one entry per decision with the shell's keys), and for every cut point the log read back
(`services.table.cash.core.replay`, which the table uses to go on with a hand) holds the same engine state as the original hand at that
step - every event, stack, bet, pot, the player to act and what they may do - with each decision
applied once, and the shell's state (time banks, decision times, who decided, who left) as the
table had it. Going on from the cut with the rest of the log ends where the original ended.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.errors import IllegalActionError
from poker_engine.hand import Hand
from poker_engine.replay import apply_json_action
from poker_engine.seating import TableState as Seating
from services.table.cash.core import HandState, replay
from services.table.cash.hand_record import config_entry
from services.table.cash.takeover import table_entry
from services.table.ports.rooms import Room


def state_of(hand: Hand) -> tuple[Any, ...]:
    return (
        hand.events,
        hand.stacks,
        hand.bets,
        hand.pots(),
        hand.actor_seat,
        hand.legal_actions(),
        hand.street,
        hand.board,
        hand.is_over,
        hand.result,
    )


@dataclass
class Shell:
    """The shell's state the table keeps beside the engine's hand, step by step."""

    banks: dict[int, float]
    decision_ms: dict[int, int]
    acted: set[int]
    timed_out: set[int]
    left: set[int]
    turn_at: float

    def of(self, taken: HandState) -> bool:
        return (
            taken.banks == self.banks
            and taken.decision_ms == self.decision_ms
            and taken.acted == self.acted
            and taken.timed_out == self.timed_out
            and taken.left == self.left
            and taken.turn_at == self.turn_at
        )


ROOM = Room("r", Variant.NO_LIMIT, 1, 6, 5, 10, 5, 100, 1000, RakeRule(500, 30))


def read_hand_log(entries: list[dict[str, Any]]) -> HandState | None:
    return replay(entries, action_seconds=15.0, room=ROOM, table_id="t")


def play(seed: int) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]], list[Shell]]:
    """A random hand: its log as the table writes it, the engine's state and the shell's after each entry."""
    rng = random.Random(seed)
    seats = sorted(rng.sample(range(6), rng.randint(2, 6)))
    deck = list(range(52))
    rng.shuffle(deck)
    config = HandConfig(
        variant=Variant.NO_LIMIT,
        seats=tuple(SeatConfig(s, f"p{s}", rng.choice([15, 200, 500, 1000])) for s in seats),
        button=seats[0],
        small_blind=5,
        big_blind=10,
        deck=tuple(deck),
        step=5,
        rake=RakeRule(500, 30),
        hand_id=f"h{seed}",
    )
    seating = Seating.empty(6, 5, 10)
    for s in config.seats:
        seating = seating.sit_down(s.seat, s.player_id, s.stack)
    plan = seating.plan_next_hand(first_button=seats[0])
    assert plan is not None
    banks = {s: 15.0 for s in seats}
    started = 1_000_000.0 + seed
    entries: list[dict[str, Any]] = [
        config_entry(config),
        table_entry(
            commitment="c" * 64,
            started_at=started,
            seating=plan.table_after,
            sessions={s: f"t:{s}" for s in seats},
            signals={f"p{s}": ("dev", "net") for s in seats},
            banks=banks,
        ),
    ]
    hand = Hand(config)
    shell = Shell(dict(banks), {}, set(), set(), set(), started)
    states, shells = [state_of(hand)], [_copy(shell)]
    clock = started
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        choice = rng.choice(["CHECK", "CALL", "FOLD", "ALL_IN", "RAISE", "BET", "TIMEOUT", "LEAVE"])
        seat = legal.seat if choice != "LEAVE" else rng.choice(seats)
        entry: dict[str, Any] = {"seat": seat, "action": choice}
        if choice in ("RAISE", "BET"):
            entry["to"] = rng.randint(legal.min_to, max(legal.min_to, legal.max_to))
        mark = len(hand.events)
        try:
            apply_json_action(hand, entry)
        except IllegalActionError:
            continue
        clock += rng.uniform(0.1, 30.0)
        entry["at"] = clock
        if choice == "TIMEOUT":
            entry["counted"] = rng.random() < 0.7
            if entry["counted"]:
                shell.timed_out.add(seat)
                entry["bank"] = shell.banks[seat] = 0.0
        elif choice != "LEAVE":
            entry["own"] = True
            entry["ms"] = shell.decision_ms[mark] = rng.randint(1, 30_000)
            shell.acted.add(seat)
            if rng.random() < 0.3:
                entry["bank"] = shell.banks[seat] = max(0.0, shell.banks[seat] - rng.uniform(0, 5))
        else:
            shell.left.add(seat)
        shell.turn_at = clock
        entries.append(entry)
        states.append(state_of(hand))
        shells.append(_copy(shell))
    return entries, states, shells


def _copy(shell: Shell) -> Shell:
    return Shell(
        dict(shell.banks),
        dict(shell.decision_ms),
        set(shell.acted),
        set(shell.timed_out),
        set(shell.left),
        shell.turn_at,
    )


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(min_value=0, max_value=2**32))
def test_the_log_read_back_at_any_cut_point_is_the_hand_as_it_was_there(seed: int) -> None:
    entries, states, shells = play(seed)
    final = states[-1]
    for cut, (state, shell) in enumerate(zip(states, shells, strict=True)):
        taken = read_hand_log(entries[: 2 + cut])
        assert taken is not None, f"cut {cut} unreadable"
        assert taken.decisions == cut
        assert state_of(taken.hand) == state, f"cut {cut}: the engine state differs"
        assert shell.of(taken), f"cut {cut}: the shell's state differs"
        # Going on from the cut with the rest of the log ends where the hand ended.
        for entry in entries[2 + cut :]:
            apply_json_action(taken.hand, entry)
        assert state_of(taken.hand) == final


def test_a_log_that_does_not_hold_a_dealt_hand_whole_is_not_read() -> None:
    entries, _, _ = play(7)
    assert read_hand_log([]) is None  # only committed
    assert read_hand_log(entries[:1]) is None  # no table entry
    assert read_hand_log([entries[1], entries[0], *entries[2:]]) is None
    assert read_hand_log([*entries, {"seat": 0, "action": "CHECK", "at": 0.0}]) is None  # the engine refuses
    broken = [entries[0], {**entries[1], "sessions": {"0": "t:0"}}, *entries[2:]]
    assert read_hand_log(broken) is None  # a seat dealt in without its session
    assert read_hand_log([*entries[:2], {"seat": "x", "action": "CALL"}]) is None
