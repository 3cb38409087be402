"""What the fault runs (issue 30) share: a cluster on a PostgreSQL and a Redis of the run's own,
bots that play through a fault, and the end-to-end checks after it. The runs are split by fault
(`test_faults_backends.py`, `test_faults_shards.py`, `test_faults_partition.py`) so the parallel
suite spreads them over its workers. CI runs a bounded version; POKER_E2E_FULL=1 plays longer
between faults.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

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
from tests.e2e.cluster import BOT_LEAVE_SECONDS, Cluster, Placement, running_cluster
from tests.own_servers import OwnPostgres, OwnRedis
from tests.table.conftest import wait_for

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


@contextlib.asynccontextmanager
async def fault_run(
    own: tuple[OwnPostgres, OwnRedis],
    tmp_path: Path,
    host: str = "127.0.0.1",
    placements: dict[str, Placement] | None = None,
    table_env: dict[str, str] | None = None,
) -> AsyncIterator[FaultRun]:
    postgres, redis = own
    with running_cluster(
        postgres.url,
        redis.url,
        "poker:",
        tmp_path,
        table_env={"POKER_TABLE_LEASE_SECONDS": str(LEASE_SECONDS), **(table_env or {})},
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
        await asyncio.gather(*(bot.finish(within=BOT_LEAVE_SECONDS) for bot in bots.bots))
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


async def room_owners(run: FaultRun, reader: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The shard that owns each of the run's rooms, as the lobby routes to it."""
    owners = {}
    for room in ROOMS:
        reply = await run.conns.lobby.JoinTable(
            lobby_pb2.JoinTableRequest(room_id=room, spectate=True), metadata=reader
        )
        owners[room] = reply.shard_id
    return owners


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
