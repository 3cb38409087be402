"""The cluster under real faults (issue 30), on a PostgreSQL and a Redis of the run's own (the
machine's shared servers are never touched): Redis killed and started again, PostgreSQL stopped and
started, a table shard frozen (SIGSTOP) past its lease and resumed, a shard killed again and again,
and a shard cut off the network (in a network namespace of the test's own) past its lease and joined
again. Bots play throughout; after each fault every table deals again, and the checks of the
end-to-end run hold at the end (money, history, fairness, privacy). CI runs a bounded version;
POKER_E2E_FULL=1 plays longer between faults.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from poker.cashier.v1 import cashier_pb2
from poker.lobby.v1 import lobby_pb2
from poker_bots.bot import Behaviour, Connections
from poker_bots.credentials import MintedCredentials
from poker_bots.run import BotRun, RunPlan, run_bots
from poker_bots.stats import RunStats
from service_runtime.testing import DEV_KEYS
from tests.e2e.checks import (
    ADMIN,
    Ledger,
    fairness_problems,
    history_problems,
    money_problems,
    opening_problems,
    privacy_problems,
    settled_once_problems,
)
from tests.e2e.cluster import Cluster, Placement, running_cluster
from tests.e2e.netns import Namespace, network_namespace_or_skip
from tests.own_servers import OwnPostgres, OwnRedis, have_postgres_binaries, have_redis_binary
from tests.table.conftest import wait_for

pytestmark = pytest.mark.skipif(
    not (have_postgres_binaries() and have_redis_binary()), reason="needs PostgreSQL and Redis binaries"
)

FULL = os.environ.get("POKER_E2E_FULL") == "1"
ROOMS = ("nlhe-gram-classic", "nlhe-mpx-classic", "flhe-gram-6max-10-20", "flhe-mpx-6max-10-20")
BOTS = 12
WARM_UP_HANDS = 80 if FULL else 20
# Every table deals again this soon after the fault ends (a lease and a takeover are well inside it).
DEALS_AGAIN_WITHIN = 20.0
LEASE_SECONDS = 2.0
# kill -9 of the busiest shard mid-hand, this many times in a run (it restarts after each).
KILLS = 5 if FULL else 2
# Issue 30: the first table message after a kill comes this soon after the dead shard's lease ran out
# (the full run; CI's parallel suite shares two cores with this cluster, so it allows twice that:
# figures here 0.01-0.7 s, 4.97 s once under a full run beside two other test runs).
FIRST_EVENT_AFTER_LEASE = 5.0 if FULL else 10.0


@dataclass
class FaultRun:
    cluster: Cluster
    postgres: OwnPostgres
    redis: OwnRedis
    conns: Connections
    stats: RunStats = field(default_factory=RunStats)
    bots: BotRun | None = None
    # What the final checks found: the hands in history, and the hands fairness voided.
    recorded: set[str] = field(default_factory=set)
    voided: set[str] = field(default_factory=set)

    def hands_in_play(self, rooms: list[str], since: float) -> set[str]:
        """The hands of `rooms` a bot saw in play after `since`."""
        return {
            hand
            for hand, (_, last) in self.stats.hand_in_play.items()
            if last > since and self.stats.hand_tables.get(hand, "").rsplit(".", 1)[0] in rooms
        }

    def hands_after(self, table_id: str, at: float) -> set[str]:
        seen = self.stats.event_times.get(table_id, {})
        return {hand for (hand, _), when in seen.items() if when > at and hand}

    async def hands_played(self, count: int, within: float = 300) -> None:
        start = len(self.stats.hands)
        await wait_for(lambda: len(self.stats.hands) >= start + count, within=within, interval=0.2)

    async def every_table_deals_again(self, tables: list[str], after: float) -> dict[str, float]:
        """Wait until each table shows a hand first seen after `after`; when its first event came."""
        try:
            await wait_for(
                lambda: all(self.hands_after(t, after) for t in tables),
                within=DEALS_AGAIN_WITHIN,
                interval=0.2,
            )
        except AssertionError:
            stuck = [t for t in tables if not self.hands_after(t, after)]
            raise AssertionError(
                f"tables that did not deal again within {DEALS_AGAIN_WITHIN} s: {stuck}\n"
                f"the bots: {self.stats.summary()}"
            ) from None
        return {t: self.stats.events_after(t, after)[0] - after for t in tables}


@contextlib.contextmanager
def own_servers(redis_host: str = "127.0.0.1") -> Iterator[tuple[OwnPostgres, OwnRedis]]:
    """A PostgreSQL and a Redis of the run's own (Redis on loopback and on `redis_host`)."""
    postgres = OwnPostgres()
    redis = OwnRedis(Path(postgres.folder.parent) / f"poker-own-redis-{uuid.uuid4().hex[:8]}", redis_host)
    try:
        postgres.start()
        redis.start()
        yield postgres, redis
    finally:
        redis.stop()
        postgres.stop()
        postgres.remove()
        import shutil

        shutil.rmtree(redis.folder, ignore_errors=True)


@pytest.fixture
def own_backends() -> Iterator[tuple[OwnPostgres, OwnRedis]]:
    with own_servers() as servers:
        yield servers


@contextlib.asynccontextmanager
async def fault_run(
    own: tuple[OwnPostgres, OwnRedis],
    tmp_path: Path,
    host: str = "127.0.0.1",
    placements: dict[str, Placement] | None = None,
) -> AsyncIterator[FaultRun]:
    postgres, redis = own
    with running_cluster(
        postgres.url,
        redis.url,
        "poker:",
        tmp_path,
        table_env={"POKER_TABLE_LEASE_SECONDS": str(LEASE_SECONDS)},
        host=host,
        placements=placements,
    ) as cluster:
        conns = Connections(cluster.address("lobby"), cluster.address("cashier"))
        run = FaultRun(cluster, postgres, redis, conns)
        try:
            yield run
        finally:
            await conns.close()


async def play_through(run: FaultRun, fault: Callable[[FaultRun], Awaitable[float]]) -> dict[str, float]:
    """Bots play; after the warm-up `fault` runs (it returns when the fault ended); every table must
    deal again; then the bots leave and the run's checks hold. Returns each table's first event after."""
    credentials = MintedCredentials(DEV_KEYS)
    prefix = f"faults-{uuid.uuid4().hex[:6]}"
    plan = RunPlan(
        lobby=run.cluster.address("lobby"),
        cashier=run.cluster.address("cashier"),
        rooms=ROOMS,
        bots=BOTS,
        tables=len(ROOMS),
        seed=30,
        player_prefix=prefix,
        behaviour=Behaviour(timeout_rate=0.03, leave_rate=0.0),
    )
    stop = asyncio.Event()
    task = asyncio.create_task(run_bots(plan, credentials, stop, run.conns, run.stats, leave_at_end=False))
    try:
        await run.hands_played(WARM_UP_HANDS)
        ended = await fault(run)
        tables = sorted({f"{room}.1" for room in ROOMS})
        firsts = await run.every_table_deals_again(tables, ended)
        await run.hands_played(WARM_UP_HANDS // 2)
    finally:
        stop.set()
        bots = await asyncio.wait_for(task, timeout=120)
    try:
        assert run.stats.unexpected_errors() == {}, run.stats.summary()
    finally:
        await asyncio.gather(*(bot.finish() for bot in bots.bots))
    await final_checks(run, bots)
    return firsts


async def final_checks(run: FaultRun, bots: BotRun) -> None:
    conns = run.conns

    async def all_closed() -> bool:
        for table_id in bots.tables:
            reply = await conns.cashier.ListOpenSeatSessions(
                cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id), metadata=ADMIN
            )
            if reply.seat_sessions:
                return False
        return True

    await wait_for(all_closed, within=60, interval=0.5)
    ledger = Ledger(
        conns.channel(run.cluster.address("cashier")),
        conns.channel(run.cluster.address("fairness")),
        conns.channel(run.cluster.address("history")),
    )

    async def recorded_or_voided() -> bool:
        records = await ledger.records(bots.tables)
        return not (await history_problems(ledger, bots.bots, records, set())).problems

    with contextlib.suppress(AssertionError):
        await wait_for(recorded_or_voided, within=60, interval=1)
    records = await ledger.records(bots.tables)
    findings = await history_problems(ledger, bots.bots, records, set())
    problems = findings.problems
    problems += await money_problems(ledger, bots.bots, records)
    problems += await settled_once_problems(ledger, bots.bots)
    problems += await fairness_problems(ledger, records)
    openings, cards_verified = await opening_problems(ledger, bots.bots, records, len(records))
    problems += openings
    assert cards_verified > 0, "no card any bot saw was verified under version 3"
    problems += await privacy_problems(ledger, bots.bots, records, findings.voided, 10)
    assert problems == [], "\n".join(problems[:40])
    run.recorded, run.voided = set(records), set(findings.voided)
    print(f"faults: {len(records)} hands recorded, {len(findings.voided)} voided; {run.stats.summary()}")


async def test_redis_killed_and_started_again_every_table_deals_again(
    own_backends: tuple[OwnPostgres, OwnRedis], tmp_path: Path
) -> None:
    async def kill_redis(run: FaultRun) -> float:
        run.redis.kill()
        await asyncio.sleep(3.5)
        run.redis.start()
        return time.time()

    async with fault_run(own_backends, tmp_path) as run:
        firsts = await play_through(run, kill_redis)
        print(f"first event per table after Redis came back (s): {firsts}")
        # Issue 30: the hands Redis's restart interrupted went on from their log (kept with fsync
        # always), none was voided.
        assert run.voided == set(), sorted(run.voided)


async def test_postgresql_stopped_and_started_again_play_goes_on_and_no_hand_is_voided(
    own_backends: tuple[OwnPostgres, OwnRedis], tmp_path: Path
) -> None:
    """PostgreSQL (every service's database here) stopped for 3 s under load, then started again: the
    services answer UNAVAILABLE meanwhile (never INTERNAL: the bots count any other code as an
    unexpected error), tables wait for the cashier with their hands unsettled, every table deals again
    and no hand is voided."""

    async def stop_postgres(run: FaultRun) -> float:
        await asyncio.to_thread(run.postgres.stop)
        await asyncio.sleep(3)
        await asyncio.to_thread(run.postgres.start)
        return time.time()

    async with fault_run(own_backends, tmp_path) as run:
        firsts = await play_through(run, stop_postgres)
        print(f"first event per table after PostgreSQL came back (s): {firsts}")
        assert run.voided == set(), sorted(run.voided)


async def test_a_shard_frozen_past_its_lease_has_its_rooms_dealt_elsewhere(
    own_backends: tuple[OwnPostgres, OwnRedis], tmp_path: Path
) -> None:
    async def freeze_a_shard(run: FaultRun) -> float:
        shard = next(iter(run.cluster.shards.values()))
        assert shard.process is not None
        shard.process.send_signal(signal.SIGSTOP)
        frozen_at = time.time()
        try:
            tables = sorted({f"{room}.1" for room in ROOMS})
            # Past its 2 s lease the survivor owns every room: every table deals there.
            await asyncio.sleep(3)
            await run.every_table_deals_again(tables, frozen_at + 2)
        finally:
            shard.process.send_signal(signal.SIGCONT)
        return time.time()

    async with fault_run(own_backends, tmp_path) as run:
        firsts = await play_through(run, freeze_a_shard)
        print(f"first event per table after the frozen shard resumed (s): {firsts}")
        # Issue 30: the frozen shard's running hands went on at the other shard, none was voided.
        assert run.voided == set(), sorted(run.voided)


async def room_owners(run: FaultRun, reader: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The shard that owns each of the run's rooms, as the lobby routes to it."""
    owners = {}
    for room in ROOMS:
        reply = await run.conns.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(room_id=room, spectate=True), metadata=reader
        )
        owners[room] = reply.shard_id
    return owners


async def test_the_busiest_shard_killed_mid_hand_again_and_again_voids_no_hand(
    own_backends: tuple[OwnPostgres, OwnRedis], tmp_path: Path
) -> None:
    """Issue 30: kill -9 of the shard that owns the most rooms while hands are in play there, KILLS
    times; it restarts after each kill and rooms move back to it. No hand is voided: each hand the
    dead shard left running is continued by the room's new owner and reaches history, and the first
    table message after each kill comes within FIRST_EVENT_AFTER_LEASE of the lease running out."""
    reader = MintedCredentials(DEV_KEYS).player("faults-reader")
    left_running: set[str] = set()
    first_events: list[float] = []

    async def kill_again_and_again(run: FaultRun) -> float:
        for _ in range(KILLS):
            owners = await room_owners(run, reader)
            victim_id = collections.Counter(owners.values()).most_common(1)[0][0]
            moved = sorted(room for room, shard in owners.items() if shard == victim_id)
            victim = run.cluster.shards[victim_id]
            port = victim.port
            # Mid-hand: a hand of one of its rooms was in play a moment ago.
            await wait_for(
                lambda m=moved: bool(run.hands_in_play(m, time.time() - 0.2)), within=30, interval=0.02
            )
            killed_at = time.time()
            victim.kill()
            left_running.update(run.hands_in_play(moved, killed_at - 0.5))
            tables = [f"{room}.1" for room in moved]
            lease_out = killed_at + LEASE_SECONDS
            await run.every_table_deals_again(tables, lease_out)
            # What a player there got first from the new owner (the table as it is, or an event).
            firsts = [run.stats.first_message_after(t, lease_out) for t in tables]
            first_events.append(max(t - lease_out for t in firsts if t is not None))
            victim.start(port)

            async def wins_rooms_back(shard: str = victim_id) -> bool:
                return shard in (await room_owners(run, reader)).values()

            await wait_for(wins_rooms_back, within=60, interval=0.5)
            await run.hands_played(WARM_UP_HANDS // 2)
        return time.time()

    async with fault_run(own_backends, tmp_path) as run:
        await play_through(run, kill_again_and_again)
        continued = {h for h in left_running if run.stats.hand_in_play[h][1] > run.stats.hand_in_play[h][0]}
        print(
            f"kills: {KILLS}; hands left running {len(left_running)}, recorded "
            f"{len(left_running & run.recorded)}, voided {len(run.voided)}; first message after the lease (s): "
            f"{[round(t, 2) for t in first_events]}"
        )
        assert left_running, "no hand was in play at any kill"
        assert run.voided == set(), sorted(run.voided)
        assert left_running <= run.recorded, sorted(left_running - run.recorded)
        assert continued
        assert max(first_events) <= FIRST_EVENT_AFTER_LEASE, first_events


# The shard the partition test runs in a network namespace of its own: the first to start, which
# rendezvous hashing also gives three of the run's four rooms (shard ids and rooms are fixed).
PARTITIONED, SURVIVOR = "table-a", "table-b"
# The partitioned shard is cut off at least this long (well past its lease) and until the other
# shard deals at every table it took over.
PARTITION_SECONDS = 3 * LEASE_SECONDS


def log_records(path: Path, offset: int = 0) -> list[dict[str, object]]:
    """The JSON log lines a service wrote to `path` from `offset` on."""
    with path.open(encoding="utf-8") as log:
        log.seek(offset)
        lines = log.read().splitlines()
    records = []
    for line in lines:
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict):
                records.append(record)
    return records


@dataclass
class Partition:
    """What the partition test saw: the cut shard's tables, the hands left running there, when the
    link went down and came back, where its log stood at the cut."""

    tables: list[str] = field(default_factory=list)
    running: set[str] = field(default_factory=set)
    cut_at: float = 0.0
    mended_at: float = 0.0
    log_offset: int = 0
    survivor_log_offset: int = 0
    firsts: dict[str, float] = field(default_factory=dict)
    owners_during: dict[str, str] = field(default_factory=dict)
    closed_after: float = 0.0
    closed: dict[str, str] = field(default_factory=dict)


@pytest.fixture
def partition_namespace() -> Iterator[Namespace]:
    with network_namespace_or_skip() as namespace:
        yield namespace


async def test_a_shard_cut_off_the_network_past_its_lease_is_fenced_and_its_hands_go_on_elsewhere(
    partition_namespace: Namespace, tmp_path: Path
) -> None:
    """Issue 30: one table shard runs in a network namespace of the test's own, joined to the rest of
    the cluster (on this machine, over a veth pair) by that pair only; mid-hand at one of its rooms
    the pair is cut, past the shard's lease, then joined again. The other shard takes its rooms over
    and the hands left running go on there (none voided); the partitioned shard, back on the network,
    finds every table it had fenced and closes it, so it neither acts nor settles again: no hand is
    settled twice (the cashier's transfer ids), and every check of the end-to-end run holds."""
    namespace = partition_namespace
    reader = MintedCredentials(DEV_KEYS).player("faults-reader")
    log_path = tmp_path / f"{PARTITIONED}.log"
    survivor_log = tmp_path / f"{SURVIVOR}.log"
    seen = Partition()

    def closed_tables() -> dict[str, str]:
        """The cut tables the partitioned shard stopped since the cut, and how: its ownership check
        found the room lost (or the table fenced), or, its lease back, it let the room go to the
        shard rendezvous hashing now gives it (a release the registry refuses: the token is stale)."""
        closed = {}
        for r in log_records(log_path, seen.log_offset):
            if r.get("event") == "room lost: closing the table":
                closed.setdefault(str(r.get("table_id")), "room lost")
            elif r.get("event") == "room handed over":
                closed.setdefault(f"{r.get('room_id')}.1", f"let go to {r.get('to')}")
        return {table: how for table, how in closed.items() if table in seen.tables}

    async def partition(run: FaultRun) -> float:
        owners = await room_owners(run, reader)
        rooms = sorted(room for room, shard in owners.items() if shard == PARTITIONED)
        assert rooms, f"the partitioned shard owns none of the run's rooms: {owners}"
        seen.tables = [f"{room}.1" for room in rooms]
        await wait_for(lambda: bool(run.hands_in_play(rooms, time.time() - 0.2)), within=30, interval=0.02)
        seen.log_offset = log_path.stat().st_size
        seen.survivor_log_offset = survivor_log.stat().st_size
        seen.cut_at = time.time()
        namespace.cut()
        try:
            seen.running = run.hands_in_play(rooms, seen.cut_at - 0.5)
            # Past its lease the other shard owns the rooms and deals at each of their tables.
            seen.firsts = await run.every_table_deals_again(seen.tables, seen.cut_at + LEASE_SECONDS)
            await asyncio.sleep(max(0.0, seen.cut_at + PARTITION_SECONDS - time.time()))
            seen.owners_during = await room_owners(run, reader)
        finally:
            namespace.mend()
            seen.mended_at = time.time()
        assert all(seen.owners_during[room] != PARTITIONED for room in rooms), seen.owners_during
        # Back on the network, the shard finds each table it had stale (fenced) and closes it.
        await wait_for(lambda: set(seen.tables) <= set(closed_tables()), within=30, interval=0.2)
        seen.closed_after = time.time() - seen.mended_at
        seen.closed = closed_tables()
        # A room the stale shard let go was no longer its own to give: the registry refused it.
        assert set(seen.closed.values()) <= {"room lost", "let go to None"}, seen.closed
        return seen.mended_at

    with own_servers(redis_host=namespace.outer) as backends:
        async with fault_run(
            backends,
            tmp_path,
            host=namespace.outer,
            placements={PARTITIONED: Placement(namespace.prefix, namespace.inner)},
        ) as run:
            await play_through(run, partition)
    # What the other shard says it took over: the hands it went on with from their logs.
    continued = {
        str(r.get("hand_id"))
        for r in log_records(survivor_log, seen.survivor_log_offset)
        if r.get("event") == "hand continued after a takeover" and r.get("table_id") in seen.tables
    }
    said = collections.Counter(
        f"{r.get('level')}: {r.get('event')}"
        for r in log_records(log_path, seen.log_offset)
        if r.get("level") in ("warning", "error")
    )
    print(
        f"partition: tables {seen.tables}, cut for {seen.mended_at - seen.cut_at:.1f} s; hands in play "
        f"at the cut (as the bots last saw them) {len(seen.running)}, continued at the other shard "
        f"{len(continued)}; first event per table after the lease (s) "
        f"{ {t: round(v, 2) for t, v in seen.firsts.items()} }; owners during the cut "
        f"{seen.owners_during}; every stale table stopped {seen.closed_after:.1f} s after the link came "
        f"back ({seen.closed}); the partitioned shard logged from the cut on: {dict(said)}"
    )
    # Warnings while it is cut off and as it finds itself fenced; no error (a record of its own left
    # in the outbox went to history and was refused there; a raw Redis timeout failed a table's step).
    assert not [event for event in said if event.startswith("error")], dict(said)
    assert seen.running, "no hand was in play at the cut"
    assert run.voided == set(), sorted(run.voided)
    assert seen.running <= run.recorded, sorted(seen.running - run.recorded)
    assert continued, "the other shard continued no hand the partitioned shard left running"
    assert continued <= run.recorded, sorted(continued - run.recorded)
