"""Fairness throughput through gRPC against a real server, on SQLite and on PostgreSQL in one run,
each against the raw insert rate of the same database in alternating slices of the same run.

For each database it starts `python -m services.fairness` as its own process on a loopback port
(SQLite in a temporary folder; PostgreSQL in a throwaway database on the server at
POKER_TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres; `--skip-postgres`
leaves it out), then runs the floor and every scenario in `--rounds` alternating slices
(tests/bench/harness.py), each with `--clients` concurrent tables:

- raw insert (floor): one-row INSERT transactions into a table of the same database, straight
  through the driver from this process. SQLite: one sqlite3 connection with the service's settings
  (WAL, BEGIN IMMEDIATE ... COMMIT), since SQLite has one writer at a time; PostgreSQL: one psycopg
  connection per client, prepared statements;
- commit+deck (deal_now): one CommitHand that returns the deck (the plain scheme, house games);
- full lifecycle: CommitHand, two AddPlayerEntropy, SealHand, RevealHand: what every hand of a table
  with two player seeds waits on (five units of work that write);
- full lifecycle, 2 seeds sent with SealHand: the same hand in three calls;
- version 2 against version 3 on the same calls (commit, seal with seeds, reveal with who saw what,
  a player's GetReveal);
- full lifecycle, in process: the same five use cases called on `FairnessApplication` in this
  process (no gRPC, no second process; SQLite on a file of its own): what the application and the
  database driver cost without the RPC layer;
- the RPC floor: bare unary calls (health Check) against a bare grpc.aio server in its own process
  (no interceptor, no auth, no work; tests/bench/bare_grpc.py), five to a hand: what the lifecycle's
  five calls cost before the service does anything. The full lifecycle is also reported against it.

Each figure is hands per second against the raw insert floor's transactions per second, both by rate and by CPU
(this process, the service and, on PostgreSQL, the database's backends, from /proc), with p50 and
p99 per hand; the full lifecycle lines also say how they stand against issue 28's goals (>= 500
hands/s on PostgreSQL, >= 300 on SQLite, p99 <= 20 ms).
Run: `.venv/bin/python tests/bench/bench_fairness.py` (about two minutes with the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import psycopg
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc  # noqa: E402
from service_runtime.testing import throwaway_postgres_database, token_for  # noqa: E402
from services.fairness.shuffle import SHUFFLE_VERSION, SeatSeed, shuffle_deck  # noqa: E402
from tests.bench import harness  # noqa: E402
from tests.bench.bare_grpc import BareUnary, start_bare_server  # noqa: E402
from tests.ports import free_port  # noqa: E402

DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
METADATA = (("authorization", f"Bearer {token_for('table', 'service', ttl_seconds=3600)}"),)
PLAYER_METADATA = (("authorization", f"Bearer {token_for('p1', ttl_seconds=3600)}"),)
# Issue 28's goals for the full lifecycle: hands per second by backend, and p99 per hand.
LIFECYCLE_GOALS = {"SQLite": 300.0, "PostgreSQL": 500.0}
LIFECYCLE_P99_MS = 20.0


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


Stub = fairness_pb2_grpc.FairnessServiceStub
# One hand of a scenario: the stub, the table, and a request id unique in the run.
Scenario = Callable[[Stub, str, str], Awaitable[None]]


async def commit_and_deck(stub: Stub, table: str, request_id: str) -> None:
    request = fairness_pb2.CommitHandRequest(request_id=request_id, table_id=table, deal_now=True)
    response = await stub.CommitHand(request, metadata=METADATA)
    assert len(response.deck) == 52


async def full_lifecycle(stub: Stub, table: str, request_id: str) -> None:
    committed = await stub.CommitHand(
        fairness_pb2.CommitHandRequest(request_id=request_id, table_id=table), metadata=METADATA
    )
    hand_id = committed.commitment.hand_id
    for seat in (1, 2):
        request = fairness_pb2.AddPlayerEntropyRequest(
            hand_id=hand_id, seat=seat, player_id=f"p{seat}", client_seed=os.urandom(16)
        )
        await stub.AddPlayerEntropy(request, metadata=METADATA)
    sealed = await stub.SealHand(fairness_pb2.SealHandRequest(hand_id=hand_id), metadata=METADATA)
    assert len(sealed.deck) == 52
    await stub.RevealHand(
        fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
        metadata=METADATA,
    )


async def full_lifecycle_seeds_with_seal(stub: Stub, table: str, request_id: str) -> None:
    committed = await stub.CommitHand(
        fairness_pb2.CommitHandRequest(request_id=request_id, table_id=table), metadata=METADATA
    )
    hand_id = committed.commitment.hand_id
    seeds = [
        fairness_pb2.ClientSeed(seat=seat, player_id=f"p{seat}", client_seed=os.urandom(16))
        for seat in (1, 2)
    ]
    sealed = await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=hand_id, client_seeds=seeds), metadata=METADATA
    )
    assert len(sealed.deck) == 52
    await stub.RevealHand(
        fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
        metadata=METADATA,
    )


def opened_lifecycle(version: int) -> Scenario:
    """Version 2 against version 3 on the same calls: commit, seal with 2 seeds and the players
    dealt in, reveal (version 3 with who saw which position: a heads-up hand to showdown), and the
    first player's GetReveal (version 2: seed and deck; version 3: seed and the 9 openings they saw)."""

    async def scenario(stub: Stub, table: str, request_id: str) -> None:
        committed = await stub.CommitHand(
            fairness_pb2.CommitHandRequest(request_id=request_id, table_id=table, shuffle_version=version),
            metadata=METADATA,
        )
        hand_id = committed.commitment.hand_id
        seeds = [
            fairness_pb2.ClientSeed(seat=seat, player_id=f"p{seat}", client_seed=os.urandom(16))
            for seat in (1, 2)
        ]
        sealed = await stub.SealHand(
            fairness_pb2.SealHandRequest(hand_id=hand_id, client_seeds=seeds, participant_ids=["p1", "p2"]),
            metadata=METADATA,
        )
        assert len(sealed.deck) == 52
        await stub.RevealHand(
            fairness_pb2.RevealHandRequest(
                hand_id=hand_id,
                outcome=fairness_pb2.HAND_OUTCOME_FINISHED,
                public_positions=[0, 1, 2, 3, 5, 6, 7, 9, 11],
                seen=[
                    fairness_pb2.SeenPositions(player_id="p1", positions=[0, 2]),
                    fairness_pb2.SeenPositions(player_id="p2", positions=[1, 3]),
                ],
            ),
            metadata=METADATA,
        )
        reveal = await stub.GetReveal(
            fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=PLAYER_METADATA
        )
        assert len(reveal.reveal.deck) == 52 if version == 2 else len(reveal.reveal.openings) == 9

    return scenario


LIFECYCLE = "full lifecycle (commit, 2 seeds, seal, reveal)"
SCENARIOS: tuple[tuple[str, Scenario], ...] = (
    ("commit+deck (deal_now)", commit_and_deck),
    (LIFECYCLE, full_lifecycle),
    ("full lifecycle, 2 seeds sent with SealHand", full_lifecycle_seeds_with_seal),
    # Issue 24's goal: version 3 at most 1.5x version 2's cost per hand.
    ("v2: commit, seal+seeds, reveal, player's reveal", opened_lifecycle(2)),
    ("v3: same, reveal with openings per reader", opened_lifecycle(3)),
)
IN_PROCESS = "full lifecycle, in process (no gRPC)"
BARE = "5 bare unary calls, as one hand"
CALLS_PER_HAND = 5


def grpc_slice(stub: Stub, scenario: Scenario, clients: int) -> Callable[[float], Awaitable[harness.Outcome]]:
    """Slices of one scenario: each client plays its own table, hand after hand."""
    tables = [f"bench-{uuid.uuid4().hex[:10]}" for _ in range(clients)]
    numbers = itertools.count()

    async def hand(client: int, _n: int) -> None:
        await scenario(stub, tables[client], f"{tables[client]}/{next(numbers)}")

    async def run(seconds: float) -> harness.Outcome:
        return await harness.timed_loops(clients, seconds, hand)

    return run


def pure_shuffle_rate(seconds: float = 1.0) -> float:
    """Decks per second of the current shuffle alone (key derivation, DRBG, Fisher-Yates)."""
    count, stop_at = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop_at:
        seeds = (SeatSeed(1, b"a"), SeatSeed(2, b"b"))
        shuffle_deck(os.urandom(32), seeds, os.urandom(16), SHUFFLE_VERSION, "ab" * 32)
        count += 1
    return count / seconds


# --- Floors: the raw insert rate of the same database. ---


class SqliteFloor:
    """One-row INSERT transactions on one sqlite3 connection, with the service's settings."""

    name = "raw insert, sqlite3, 1 connection"

    def __init__(self, path: Path) -> None:
        self._connection = sqlite3.connect(path, isolation_level=None, timeout=30)
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS bench_raw_rows (id INTEGER PRIMARY KEY, payload TEXT)"
        )

    def _insert(self) -> int:
        self._connection.execute("BEGIN IMMEDIATE")
        self._connection.execute("INSERT INTO bench_raw_rows (payload) VALUES ('row')")
        self._connection.execute("COMMIT")
        return 1

    def run(self, seconds: float) -> harness.Outcome:
        return harness.run_for(seconds, self._insert)

    async def close(self) -> None:
        self._connection.close()


class PostgresFloor:
    """One-row INSERT transactions (autocommit, prepared) from one psycopg connection per client."""

    def __init__(self, conninfo: str, clients: int) -> None:
        self.name = f"raw insert, psycopg, {clients} connections"
        self._conninfo, self._clients = conninfo, clients
        self._connections: list[psycopg.AsyncConnection[tuple[object, ...]]] = []

    async def open(self) -> None:
        self._connections = [
            await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)
            for _ in range(self._clients)
        ]
        await self._connections[0].execute(
            "CREATE TABLE IF NOT EXISTS bench_raw_rows (id BIGSERIAL PRIMARY KEY, payload TEXT)"
        )

    async def _insert(self, client: int, _n: int) -> None:
        await self._connections[client].execute(
            "INSERT INTO bench_raw_rows (payload) VALUES ('row')", prepare=True
        )

    async def run(self, seconds: float) -> harness.Outcome:
        return await harness.timed_loops(self._clients, seconds, self._insert)

    async def close(self) -> None:
        for connection in self._connections:
            await connection.close()


# --- One database: the service, the floor and the in-process application, in alternating slices. ---


class InProcess:
    """The lifecycle's five use cases on `FairnessApplication` in this process."""

    def __init__(self, url: str, clients: int) -> None:
        self._url, self._clients = url, clients
        self._numbers = itertools.count()
        self._tables = [f"in-process-{uuid.uuid4().hex[:10]}" for _ in range(clients)]

    async def open(self) -> None:
        from service_runtime.database import Transactions, create_engine
        from services.fairness.application import FairnessApplication
        from services.fairness.seed_vault import SeedVault
        from services.fairness.settings import DEV_SEED_KEY_HEX, DEV_SEED_KEY_ID
        from services.fairness.storage import migrate

        await asyncio.to_thread(migrate, self._url)
        self._engine = create_engine(self._url, pool_size=self._clients)
        vault = SeedVault({DEV_SEED_KEY_ID: bytes.fromhex(DEV_SEED_KEY_HEX)}, DEV_SEED_KEY_ID)
        self._application = FairnessApplication(Transactions(self._engine), vault)

    async def _hand(self, client: int, _n: int) -> None:
        from services.fairness.hands import HandOutcome

        table, application = self._tables[client], self._application
        hand_id = (await application.commit_hand(f"{table}/{next(self._numbers)}", table)).hand.hand_id
        for seat in (1, 2):
            await application.add_player_entropy(hand_id, seat, f"p{seat}", os.urandom(16))
        await application.seal_hand(hand_id)
        await application.reveal_hand(hand_id, HandOutcome.FINISHED)

    async def run(self, seconds: float) -> harness.Outcome:
        return await harness.timed_loops(self._clients, seconds, self._hand)

    async def close(self) -> None:
        await self._engine.dispose()


def bench_database(label: str, database_url: str, args: argparse.Namespace) -> None:
    port = free_port()
    with harness.scratch_folder("fairness-bench-") as folder:
        environ = {
            **os.environ,
            "POKER_FAIRNESS_PORT": str(port),
            "POKER_DATA_DIR": str(folder),
            "POKER_FAIRNESS_DATABASE_URL": database_url,
            "POKER_LOG_FORMAT": "json",
            "POKER_LOG_LEVEL": "warning",
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "services.fairness"],
            cwd=ROOT,
            env=environ,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            asyncio.run(_bench_service(label, f"127.0.0.1:{port}", server.pid, database_url, folder, args))
        finally:
            server.terminate()
            server.wait(timeout=30)


async def _bench_service(
    label: str, target: str, pid: int, database_url: str, folder: Path, args: argparse.Namespace
) -> None:
    await _wait_serving(target)
    bench = harness.this_process()
    service = harness.process("fairness service", pid)
    backends: list[harness.CpuSource] = []
    floor: SqliteFloor | PostgresFloor
    if database_url:
        backends = [harness.postgres_backends("postgresql", str(make_url(database_url).database))]
        conninfo = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
        floor = PostgresFloor(conninfo, args.clients)
        await floor.open()
    else:
        floor = SqliteFloor(folder / "floor.db")
    in_process = InProcess(
        database_url or f"sqlite+aiosqlite:///{(folder / 'in-process.db').as_posix()}", args.clients
    )
    await in_process.open()
    bare_server = start_bare_server()
    bare = BareUnary(bare_server.address, args.clients)

    async def bare_hands(seconds: float) -> harness.Outcome:
        calls = await bare.run(seconds)
        return harness.Outcome(calls.operations // CALLS_PER_HAND)

    try:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = Stub(channel)
            sides = [harness.Side(floor.name, floor.run, [bench, *backends])]
            for name, scenario in SCENARIOS:
                run = grpc_slice(stub, scenario, args.clients)
                await run(0.5)  # warm-up: connections, prepared statements, the first tables
                sides.append(harness.Side(name, run, [bench, service, *backends]))
            await in_process.run(0.5)
            sides.append(harness.Side(IN_PROCESS, in_process.run, [bench, *backends]))
            await bare.run(0.5)
            sides.append(harness.Side(BARE, bare_hands, [bench, bare_server.cpu]))
            print(
                f"\nfairness on {label}: {args.clients} clients, {args.rounds} rounds of "
                f"{args.seconds / args.rounds:.1f} s per side; load average {_load()}",
                flush=True,
            )
            tallies = await harness.interleave_all(
                sides, rounds=args.rounds, slice_seconds=args.seconds / args.rounds
            )
    finally:
        await bare.close()
        bare_server.stop()
        await in_process.close()
        await floor.close()
    print(f"load average after: {_load()}")
    floor_tally = tallies[0]
    for side, tally in zip(sides[1:-1], tallies[1:-1], strict=True):
        harness.report(
            "fairness", f"{side.name} on {label}", harness.Comparison(floor_tally, tally), unit="hands"
        )
        if side.name in (LIFECYCLE, IN_PROCESS):
            goal, p99 = LIFECYCLE_GOALS[label], tally.percentile(0.99) * 1000
            verdict = "ok" if tally.rate >= goal and p99 <= LIFECYCLE_P99_MS else "MISS"
            print(
                f"  issue 28's goal >= {goal:.0f} hands/s, p99 <= {LIFECYCLE_P99_MS:.0f} ms: "
                f"{tally.rate:.0f} hands/s, p99 {p99:.1f} ms, {verdict}"
            )
    lifecycle = tallies[[side.name for side in sides].index(LIFECYCLE)]
    harness.report(
        "fairness",
        f"{LIFECYCLE} vs its 5 calls bare, on {label}",
        harness.Comparison(tallies[-1], lifecycle),
        unit="hands",
    )


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent tables")
    parser.add_argument("--seconds", type=float, default=8.0, help="time per side, over all its slices")
    parser.add_argument("--rounds", type=int, default=4, help="slices per side, alternating with the others")
    parser.add_argument("--server-url", default=os.environ.get("POKER_TEST_DATABASE_URL", DEFAULT_SERVER))
    parser.add_argument("--skip-postgres", action="store_true", help="SQLite only")
    args = parser.parse_args()
    print(f"pure shuffle v{SHUFFLE_VERSION}, no I/O: {pure_shuffle_rate():.0f} decks/s on one core")
    bench_database("SQLite", "", args)
    if not args.skip_postgres:
        with throwaway_postgres_database(args.server_url, prefix="poker_bench_fairness") as url:
            bench_database("PostgreSQL", url, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
