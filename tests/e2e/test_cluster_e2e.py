"""The whole cluster end to end: lobby, two table shards, cashier, fairness and history as processes
on loopback with PostgreSQL and Redis; poker-bots play no-limit and fixed-limit rooms of both pools,
one shard is killed with SIGKILL in the middle of the run, and afterwards, for the whole run: every
pool balances and holds exactly what was minted; every hand's deck verifies; history holds every hand
(the dead shard's unfinished hands go on at the other shard: none voided, none settled twice) and each player's nets there equal
the cashier's statement; no stream message, history record or export shows a player another's hidden
card; the lobby's occupancy matches the tables. CI plays about 200 hands; POKER_E2E_FULL=1 plays
1,200. House bots play Casino Hold'em and Russian Poker rounds at the seeded house rooms of both pools
(the banks funded by an admin first), a batch finished before the kill and one after it: every round is in history with its
settlement, its deck verifies with the cards shown, and each house bot's history nets equal its
cashier statement (CI: 12 + 20 rounds; full: 100 + 100)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import re
import time
import uuid

import pytest

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from poker_bots.bot import Behaviour, Connections
from poker_bots.credentials import MintedCredentials
from poker_bots.run import BotRun, RunPlan, run_bots
from poker_bots.stats import RunStats
from service_runtime.testing import DEV_KEYS, fund_house
from tests.e2e.checks import (
    ADMIN,
    Ledger,
    fair_play_problems,
    fairness_problems,
    history_problems,
    house_problems,
    money_problems,
    opening_problems,
    privacy_problems,
    salt_problems,
)
from tests.e2e.cluster import BOT_LEAVE_SECONDS, Cluster
from tests.table.conftest import wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.postgres, pytest.mark.redis]

FULL = os.environ.get("POKER_E2E_FULL") == "1"
HANDS_BEFORE_KILL = 600 if FULL else 100
HANDS_IN_ALL = 1200 if FULL else 200
HANDS_AFTER_KILL = HANDS_IN_ALL - HANDS_BEFORE_KILL
PRIVACY_SAMPLE = 200 if FULL else 25
SALT_SAMPLE = 200 if FULL else 60  # hands whose 52 salts are looked for in every log
# No-limit and fixed-limit rooms of both pools (the seeded catalogue, docs/lobby.md).
ROOMS = ("nlhe-gram-classic", "nlhe-mpx-classic", "flhe-gram-6max-10-20", "flhe-mpx-6max-10-20")
BOTS = 16
# The seeded house rooms of both pools; one house bot each, the rounds shared among them.
HOUSE_ROOMS = ("casino-holdem-gram", "casino-holdem-mpx", "russian-poker-gram", "russian-poker-mpx")
# Rounds finished before the kill (at both shards), and rounds played after it (at the survivor).
HOUSE_ROUNDS_BEFORE = 100 if FULL else 12
HOUSE_ROUNDS_AFTER = 100 if FULL else 20
HOUSE_BANK = 5_000_000


async def owners(
    lobby: lobby_pb2_grpc.LobbyServiceStub, metadata: tuple[tuple[str, str], ...]
) -> dict[str, lobby_pb2.JoinTableResponse]:
    found = {}
    for room in ROOMS:
        found[room] = await lobby.JoinTable(
            lobby_pb2.JoinTableRequest(room_id=room, spectate=True), metadata=metadata
        )
    return found


async def occupancy_problems(
    conns: Connections, tables: list[str], metadata: tuple[tuple[str, str], ...]
) -> list[str]:
    """The lobby's figures of every table name the players the owning shard seats there."""
    routes = await owners(conns.lobby, metadata)
    problems = []
    for table_id in tables:
        room = table_id.rsplit(".", 1)[0]
        listed = await conns.lobby.ListTables(lobby_pb2.ListTablesRequest(room_id=room), metadata=ADMIN)
        lobby_side = sorted(
            s.display_name for t in listed.tables if t.table_id == table_id for s in t.taken_seats
        )
        stub = table_pb2_grpc.TableServiceStub(conns.channel(routes[room].address))
        view = (
            await stub.GetTableSnapshot(table_pb2.GetTableSnapshotRequest(table_id=table_id), metadata=ADMIN)
        ).view
        table_side = sorted(s.display_name for s in view.seats if s.player_id)
        if lobby_side != table_side:
            problems.append(f"{table_id}: lobby {lobby_side} vs table {table_side}")
    return problems


def shard_log_excerpt(
    cluster: Cluster, problems: list[str], lines: int = 40, with_lobby: bool = False
) -> str:
    """What the shards (and the lobby, which routes and opens tables) logged about the tables a check
    found wrong (each service's log is kept)."""
    tables = {problem.split(":", 1)[0] for problem in problems}
    rooms = {table.rsplit(".", 1)[0] for table in tables}
    found = []
    services = dict(cluster.shards)
    if with_lobby:
        services["lobby"] = cluster.services["lobby"]
    for name, service in services.items():
        if service.log_file is None or not service.log_file.exists():
            continue
        for line in service.log_file.read_text(encoding="utf-8").splitlines():
            if any(key in line for key in tables | rooms) or '"level": "warning"' in line:
                found.append(f"{name}: {line}")
    return "\n".join(found[-lines:])


def hand_log_excerpt(cluster: Cluster, problems: list[str], lines: int = 60) -> str:
    """Every service's log lines naming a hand a check found wrong (the hand ids in `problems`)."""
    hands = set(
        re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", " ".join(problems))
    )
    if not hands:
        return ""
    found = []
    for name, service in cluster.services.items():
        if service.log_file is None or not service.log_file.exists():
            continue
        for line in service.log_file.read_text(encoding="utf-8").splitlines():
            if any(hand in line for hand in hands):
                found.append(f"{name}: {line}")
    return "\n".join(found[:lines])


async def test_bots_play_both_variants_and_pools_on_two_shards_one_is_killed_and_every_check_holds(
    cluster: Cluster,
) -> None:
    credentials = MintedCredentials(DEV_KEYS)
    conns = Connections(cluster.address("lobby"), cluster.address("cashier"))
    stats = RunStats()
    prefix = f"e2e-{uuid.uuid4().hex[:6]}"
    plan = RunPlan(
        lobby=cluster.address("lobby"),
        cashier=cluster.address("cashier"),
        rooms=ROOMS,
        bots=BOTS,
        tables=len(ROOMS),
        # Played until the test stops it, so hands are dealt after the kill however fast the run is
        # (with a hand count, a quick run could finish while the first house batch still played).
        hands=0,
        seed=17,
        player_prefix=prefix,
        behaviour=Behaviour(timeout_rate=0.03, leave_rate=0.03),
    )
    before_plan, after_plan = (
        RunPlan(
            lobby=plan.lobby,
            cashier=plan.cashier,
            rooms=(),
            bots=0,
            tables=1,
            player_prefix=f"{prefix}-{phase}",
            house_rooms=HOUSE_ROOMS,
            house_bots=len(HOUSE_ROOMS),
            house_rounds=rounds,
        )
        for phase, rounds in (("before", HOUSE_ROUNDS_BEFORE), ("after", HOUSE_ROUNDS_AFTER))
    )
    for pool in (common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX):
        await fund_house(
            conns.cashier, request_id=uuid.uuid4().hex, pool=pool, amount=HOUSE_BANK, reason="e2e house bank"
        )
    reader = credentials.player(f"{prefix}-1")
    stop = asyncio.Event()
    house_task: asyncio.Task[BotRun] | None = None
    run_task = asyncio.create_task(run_bots(plan, credentials, stop, conns, stats, leave_at_end=False))
    house_before = asyncio.create_task(run_bots(before_plan, credentials, None, conns, stats))
    try:
        await wait_for(
            lambda: len(stats.hands) >= HANDS_BEFORE_KILL or run_task.done(), within=600, interval=0.2
        )
        assert not run_task.done(), run_task.result()
        # The first house rounds (at both shards) are settled; their records may still be on the way.
        house_runs = [await asyncio.wait_for(house_before, timeout=120)]
        # kill -9 the shard that owns the most of the run's rooms (by the PID this test started).
        before = await owners(conns.lobby, reader)
        counts = collections.Counter(r.shard_id for r in before.values())
        victim = counts.most_common(1)[0][0]
        moved = [room for room, r in before.items() if r.shard_id == victim]
        killed_at = time.time()
        cluster.shards[victim].kill()
        hands_at_kill = len(stats.hands)
        # House bots play alongside the cash bots from here on (routed by the lobby to the survivor
        # for the dead shard's house rooms).
        house_task = asyncio.create_task(run_bots(after_plan, credentials, None, conns, stats))
        await wait_for(
            lambda: (
                len(stats.hands) >= max(HANDS_IN_ALL, hands_at_kill + HANDS_AFTER_KILL) or run_task.done()
            ),
            within=900,
            interval=0.2,
        )
        assert not run_task.done(), run_task.result()
        stop.set()
        run = await asyncio.wait_for(run_task, timeout=120)
        house_runs.append(await asyncio.wait_for(house_task, timeout=300))
    finally:
        stop.set()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(run_task, timeout=60)
        for task in (house_before, house_task):
            if task is not None and not task.done():
                task.cancel()
    tables = run.tables
    try:
        assert len(stats.hands) >= HANDS_IN_ALL
        assert stats.unexpected_errors() == {}, stats.summary()
        assert stats.timeouts_let_run > 0
        assert stats.leaves > 0
        assert stats.rejoins > 0
        house_bots = [bot for house_run in house_runs for bot in house_run.house_bots]
        assert stats.house_rounds == HOUSE_ROUNDS_BEFORE + HOUSE_ROUNDS_AFTER
        for house_run in house_runs:
            assert {r.table_id for b in house_run.house_bots for r in b.rounds} == {
                f"{r}.1" for r in HOUSE_ROOMS
            }
        # The dead shard's rooms now belong to the other shard, which dealt hands there after the kill.
        after = await owners(conns.lobby, reader)
        assert all(after[room].shard_id != victim for room in moved)
        assert all(after[room].fencing_token > before[room].fencing_token for room in moved)
        assert len(stats.hands) > hands_at_kill

        # The bots are still seated: the lobby's figures match the tables (published every lease third).
        last: list[str] = []

        async def occupancy_matches() -> bool:
            nonlocal last
            last = await occupancy_problems(conns, tables, reader)
            return not last

        try:
            await wait_for(occupancy_matches, within=20, interval=0.5)
        except AssertionError:
            raise AssertionError(
                f"lobby occupancy differs from the tables: {last}\n" + shard_log_excerpt(cluster, last)
            ) from None
    finally:
        # Everyone leaves; every seat session closes (cash-out to the wallet).
        await asyncio.gather(*(bot.finish(within=BOT_LEAVE_SECONDS) for bot in run.bots))

    still_open: list[str] = []

    async def all_closed() -> bool:
        still_open.clear()
        for table_id in tables:
            reply = await conns.cashier.ListOpenSeatSessions(
                cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id), metadata=ADMIN
            )
            still_open.extend(f"{s.table_id}:{s.player_id}" for s in reply.seat_sessions)
        return not still_open

    try:
        await wait_for(all_closed, within=60, interval=0.5)
    except AssertionError:
        leaves = {key: n for key, n in stats.errors.items() if key.startswith(("leave", "join"))}
        holders = {key.split(":", 1)[1] for key in still_open}
        outcomes = [f"{bot.player_id}: {bot.finished}" for bot in run.bots if bot.player_id in holders]
        raise AssertionError(
            f"seat sessions still open a minute after every bot left: {still_open}; how those bots' "
            f"leave ended: {outcomes}; the bots' leave and route errors: {leaves}\n"
            + shard_log_excerpt(cluster, still_open, lines=80, with_lobby=True)
        ) from None
    ledger = Ledger(
        conns.channel(cluster.address("cashier")),
        conns.channel(cluster.address("fairness")),
        conns.channel(cluster.address("history")),
    )
    dealt = set().union(*(bot.dealt_hands for bot in run.bots))

    moved_tables = {t for t in tables if t.rsplit(".", 1)[0] in moved}

    async def recorded_or_voided() -> bool:
        records = await ledger.records(tables)
        return not (await history_problems(ledger, run.bots, records, set())).problems

    with contextlib.suppress(AssertionError):
        await wait_for(recorded_or_voided, within=60, interval=1)
    records = await ledger.records(tables)
    assert any(
        r.table_id in moved_tables and r.start_time.ToNanoseconds() > killed_at * 1e9
        for r in records.values()
    ), "no hand at a taken-over table after the kill"
    # No allowance for the killed shard's tables: a hand it settled reaches history through the
    # record outbox (services/table/log/record_outbox.py) even though the shard died holding it.
    findings = await history_problems(ledger, run.bots, records, set())
    problems, voided, lost = findings.problems, findings.voided, findings.lost
    # House rounds reach history through the shard's retrying queue: wait for them first.
    house_last: list[str] = []

    async def house_recorded() -> bool:
        nonlocal house_last
        house_last = await house_problems(ledger, house_bots)
        return not house_last

    with contextlib.suppress(AssertionError):
        await wait_for(house_recorded, within=60, interval=1)
    problems += house_last
    problems += await money_problems(ledger, run.bots, records, house_bots)
    problems += await fairness_problems(ledger, records)
    problems += await fair_play_problems(ledger, run.bots)
    openings, cards_verified = await opening_problems(ledger, run.bots, records, len(records))
    problems += openings
    assert cards_verified > 0, "no card any bot saw was verified under version 3"
    print(f"fairness v3: {cards_verified} cards the bots saw verified against their openings")
    problems += await privacy_problems(ledger, run.bots, records, voided | lost, PRIVACY_SAMPLE)
    logs = {
        name: service.log_file.read_text(encoding="utf-8", errors="replace")
        for name, service in cluster.services.items()
        if service.log_file is not None and service.log_file.exists()
    }
    assert logs, "no service log kept"
    salted = sorted(records)[:SALT_SAMPLE]
    problems += await salt_problems(ledger, {h: records[h] for h in salted}, logs, SALT_SAMPLE)
    assert problems == [], "\n".join(problems[:40]) + "\n" + hand_log_excerpt(cluster, problems)
    assert len(records) >= HANDS_IN_ALL - len(voided)
    assert dealt - set(records) <= voided | lost
    assert lost == set(), sorted(lost)
    # Issue 30: a hand the killed shard had dealt goes on at the room's new owner from its log; only
    # a hand merely committed (no card dealt, so in no bot's dealt hands) may still be voided.
    assert voided == set(), f"{len(voided)} dealt hands voided at the kill of {victim}: {sorted(voided)[:10]}"
    continued = [
        r
        for r in records.values()
        if r.table_id in moved_tables
        and r.start_time.ToNanoseconds() < killed_at * 1e9 < r.end_time.ToNanoseconds()
    ]
    print(
        f"e2e: {len(records)} hands recorded, {len(voided)} voided and {len(continued)} continued after "
        f"the kill of {victim}; {stats.summary()}"
    )
    await conns.close()
    assert cluster.errors().keys() <= {victim}, cluster.errors()
