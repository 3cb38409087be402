"""History: RecordHand throughput and ListMyHands latency with many hands stored, against the same
database's raw rate in the same run.

1. A throwaway PostgreSQL database (the server of `--postgres-url`, default POKER_TEST_DATABASE_URL;
   SQLite in a temporary folder when neither is set) is migrated, then `--hands` hands (default
   1,000,000) with 2-6 of `--players` players each are bulk-loaded with COPY (SQLite: executemany).
   Their record blobs are real engine hands (a few hundred templates), their ids and times unique.
2. Floor, RecordHand: the same rows a RecordHand writes (one hand row, one row per player, one
   transaction per hand) inserted with plain psycopg/sqlite3 by the same number of clients.
   Measured: `python -m services.history` as its own process, `--clients` concurrent RecordHand
   callers with real records for `--seconds`.
3. Floor, ListMyHands: the same keyset query (first page of 50 newest hands of a player, record
   blobs included) run directly on the database. Measured: ListMyHands over gRPC, first page and
   the fifth page (following the page tokens), for players with many hands.

Run: `.venv/bin/python tests/bench/bench_history.py` (`--hands 100000` for a quick run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
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
from tests.history.engine_hands import varied_records  # noqa: E402

SERVICE = (("authorization", f"Bearer {token_for('table', 'service', ttl_seconds=7200)}"),)
BASE_US = 1_700_000_000_000_000
ROUNDS = 5


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


async def timed(
    clients: int, seconds: float, work: Callable[[int, int], Awaitable[None]]
) -> tuple[int, list[float]]:
    latencies: list[float] = []
    stop_at = time.perf_counter() + seconds

    async def client(index: int) -> None:
        n = 0
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            await work(index, n)
            latencies.append((time.perf_counter() - started) * 1000)
            n += 1

    await asyncio.gather(*(client(i) for i in range(clients)))
    return len(latencies), latencies


async def raw_insert_rate(
    url: str, templates: list[history_pb2.HandRecord], clients: int, seconds: float
) -> tuple[int, list[float]]:
    """The floor: the rows of one RecordHand per transaction, straight through the driver."""
    plain = _plain(url)
    if url.startswith("sqlite"):
        lock = asyncio.Lock()
        connection = sqlite3.connect(plain, check_same_thread=False, isolation_level=None)

        async def insert_sqlite(index: int, n: int) -> None:
            record = templates[(index * 7919 + n) % len(templates)]
            async with lock:  # SQLite has one writer; the service serialises writers the same way
                await asyncio.to_thread(_sqlite_hand, connection, record, f"raw-{uuid.uuid4().hex}")

        try:
            return await timed(clients, seconds, insert_sqlite)
        finally:
            connection.close()
    connections = [await psycopg.AsyncConnection.connect(plain) for _ in range(clients)]

    async def insert(index: int, n: int) -> None:
        record = templates[(index * 7919 + n) % len(templates)]
        connection = connections[index]
        async with connection.transaction():
            end_us = record.end_time.ToMicroseconds()
            cursor = await connection.execute(
                "INSERT INTO history_hands (hand_id, table_id, room_id, variant, pool, start_us, end_us, record, "
                "recorded_us) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING number",
                (
                    f"raw-{uuid.uuid4().hex}",
                    record.table_id,
                    record.room_id,
                    record.variant,
                    record.pool,
                    record.start_time.ToMicroseconds(),
                    end_us,
                    record.SerializeToString(deterministic=True),
                    end_us,
                ),
            )
            row = await cursor.fetchone()
            assert row is not None
            async with connection.cursor() as players:
                await players.executemany(
                    "INSERT INTO history_hand_players (hand_number, seat, player_id, table_id, end_us, net_result, "
                    "client_fingerprint) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [
                        (
                            row[0],
                            s.seat,
                            s.player_id,
                            record.table_id,
                            end_us,
                            s.net_result,
                            s.client_fingerprint,
                        )
                        for s in record.seats
                    ],
                )

    try:
        return await timed(clients, seconds, insert)
    finally:
        for connection in connections:
            await connection.close()


def _sqlite_hand(connection: sqlite3.Connection, record: history_pb2.HandRecord, hand_id: str) -> None:
    end_us = record.end_time.ToMicroseconds()
    connection.execute("BEGIN IMMEDIATE")
    cursor = connection.execute(
        "INSERT INTO history_hands (hand_id, table_id, room_id, variant, pool, start_us, end_us, record, recorded_us) "
        "VALUES (?,?,?,?,?,?,?,?,?)",
        (
            hand_id,
            record.table_id,
            record.room_id,
            record.variant,
            record.pool,
            record.start_time.ToMicroseconds(),
            end_us,
            record.SerializeToString(deterministic=True),
            end_us,
        ),
    )
    number = cursor.lastrowid
    connection.executemany(
        "INSERT INTO history_hand_players VALUES (?,?,?,?,?,?,?)",
        [
            (number, s.seat, s.player_id, record.table_id, end_us, s.net_result, s.client_fingerprint)
            for s in record.seats
        ],
    )
    connection.execute("COMMIT")


LIST_QUERY = (
    "SELECT h.number, h.end_us, h.record FROM history_hands h JOIN ("
    " SELECT hand_number FROM history_hand_players WHERE player_id = {p}"
    " ORDER BY end_us DESC, hand_number DESC LIMIT 51) page ON page.hand_number = h.number"
    " ORDER BY h.end_us DESC, h.number DESC"
)


class RawLister:
    """The ListMyHands floor: the same keyset query run directly, one call at a time."""

    def __init__(self, url: str) -> None:
        self._url = url
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

    async def first_page(self, player: str) -> float:
        started = time.perf_counter()
        if self._sqlite is not None:
            self._sqlite.execute(LIST_QUERY.format(p="?"), (player,)).fetchall()
        else:
            assert self._postgres is not None
            await (await self._postgres.execute(LIST_QUERY.format(p="%s"), (player,))).fetchall()
        return (time.perf_counter() - started) * 1000


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


async def service_scenarios(
    target: str,
    url: str,
    templates: list[history_pb2.HandRecord],
    players: list[str],
    *,
    clients: int,
    seconds: float,
    calls: int,
) -> None:
    await _wait_serving(target)
    async with grpc.aio.insecure_channel(target) as channel:
        stub = history_pb2_grpc.HistoryServiceStub(channel)

        async def record_hand(index: int, n: int) -> None:
            record = history_pb2.HandRecord()
            record.CopyFrom(templates[(index * 7919 + n) % len(templates)])
            record.hand_id = f"bench-{uuid.uuid4().hex}"
            await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)

        await timed(2, 1.0, record_hand)  # warm-up
        # Floor and service alternate in short slices, so both see the same load on a shared machine.
        floor_count, count, floor_lat, lat = 0, 0, [], []
        for _ in range(ROUNDS):
            n, values = await raw_insert_rate(url, templates, clients, seconds / ROUNDS)
            floor_count, floor_lat = floor_count + n, floor_lat + values
            n, values = await timed(clients, seconds / ROUNDS, record_hand)
            count, lat = count + n, lat + values
        print(
            f"{'RecordHand':<34}{'hands/s':>10}{'p50 ms':>9}{'p99 ms':>9}  ({clients} clients, {seconds:.0f} s each)"
        )
        print(
            f"{'  floor: raw inserts, same rows':<34}{floor_count / seconds:>10.0f}{statistics.median(floor_lat):>9.2f}"
            f"{_percentile(floor_lat, 0.99):>9.2f}"
        )
        print(
            f"{'  history service (gRPC)':<34}{count / seconds:>10.0f}{statistics.median(lat):>9.2f}"
            f"{_percentile(lat, 0.99):>9.2f}   ratio to floor {count / max(floor_count, 1):.2f}"
        )

        lister = RawLister(url)
        await lister.open()
        raw: list[float] = []
        first, fifth = [], []
        for i in range(calls):
            # Floor and service read the same player one after the other (the floor first, so the
            # service never gets a warmer cache than the floor had).
            raw.append(await lister.first_page(players[i % len(players)]))
            metadata = (("authorization", f"Bearer {token_for(players[i % len(players)], 'player')}"),)
            started = time.perf_counter()
            page = await stub.ListMyHands(
                history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_size=50)), metadata=metadata
            )
            first.append((time.perf_counter() - started) * 1000)
            assert len(page.hands) == 50
            token = page.page.next_page_token
            for _ in range(3):
                token = (
                    await stub.ListMyHands(
                        history_pb2.ListMyHandsRequest(
                            page=common_pb2.PageRequest(page_size=50, page_token=token)
                        ),
                        metadata=metadata,
                    )
                ).page.next_page_token
            started = time.perf_counter()
            await stub.ListMyHands(
                history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_size=50, page_token=token)),
                metadata=metadata,
            )
            fifth.append((time.perf_counter() - started) * 1000)
        await lister.close()
        print(
            f"{'ListMyHands (50 per page)':<34}{'':>10}{'p50 ms':>9}{'p99 ms':>9}  ({calls} players, one at a time)"
        )
        for name, values in (
            ("  floor: the same SQL, direct", raw),
            ("  history service, first page", first),
            ("  history service, fifth page", fifth),
        ):
            print(
                f"{name:<34}{'':>10}{statistics.median(values):>9.2f}{_percentile(values, 0.99):>9.2f}"
                f"   ratio to floor {statistics.median(values) / statistics.median(raw):.1f}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1_000_000, help="hands bulk-loaded before measuring")
    parser.add_argument("--players", type=int, default=10_000, help="distinct players of the bulk hands")
    parser.add_argument("--clients", type=int, default=8, help="concurrent RecordHand callers")
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each throughput run")
    parser.add_argument("--calls", type=int, default=200, help="ListMyHands calls (distinct players)")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("POKER_TEST_DATABASE_URL", ""),
        help="a PostgreSQL server to create a throwaway database on; empty means SQLite",
    )
    args = parser.parse_args()
    templates = varied_records(300, seed=99, table_id="bench-live", prefix="live-")
    blobs = [t.SerializeToString(deterministic=True) for t in templates]
    with database(args.postgres_url) as url:
        migrate(url)
        loaded = bulk_load(url, args.hands, args.players, blobs)
        backend = "postgresql" if args.postgres_url else "sqlite"
        print(
            f"history bench on {backend}: {args.hands:,} hands of {args.players:,} players bulk-loaded in "
            f"{loaded:.0f} s ({args.hands / loaded:,.0f} hands/s through {'COPY' if args.postgres_url else 'executemany'})"
        )
        rng = random.Random(5)
        players = [f"player-{p}" for p in rng.sample(range(args.players), min(args.calls, args.players))]
        port = _free_port()
        with tempfile.TemporaryDirectory(prefix="history-bench-data-") as folder:
            environ = {
                **os.environ,
                "POKER_HISTORY_PORT": str(port),
                "POKER_DATA_DIR": folder,
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
                    service_scenarios(
                        f"127.0.0.1:{port}",
                        url,
                        templates,
                        players,
                        clients=args.clients,
                        seconds=args.seconds,
                        calls=args.calls,
                    )
                )
            finally:
                server.terminate()
                server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
