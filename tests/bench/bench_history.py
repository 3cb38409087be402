"""History: RecordHand throughput and ListMyHands latency with many hands stored, each against a
floor doing the same work on the same database in the same run, on PostgreSQL and on SQLite (the
embedded default).

For each backend:
1. A throwaway database (PostgreSQL: on the server of `--postgres-url`, default
   POKER_TEST_DATABASE_URL; SQLite: in a temporary folder) is migrated, then `--hands` hands with
   2-6 of `--players` players each are bulk-loaded (COPY; SQLite: executemany). Their record blobs
   are real engine hands (a few hundred templates), their ids and times unique.
2. RecordHand: `python -m services.history` as its own process, `--clients` concurrent callers
   recording real hands (fresh ids, players of the population, times after the stored hands) over
   gRPC; the floor writes the same rows (one hand row and one row per player, one transaction per
   hand) with plain psycopg / sqlite3 from the same number of clients. Floor and service alternate
   in `--rounds` short slices (tests/bench/harness.py); CPU per hand is read from /proc for this
   process (the callers), the service and the database's PostgreSQL backends.
3. ListMyHands: the first page (50 newest hands of a player: the hands' columns and the player's
   net, no record read since issue 45) and the fifth
   page (its page token walked before measuring) over gRPC, one call at a time, against the same
   keyset query run directly, in alternating slices as well.

Every figure is printed as its rate and CPU ratio to its floor. Run:
`.venv/bin/python tests/bench/bench_history.py` (`--backends sqlite --hands 50000 --players 400` for a quick
run: the fifth page of ListMyHands needs players with 250 hands).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import psycopg
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from poker.common.v1 import common_pb2  # noqa: E402
from poker.history.v1 import history_pb2, history_pb2_grpc  # noqa: E402
from service_runtime.testing import throwaway_postgres_database, token_for  # noqa: E402
from services.history.storage import migrate  # noqa: E402
from tests.bench import harness  # noqa: E402
from tests.history.engine_hands import varied_records  # noqa: E402

DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
SERVICE = (("authorization", f"Bearer {token_for('table', 'service', ttl_seconds=7200)}"),)
BASE_US = 1_700_000_000_000_000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@contextmanager
def database(postgres_url: str) -> Iterator[str]:
    if postgres_url:
        with throwaway_postgres_database(postgres_url, prefix="history_bench") as url:
            yield url
        return
    with tempfile.TemporaryDirectory(prefix="history-bench-") as folder:
        yield f"sqlite+aiosqlite:///{folder}/history.db"


def _plain(url: str) -> str:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return str(parsed.database)
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


def generate_rows(
    hands: int, players: int, blobs: list[bytes], seed: int = 1
) -> Iterator[tuple[tuple, list[tuple]]]:  # type: ignore[type-arg]
    """(hand row, player rows) of `hands` synthetic hands, numbers 1..hands, one second apart."""
    rng = random.Random(seed)
    for number in range(1, hands + 1):
        end_us = BASE_US + number * 1_000_000
        table = f"bench-table-{number % 5000}"
        hand = (
            number,
            f"bulk-{number}",
            table,
            "room-classic",
            1,
            1,
            end_us - 40_000_000,
            end_us,
            blobs[number % len(blobs)],
            end_us,
        )
        seated = rng.sample(range(players), rng.randint(2, 6))
        rows = [(number, seat, f"player-{p}", table, end_us, 0, "") for seat, p in enumerate(seated)]
        yield hand, rows


def bulk_load(url: str, hands: int, players: int, blobs: list[bytes]) -> float:
    """Load the hands with the fastest path of the database; seconds taken."""
    started = time.perf_counter()
    plain = _plain(url)
    if url.startswith("sqlite"):
        with sqlite3.connect(plain) as connection:
            batch_h, batch_p = [], []
            for hand, rows in generate_rows(hands, players, blobs):
                batch_h.append(hand)
                batch_p.extend(rows)
                if len(batch_h) >= 20_000:
                    connection.executemany("INSERT INTO history_hands VALUES (?,?,?,?,?,?,?,?,?,?)", batch_h)
                    connection.executemany("INSERT INTO history_hand_players VALUES (?,?,?,?,?,?,?)", batch_p)
                    batch_h, batch_p = [], []
            connection.executemany("INSERT INTO history_hands VALUES (?,?,?,?,?,?,?,?,?,?)", batch_h)
            connection.executemany("INSERT INTO history_hand_players VALUES (?,?,?,?,?,?,?)", batch_p)
        return time.perf_counter() - started
    with psycopg.connect(plain) as connection, connection.cursor() as cursor:
        hand_copy = (
            "COPY history_hands (number, hand_id, table_id, room_id, variant, pool, start_us, end_us, "
            "record, recorded_us) FROM STDIN"
        )
        player_copy = (
            "COPY history_hand_players (hand_number, seat, player_id, table_id, end_us, net_result, "
            "client_fingerprint) FROM STDIN"
        )
        # The usual bulk-load order: secondary indexes dropped and built once at the end, and the
        # foreign-key triggers off for this session (superuser only; the rows are consistent by
        # construction). Both are restored exactly as the migration made them.
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename IN ('history_hands', 'history_hand_players') "
            "AND indexname LIKE 'ix_%%'"
        )
        definitions = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename IN ('history_hands', 'history_hand_players') "
            "AND indexname LIKE 'ix_%%'"
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f'DROP INDEX "{name}"')
        try:
            cursor.execute("SET session_replication_role = replica")
        except psycopg.errors.InsufficientPrivilege:
            connection.rollback()
        player_rows: list[tuple] = []  # type: ignore[type-arg]
        with cursor.copy(hand_copy) as copy:
            for hand, rows in generate_rows(hands, players, blobs):
                copy.write_row(hand)
                player_rows.extend(rows)
        with cursor.copy(player_copy) as copy:
            for row in player_rows:
                copy.write_row(row)
        cursor.execute("SET session_replication_role = DEFAULT")
        for definition in definitions:
            cursor.execute(definition)
        cursor.execute("SELECT setval(pg_get_serial_sequence('history_hands', 'number'), %s)", (hands,))
        cursor.execute("ANALYZE history_hands")
        cursor.execute("ANALYZE history_hand_players")
    return time.perf_counter() - started


class LiveRecords:
    """The hands recorded while measuring: real engine hands (a few hundred templates), each with a
    fresh id, a table of its caller, players drawn from the bulk-loaded population and times after
    every stored hand, increasing as a table's hands do. The floor writes exactly these rows too."""

    def __init__(
        self, templates: list[history_pb2.HandRecord], players: int, after_us: int, seed: int
    ) -> None:
        self._templates = templates
        self._players = players
        self._rng = random.Random(seed)
        self._next_us = after_us

    def next(self, client: int, n: int, prefix: str) -> history_pb2.HandRecord:
        record = history_pb2.HandRecord()
        record.CopyFrom(self._templates[(client * 7919 + n) % len(self._templates)])
        record.hand_id = f"{prefix}-{uuid.uuid4().hex}"
        record.table_id = f"bench-live-{client}"
        for seat, player in zip(
            record.seats, self._rng.sample(range(self._players), len(record.seats)), strict=True
        ):
            seat.player_id = f"player-{player}"
        # Actions name seats, not players: only the seats' ids change. One millisecond apart.
        self._next_us += 1000
        length_us = record.end_time.ToMicroseconds() - record.start_time.ToMicroseconds()
        record.end_time.FromMicroseconds(self._next_us)
        record.start_time.FromMicroseconds(self._next_us - length_us)
        return record


def _hand_row(record: history_pb2.HandRecord) -> tuple:  # type: ignore[type-arg]
    end_us = record.end_time.ToMicroseconds()
    return (
        record.hand_id,
        record.table_id,
        record.room_id,
        record.variant,
        record.pool,
        record.start_time.ToMicroseconds(),
        end_us,
        record.SerializeToString(deterministic=True),
        end_us,
    )


def _player_rows(number: int, record: history_pb2.HandRecord) -> list[tuple]:  # type: ignore[type-arg]
    end_us = record.end_time.ToMicroseconds()
    return [
        (number, s.seat, s.player_id, record.table_id, end_us, s.net_result, s.client_fingerprint)
        for s in record.seats
    ]


class RawInserts:
    """The RecordHand floor: the rows of one RecordHand per transaction, straight through the
    driver, from the same number of clients (SQLite: one connection, since it has one writer; the
    service queues its writers the same way)."""

    def __init__(self, url: str, live: LiveRecords, clients: int) -> None:
        self._url = url
        self._live = live
        self._clients = clients
        self._sqlite: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()
        self._postgres: list[psycopg.AsyncConnection[tuple]] = []  # type: ignore[type-arg]

    async def open(self) -> None:
        plain = _plain(self._url)
        if self._url.startswith("sqlite"):
            self._sqlite = sqlite3.connect(plain, check_same_thread=False, isolation_level=None)
        else:
            self._postgres = [await psycopg.AsyncConnection.connect(plain) for _ in range(self._clients)]

    async def close(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close()
        for connection in self._postgres:
            await connection.close()

    async def run(self, seconds: float) -> harness.Outcome:
        return await harness.timed_loops(self._clients, seconds, self._insert)

    async def _insert(self, client: int, n: int) -> None:
        record = self._live.next(client, n, "raw")
        if self._sqlite is not None:
            async with self._lock:
                await asyncio.to_thread(_sqlite_hand, self._sqlite, record)
            return
        connection = self._postgres[client]
        async with connection.transaction():
            cursor = await connection.execute(
                "INSERT INTO history_hands (hand_id, table_id, room_id, variant, pool, start_us, end_us, record, "
                "recorded_us) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING number",
                _hand_row(record),
            )
            row = await cursor.fetchone()
            assert row is not None
            async with connection.cursor() as players:
                await players.executemany(
                    "INSERT INTO history_hand_players (hand_number, seat, player_id, table_id, end_us, net_result, "
                    "client_fingerprint) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    _player_rows(row[0], record),
                )


def _sqlite_hand(connection: sqlite3.Connection, record: history_pb2.HandRecord) -> None:
    connection.execute("BEGIN IMMEDIATE")
    cursor = connection.execute(
        "INSERT INTO history_hands (hand_id, table_id, room_id, variant, pool, start_us, end_us, record, recorded_us) "
        "VALUES (?,?,?,?,?,?,?,?,?)",
        _hand_row(record),
    )
    assert cursor.lastrowid is not None
    connection.executemany(
        "INSERT INTO history_hand_players VALUES (?,?,?,?,?,?,?)", _player_rows(cursor.lastrowid, record)
    )
    connection.execute("COMMIT")


# The page as the service reads it since issue 45: the hands' columns and the player's net, no record.
LIST_QUERY = (
    "SELECT h.number, h.hand_id, h.table_id, h.room_id, h.variant, h.pool, h.start_us, h.end_us,"
    " page.net_result FROM history_hands h JOIN ("
    " SELECT hand_number, end_us, net_result FROM history_hand_players WHERE player_id = {p}"
    " ORDER BY end_us DESC, hand_number DESC LIMIT 51) page ON page.hand_number = h.number"
    " ORDER BY h.end_us DESC, h.number DESC"
)


class RawLister:
    """The ListMyHands floor: the same keyset query run directly, one call at a time."""

    def __init__(self, url: str, players: list[str]) -> None:
        self._url = url
        self._players = players
        self._sqlite: sqlite3.Connection | None = None
        self._postgres: psycopg.AsyncConnection[tuple] | None = None  # type: ignore[type-arg]

    async def open(self) -> None:
        if self._url.startswith("sqlite"):
            self._sqlite = sqlite3.connect(_plain(self._url))
        else:
            self._postgres = await psycopg.AsyncConnection.connect(_plain(self._url), autocommit=True)

    async def close(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close()
        if self._postgres is not None:
            await self._postgres.close()

    async def run(self, seconds: float) -> harness.Outcome:
        return await harness.timed_loops(1, seconds, self._first_page)

    async def _first_page(self, _client: int, n: int) -> None:
        player = self._players[n % len(self._players)]
        if self._sqlite is not None:
            rows = self._sqlite.execute(LIST_QUERY.format(p="?"), (player,)).fetchall()
        else:
            assert self._postgres is not None
            rows = await (await self._postgres.execute(LIST_QUERY.format(p="%s"), (player,))).fetchall()
        assert len(rows) == 51, f"{player} has {len(rows)} hands: load more hands per player"


async def _wait_serving(target: str) -> None:
    deadline = time.monotonic() + 120
    async with grpc.aio.insecure_channel(target) as channel:
        while time.monotonic() < deadline:
            try:
                reply = await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=1
                )
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError("the history service did not become SERVING")


def _player_metadata(player: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token_for(player, 'player', ttl_seconds=7200)}"),)


async def service_scenarios(
    backend: str,
    target: str,
    url: str,
    server_pid: int,
    live: LiveRecords,
    players: list[str],
    args: argparse.Namespace,
) -> None:
    await _wait_serving(target)
    database = "" if url.startswith("sqlite") else str(make_url(url).database)
    bench = harness.this_process()
    server = harness.process("history service", server_pid)
    backends = [harness.postgres_backends("postgresql", database)] if database else []
    async with grpc.aio.insecure_channel(target) as channel:
        stub = history_pb2_grpc.HistoryServiceStub(channel)

        async def record_hand(client: int, n: int) -> None:
            reply = await stub.RecordHand(
                history_pb2.RecordHandRequest(hand=live.next(client, n, "bench")), metadata=SERVICE
            )
            assert not reply.already_recorded

        async def record_slice(seconds: float) -> harness.Outcome:
            return await harness.timed_loops(args.clients, seconds, record_hand)

        await record_slice(1.0)  # warm-up: connections, caches, the service's first statements
        raw = RawInserts(url, live, args.clients)
        await raw.open()
        try:
            comparison = await harness.interleave(
                harness.Side("raw inserts, same rows, same clients", raw.run, [bench, *backends]),
                harness.Side("RecordHand through gRPC", record_slice, [bench, server, *backends]),
                rounds=args.rounds,
                slice_seconds=args.seconds / args.rounds,
            )
        finally:
            await raw.close()
        harness.report(
            "history", f"RecordHand on {backend}, {args.clients} clients", comparison, unit="hands", goal=0.5
        )

        metadata = {player: _player_metadata(player) for player in players}
        # The fifth page's tokens, walked once before measuring (tokens are signed and stay valid).
        fifth: dict[str, str] = {}
        for player in players:
            token = ""
            for _ in range(4):
                page = await stub.ListMyHands(
                    history_pb2.ListMyHandsRequest(
                        page=common_pb2.PageRequest(page_size=50, page_token=token)
                    ),
                    metadata=metadata[player],
                )
                assert len(page.hands) == 50
                token = page.page.next_page_token
            fifth[player] = token

        async def list_page(n: int, token_of: dict[str, str] | None) -> None:
            player = players[n % len(players)]
            token = "" if token_of is None else token_of[player]
            page = await stub.ListMyHands(
                history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_size=50, page_token=token)),
                metadata=metadata[player],
            )
            assert len(page.hands) == 50

        lister = RawLister(url, players)
        await lister.open()
        try:
            for name, tokens in (("first page", None), ("fifth page", fifth)):

                async def pages(seconds: float, tokens: dict[str, str] | None = tokens) -> harness.Outcome:
                    return await harness.timed_loops(1, seconds, lambda _c, n: list_page(n, tokens))

                comparison = await harness.interleave(
                    harness.Side("the first page's SQL, direct", lister.run, [bench, *backends]),
                    harness.Side(f"ListMyHands {name} through gRPC", pages, [bench, server, *backends]),
                    rounds=args.rounds,
                    slice_seconds=args.list_seconds / args.rounds,
                )
                harness.report(
                    "history", f"ListMyHands {name} on {backend}, one at a time", comparison, unit="pages"
                )
        finally:
            await lister.close()


def run_backend(backend: str, postgres_url: str, args: argparse.Namespace) -> None:
    templates = varied_records(300, seed=99, table_id="bench-live", prefix="live-")
    blobs = [t.SerializeToString(deterministic=True) for t in templates]
    with database(postgres_url if backend == "postgresql" else "") as url:
        migrate(url)
        loaded = bulk_load(url, args.hands, args.players, blobs)
        print(
            f"history bench on {backend}: {args.hands:,} hands of {args.players:,} players bulk-loaded in "
            f"{loaded:.0f} s ({args.hands / loaded:,.0f} hands/s through "
            f"{'COPY' if backend == 'postgresql' else 'executemany'})",
            flush=True,
        )
        rng = random.Random(5)
        players = [f"player-{p}" for p in rng.sample(range(args.players), min(args.calls, args.players))]
        live = LiveRecords(templates, args.players, BASE_US + (args.hands + 1) * 1_000_000, seed=11)
        port = _free_port()
        with harness.scratch_folder("history-bench-data-") as folder:
            environ = {
                **os.environ,
                "POKER_HISTORY_PORT": str(port),
                "POKER_DATA_DIR": str(folder),
                "POKER_HISTORY_DATABASE_URL": url,
                "POKER_LOG_FORMAT": "json",
                "POKER_LOG_LEVEL": "warning",
            }
            server = subprocess.Popen(
                [sys.executable, "-m", "services.history"],
                cwd=ROOT,
                env=environ,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                asyncio.run(
                    service_scenarios(backend, f"127.0.0.1:{port}", url, server.pid, live, players, args)
                )
            finally:
                server.terminate()
                server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200_000, help="hands bulk-loaded before measuring")
    parser.add_argument("--players", type=int, default=2_000, help="distinct players of all hands")
    parser.add_argument("--clients", type=int, default=8, help="concurrent RecordHand callers")
    parser.add_argument("--seconds", type=float, default=12.0, help="RecordHand: seconds of each side")
    parser.add_argument("--list-seconds", type=float, default=6.0, help="ListMyHands: seconds of each side")
    parser.add_argument("--rounds", type=int, default=6, help="slices of each side, alternating")
    parser.add_argument("--calls", type=int, default=200, help="distinct players the lists read")
    parser.add_argument(
        "--backends",
        default="postgresql,sqlite",
        help="comma-separated: postgresql, sqlite (the embedded default)",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("POKER_TEST_DATABASE_URL", DEFAULT_SERVER),
        help="a PostgreSQL server to create a throwaway database on",
    )
    args = parser.parse_args()
    for backend in args.backends.split(","):
        if backend not in ("postgresql", "sqlite"):
            parser.error(f"unknown backend {backend!r}")
        run_backend(backend, args.postgres_url, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
