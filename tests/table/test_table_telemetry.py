"""The table's figures and traces stay true when a hand does not end by its settlement (issue 26).

A hand the cashier refuses for good is voided (or found settled after all) and the table reads its
seats again: the "settlement pending" gauge must forget it (else PokerSettlementLag pages for a
table that waits for nothing), the settled and voided counters must say what became of it, and its
trace must end (else the next hand's spans join the voided hand's trace). A table stopped while a
hand waits leaves neither behind either. Driven in-process with one table and in-memory stand-ins,
spans recorded by an in-memory exporter.

Issue 40: every action the hand's log records is an event of the hand's play span, whoever took it
(the player, the clock, a leave); every labelled counter whose label values are a known set is
exported at 0 from the start (Prometheus's increase() misses a series' first event otherwise); the
house bank's figures are exported only by a shard with a live house table of the pool that read them;
the players seated and waiting per room are the tables' own seats, read at scrape time.
"""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from service_runtime import metrics, tracing
from service_runtime.errors import FailedPrecondition
from services.table import hand_trace
from services.table import metrics as table_metrics
from services.table.cash import core
from services.table.cash.actor import TableActor
from services.table.cash.presence import EXPIRY_CODES, Expiry
from services.table.cash.settlement import AfterHand
from services.table.house.house_round import HouseGame
from tests.table.fakes import ROOM, FakeCashier
from tests.table.inprocess_table import TABLE, running_view, seated_table

REPO = Path(__file__).resolve().parents[2]

A = table_pb2
VARIANT = ROOM.variant.value


class RefusingCashier(FakeCashier):
    """Refuses the settlement of `refuse` for good (ACCOUNT_CLOSED), after applying it when
    `applied_anyway` (the cashier settled the hand after all: a retry's answer, say)."""

    def __init__(self, *, applied_anyway: bool = False) -> None:
        super().__init__()
        self.refuse = ""
        self.applied_anyway = applied_anyway
        self.refused: list[str] = []

    async def settle_hand(self, **fields: Any) -> None:
        if fields["hand_id"] == self.refuse:
            if self.applied_anyway:
                await super().settle_hand(**fields)
            self.refused.append(self.refuse)
            raise FailedPrecondition("ACCOUNT_CLOSED", "the seat session is closed")
        await super().settle_hand(**fields)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.configure_tracing("table", exporter=exporter)
    yield exporter
    tracing.shutdown_tracing()


def table_with(cashier: FakeCashier) -> TableActor:
    return seated_table(cashier)


async def fold(actor: TableActor, view: table_pb2.TableView) -> None:
    """The player to act folds: heads-up, the hand is over."""
    player = {1: "ann", 2: "bob"}[view.to_act_seat]
    await actor.call(lambda: actor.act(player, f"fold-{view.hand_id}", view.hand_id, A.ACTION_KIND_FOLD, 0))


def hand_spans(exporter: InMemorySpanExporter, name: str, hand_id: str) -> list[ReadableSpan]:
    return [
        s
        for s in exporter.get_finished_spans()
        if s.name == name and s.attributes is not None and s.attributes.get("poker.hand_id") == hand_id
    ]


def trace_of(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.trace_id


def counters() -> tuple[float, float]:
    return (
        metrics.sample_value("poker_hands_settled_total", {"room": ROOM.room_id, "variant": VARIANT}),
        metrics.sample_value("poker_hands_voided_total", {"reason": "settlement_refused"}),
    )


@pytest.mark.parametrize("applied_anyway", [False, True], ids=["voided", "settled_after_all"])
async def test_a_hand_refused_for_good_leaves_no_pending_settlement_and_its_own_ended_trace(
    spans: InMemorySpanExporter, applied_anyway: bool
) -> None:
    cashier = RefusingCashier(applied_anyway=applied_anyway)
    actor = table_with(cashier)
    actor.start()
    try:
        view = await running_view(actor)
        refused = cashier.refuse = view.hand_id
        settled_before, voided_before = counters()
        await fold(actor, view)
        following = await running_view(actor, frozenset({refused}))
        assert cashier.refused, "the settlement was never refused"
        # Nothing of this table waits for a settlement while its next hand plays (the gauge is the
        # oldest wait of the process, of other tests' tables too: read for this table).
        assert TABLE not in table_metrics._hands_over
        settled, voided = counters()
        # Settled after all: the cashier moved the chips, so it is a settled hand, not a voided one.
        assert (settled - settled_before, voided - voided_before) == ((1, 0) if applied_anyway else (0, 1))
        # The refused hand's trace ended with it (an error unless it settled after all) ...
        (root,) = hand_spans(spans, "hand", refused)
        assert root.status.status_code is (StatusCode.UNSET if applied_anyway else StatusCode.ERROR)
        (play,) = hand_spans(spans, "hand.play", refused)
        assert trace_of(play) == trace_of(root)
        # ... and the next hand is a trace of its own.
        await fold(actor, following)
        for _ in range(500):
            if hand_spans(spans, "hand", following.hand_id):
                break
            await asyncio.sleep(0.01)
        (next_root,) = hand_spans(spans, "hand", following.hand_id)
        assert trace_of(next_root) != trace_of(root)
        assert {trace_of(s) for s in hand_spans(spans, "hand.play", following.hand_id)} == {
            trace_of(next_root)
        }
    finally:
        await actor.stop()


async def test_a_table_stopped_while_its_hand_waits_for_the_cashier_leaves_nothing_pending(
    spans: InMemorySpanExporter,
) -> None:
    cashier = FakeCashier()
    actor = table_with(cashier)
    actor.start()
    stopped = False
    try:
        view = await running_view(actor)
        cashier.down = True  # the settlement waits, retried, until the table stops
        await fold(actor, view)
        for _ in range(500):
            if TABLE in table_metrics._hands_over:
                break
            await asyncio.sleep(0.01)
        assert metrics.sample_value("poker_settlement_pending_seconds") > 0
        await actor.stop()
        stopped = True
        # The hand goes on wherever the table opens next; this process waits for nothing.
        assert TABLE not in table_metrics._hands_over
        (root,) = hand_spans(spans, "hand", view.hand_id)
        assert TABLE not in hand_trace._live
        assert root.end_time is not None
    finally:
        if not stopped:
            await actor.stop()


# ------------------------------------------------------------------ every action is a span event (C)


async def test_every_action_of_the_hand_record_is_an_event_of_its_play_span_whoever_took_it(
    spans: InMemorySpanExporter,
) -> None:
    """Three players: the big blind leaves during the hand (folded by the leave), the first to act
    calls, the small blind lets the clock run out (folded by the clock): the hand's record holds the
    three decisions, and the play span an event for each, in order, saying who took it."""
    cashier = FakeCashier()
    records: dict[str, history_pb2.HandRecord] = {}

    def keep(job: AfterHand) -> None:
        records.setdefault(job.hand_id, job.record)

    actor = seated_table(cashier, action_seconds=3, players=3, after_hand=keep)
    actor.start()
    try:
        view = await running_view(actor)
        names = {1: "ann", 2: "bob", 3: "cat"}
        big_blind = max(view.seats, key=lambda seat: seat.bet_this_round).seat
        assert big_blind != view.to_act_seat
        left = await actor.leave(names[big_blind], "leave-1")
        assert left.folded_mid_hand
        caller = names[view.to_act_seat]
        await actor.call(lambda: actor.act(caller, "call-1", view.hand_id, A.ACTION_KIND_CALL, 0))
        # The small blind does nothing: the clock folds them (a call is owed) and the hand is over.
        for _ in range(1000):
            if view.hand_id in records and hand_spans(spans, "hand.play", view.hand_id):
                break
            await asyncio.sleep(0.01)
        record = records[view.hand_id]
        (play,) = hand_spans(spans, "hand.play", view.hand_id)
    finally:
        await actor.stop()
    by = {
        history_pb2.ACTION_CAUSE_PLAYER: "player",
        history_pb2.ACTION_CAUSE_TIMEOUT: "clock",
        history_pb2.ACTION_CAUSE_LEFT_TABLE: "leave",
    }
    decisions = [
        (a.seat, a.kind, by[a.cause], a.all_in)
        for a in record.actions
        if a.cause != history_pb2.ACTION_CAUSE_UNSPECIFIED
    ]
    events = [
        (e.attributes["seat"], e.attributes["action"], e.attributes["by"], e.attributes["all_in"])
        for e in play.events
        if e.name == "action" and e.attributes is not None
    ]
    assert events == decisions
    assert [who for _, _, who, _ in events] == ["leave", "player", "clock"]


# ------------------------------------------------------------------ series at 0 from the start (B)

_FRESH_PROCESS = """
from prometheus_client import REGISTRY, generate_latest
import services.table.metrics
print(generate_latest(REGISTRY).decode())
"""


def _fresh_samples() -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """What a table shard process exports right after it imported its metrics: nothing has happened."""
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(done.stdout)
        for sample in family.samples
    }


def _accepted_actions() -> set[str]:
    """Every action a player's Act can be logged as: the core's engine actions, and an all-in."""
    names = {kind.value for kind in core.ENGINE_ACTIONS.values()}
    kinds = set(table_pb2.ActionKind.values()) - {table_pb2.ACTION_KIND_UNSPECIFIED}
    assert kinds - set(core.ENGINE_ACTIONS) == {table_pb2.ACTION_KIND_ALL_IN}
    return names | {table_pb2.ActionKind.Name(table_pb2.ACTION_KIND_ALL_IN).removeprefix("ACTION_KIND_")}


def test_a_fresh_shard_exports_every_labelled_counter_of_a_known_set_at_zero() -> None:
    games = [game.name.lower() for game in HouseGame]
    pools = [
        name.removeprefix("CHIP_POOL_")
        for name, number in common_pb2.ChipPool.items()
        if number != common_pb2.CHIP_POOL_UNSPECIFIED
    ]
    expected: list[tuple[str, dict[str, str]]] = [
        *(("poker_hands_voided_total", {"reason": reason.value}) for reason in table_metrics.VoidReason),
        *(("poker_seats_expired_total", {"reason": code}) for code in EXPIRY_CODES.values()),
        *(("poker_table_rooms_handed_over_total", {"how": how}) for how in ("between_hands", "at_bound")),
        *(("poker_actions_total", {"action": action}) for action in _accepted_actions()),
        *(
            ("poker_house_rounds_total", {"game": game, "outcome": outcome})
            for game in games
            for outcome in ("settled", "voided")
        ),
        *(("poker_house_rounds_resumed_total", {"game": game}) for game in games),
        *(
            (name, {"game": game, "pool": pool})
            for name in ("poker_house_wagered_chips_total", "poker_house_paid_chips_total")
            for game in games
            for pool in pools
        ),
        *(("poker_table_stream_updates_dropped_total", {"kind": kind}) for kind in ("watcher", "spectator")),
    ]
    samples = _fresh_samples()
    missing = [
        (name, labels) for name, labels in expected if (name, frozenset(labels.items())) not in samples
    ]
    assert not missing, missing
    assert {samples[(name, frozenset(labels.items()))] for name, labels in expected} == {0.0}
    # The pools and games are the catalogue's: what the house tables pass is one of them.
    assert set(pools) == {"GRAM", "MPX"}
    assert set(games) == {"casino_holdem", "russian_poker"}


def test_a_table_that_opens_exports_its_rooms_hands_at_zero_before_the_first_one() -> None:
    room = replace(ROOM, room_id=f"fresh-{uuid.uuid4().hex[:8]}")
    seated_table(FakeCashier(), room=room)  # opened, never started: no hand yet
    for name in ("poker_hands_started_total", "poker_hands_settled_total"):
        assert REGISTRY.get_sample_value(name, {"room": room.room_id, "variant": VARIANT}) == 0


def test_every_seat_expiry_has_its_reason_in_the_pre_initialised_set() -> None:
    """The seats' core names an expiry only through EXPIRY_CODES: a new kind of expiry needs its code."""
    assert set(EXPIRY_CODES) == set(Expiry)
    assert len(set(EXPIRY_CODES.values())) == len(Expiry)


def _calls_of(function: str) -> list[tuple[Path, ast.Call]]:
    found = []
    for path in sorted((REPO / "services").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                callee = node.func
                name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
                if name == function:
                    found.append((path, node))
    return found


def test_every_void_reason_the_code_gives_is_one_of_the_pre_initialised_reasons() -> None:
    """A hand is voided only with a `VoidReason` member (the series of each exist from the start), and
    every member is a reason some code path gives: a new reason is a new member, or this fails."""
    given = set()
    calls = _calls_of("hand_voided")
    assert calls, "no call of hand_voided found"
    for path, call in calls:
        where = f"{path.relative_to(REPO)}:{call.lineno}"
        assert not call.keywords, where
        (reason,) = call.args
        assert isinstance(reason, ast.Attribute), f"{where}: the reason must be a VoidReason member"
        owner = reason.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        assert owner_name == "VoidReason", f"{where}: the reason must be a VoidReason member"
        given.add(table_metrics.VoidReason[reason.attr])
    assert given == set(table_metrics.VoidReason)


# ------------------------------------------------------------------ scrape-time figures (A, D)


def shard_samples(name: str, shard: str) -> dict[frozenset[tuple[str, str]], float]:
    """The samples of `name` the shard exports now, by their labels but the `shard` label."""
    return {
        frozenset((k, v) for k, v in sample.labels.items() if k != "shard"): sample.value
        for family in REGISTRY.collect()
        for sample in family.samples
        if sample.name == name and sample.labels.get("shard") == shard
    }


def watched(shard: str, **sources: Any) -> Callable[[], None]:
    """A shard of this process, registered for the scrape with only `sources` (house_banks, players)."""
    return table_metrics.watch_shard(
        table_metrics.WatchedShard(
            shard_id=shard, lease_held=lambda: True, open_tables=dict, queues={}, **sources
        ),
        bank_minimum=0,
    )


BANK_FIGURES = (
    "poker_house_bank_balance_chips",
    "poker_house_jackpot_balance_chips",
    "poker_house_bank_reserved_chips",
)


def test_a_shard_exports_a_pools_bank_figures_only_while_it_has_a_house_table_of_the_pool_that_read_them() -> (
    None
):
    """The freshest read of the pool among the shard's live house tables; a table that has read
    nothing adds nothing; no table of the pool (closed, handed over): no series at all."""
    gram, mpx = common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX
    tables: list[table_metrics.BankRead | None] = [
        table_metrics.BankRead(gram, bank=5_000_020, jackpot=7, reserved=30, at=10.0),
        table_metrics.BankRead(gram, bank=4_999_440, jackpot=9, reserved=0, at=11.0),
        None,  # a house table that has not read the bank yet
    ]
    shard = f"bank-{uuid.uuid4().hex[:8]}"

    def figures() -> dict[str, tuple[float, ...]]:
        by_pool = [shard_samples(name, shard) for name in BANK_FIGURES]
        pools = {dict(labels)["pool"] for labels in by_pool[0]}
        assert all({dict(labels)["pool"] for labels in each} == pools for each in by_pool)
        return {pool: tuple(each[frozenset({("pool", pool)})] for each in by_pool) for pool in pools}

    forget = watched(shard, house_banks=lambda: list(tables))
    try:
        assert figures() == {"GRAM": (4_999_440, 9, 0)}
        tables.append(table_metrics.BankRead(mpx, bank=800, jackpot=0, reserved=0, at=12.0))
        assert figures() == {"GRAM": (4_999_440, 9, 0), "MPX": (800, 0, 0)}
        # The GRAM tables close (the room went to another shard): the shard's GRAM figures go with them.
        del tables[:2]
        assert figures() == {"MPX": (800, 0, 0)}
    finally:
        forget()
    assert figures() == {}


async def test_players_seated_and_waiting_are_the_tables_own_seats_read_at_scrape_time() -> None:
    """ann and bob are dealt in; cat sits down during the hand (waits for the next) and bob sits out:
    one player in play and two waiting, as the table's own view has them."""
    room = replace(ROOM, room_id=f"players-{uuid.uuid4().hex[:8]}")
    actor = seated_table(FakeCashier(), room=room)
    shard = f"players-{uuid.uuid4().hex[:8]}"
    forget = watched(shard, players=lambda: [actor.players()])

    def players() -> dict[str, float]:
        return {
            dict(labels)["state"]: value
            for labels, value in shard_samples("poker_table_players", shard).items()
            if dict(labels)["room"] == room.room_id and dict(labels)["variant"] == VARIANT
        }

    actor.start()
    try:
        await running_view(actor)
        assert players() == {"seated": 2, "waiting": 0}
        await actor.sit_down("cat", "sit-cat", 3, 500, False)
        await actor.call(lambda: actor.sit_out("bob", "out-bob", back_in=False, wait=False))
        view = await actor.call(lambda: actor.snapshot("ann"))
        assert {s.seat: s.status for s in view.seats if s.player_id} == {
            1: table_pb2.SEAT_STATUS_ACTIVE,  # ann
            2: table_pb2.SEAT_STATUS_SITTING_OUT,  # bob
            3: table_pb2.SEAT_STATUS_WAITING,  # cat
        }
        assert players() == {"seated": 1, "waiting": 2}
    finally:
        forget()
        await actor.stop()
    assert not players()
