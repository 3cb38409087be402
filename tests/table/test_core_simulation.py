"""A deterministic simulation of the table's core (services/table/cash/core.py; issue 30).

Seeded, with no clock, no asyncio and no I/O: random players sit down and leave between hands, and
in each hand random commands (legal and illegal ones, request ids used again with the same fields
and with others, decisions out of turn and for other hands), players who go away and come back,
clock ticks with jumps (forward by up to minutes, and back), a player leaving mid-hand, and a
cashier whose answers to the settlement fail, come late (applied, the answer lost) or refuse it for
good; and in most hands a crash at a random input, after which a new core replays the hand's log
and goes on (`Resume`) where the dead one stopped. At every step:

* the core never changes the state it was given (a refused command leaves the hand as it was);
* a replica fed only the log's entries (`core.apply_entry`) holds exactly the state the core has,
  and at the crash a replay of the whole log from scratch does too;
* no request id is applied twice (a retry gets the first answer, another use of it a conflict);
* no event, as each seat and as a spectator receives it, shows a card that recipient may not see
  (their own hole cards, the board, cards shown at showdown), and no retry's answer either;
* a takeover gives the player to act the rest of their turn plus the grace, never less.

Per hand the cashier applies a settlement once whatever the retries (its ledger is keyed by the hand
id), the nets and the rake add up to nothing, the cashier's balances are the engine's final stacks,
a voided hand moves nothing, and over the whole run every chip bought in is in a balance or in the
rake. CI runs a few thousand hands; `POKER_SIM_HANDS=100000` runs the long version.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from poker_engine.config import RakeRule, Variant
from poker_engine.events import BoardDealt, CardsShown, Event, HoleCardsDealt
from poker_engine.seating import TableState as Seating
from service_runtime.errors import DomainError
from services.history.records import check_hand_record
from services.table.cash import core
from services.table.cash.views import event_body, redact_for
from services.table.ports.rooms import Room

HANDS = int(os.environ.get("POKER_SIM_HANDS", "3000"))
TABLES = 4  # the hands are split over this many seeded tables
ACTION_SECONDS = 15.0
GRACE = 5.0
BUY_IN = 1_000
PLAYERS = [f"p{n}" for n in range(9)]
KINDS = [
    table_pb2.ACTION_KIND_FOLD,
    table_pb2.ACTION_KIND_CHECK,
    table_pb2.ACTION_KIND_CALL,
    table_pb2.ACTION_KIND_BET,
    table_pb2.ACTION_KIND_RAISE,
    table_pb2.ACTION_KIND_ALL_IN,
    table_pb2.ACTION_KIND_UNSPECIFIED,
]
# What the core may refuse a command with: the engine's refusals and the core's own.
EXPECTED_REFUSALS = {
    "IDEMPOTENCY_CONFLICT",
    "NO_HAND_IN_PROGRESS",
    "HAND_IS_OVER",
    "FIELD_REQUIRED",
}


def room_for(rng: random.Random, name: str) -> Room:
    if rng.random() < 0.5:
        return Room(name, Variant.NO_LIMIT, 1, 6, 5, 10, 5, 200, 2_000, RakeRule(500, 30))
    return Room(name, Variant.FIXED_LIMIT, 1, 6, 5, 10, 10, 200, 2_000, RakeRule(0, 0), 10, 20)


@dataclass
class Cashier:
    """The cashier as the core's effects see it: a settlement applied once per hand id."""

    balances: dict[str, int] = field(default_factory=dict)  # seat session -> chips
    settled: dict[str, tuple[tuple[tuple[str, int], ...], int]] = field(default_factory=dict)
    rake: int = 0
    bought_in: int = 0

    def settle(self, effect: core.Settle) -> None:
        known = self.settled.get(effect.hand_id)
        if known is not None:
            assert known == (effect.nets, effect.rake), "a settlement sent again with other nets"
            return
        assert sum(net for _, net in effect.nets) + effect.rake == 0, "nets and rake do not add up"
        self.settled[effect.hand_id] = (effect.nets, effect.rake)
        for session, net in effect.nets:
            self.balances[session] += net
        self.rake += effect.rake


@dataclass
class Stats:
    hands: int = 0
    settled: int = 0
    voided: int = 0
    crashes: int = 0
    crashes_to_act: int = 0  # a player was to act: they got the rest of their turn plus the grace
    crashes_settling: int = 0  # the settlement was outstanding: the next owner sent it again
    late_settlements: int = 0  # applied by the cashier, the answer lost: sent again, applied once
    inputs: int = 0
    refused: int = 0
    retried: int = 0
    timeouts: int = 0
    refusals: set[str] = field(default_factory=set)


def visible_cards(event: Event, recipient: int | None) -> set[int]:
    """The card indexes in the message `recipient` gets for `event` (hidden cards excluded)."""
    (redacted,) = redact_for([event], recipient)
    _, body = event_body(redacted, recipient)
    cards = body.get("cards")
    if cards is None:
        return set()
    assert isinstance(cards, table_pb2.CardsRevealed)
    return {card.index for card in cards.cards if not card.hidden}


def check_privacy(state: core.HandState, events: tuple[Event, ...], recipients: list[int | None]) -> None:
    """No recipient sees a card they may not: their own hole cards, the board, cards shown."""
    everything = state.hand.events
    allowed_public: set[int] = set()
    own: dict[int, set[int]] = {}
    for event in everything:
        if isinstance(event, BoardDealt | CardsShown):
            allowed_public.update(event.cards)
        elif isinstance(event, HoleCardsDealt):
            own.setdefault(event.seat, set()).update(event.cards)
    for event in events:
        for recipient in recipients:
            seen = visible_cards(event, recipient)
            allowed = allowed_public | (own.get(recipient, set()) if recipient is not None else set())
            assert seen <= allowed, f"{recipient} sees {seen - allowed} in {event!r}"


class Table:
    """One seeded table: the shell's seating between hands, the core in each hand."""

    def __init__(self, seed: int, stats: Stats) -> None:
        self.rng = random.Random(seed)
        self.name = f"sim{seed}"
        self.room = room_for(self.rng, self.name)
        self.cashier = Cashier()
        self.seating = Seating.empty(6, 5, 10)
        self.sessions: dict[int, str] = {}
        self.banks: dict[str, float] = {}
        self.clock = 1_700_000_000.0 + seed
        self.stats = stats
        self.count = 0
        self.pending: core.SettleAnswer | None = None  # the cashier's answer on its way back

    # -------------------------------------------------------------- between hands

    def seat_players(self) -> None:
        rng = self.rng
        for sitting in list(self.seating.players):
            if sitting.stack == 0 or rng.random() < 0.05:  # bust, or stands up
                self.seating = self.seating.stand_up(sitting.seat)
                del self.sessions[sitting.seat]
        seated = {p.player_id for p in self.seating.players}
        free = [s for s in range(6) if self.seating.player_at(s) is None]
        rng.shuffle(free)
        for seat in free[: rng.randint(0, len(free))]:
            if len(self.seating.players) >= 2 and rng.random() < 0.5:
                break
            player = rng.choice([p for p in PLAYERS if p not in seated])
            seated.add(player)
            self.count += 1
            session = f"{self.name}:{player}:{self.count}"
            buy_in = rng.choice([15, 100, BUY_IN, 2_000])
            self.cashier.balances[session] = buy_in
            self.cashier.bought_in += buy_in
            self.sessions[seat] = session
            self.banks.setdefault(player, 30.0)
            self.seating = self.seating.sit_down(seat, player, buy_in)

    def play_hand(self) -> None:
        rng = self.rng
        self.seat_players()
        plan = self.seating.plan_next_hand(first_button=rng.randrange(6))
        if plan is None:
            return
        deck = list(range(52))
        rng.shuffle(deck)
        hand_id = f"{self.name}-h{self.stats.hands}"
        config = plan.hand_config(
            tuple(deck),
            variant=self.room.variant,
            step=self.room.step,
            rake=self.room.rake,
            hand_id=hand_id,
            small_bet=self.room.small_bet,
            big_bet=self.room.big_bet,
        )
        for dealt in config.seats:
            assert self.cashier.balances[self.sessions[dealt.seat]] == dealt.stack
        self.clock += rng.uniform(1, 10)
        step = core.deal(
            config=config,
            commitment="c" * 64,
            at=self.clock,
            seating=plan.table_after,
            sessions={s.seat: self.sessions[s.seat] for s in config.seats},
            signals={s.player_id: ("dev", "net") for s in config.seats},
            banks={p.seat: self.banks[p.player_id] for p in self.seating.players},
            action_seconds=ACTION_SECONDS,
            room=self.room,
            table_id=self.name,
        )
        self.stats.hands += 1
        log = list(step.entries)
        state = step.state
        replica = core.replay(log, action_seconds=ACTION_SECONDS, room=self.room, table_id=self.name)
        assert replica is not None
        assert replica.durable() == state.durable()
        recipients: list[int | None] = [*sorted(s.seat for s in config.seats), None]
        check_privacy(state, step.events, recipients)
        seats = {s.seat: s.player_id for s in config.seats}
        total = sum(s.stack for s in config.seats)
        crash_at = rng.randrange(16) if rng.random() < 0.8 else -1
        accepted: dict[tuple[str, str], tuple[str, int, int]] = {}
        used: list[tuple[str, str, str, int, int]] = []  # requests sent: (player, id, hand, kind, amount)
        answered_settle = False
        finished = voided = 0
        for index in range(10_000):
            assert index < 9_999, "the hand never ended"
            if index == crash_at:
                state, replica = self.crash(log, state, replica)
            given = self.next_input(state, seats, used)
            before = state.durable()
            refusal = ""
            try:
                step = core.feed(state, given)
            except DomainError as error:
                refusal = error.reason
            if refusal:
                self.stats.refused += 1
                self.stats.refusals.add(refusal)
                assert state.durable() == before, "a refused command changed the hand"
                if isinstance(given, core.Act) and (given.player_id, given.request_id) in accepted:
                    assert refusal == "IDEMPOTENCY_CONFLICT"
                continue
            self.stats.inputs += 1
            assert state.durable() == before, "the core changed the state it was given"
            if isinstance(given, core.Act):
                key = (given.player_id, given.request_id)
                fields = (given.hand_id, given.kind, given.amount)
                assert step.reply is not None
                if key in accepted:
                    assert step.reply.again, "a request applied twice"
                    assert not step.entries, "a request applied twice"
                    assert accepted[key] == fields
                    self.stats.retried += 1
                    answer = state.hand.events[step.reply.mark]
                    check_privacy(state, (answer,), [step.reply.seat])
                else:
                    assert not step.reply.again
                    assert len(step.entries) == 1
                    accepted[key] = fields
            if isinstance(given, core.Tick | core.Act):
                self.check_clock(state, given, step)
            if isinstance(given, core.Tick) and step.entries:
                self.stats.timeouts += 1
            log.extend(step.entries)
            for entry in step.entries:
                core.apply_entry(replica, entry)
            state = step.state
            assert replica.durable() == state.durable(), "the log's replica differs from the core"
            check_privacy(state, step.events, recipients)
            for effect in step.effects:
                if isinstance(effect, core.Settle):
                    assert effect == core.settlement(state)
                elif isinstance(effect, core.Finish):
                    finished += 1
                    self.check_seen(state, effect)
                    # History takes the record as it is (its own checks, whatever the clock did).
                    check_hand_record(history_pb2.HandRecord.FromString(effect.record.SerializeToString()))
                else:
                    voided += 1
            if isinstance(given, core.SettleAnswer):
                answered_settle = True
            if state.stage in (core.Stage.SETTLED, core.Stage.VOIDED):
                break
        assert answered_settle
        # Late and repeated answers change nothing: a hand ends once.
        for outcome in core.Outcome:
            late = core.feed(state, core.SettleAnswer(hand_id, outcome))
            assert late.state is state
            assert not late.effects
        rids = [tuple(e["rid"][:2]) for e in log[2:] if "rid" in e]
        assert len(rids) == len(set(rids)), "a request in the log twice"
        result = state.hand.result
        assert result is not None
        assert sum(state.hand.stacks.values()) + result.rake == total
        if state.stage is core.Stage.SETTLED:
            assert (finished, voided) == (1, 0)
            self.stats.settled += 1
            for seat, stack in state.hand.stacks.items():
                assert self.cashier.balances[state.sessions[seat]] == stack
            self.seating = self.seating.apply_result(result)
        else:
            assert (finished, voided) == (0, 1)
            assert hand_id not in self.cashier.settled, "a voided hand moved chips"
            self.stats.voided += 1
        for dealt in config.seats:
            self.banks[dealt.player_id] = state.banks[dealt.seat]
        for seat in state.left:
            if self.seating.player_at(seat) is not None:
                self.seating = self.seating.stand_up(seat)
                del self.sessions[seat]
        assert sum(self.cashier.balances.values()) + self.cashier.rake == self.cashier.bought_in

    # -------------------------------------------------------------- inside a hand

    def next_input(
        self, state: core.HandState, seats: dict[int, str], used: list[tuple[str, str, str, int, int]]
    ) -> core.Input:
        rng = self.rng
        roll = rng.random()
        if state.stage is core.Stage.SETTLING:
            if self.pending is None:
                self.pending = self.answer_settlement(state)
            if roll < 0.3:  # the answer comes late: other inputs first
                self.clock += rng.uniform(0.0, 5.0)
                return core.Tick(self.clock) if roll < 0.2 else self.act(state, seats, used)
            given, self.pending = self.pending, None
            return given
        if roll < 0.12:
            self.clock += rng.choice([0.5, 5.0, 20.0, 60.0, 300.0, -30.0])  # a clock jump, back too
            return core.Tick(self.clock)
        if roll < 0.18:
            seat = rng.choice(list(seats))
            return core.Presence(seat, seat not in state.away, self.clock)
        if roll < 0.2:
            return core.Leave(rng.choice(list(seats)), self.clock)
        self.clock += rng.uniform(0.0, 25.0)
        return self.act(state, seats, used)

    def act(
        self, state: core.HandState, seats: dict[int, str], used: list[tuple[str, str, str, int, int]]
    ) -> core.Act:
        """A player's command: mostly the player to act, with any kind and amount, or a retry."""
        rng = self.rng
        if rng.random() < 0.12 and used:
            player, request, hand_id, kind, amount = rng.choice(used)
            if rng.random() < 0.3:
                kind = rng.choice(KINDS)  # the same request id with other fields
            return core.Act(player, self.seat_of(seats, player), request, hand_id, kind, amount, self.clock)
        legal = state.hand.legal_actions()
        seat = legal.seat if legal is not None and rng.random() < 0.9 else rng.choice(list(seats))
        player = seats[seat]
        kind = rng.choice(KINDS)
        amount = 0
        if legal is not None and kind in (table_pb2.ACTION_KIND_BET, table_pb2.ACTION_KIND_RAISE):
            amount = rng.choice([legal.min_to, legal.max_to, rng.randint(0, max(1, legal.max_to + 5))])
        hand_id = state.hand_id if rng.random() < 0.97 else "another-hand"
        request = f"r{rng.getrandbits(40):x}"
        used.append((player, request, hand_id, kind, amount))
        return core.Act(player, seat, request, hand_id, kind, amount, self.clock)

    @staticmethod
    def check_clock(before: core.HandState, given: core.Tick | core.Act, step: core.Step) -> None:
        """Rules 9 and 13: the clock acts at the deadline and not before (check, else fold); the
        action time is free and what runs past it comes out of the bank, emptied by a timeout,
        except an away player's, which is not spent (and whose timeout does not count)."""
        seat = before.to_act
        deadline = before.deadline()
        if seat is not None:
            bank = 0.0 if seat in before.away else before.banks[seat]
            assert deadline == before.turn_start + ACTION_SECONDS + bank
        if isinstance(given, core.Tick):
            if not step.entries:
                assert deadline is None or given.at < deadline, "the clock did not act at the deadline"
                return
            assert deadline is not None
            assert seat is not None
            assert given.at >= deadline, "the clock acted before the deadline"
            (entry,) = step.entries
            assert (entry["seat"], entry["action"], entry["counted"]) == (
                seat,
                "TIMEOUT",
                seat not in before.away,
            )
            expected = before.banks[seat] if seat in before.away else 0.0
            assert step.state.banks[seat] == expected
            return
        if step.reply is None or step.reply.again or given.seat != seat:
            return
        used = given.at - before.turn_start - ACTION_SECONDS
        expected = max(0.0, before.banks[seat] - used) if used > 0 else before.banks[seat]
        assert step.state.banks[seat] == pytest.approx(expected, rel=0, abs=1e-9)
        assert step.state.turn_at == given.at

    @staticmethod
    def seat_of(seats: dict[int, str], player: str) -> int:
        return next(seat for seat, p in seats.items() if p == player)

    def answer_settlement(self, state: core.HandState) -> core.SettleAnswer:
        """The shell runs the outstanding `Settle`; the answer is fed back on the next input."""
        (effect,) = core.outstanding(state)
        assert isinstance(effect, core.Settle)
        roll = self.rng.random()
        if roll < 0.2:
            outcome = core.Outcome.UNAVAILABLE  # failed before the cashier applied it
        elif roll < 0.35:
            self.cashier.settle(effect)  # applied; the answer lost on the way back
            self.stats.late_settlements += 1
            outcome = core.Outcome.UNAVAILABLE
        elif roll < 0.4 and effect.hand_id not in self.cashier.settled:
            outcome = core.Outcome.REFUSED
        else:
            self.cashier.settle(effect)
            outcome = core.Outcome.SETTLED
        return core.SettleAnswer(effect.hand_id, outcome)

    def crash(
        self, log: list[dict[str, Any]], state: core.HandState, replica: core.HandState
    ) -> tuple[core.HandState, core.HandState]:
        """The shard dies: a new core replays the log and goes on after the handover."""
        self.stats.crashes += 1
        self.pending = None  # the dead shard's call: the cashier may have applied it, or not
        taken = core.replay(log, action_seconds=ACTION_SECONDS, room=self.room, table_id=self.name)
        assert taken is not None
        assert taken.durable() == state.durable(), "the replay differs"
        assert taken.durable() == replica.durable()
        self.clock += self.rng.choice([0.5, 3.0, 40.0])
        resumed = core.feed(taken, core.Resume(self.clock, GRACE)).state
        seat = resumed.to_act
        if resumed.stage is core.Stage.SETTLING:
            self.stats.crashes_settling += 1
        if seat is not None:
            self.stats.crashes_to_act += 1
            allowed = ACTION_SECONDS + resumed.banks[seat]
            rest = max(0.0, taken.turn_at + allowed - self.clock)
            deadline = resumed.deadline()
            assert deadline is not None
            assert deadline == pytest.approx(self.clock + rest + GRACE, rel=0, abs=1e-6)
        again = core.replay(log, action_seconds=ACTION_SECONDS, room=self.room, table_id=self.name)
        assert again is not None
        return resumed, again

    def check_seen(self, state: core.HandState, effect: core.Finish) -> None:
        """Fairness opens each player exactly the deal positions they saw, the public ones to all."""
        where = {card: position for position, card in enumerate(state.config.deck)}
        public = {
            where[c] for e in state.hand.events if isinstance(e, BoardDealt | CardsShown) for c in e.cards
        }
        assert set(effect.seen.public) == public
        players = {s.seat: s.player_id for s in state.config.seats}
        for player, positions in effect.seen.seen:
            own = {
                where[c]
                for e in state.hand.events
                if isinstance(e, HoleCardsDealt) and players[e.seat] == player
                for c in e.cards
            }
            assert set(positions) == own, f"{player} is opened {positions}, saw {own}"


def run(seed: int, hands: int) -> Stats:
    stats = Stats()
    tables = [Table(seed * 1_000 + n, stats) for n in range(TABLES)]
    while stats.hands < hands:
        for table in tables:
            table.play_hand()
    return stats


def test_the_core_and_its_log_agree_at_every_step_of_thousands_of_simulated_hands() -> None:
    stats = run(30, HANDS)
    assert stats.hands >= HANDS
    # What the run is for happened, many times over.
    assert stats.crashes > stats.hands // 2
    assert stats.crashes_to_act > stats.hands // 4
    assert stats.crashes_settling > 0
    assert stats.late_settlements > 0
    assert stats.settled > stats.hands * 0.8
    assert stats.voided > 0
    assert stats.timeouts > 0
    assert stats.retried > 0
    assert stats.refused > 0
    assert {"IDEMPOTENCY_CONFLICT", "HAND_IS_OVER", "FIELD_REQUIRED"} <= stats.refusals


def test_the_same_seed_plays_the_same_hands() -> None:
    assert run(7, 40) == run(7, 40)


def test_the_core_is_pure_it_loads_no_event_loop_no_grpc_and_no_store() -> None:
    """The core (the hand's and the countdown's) and what they import bring in neither asyncio, gRPC
    nor a database or Redis client."""
    code = (
        "import sys; import services.table.cash.core, services.table.cash.countdown; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'asyncio', 'grpc', 'redis', 'sqlalchemy'}))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
