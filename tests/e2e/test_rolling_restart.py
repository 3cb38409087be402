"""A rolling restart of both table shards under bot load, as a StatefulSet rollout does it (issue 26):
each shard in turn, highest ordinal first, gets SIGTERM, drains (no new hand, the running ones played
out, its rooms released to the other shard at once), exits 0 and starts again with the same id and
address, and wins its rooms back the same way (the other shard plays its hand there out first). Bots
play throughout, and house bots play Casino Hold'em and Russian Poker rounds at the house rooms of
both pools. Afterwards: no hand voided and no house round refunded, every seat session open before a
restart is still open (or was closed by a bust, with nothing to cash out), every pool balances,
history holds every hand and round with each player's nets equal to the cashier's statement, every
deck verifies, and no service logged an error. CI rolls once (about 60 hands before, 60 after); POKER_E2E_FULL=1 rolls three times with
300 hands between rolls."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.lobby.v1 import lobby_pb2
from poker_bots.bot import Behaviour, Connections
from poker_bots.credentials import MintedCredentials
from poker_bots.run import RunPlan, run_bots
from poker_bots.stats import RunStats
from service_runtime.shard_registry import choose_shard
from service_runtime.testing import DEV_KEYS, fund_house
from tests.e2e.checks import (
    ADMIN,
    Ledger,
    fairness_problems,
    history_problems,
    house_problems,
    money_problems,
)
from tests.e2e.cluster import BOT_LEAVE_SECONDS, Cluster, running_cluster
from tests.e2e.faults import log_records
from tests.table.conftest import ServiceProcess, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.postgres, pytest.mark.redis]

FULL = os.environ.get("POKER_E2E_FULL") == "1"
ROLLS = 3 if FULL else 1
HANDS_BETWEEN_ROLLS = 300 if FULL else 60
ROOMS = ("nlhe-gram-classic", "nlhe-mpx-classic", "flhe-gram-6max-10-20", "flhe-mpx-6max-10-20")
BOTS = 12
HOUSE_ROOMS = ("casino-holdem-gram", "casino-holdem-mpx", "russian-poker-gram", "russian-poker-mpx")
HOUSE_BANK = 5_000_000
# The drain bound at the run's clocks (tests/e2e/cluster.py: 0.5 s to act, 0.2 s of time bank; house
# decisions 20 s): above the longest hand the settings allow, far above what a drain takes here.
DRAIN_SECONDS = 45.0


@pytest.fixture
def rolling_cluster(
    postgres_server_url: str, redis_server_url: str, redis_prefix: str, tmp_path: Path
) -> Iterator[Cluster]:
    with running_cluster(
        postgres_server_url,
        redis_server_url,
        redis_prefix,
        tmp_path,
        table_env={"POKER_TABLE_DRAIN_SECONDS": str(DRAIN_SECONDS)},
    ) as started:
        yield started


# Why a shard refunds a house round (services/table/house/house_core.py, the `refunding` entry): these
# two are a dependency that did not answer in time, not a restart.
DEPENDENCY_REFUNDS = frozenset({"stakes_unanswered", "deck_not_sealed"})


def refund_reasons(logs: list[Path]) -> dict[str, str]:
    """Round id -> why, from the shards' "house round refunded" lines."""
    return {
        str(r.get("round_id")): str(r.get("why"))
        for path in logs
        for r in log_records(path)
        if r.get("event") == "house round refunded"
    }


def drain_lines(logs: list[Path]) -> list[str]:
    """What the shards said of their drains and handovers: how a refund by a restart came about."""
    events = ("drain started", "drain finished", "room handed over", "house round refunded")
    return [
        f"{path.stem} {r.get('timestamp', '')} {r.get('event')} "
        f"{ {k: v for k, v in r.items() if k not in ('event', 'timestamp', 'level', 'logger')} }"
        for path in logs
        for r in log_records(path)
        if r.get("event") in events or str(r.get("event", "")).startswith("drain time is up")
    ]


async def terminate_and_wait(shard: ServiceProcess) -> float:
    """SIGTERM, as the kubelet sends it; the drain's time. The shard must exit 0 within its bound.
    Waited for in a thread: the bots' event loop must not stop while the shard drains."""
    process = shard.process
    assert process is not None
    started = time.monotonic()
    process.terminate()
    try:
        code = await asyncio.to_thread(process.wait, DRAIN_SECONDS + 20)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"{shard.env['POKER_TABLE_SHARD_ID']} did not exit after its drain") from None
    assert code == 0, f"exit status {code}"
    return time.monotonic() - started


async def open_sessions(conns: Connections, tables: list[str]) -> dict[str, str]:
    """Open seat sessions of the run's tables: session id -> player."""
    found = {}
    for table_id in tables:
        reply = await conns.cashier.ListOpenSeatSessions(
            cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id), metadata=ADMIN
        )
        found.update({s.session_id: s.player_id for s in reply.seat_sessions})
    return found


async def seats_lost(conns: Connections, before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Sessions open before that are closed now with chips cashed out (a bust closes with nothing)."""
    lost = []
    for session_id in sorted(set(before) - set(after)):
        reply = await conns.cashier.GetSeatSession(
            cashier_pb2.GetSeatSessionRequest(session_id=session_id), metadata=ADMIN
        )
        if reply.seat_session.cash_out_amount != 0:
            lost.append(f"{before[session_id]}: {session_id} cashed out {reply.seat_session.cash_out_amount}")
    return lost


async def owners(conns: Connections, metadata: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The shard the lobby routes each room to (a moment of UNAVAILABLE while a shard exits is retried)."""
    found = {}
    for room in ROOMS:
        for attempt in range(20):
            try:
                joined = await conns.lobby.JoinTable(
                    lobby_pb2.JoinTableRequest(room_id=room, spectate=True), metadata=metadata
                )
                break
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == 19:
                    raise
                await asyncio.sleep(0.5)
        found[room] = joined.shard_id
    return found


async def test_a_rolling_restart_of_both_shards_under_bot_load_voids_no_hand_and_keeps_every_seat(
    rolling_cluster: Cluster, tmp_path: Path
) -> None:
    cluster = rolling_cluster
    shard_logs = [tmp_path / f"{name}.log" for name in cluster.shards]
    credentials = MintedCredentials(DEV_KEYS)
    conns = Connections(cluster.address("lobby"), cluster.address("cashier"))
    stats = RunStats()
    prefix = f"roll-{uuid.uuid4().hex[:6]}"
    plan = RunPlan(
        lobby=cluster.address("lobby"),
        cashier=cluster.address("cashier"),
        rooms=ROOMS,
        bots=BOTS,
        tables=len(ROOMS),
        # The test sets `stop` once the last roll is over and enough hands followed it.
        hands=10**9,
        seed=26,
        player_prefix=prefix,
        # No bot leaves of its own accord here, so a seat that closes with chips is one the restart lost.
        behaviour=Behaviour(timeout_rate=0.03, leave_rate=0.0),
    )
    house_plan = RunPlan(
        lobby=plan.lobby,
        cashier=plan.cashier,
        rooms=(),
        bots=0,
        tables=1,
        player_prefix=f"{prefix}-house",
        house_rooms=HOUSE_ROOMS,
        house_bots=len(HOUSE_ROOMS),
    )
    for pool in (common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX):
        await fund_house(
            conns.cashier,
            request_id=uuid.uuid4().hex,
            pool=pool,
            amount=HOUSE_BANK,
            reason="rolling restart house bank",
        )
    reader = credentials.player(f"{prefix}-1")
    tables = [f"{room}.1" for room in ROOMS]
    stop = asyncio.Event()
    run_task = asyncio.create_task(run_bots(plan, credentials, stop, conns, stats, leave_at_end=False))
    house_task = asyncio.create_task(run_bots(house_plan, credentials, stop, conns, stats))
    lost: list[str] = []
    drains: list[float] = []
    moved_back = 0
    winners = {room: choose_shard(room, list(cluster.shards)) for room in ROOMS}

    async def at_winners() -> bool:
        return await owners(conns, reader) == winners

    try:
        for _ in range(ROLLS):
            start = len(stats.hands)
            await wait_for(
                lambda s=start: len(stats.hands) >= s + HANDS_BETWEEN_ROLLS or run_task.done(),  # type: ignore[misc]
                within=600,
                interval=0.2,
            )
            assert not run_task.done(), run_task.result()
            # Every room is at its rendezvous winner first (the shard that started first held them
            # all, and hands the others' over between hands).
            await wait_for(at_winners, within=60, interval=0.5)
            # The StatefulSet's order: the highest ordinal first, each back before the next goes.
            for name in sorted(cluster.shards, reverse=True):
                shard = cluster.shards[name]
                before = await open_sessions(conns, tables)
                drains.append(await terminate_and_wait(shard))
                assert all(owner != name for owner in (await owners(conns, reader)).values())
                await asyncio.to_thread(shard.start, shard.port)
                # The rooms it wins come back to it (once the other shard's hand there is over).
                await wait_for(at_winners, within=30, interval=0.5)
                moved_back += sum(1 for owner in winners.values() if owner == name)
                # A few hands at the restarted shard's tables before the next shard goes.
                start = len(stats.hands)
                await wait_for(lambda s=start: len(stats.hands) >= s + 8, within=120, interval=0.2)  # type: ignore[misc]
                lost += await seats_lost(conns, before, await open_sessions(conns, tables))
        start = len(stats.hands)
        await wait_for(lambda: len(stats.hands) >= start + HANDS_BETWEEN_ROLLS, within=600, interval=0.2)
        assert not run_task.done(), run_task.result()
        stop.set()
        run = await asyncio.wait_for(run_task, timeout=120)
        house_run = await asyncio.wait_for(house_task, timeout=120)
    finally:
        stop.set()
        for task in (run_task, house_task):
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, timeout=60)
    try:
        assert stats.unexpected_errors() == {}, stats.summary()
        assert lost == [], lost
    finally:
        await asyncio.gather(*(bot.finish(within=BOT_LEAVE_SECONDS) for bot in run.bots))
    ledger = Ledger(
        conns.channel(cluster.address("cashier")),
        conns.channel(cluster.address("fairness")),
        conns.channel(cluster.address("history")),
    )
    dealt = set().union(*(bot.dealt_hands for bot in run.bots))
    voided = [h for h in sorted(dealt) if await ledger.state_of(h) == fairness_pb2.HAND_STATE_VOIDED]
    assert voided == [], f"{len(voided)} of {len(dealt)} hands voided: {voided[:10]}"

    async def recorded() -> bool:
        records = await ledger.records(tables)
        return not (await history_problems(ledger, run.bots, records, set())).problems

    with contextlib.suppress(AssertionError):
        await wait_for(recorded, within=60, interval=1)
    records = await ledger.records(tables)
    findings = await history_problems(ledger, run.bots, records, set())
    problems = findings.problems
    house_bots = house_run.house_bots
    assert stats.house_rounds > 0
    house_last: list[str] = []

    async def house_recorded() -> bool:
        nonlocal house_last
        house_last = await house_problems(ledger, house_bots)
        return not house_last

    with contextlib.suppress(AssertionError):
        await wait_for(house_recorded, within=60, interval=1)
    problems += house_last
    # No house round was refunded because of the restarts: a round a shard's stop left undealt is
    # refunded by the table that opens next (`reopened`). A round whose stakes or deck the cashier or
    # fairness did not answer for in time (this machine under load) is refunded too, by design, and
    # only counted here; a refund no shard gave a reason for is a loss all the same.
    said = refund_reasons(shard_logs)
    load_refunds: list[str] = []
    for bot in house_bots:
        refunded = [
            e.reference.removesuffix(":void")
            for e in await ledger.statement(bot.player_id)
            if e.reference.endswith(":void")
        ]
        for round_id in refunded:
            why = said.get(round_id, "no shard said why")
            if why in DEPENDENCY_REFUNDS:
                load_refunds.append(f"{round_id}: {why}")
            else:
                problems.append(f"{bot.player_id}: house round {round_id} refunded ({why})")
    if any("house round" in p and "refunded" in p for p in problems):
        problems += [f"drain: {line}" for line in drain_lines(shard_logs)]
    problems += await money_problems(ledger, run.bots, records, house_bots)
    problems += await fairness_problems(ledger, records)
    assert problems == [], "\n".join(problems[:40])
    assert findings.voided == set()
    assert dealt <= set(records)
    print(
        f"rolling restart: {ROLLS} roll(s) of {len(cluster.shards)} shards, {len(dealt)} hands dealt, "
        f"0 voided, {stats.house_rounds} house rounds (none refunded by a restart; a dependency's "
        f"refunds {load_refunds}), {moved_back} rooms moved back, "
        f"drains {[round(d, 1) for d in drains]} s; {stats.summary()}"
    )
    await conns.close()
    assert cluster.errors() == {}, cluster.errors()
