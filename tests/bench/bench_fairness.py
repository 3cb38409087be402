"""Fairness throughput through gRPC against a real server, on SQLite and on PostgreSQL in one run,
each beside the raw insert rate of the same database measured in the same run.

For each database it starts `python -m services.fairness` as its own process on a free loopback port
(SQLite in a temporary folder; PostgreSQL in a throwaway database on the server at
POKER_TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres; `--skip-postgres`
leaves it out), then drives it with concurrent clients, one table each, for a fixed time per scenario:

- raw insert (floor): one-row INSERT transactions into a table of the same database. SQLite: one
  Python sqlite3 connection with the service's settings (WAL, BEGIN IMMEDIATE ... COMMIT), since
  SQLite has one writer at a time. PostgreSQL: `pgbench` from the same number of clients (prepared
  statements), or, without pgbench on the PATH, asyncio psycopg connections of this process;
- commit+deck (deal_now): one CommitHand that returns the deck (the plain scheme, house games);
- full lifecycle: CommitHand, two AddPlayerEntropy, SealHand, RevealHand: what every hand of a table
  with two player seeds waits on (five units of work that write).

- full lifecycle, 2 seeds sent with SealHand: the same hand in three calls (`SealHand` carries the
  client seeds);
- full lifecycle, in process: the same five use cases called on `FairnessApplication` directly
  (no gRPC, no second process), after the service stopped: what the application and the database
  driver cost without the RPC layer.

Each line prints hands per second, units of work that write per second and their ratio to the
floor's transactions, p50 and p99 per hand, p99 per call (each call is a point where a table waits),
and the CPU time the service process spent per hand (user + system, from /proc): on a machine shared
with other work the rates move with the load, the CPU per hand much less.
Run: `.venv/bin/python tests/bench/bench_fairness.py` (about a minute with the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import psycopg
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy.engine import make_url

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.testing import throwaway_postgres_database, token_for
from services.fairness.shuffle import SHUFFLE_VERSION, SeatSeed, shuffle_deck

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_serving(target: str, deadline_seconds: float = 60.0) -> None:
    deadline = time.monotonic() + deadline_seconds
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
    raise RuntimeError(f"the fairness service at {target} did not become SERVING")


METADATA = (("authorization", f"Bearer {token_for('table', 'service', ttl_seconds=3600)}"),)


@dataclass
class Timings:
    """Per-hand and per-call latencies (ms) of one scenario."""

    hands: list[float] = field(default_factory=list)
    calls: list[float] = field(default_factory=list)


class Client:
    """One table's client: times each call it makes."""

    def __init__(self, stub: fairness_pb2_grpc.FairnessServiceStub, timings: Timings) -> None:
        self.stub, self.timings = stub, timings

    async def call(self, method: Callable[..., Awaitable[object]], request: object) -> object:
        started = time.perf_counter()
        response = await method(request, metadata=METADATA)
        self.timings.calls.append((time.perf_counter() - started) * 1000)
        return response


Scenario = Callable[[Client, str, int], Awaitable[None]]


async def commit_and_deck(client: Client, table: str, n: int) -> None:
    request = fairness_pb2.CommitHandRequest(request_id=f"{table}/{n}", table_id=table, deal_now=True)
    response: fairness_pb2.CommitHandResponse = await client.call(client.stub.CommitHand, request)  # type: ignore[assignment]
    assert len(response.deck) == 52


async def full_lifecycle(client: Client, table: str, n: int) -> None:
    stub = client.stub
    committed: fairness_pb2.CommitHandResponse = await client.call(  # type: ignore[assignment]
        stub.CommitHand, fairness_pb2.CommitHandRequest(request_id=f"{table}/{n}", table_id=table)
    )
    hand_id = committed.commitment.hand_id
    for seat in (1, 2):
        request = fairness_pb2.AddPlayerEntropyRequest(
            hand_id=hand_id, seat=seat, player_id=f"p{seat}", client_seed=os.urandom(16)
        )
        await client.call(stub.AddPlayerEntropy, request)
    sealed: fairness_pb2.SealHandResponse = await client.call(  # type: ignore[assignment]
        stub.SealHand, fairness_pb2.SealHandRequest(hand_id=hand_id)
    )
    assert len(sealed.deck) == 52
    await client.call(
        stub.RevealHand,
        fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
    )


async def full_lifecycle_seeds_with_seal(client: Client, table: str, n: int) -> None:
    stub = client.stub
    committed: fairness_pb2.CommitHandResponse = await client.call(  # type: ignore[assignment]
        stub.CommitHand, fairness_pb2.CommitHandRequest(request_id=f"{table}/{n}", table_id=table)
    )
    hand_id = committed.commitment.hand_id
    seeds = [
        fairness_pb2.ClientSeed(seat=seat, player_id=f"p{seat}", client_seed=os.urandom(16))
        for seat in (1, 2)
    ]
    sealed: fairness_pb2.SealHandResponse = await client.call(  # type: ignore[assignment]
        stub.SealHand, fairness_pb2.SealHandRequest(hand_id=hand_id, client_seeds=seeds)
    )
    assert len(sealed.deck) == 52
    await client.call(
        stub.RevealHand,
        fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
    )


SCENARIOS: tuple[tuple[str, Scenario, int], ...] = (
    # name, scenario, units of work that write, per hand
    ("commit+deck (deal_now)", commit_and_deck, 1),
    ("full lifecycle (commit, 2 seeds, seal, reveal)", full_lifecycle, 5),
    ("full lifecycle, 2 seeds sent with SealHand", full_lifecycle_seeds_with_seal, 3),
)


async def run_scenario(target: str, scenario: Scenario, *, clients: int, seconds: float) -> Timings:
    """Each client plays one table, hand after hand, until the time is up."""
    timings = Timings()
    stop_at = time.perf_counter() + seconds
    async with grpc.aio.insecure_channel(target) as channel:
        stub = fairness_pb2_grpc.FairnessServiceStub(channel)

        async def table_client() -> None:
            client, table, n = Client(stub, timings), f"bench-{uuid.uuid4().hex[:10]}", 0
            while time.perf_counter() < stop_at:
                started = time.perf_counter()
                await scenario(client, table, n)
                timings.hands.append((time.perf_counter() - started) * 1000)
                n += 1

        await asyncio.gather(*(table_client() for _ in range(clients)))
    return timings


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def pure_shuffle_rate(seconds: float = 1.0) -> float:
    """Decks per second of the current shuffle alone (key derivation, DRBG, Fisher-Yates)."""
    count, stop_at = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop_at:
        seeds = (SeatSeed(1, b"a"), SeatSeed(2, b"b"))
        shuffle_deck(os.urandom(32), seeds, os.urandom(16), SHUFFLE_VERSION, "ab" * 32)
        count += 1
    return count / seconds


# --- Floors: the raw insert rate of the same database. ---


def sqlite_floor(path: Path, seconds: float) -> tuple[float, str]:
    """One-row INSERT transactions on one sqlite3 connection, with the service's settings."""
    connection = sqlite3.connect(path, isolation_level=None, timeout=30)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE IF NOT EXISTS bench_raw_rows (id INTEGER PRIMARY KEY, payload TEXT)")
    count, stop_at = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop_at:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO bench_raw_rows (payload) VALUES (?)", (f"row-{count}",))
        connection.execute("COMMIT")
        count += 1
    connection.close()
    return count / seconds, "raw insert, sqlite3, 1 connection (floor)"


def postgres_floor(url: str, clients: int, seconds: float) -> tuple[float, str]:
    """One-row INSERT transactions from `clients` pgbench connections (or asyncio psycopg)."""
    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS bench_raw_rows (id BIGSERIAL PRIMARY KEY, payload TEXT)"
        )
    pgbench = shutil.which("pgbench")
    if pgbench is None:
        return asyncio.run(_psycopg_floor(conninfo, clients, seconds)), "raw insert, asyncio psycopg (floor)"
    target = make_url(url)
    with tempfile.TemporaryDirectory(prefix="bench-fairness-") as folder:
        script = Path(folder, "insert.sql")
        script.write_text("INSERT INTO bench_raw_rows (payload) VALUES ('pgbench-' || :client_id);\n")
        command = [
            pgbench, "--no-vacuum", "--protocol=prepared", f"--client={clients}", f"--jobs={min(clients, 2)}",
            f"--time={max(1, round(seconds))}", f"--file={script}",
            f"--host={target.host or '127.0.0.1'}", f"--port={target.port or 5432}",
            f"--username={target.username or 'postgres'}", target.database or "postgres",
        ]  # fmt: skip
        env = {**os.environ, **({"PGPASSWORD": target.password} if target.password else {})}
        output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    tps = re.search(r"tps = ([0-9.]+)", output)
    if tps is None:
        raise RuntimeError(f"cannot read pgbench's output:\n{output}")
    return float(tps.group(1)), f"raw insert, pgbench, {clients} clients (floor)"


async def _psycopg_floor(conninfo: str, clients: int, seconds: float) -> float:
    connections = [await psycopg.AsyncConnection.connect(conninfo, autocommit=True) for _ in range(clients)]
    count, stop_at = 0, time.perf_counter() + seconds

    async def insert(connection: psycopg.AsyncConnection[object]) -> None:
        nonlocal count
        while time.perf_counter() < stop_at:
            await connection.execute("INSERT INTO bench_raw_rows (payload) VALUES ('x')", prepare=True)
            count += 1

    try:
        await asyncio.gather(*(insert(c) for c in connections))
    finally:
        for connection in connections:
            await connection.close()
    return count / seconds


# --- One database: floor, then the service. ---


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_database(label: str, database_url: str, floor: tuple[float, str], args: argparse.Namespace) -> None:
    floor_rate, floor_name = floor
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="fairness-bench-") as folder:
        environ = {
            **os.environ,
            "POKER_FAIRNESS_PORT": str(port),
            "POKER_DATA_DIR": folder,
            "POKER_FAIRNESS_DATABASE_URL": database_url,
            "POKER_LOG_FORMAT": "json",
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "services.fairness"],
            cwd=ROOT,
            env=environ,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            asyncio.run(_bench_service(label, f"127.0.0.1:{port}", server.pid, floor_rate, floor_name, args))
        finally:
            server.terminate()
            server.wait(timeout=30)
        url = database_url or f"sqlite+aiosqlite:///{Path(folder, 'in-process.db').as_posix()}"
        asyncio.run(_bench_in_process(url, floor_rate, args))


async def _bench_in_process(url: str, floor: float, args: argparse.Namespace) -> None:
    from service_runtime.database import Transactions, create_engine
    from services.fairness.application import FairnessApplication
    from services.fairness.hands import HandOutcome
    from services.fairness.seed_vault import SeedVault
    from services.fairness.settings import DEV_SEED_KEY_HEX, DEV_SEED_KEY_ID
    from services.fairness.storage import migrate

    await asyncio.to_thread(migrate, url)
    engine = create_engine(url, pool_size=args.clients)
    vault = SeedVault({DEV_SEED_KEY_ID: bytes.fromhex(DEV_SEED_KEY_HEX)}, DEV_SEED_KEY_ID)
    application = FairnessApplication(Transactions(engine), vault)
    hands: list[float] = []
    stop_at = time.perf_counter() + args.seconds

    async def table() -> None:
        name, n = f"in-process-{uuid.uuid4().hex[:10]}", 0
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            hand_id = (await application.commit_hand(f"{name}/{n}", name)).hand.hand_id
            for seat in (1, 2):
                await application.add_player_entropy(hand_id, seat, f"p{seat}", os.urandom(16))
            await application.seal_hand(hand_id)
            await application.reveal_hand(hand_id, HandOutcome.FINISHED)
            hands.append((time.perf_counter() - started) * 1000)
            n += 1

    cpu_before = time.process_time()
    try:
        await asyncio.gather(*(table() for _ in range(args.clients)))
    finally:
        await engine.dispose()
    cpu_ms = (time.process_time() - cpu_before) * 1000 / max(1, len(hands))
    rate = len(hands) / args.seconds
    print(
        f"{'full lifecycle, in process (no gRPC)':<48}{rate:>9.1f}{rate * 5:>9.0f}{rate * 5 / floor:>9.2f}"
        f"{statistics.median(hands):>9.2f}{_percentile(hands, 0.99):>9.2f}{'':>10}{cpu_ms:>13.2f}"
    )


async def _bench_service(
    label: str, target: str, pid: int, floor: float, floor_name: str, args: argparse.Namespace
) -> None:
    await _wait_serving(target)
    await run_scenario(target, commit_and_deck, clients=2, seconds=1.0)  # warm-up
    print(f"\n{label}: {args.clients} clients, {args.seconds:.0f} s per scenario")
    print(
        f"{'scenario':<48}{'hands/s':>9}{'tx/s':>9}{'x floor':>9}{'p50 ms':>9}{'p99 ms':>9}{'call p99':>10}"
        f"{'cpu ms/hand':>13}"
    )
    print(f"{floor_name:<48}{'':>9}{floor:>9.0f}{1:>9.2f}")
    for name, scenario, units in SCENARIOS:
        cpu_before = _cpu_seconds(pid)
        timings = await run_scenario(target, scenario, clients=args.clients, seconds=args.seconds)
        cpu_ms = (_cpu_seconds(pid) - cpu_before) * 1000 / max(1, len(timings.hands))
        rate = len(timings.hands) / args.seconds
        print(
            f"{name:<48}{rate:>9.1f}{rate * units:>9.0f}{rate * units / floor:>9.2f}"
            f"{statistics.median(timings.hands):>9.2f}{_percentile(timings.hands, 0.99):>9.2f}"
            f"{_percentile(timings.calls, 0.99):>10.2f}{cpu_ms:>13.2f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent tables")
    parser.add_argument("--seconds", type=float, default=8.0, help="duration of each scenario")
    parser.add_argument("--server-url", default=os.environ.get("POKER_TEST_DATABASE_URL", DEFAULT_SERVER))
    parser.add_argument("--skip-postgres", action="store_true", help="SQLite only")
    args = parser.parse_args()
    print(f"pure shuffle v{SHUFFLE_VERSION}, no I/O: {pure_shuffle_rate():.0f} decks/s on one core")
    with tempfile.TemporaryDirectory(prefix="fairness-bench-floor-") as folder:
        floor = sqlite_floor(Path(folder, "floor.db"), args.seconds)
    bench_database("SQLite (temporary file)", "", floor, args)
    if not args.skip_postgres:
        with throwaway_postgres_database(args.server_url, prefix="poker_bench_fairness") as url:
            floor = postgres_floor(url, args.clients, args.seconds)
            bench_database("PostgreSQL", url, floor, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
