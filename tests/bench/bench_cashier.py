"""Cashier throughput against PostgreSQL, every figure beside its floor in alternating slices of one
run (tests/bench/harness.py), by rate and by CPU per operation.

Creates its own database on the server at POKER_TEST_DATABASE_URL (default
postgresql://postgres@127.0.0.1:5432/postgres), migrates it, funds wallets, and measures:

- raw insert (floor): one-row INSERT transactions measured with PostgreSQL's own `pgbench`
  (prepared statements, autocommit): what the server can do, not what a client library can;
- ledger single: one transfer per call through the application layer (lock, check, append, update);
- batched 100: CreateTransfers-equivalent calls of 100 transfers through the ledger layer, each
  between random pairs of all the funded wallets (2,000 by default);
- 6-seat settlements: SettleHand of a six-seat table with rake through the ledger layer, one table
  (six seats of their own) per client;
- gRPC single: one transfer per CreateTransfers call against `python -m services.cashier` on loopback;
- equal-work floors (pgbench, in a database of their own, each with the statements planned when run
  and prepared once; the faster counts): exactly the statements one 6-seat settlement and one batch of
  100 transfers send, captured from the cashier, one settlement or batch per transaction (see
  `cashier_equal_work.py`). Goal: 0.5x.

Every floor runs at the same concurrency as the ledger: `--clients` (64) callers of the ledger and as
many pgbench clients, both capped so that the ledger's pool and pgbench's connections fit together
within the server's free connections (the server is shared: the cap is printed when it applies).
Each scenario alternates with its floors in `--rounds` slices. CPU per operation: this process and
the PostgreSQL backends of the ledger's database for the ledger (plus the service process for gRPC);
pgbench (a reaped child) and the backends of the floors' database for pgbench, read from /proc (a
backend that ends with its pgbench run is counted up to the last reading, every 0.1 s). Only
operations the ledger applied count: a transfer that is not CREATED or a hand that comes back
`existing` stops the run. The database is dropped at the end.
Run: `.venv/bin/python tests/bench/bench_cashier.py` (about five minutes with the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import cashier_equal_work  # beside this script (tests/bench is on sys.path when it runs)
import grpc
import harness  # beside this script too
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


PGBENCH_FLOOR = "raw insert, pgbench"
BATCH_FLOOR = "equal work: batch 100"
SETTLEMENT_FLOOR = "equal work: settle"
RAW_SCRIPT = "INSERT INTO bench_raw_rows (payload) VALUES ('pgbench-' || :client_id);\n"


def run_pgbench(
    url: str,
    script_text: str,
    clients: int,
    seconds: float,
    operations_per_transaction: int = 1,
    protocol: str = "prepared",
    backends: harness.CpuSource | None = None,
) -> harness.Outcome:
    """Run `script_text` from `clients` pgbench connections for `seconds` (whole seconds, at least
    one); operations are transactions times `operations_per_transaction` (transfers in a batch, say).
    `backends` is read every 0.1 s while pgbench runs, so its connections' backends are counted."""
    pgbench = shutil.which("pgbench")
    if pgbench is None:
        raise RuntimeError("pgbench is not on the PATH")
    target = make_url(url)
    with harness.scratch_folder("bench-cashier-") as folder:
        script = Path(folder, "script.sql")
        script.write_text(script_text)
        command = [
            pgbench, "--no-vacuum", f"--protocol={protocol}", f"--client={clients}", f"--jobs={min(clients, 2)}",
            f"--time={max(1, round(seconds))}", f"--file={script}", "--log", f"--log-prefix={folder}/log",
            f"--host={target.host or '127.0.0.1'}", f"--port={target.port or 5432}",
            f"--username={target.username or 'postgres'}", target.database or "postgres",
        ]  # fmt: skip
        env = {**os.environ, **({"PGPASSWORD": target.password} if target.password else {})}
        process = subprocess.Popen(
            command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        while process.poll() is None:
            if backends is not None:
                backends.read()
            time.sleep(0.1)
        output, errors = process.communicate()
        if process.returncode:
            raise RuntimeError(f"pgbench failed:\n{output}\n{errors}")
        processed = re.search(r"number of transactions actually processed: (\d+)", output)
        failed = re.search(r"number of failed transactions: (\d+)", output)
        if processed is None:
            raise RuntimeError(f"cannot read pgbench's output:\n{output}")
        if failed is not None and int(failed.group(1)):
            raise RuntimeError(f"pgbench transactions failed:\n{output}")
        # Per-transaction log lines: client, transaction number, latency in microseconds, ...
        latencies = [
            int(line.split()[2]) / 1e6
            for log in folder.glob("log.*")
            for line in log.read_text().splitlines()
        ]
    return harness.Outcome(int(processed.group(1)) * operations_per_transaction, latencies)


def pgbench_side(
    name: str,
    url: str,
    script: str,
    clients: int,
    operations_per_transaction: int = 1,
    protocol: str = "prepared",
) -> harness.Side:
    backends = harness.postgres_backends(
        f"postgresql ({make_url(url).database})", str(make_url(url).database)
    )

    async def run(seconds: float) -> harness.Outcome:
        return await asyncio.to_thread(
            run_pgbench, url, script, clients, seconds, operations_per_transaction, protocol, backends
        )

    return harness.Side(name, run, [harness.reaped_children("pgbench"), backends])


async def grpc_single_transfers(
    url: str, clients: int, spare: list[str], run: Callable[[harness.Side], Awaitable[None]]
) -> None:
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
                    transfer_id=f"grpc-{client}-{n}-{uuid.uuid4().hex[:8]}", debit_account_id=f"wallet:GRAM:{debit}",
                    credit_account_id=f"wallet:GRAM:{credit}", pool=common_pb2.CHIP_POOL_GRAM,
                    amount=rng.randint(1, 100), kind=cashier_pb2.TRANSFER_KIND_ADJUSTMENT,
                )  # fmt: skip
                reply = await stub.CreateTransfers(
                    cashier_pb2.CreateTransfersRequest(transfers=[transfer]), metadata=metadata, timeout=10
                )
                if [r.status for r in reply.results] != [cashier_pb2.TRANSFER_STATUS_CREATED]:
                    raise RuntimeError(f"transfer {transfer.transfer_id} was not created: {reply}")
                return 1

            async def slice_(seconds: float) -> harness.Outcome:
                return await harness.timed_loops(clients, seconds, grpc_single)

            database = str(make_url(url).database)
            await run(
                harness.Side(
                    "gRPC single transfers",
                    slice_,
                    [
                        harness.this_process(),
                        harness.process("cashier service", server.pid),
                        harness.postgres_backends(f"postgresql ({database})", database),
                    ],
                )
            )
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


def connections_that_fit(url: str, wanted: int) -> int:
    """Connections one side may use so that two sides (the ledger's pool and pgbench's clients) fit
    together in what the shared server has free, keeping a margin for everyone else."""
    with psycopg.connect(
        make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    ) as conn:
        limit = int(conn.execute("SHOW max_connections").fetchone()[0])  # type: ignore[index]
        reserved = int(conn.execute("SHOW superuser_reserved_connections").fetchone()[0])  # type: ignore[index]
        used = int(conn.execute("SELECT count(*) FROM pg_stat_activity").fetchone()[0])  # type: ignore[index]
    return max(1, min(wanted, (limit - reserved - used - 10) // 2))


async def run(
    url: str, floor_url: str, *, clients: int, seconds: float, rounds: int, players: int, only: frozenset[str]
) -> None:
    if shutil.which("pgbench") is None:
        raise SystemExit("bench_cashier: pgbench is not on the PATH (apt-get install postgresql-client)")
    scripts = None
    if only & {"batched", "settlements"}:
        scripts = await equal_work_scripts(floor_url, clients)
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
    database = str(make_url(url).database)
    ledger_cpu = [harness.this_process(), harness.postgres_backends(f"postgresql ({database})", database)]
    raw_floor = pgbench_side(PGBENCH_FLOOR, url, RAW_SCRIPT, clients)

    def ledger_side(name: str, call: Callable[[int, int], Awaitable[int]]) -> harness.Side:
        async def run(seconds: float) -> harness.Outcome:
            return await harness.timed_loops(clients, seconds, call)

        return harness.Side(name, run, ledger_cpu)

    async def measure(
        scenario: harness.Side, target: float | None, equal_work: str | None = None, operations: int = 1
    ) -> None:
        """The scenario against the raw-insert floor (its target) and, when given, against the faster
        of the two equal-work floors (goal 0.5x), all in one set of alternating slices."""
        sides = [raw_floor]
        if equal_work is not None:
            sides += [
                pgbench_side(f"{name} {protocol[:4]}", floor_url, equal_work, clients, operations, protocol)
                for name, protocol in (("equal work", "extended"), ("equal work", "prepared"))
            ]
        tallies = await harness.interleave_all(
            [*sides, scenario], rounds=rounds, slice_seconds=seconds / rounds
        )
        work = tallies[-1]
        harness.report(
            "cashier",
            f"{scenario.name} vs raw inserts",
            harness.Comparison(tallies[0], work),
            unit="ops",
            goal=target,
        )
        if equal_work is not None:
            faster = max(tallies[1:-1], key=lambda tally: tally.rate)
            harness.report(
                "cashier", f"{scenario.name} vs {faster.name}", harness.Comparison(faster, work), unit="ops",
                goal=EQUAL_WORK_TARGET,
            )  # fmt: skip

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
            await cashier.create_transfers(
                [random_transfer(f"single-{client}-{n}-{uuid.uuid4().hex[:8]}")], linked=False
            )
        )

    if "single" in only:
        await measure(
            ledger_side("ledger single transfers", ledger_single), TARGETS["ledger single transfers"]
        )

    async def ledger_batch(client: int, n: int) -> int:
        unique = uuid.uuid4().hex[:8]
        batch = [random_transfer(f"batch-{client}-{n}-{unique}-{k}") for k in range(100)]
        return applied(await cashier.create_transfers(batch, linked=False))

    if "batched" in only:
        assert scripts is not None
        await measure(
            ledger_side("ledger batched 100", ledger_batch), TARGETS["ledger batched 100"], scripts.batch,
            cashier_equal_work.BATCH,
        )  # fmt: skip

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
    hand_numbers = [0] * clients

    async def settle(client: int, n: int) -> int:
        sessions = tables[client]
        hand_numbers[client] += 1
        number = hand_numbers[client]
        winner = number % 6
        losses = [rng.randint(5, 50) if seat != winner else 0 for seat in range(6)]
        rake = min(sum(losses) // 20, 30)
        results = [
            SeatResult(s, sum(losses) - rake if seat == winner else -losses[seat])
            for seat, s in enumerate(sessions)
        ]
        hand = normalise_hand_result(
            f"bench-table-{client}:hand-{number}", f"bench-table-{client}", Pool.GRAM, results, rake, 0
        )
        view, existing = await cashier.settle_hand(hand)
        if existing or len(view.transfers) < 2:
            raise RuntimeError(f"hand {hand.hand_id} was not settled anew: {view}")
        return 1

    if "settlements" in only:
        assert scripts is not None
        await measure(
            ledger_side("6-seat settlements", settle), TARGETS["6-seat settlements"], scripts.settlement, 1
        )

    if "grpc" in only:

        async def run_grpc(side: harness.Side) -> None:
            await measure(side, None)

        await grpc_single_transfers(url, clients, names[clients * 6 :], run_grpc)

    audit, _ = await cashier.audit()
    assert all(f.accounts_total == f.minted - f.burned and f.negative_accounts == 0 for f in audit)
    await engine.dispose()


TARGETS = {
    "ledger single transfers": 0.6,
    "ledger batched 100": 3.0,
    "6-seat settlements": 0.5,
}
# Issue 11: settlements and batches against the floor doing the same work.
EQUAL_WORK_TARGET = 0.5


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server-url", default=os.environ.get("POKER_TEST_DATABASE_URL", DEFAULT_SERVER))
    parser.add_argument(
        "--clients", type=int, default=64, help="concurrent callers of the ledger and of every floor"
    )
    parser.add_argument(
        "--seconds", type=float, default=12.0, help="seconds of each side, all slices together"
    )
    parser.add_argument("--rounds", type=int, default=4, help="slices of each side, alternating")
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
    clients = connections_that_fit(args.server_url, args.clients)
    print(
        f"cashier benchmark, PostgreSQL: {clients} concurrent callers of the ledger and {clients} pgbench clients "
        f"for every floor"
        + (
            f" (asked {args.clients}: the server has room for {clients} of each at once)"
            if clients < args.clients
            else ""
        )
    )
    with (
        throwaway_postgres_database(args.server_url, prefix="poker_bench_cashier") as url,
        throwaway_postgres_database(args.server_url, prefix="poker_bench_cashier_floor") as floor_url,
    ):
        asyncio.run(
            run(
                url,
                floor_url,
                clients=clients,
                seconds=args.seconds,
                rounds=args.rounds,
                players=max(args.players, clients * 6 + 100),
                only=only,
            )
        )
    print(
        "ops are transfers, except settlements (one 6-seat hand each); latency is per call (per transaction for\n"
        "pgbench); equal work: pgbench sends the scenario's statements (one settlement or batch per transaction;\n"
        "exte: each statement planned when run, prep: prepared once; the faster is the floor)"
    )


if __name__ == "__main__":
    main()
