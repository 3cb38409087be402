"""Cashier throughput against PostgreSQL, every figure side by side with the raw-insert floor.

Creates its own database on the server at POKER_TEST_DATABASE_URL (default
postgresql://postgres@127.0.0.1:5432/postgres), migrates it, funds wallets, and runs each scenario
for a fixed time:

- raw insert (floor): one-row INSERT transactions from 8 concurrent clients, measured with
  PostgreSQL's own `pgbench` (prepared statements, autocommit): what the server can do, not what a
  client library can. Without `pgbench` on the PATH the floor falls back to the next line, and the
  report says so;
- raw insert, asyncio psycopg: the same inserts from 8 connections of one Python process through
  psycopg's async driver (autocommit, prepared): the cost of the client side, for reference;
- ledger single: one transfer per call through the application layer (lock, check, append, update);
- batched 100: CreateTransfers-equivalent calls of 100 transfers through the ledger layer, each
  between random pairs of all the funded wallets (2,000 by default), so batches spread over many
  accounts and overlap only by chance;
- 6-seat settlements: SettleHand of a six-seat table with rake through the ledger layer, one table
  (six seats of their own) per client;
- gRPC single: one transfer per CreateTransfers call against `python -m services.cashier` on loopback;
- equal-work floors (pgbench, 8 clients, in a database of their own, each with the statements planned
  when run and prepared once; the faster counts): exactly the statements one
  6-seat settlement and one batch of 100 transfers send, captured from the cashier, one settlement or
  batch per transaction (see `cashier_equal_work.py`). Each runs just before its ledger scenario, and
  that scenario's rate is also printed as a ratio of it (goal: 0.5x).

The ledger scenarios run with `--clients` concurrent callers (64 by default: the cashier serves
every table shard and the gateway at once, and concurrent callers share transactions). Each line
reports operations (transfers or settlements) per second, the ratio to the floor, p50/p99 latency
per call, and the CPU each operation cost in this process and in the PostgreSQL server processes of
this machine (read from /proc; other work on the server shows up there too). Only operations the
ledger applied count: a transfer that is not CREATED or a hand that comes back `existing` stops the
run. The database is dropped at the end.
Run: `.venv/bin/python tests/bench/bench_cashier.py` (about three minutes with the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import cashier_equal_work  # beside this script (tests/bench is on sys.path when it runs)
import grpc
import psycopg
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy import BigInteger, Column, Identity, MetaData, String, Table
from sqlalchemy.engine import make_url

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import Role
from service_runtime.database import create_engine
from service_runtime.testing import auth_metadata, throwaway_postgres_database
from services.cashier.application import Cashier
from services.cashier.assembly import migrate
from services.cashier.ledger import Pool, TransferKind, TransferOutcome, TransferRequest, TransferStatus
from services.cashier.payments import PaymentSource
from services.cashier.settlement import SeatResult, normalise_hand_result

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"

raw_metadata = MetaData()
raw_rows = Table(
    "bench_raw_rows",
    raw_metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("payload", String(64), nullable=False),
)

RAW_INSERT = "INSERT INTO bench_raw_rows (payload) VALUES (%(payload)s)"


def _server_cpu_seconds() -> float | None:
    """CPU seconds used so far by the PostgreSQL processes of this machine (None if none are visible)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, seen = 0, False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if name.startswith("postgres"):
            seen = True
            # Own time, plus that of exited children the postmaster reaped (pgbench's backends).
            total += sum(int(value) for value in fields[11:15])
    return total / ticks if seen else None


@dataclass
class Figure:
    name: str
    operations: int
    calls: int
    seconds: float
    latencies: list[float]
    client_cpu: float = 0.0
    server_cpu: float | None = None
    # The equal-work floor this scenario is compared with, when it has one.
    equal_work: Figure | None = None

    @property
    def rate(self) -> float:
        return self.operations / self.seconds

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000 if ordered else 0.0


async def drive(
    name: str, clients: int, seconds: float, call: Callable[[int, int], Awaitable[int]]
) -> Figure:
    """Run `call(client, n)` in a loop from `clients` tasks for `seconds`; it returns operations done."""
    latencies: list[float] = []
    operations = 0
    calls = 0
    deadline = time.perf_counter() + seconds

    async def client(index: int) -> None:
        nonlocal operations, calls
        n = 0
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            done = await call(index, n)
            operations += done
            latencies.append(time.perf_counter() - started)
            calls += 1
            n += 1

    started, cpu, server = time.perf_counter(), time.process_time(), _server_cpu_seconds()
    await asyncio.gather(*(client(i) for i in range(clients)))
    server_after = _server_cpu_seconds()
    return Figure(
        name, operations, calls, time.perf_counter() - started, latencies, time.process_time() - cpu,
        None if server is None or server_after is None else server_after - server,
    )  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_serving(target: str) -> None:
    deadline = time.monotonic() + 60
    async with grpc.aio.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError("the cashier service did not become SERVING")


PGBENCH_FLOOR = "raw insert, pgbench (floor)"
PSYCOPG_FLOOR = "raw insert, asyncio psycopg"
BATCH_FLOOR = "equal work: batch 100"
SETTLEMENT_FLOOR = "equal work: settle"


def pgbench_floor(url: str, clients: int, seconds: float) -> Figure | None:
    """One-row INSERT transactions from `clients` pgbench connections, or None without pgbench."""
    script = "INSERT INTO bench_raw_rows (payload) VALUES ('pgbench-' || :client_id);\n"
    return run_pgbench(url, PGBENCH_FLOOR, script, clients, seconds)


def run_pgbench(
    url: str,
    name: str,
    script_text: str,
    clients: int,
    seconds: float,
    operations_per_transaction: int = 1,
    protocol: str = "prepared",
) -> Figure | None:
    """Run `script_text` from `clients` pgbench connections; None without pgbench.

    Operations are transactions times `operations_per_transaction` (transfers in a batch, say).
    """
    pgbench = shutil.which("pgbench")
    if pgbench is None:
        return None
    target = make_url(url)
    with tempfile.TemporaryDirectory(prefix="bench-cashier-") as folder:
        script = Path(folder, "script.sql")
        script.write_text(script_text)
        command = [
            pgbench, "--no-vacuum", f"--protocol={protocol}", f"--client={clients}", f"--jobs={min(clients, 2)}",
            f"--time={max(1, round(seconds))}", f"--file={script}", "--log", f"--log-prefix={folder}/log",
            f"--host={target.host or '127.0.0.1'}", f"--port={target.port or 5432}",
            f"--username={target.username or 'postgres'}", target.database or "postgres",
        ]  # fmt: skip
        env = {**os.environ, **({"PGPASSWORD": target.password} if target.password else {})}
        children, server = resource.getrusage(resource.RUSAGE_CHILDREN), _server_cpu_seconds()
        output = subprocess.run(
            command, cwd=folder, env=env, capture_output=True, text=True, check=True
        ).stdout
        time.sleep(0.5)  # let the postmaster reap pgbench's backends: their time counts as its children's
        server_after, children_after = _server_cpu_seconds(), resource.getrusage(resource.RUSAGE_CHILDREN)
        processed = re.search(r"number of transactions actually processed: (\d+)", output)
        tps = re.search(r"tps = ([0-9.]+)", output)
        failed = re.search(r"number of failed transactions: (\d+)", output)
        if processed is None or tps is None:
            raise RuntimeError(f"cannot read pgbench's output:\n{output}")
        if failed is not None and int(failed.group(1)):
            raise RuntimeError(f"pgbench transactions failed:\n{output}")
        # Per-transaction log lines: client, transaction number, latency in microseconds, ...
        latencies = [
            int(line.split()[2]) / 1e6
            for log in Path(folder).glob("log.*")
            for line in log.read_text().splitlines()
        ]
    transactions = int(processed.group(1))
    client_cpu = (children_after.ru_utime + children_after.ru_stime) - (children.ru_utime + children.ru_stime)
    return Figure(
        name, transactions * operations_per_transaction, transactions, transactions / float(tps.group(1)),
        latencies, client_cpu, None if server is None or server_after is None else server_after - server,
    )  # fmt: skip


async def psycopg_floor(url: str, clients: int, seconds: float) -> Figure:
    """The same inserts from `clients` asyncio psycopg connections of this process."""
    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    connections = [await psycopg.AsyncConnection.connect(conninfo, autocommit=True) for _ in range(clients)]

    async def insert(client: int, n: int) -> int:
        await connections[client].execute(RAW_INSERT, {"payload": f"{client}-{n}"}, prepare=True)
        return 1

    try:
        return await drive(PSYCOPG_FLOOR, clients, seconds, insert)
    finally:
        for connection in connections:
            await connection.close()


async def grpc_single_transfers(url: str, clients: int, seconds: float, spare: list[str]) -> Figure:
    """One transfer per CreateTransfers call against `python -m services.cashier` on loopback."""
    rng = random.Random(11)
    port = _free_port()
    env = {
        **os.environ,
        "POKER_CASHIER_PORT": str(port),
        "POKER_CASHIER_DATABASE_URL": url,
        "POKER_LOG_LEVEL": "warning",
        "POKER_CASHIER_DATABASE_POOL_SIZE": str(clients),
    }
    server = subprocess.Popen(  # noqa: ASYNC220 - started once, before any timing
        [sys.executable, "-m", "services.cashier"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )
    try:
        target = f"127.0.0.1:{port}"
        await _wait_serving(target)
        metadata = auth_metadata("table", Role.SERVICE)
        async with grpc.aio.insecure_channel(target) as channel:
            stub = cashier_pb2_grpc.CashierServiceStub(channel)

            async def grpc_single(client: int, n: int) -> int:
                debit, credit = rng.sample(spare, 2)
                transfer = cashier_pb2.Transfer(
                    transfer_id=f"grpc-{client}-{n}", debit_account_id=f"wallet:GRAM:{debit}",
                    credit_account_id=f"wallet:GRAM:{credit}", pool=common_pb2.CHIP_POOL_GRAM,
                    amount=rng.randint(1, 100), kind=cashier_pb2.TRANSFER_KIND_ADJUSTMENT,
                )  # fmt: skip
                reply = await stub.CreateTransfers(
                    cashier_pb2.CreateTransfersRequest(transfers=[transfer]), metadata=metadata, timeout=10
                )
                if [r.status for r in reply.results] != [cashier_pb2.TRANSFER_STATUS_CREATED]:
                    raise RuntimeError(f"transfer {transfer.transfer_id} was not created: {reply}")
                return 1

            return await drive("gRPC single transfers", clients, seconds, grpc_single)
    finally:
        server.terminate()
        server.wait(timeout=30)


SCENARIOS = ("single", "batched", "settlements", "grpc")


async def equal_work_scripts(floor_url: str, floor_clients: int) -> cashier_equal_work.EqualWorkScripts:
    """Set up the equal-work floors' own database and capture the statements they replay."""
    await asyncio.to_thread(migrate, floor_url)
    engine = create_engine(floor_url, pool_size=16)
    try:
        return await cashier_equal_work.prepare_scripts(Cashier(engine), floor_clients)
    finally:
        await engine.dispose()


async def run(
    url: str,
    floor_url: str,
    *,
    clients: int,
    floor_clients: int,
    seconds: float,
    players: int,
    only: frozenset[str],
) -> list[Figure]:
    scripts = None
    if shutil.which("pgbench") is not None and only & {"batched", "settlements"}:
        scripts = await equal_work_scripts(floor_url, floor_clients)
    await asyncio.to_thread(migrate, url)
    engine = create_engine(url, pool_size=clients)
    cashier = Cashier(engine)
    async with engine.begin() as conn:
        await conn.run_sync(raw_metadata.create_all)
        # The floor's scratch rows are never read: vacuuming them would bill the scenarios after it.
        await conn.exec_driver_sql("ALTER TABLE bench_raw_rows SET (autovacuum_enabled = false)")
    names = [f"bench-{i}" for i in range(players)]
    funding = asyncio.Semaphore(clients)

    async def fund(name: str) -> None:
        async with funding:
            await cashier.purchase(
                payment_reference=f"fund-{name}",
                player_id=name,
                source=PaymentSource.GRAM,
                amount_minor=10**9 * 10**6,
            )

    await asyncio.gather(*(fund(name) for name in names))
    rng = random.Random(7)
    figures: list[Figure] = []

    floor = await asyncio.to_thread(pgbench_floor, url, floor_clients, seconds)
    if floor is not None:
        figures.append(floor)
    figures.append(await psycopg_floor(url, floor_clients, seconds))

    def random_transfer(prefix: str) -> TransferRequest:
        debit, credit = rng.sample(names, 2)
        return TransferRequest(
            prefix, f"wallet:GRAM:{debit}", f"wallet:GRAM:{credit}", Pool.GRAM, rng.randint(1, 100),
            TransferKind.ADJUSTMENT,
        )  # fmt: skip

    def applied(outcomes: list[TransferOutcome]) -> int:
        created = sum(o.status is TransferStatus.CREATED for o in outcomes)
        if created != len(outcomes):
            raise RuntimeError(f"only {created} of {len(outcomes)} transfers were created: {outcomes[:3]}")
        return created

    async def ledger_single(client: int, n: int) -> int:
        return applied(
            await cashier.create_transfers([random_transfer(f"single-{client}-{n}")], linked=False)
        )

    if "single" in only:
        figures.append(await drive("ledger single transfers", clients, seconds, ledger_single))

    async def ledger_batch(client: int, n: int) -> int:
        batch = [random_transfer(f"batch-{client}-{n}-{k}") for k in range(100)]
        return applied(await cashier.create_transfers(batch, linked=False))

    async def equal_work_floor(name: str, script: str, operations_per_transaction: int) -> Figure | None:
        """The faster of the two ways to send the statements: planned each time, as the cashier's
        lock-and-load is (`extended`), or prepared once, as its write is (`prepared`)."""
        runs = []
        for protocol in ("extended", "prepared"):
            figure = await asyncio.to_thread(
                run_pgbench, floor_url, f"{name} {protocol[:4]}", script, floor_clients, seconds,
                operations_per_transaction, protocol,
            )  # fmt: skip
            if figure is not None:
                figures.append(figure)
                runs.append(figure)
        return max(runs, key=lambda figure: figure.rate, default=None)

    if "batched" in only:
        batch_floor = None
        if scripts is not None:
            batch_floor = await equal_work_floor(BATCH_FLOOR, scripts.batch, cashier_equal_work.BATCH)
        figures.append(await drive("ledger batched 100", clients, seconds, ledger_batch))
        figures[-1].equal_work = batch_floor

    # Six seats per table, one table per client; stacks are deep so nobody runs dry.
    tables: list[list[str]] = []
    seat_players = iter(names)
    for table in range(clients):
        sessions = []
        for seat in range(6):
            player = next(seat_players)
            session_id = f"bench-table-{table}/{player}"
            await cashier.open_seat_session(
                session_id=session_id, player_id=player, table_id=f"bench-table-{table}", seat_index=seat,
                pool=Pool.GRAM, buy_in_amount=10**8, min_buy_in=1, max_buy_in=10**9,
            )  # fmt: skip
            sessions.append(session_id)
        tables.append(sessions)

    async def settle(client: int, n: int) -> int:
        sessions = tables[client]
        winner = n % 6
        losses = [rng.randint(5, 50) if seat != winner else 0 for seat in range(6)]
        rake = min(sum(losses) // 20, 30)
        results = [
            SeatResult(s, sum(losses) - rake if seat == winner else -losses[seat])
            for seat, s in enumerate(sessions)
        ]
        hand = normalise_hand_result(
            f"bench-table-{client}:hand-{n}", f"bench-table-{client}", Pool.GRAM, results, rake, 0
        )
        view, existing = await cashier.settle_hand(hand)
        if existing or len(view.transfers) < 2:
            raise RuntimeError(f"hand {hand.hand_id} was not settled anew: {view}")
        return 1

    if "settlements" in only:
        settlement_floor = None
        if scripts is not None:
            settlement_floor = await equal_work_floor(SETTLEMENT_FLOOR, scripts.settlement, 1)
        figures.append(await drive("6-seat settlements", clients, seconds, settle))
        figures[-1].equal_work = settlement_floor

    if "grpc" in only:
        figures.append(await grpc_single_transfers(url, clients, seconds, names[clients * 6 :]))

    audit, _ = await cashier.audit()
    assert all(f.accounts_total == f.minted - f.burned and f.negative_accounts == 0 for f in audit)
    await engine.dispose()
    return figures


TARGETS = {
    "ledger single transfers": 0.6,
    "ledger batched 100": 3.0,
    "6-seat settlements": 0.5,
}
# Issue 11: settlements and batches against the floor doing the same work.
EQUAL_WORK_TARGET = 0.5


def report(figures: list[Figure], clients: int, floor_clients: int) -> None:
    floor = figures[0].rate
    print(
        f"\ncashier benchmark, PostgreSQL: floor {figures[0].name} from {floor_clients} clients; "
        f"ledger scenarios from {clients} concurrent callers; ratios to the floor"
    )
    if figures[0].name != PGBENCH_FLOOR:
        print("pgbench is not on the PATH: the floor is the Python client's rate, well below the server's")
    if any(f.name in ("ledger batched 100", "6-seat settlements") and f.equal_work is None for f in figures):
        print("pgbench is not on the PATH: no equal-work floor for batches and settlements")
    print(
        f"{'scenario':<31}{'ops/s':>9}{'ratio':>8}{'target':>11}{'equal work':>12}{'goal':>10}"
        f"{'p50 ms':>9}{'p99 ms':>9}{'calls':>8}{'us cpu/op':>11}{'us db/op':>10}"
    )
    for figure in figures:
        target = TARGETS.get(figure.name)
        ratio = figure.rate / floor
        mark = "" if target is None else (f"{target:.1f}x" + (" ok" if ratio >= target else " MISS"))
        equal, goal = "", ""
        if figure.equal_work is not None:
            equal_ratio = figure.rate / figure.equal_work.rate
            equal = f"{equal_ratio:.2f}x"
            goal = f"{EQUAL_WORK_TARGET:.1f}x" + (" ok" if equal_ratio >= EQUAL_WORK_TARGET else " MISS")
        print(
            f"{figure.name:<31}{figure.rate:>9.0f}{ratio:>7.2f}x{mark:>11}{equal:>12}{goal:>10}"
            f"{figure.percentile(0.5):>9.2f}{figure.percentile(0.99):>9.2f}{figure.calls:>8}"
            f"{figure.client_cpu / figure.operations * 1e6:>11.0f}"
            f"{'' if figure.server_cpu is None else format(figure.server_cpu / figure.operations * 1e6, '.0f'):>10}"
        )
    print(
        "ops are transfers, except settlements (one 6-seat hand each); latency is per call (per transaction\n"
        "for pgbench); ratio is to the raw-insert floor, equal work to the faster pgbench line doing the\n"
        "scenario's statements (one settlement or batch per transaction, 8 clients; exte: each statement\n"
        "planned when run, prep: prepared once); us cpu/op is this process (pgbench's for its lines),\n"
        "us db/op the PostgreSQL processes of this machine\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server-url", default=os.environ.get("POKER_TEST_DATABASE_URL", DEFAULT_SERVER))
    parser.add_argument("--clients", type=int, default=64, help="concurrent callers of the ledger")
    parser.add_argument("--floor-clients", type=int, default=8, help="clients of the raw insert floor")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument(
        "--only",
        default=",".join(SCENARIOS),
        help=f"comma-separated scenarios to run besides the floor: {SCENARIOS}",
    )
    args = parser.parse_args()
    only = frozenset(args.only.split(","))
    if not only <= set(SCENARIOS):
        parser.error(f"--only takes some of {', '.join(SCENARIOS)}")
    with (
        throwaway_postgres_database(args.server_url, prefix="poker_bench_cashier") as url,
        throwaway_postgres_database(args.server_url, prefix="poker_bench_cashier_floor") as floor_url,
    ):
        options = {"clients": args.clients, "floor_clients": args.floor_clients, "players": args.players}
        figures = asyncio.run(run(url, floor_url, seconds=args.seconds, only=only, **options))
    report(figures, args.clients, args.floor_clients)


if __name__ == "__main__":
    main()
