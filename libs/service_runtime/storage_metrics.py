"""SQL statement and Redis command latency, measured where every service opens its storage.

`time_statements(engine)` hooks SQLAlchemy's cursor events (the documented recipe for statement
timing), so every statement of every service is in `poker_sql_statement_seconds` by backend and
kind (SELECT, INSERT, ...). The hot paths that skip SQLAlchemy's statement layer and talk to the
driver itself (the fairness lifecycle, RecordHand, the cashier's units of work) time each round
trip with `driver_round_trip`: a psycopg pipeline as one, `statement="PIPELINE"`. `TimedRedis` is the async Redis client every service creates
(redis_client.create_redis): each command, and each pipeline as one round trip, is in
`poker_redis_command_seconds` by command name.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import redis.asyncio as redis
from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from redis.asyncio.client import Pipeline
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from service_runtime.metrics import redis_errors, redis_seconds, sql_seconds

_KINDS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "BEGIN", "COMMIT", "ROLLBACK", "WITH", "PRAGMA"})
_STARTED = "poker_statement_started"


def statement_kind(statement: str) -> str:
    word = statement.lstrip().split(None, 1)[0].upper() if statement.strip() else ""
    return word if word in _KINDS else "OTHER"


def time_statements(engine: AsyncEngine) -> None:
    backend = engine.dialect.name
    children: dict[str, Any] = {}

    def child(kind: str) -> Any:
        found = children.get(kind)
        if found is None:
            found = children[kind] = sql_seconds.labels(backend, kind)
        return found

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _before(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        conn.info.setdefault(_STARTED, []).append(time.perf_counter())

    @event.listens_for(engine.sync_engine, "after_cursor_execute")
    def _after(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        started = conn.info.get(_STARTED)
        if started:
            child(statement_kind(statement)).observe(time.perf_counter() - started.pop())

    @event.listens_for(engine.sync_engine, "handle_error")
    def _failed(context: Any) -> None:
        started = context.connection.info.get(_STARTED) if context.connection is not None else None
        if started:
            started.pop()


class _PoolCollector(Collector):
    """The database pools' connections in use and their bound, read at scrape time from every engine
    the process created (`watch_pool`) and still holds: in use near the bound is a saturated pool,
    whose callers queue for a connection (and time out: DATABASE_UNAVAILABLE)."""

    def __init__(self) -> None:
        self._engines: weakref.WeakKeyDictionary[AsyncEngine, int] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def watch(self, engine: AsyncEngine, bound: int) -> None:
        with self._lock:
            self._engines[engine] = bound

    def collect(self) -> Iterator[GaugeMetricFamily]:
        in_use: dict[str, int] = {}
        bounds: dict[str, int] = {}
        with self._lock:
            engines = list(self._engines.items())
        for engine, bound in engines:
            backend = engine.dialect.name
            checked_out = getattr(engine.sync_engine.pool, "checkedout", None)
            in_use[backend] = in_use.get(backend, 0) + (int(checked_out()) if checked_out else 0)
            bounds[backend] = bounds.get(backend, 0) + bound
        used = GaugeMetricFamily(
            "poker_db_pool_connections_in_use",
            "Database connections checked out of the process's pools now, by backend.",
            labels=("backend",),
        )
        limit = GaugeMetricFamily(
            "poker_db_pool_max_connections",
            "The most connections the process's pools open (pool size plus overflow), by backend.",
            labels=("backend",),
        )
        for backend in sorted(bounds):
            used.add_metric((backend,), in_use[backend])
            limit.add_metric((backend,), bounds[backend])
        yield used
        yield limit

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily("poker_db_pool_connections_in_use", "", labels=("backend",))
        yield GaugeMetricFamily("poker_db_pool_max_connections", "", labels=("backend",))


_POOLS = _PoolCollector()
REGISTRY.register(_POOLS)


def watch_pool(engine: AsyncEngine, bound: int) -> None:
    """Export `engine`'s pool (at most `bound` connections) for as long as the engine exists."""
    _POOLS.watch(engine, bound)


# A psycopg pipeline: its statements (and the BEGIN or COMMIT sent with them) in one round trip.
PIPELINE = "PIPELINE"
_sql_children: dict[tuple[str, str], Any] = {}


@contextlib.contextmanager
def driver_round_trip(backend: str, statement: str = PIPELINE) -> Iterator[None]:
    """Time one round trip made on the database driver (a psycopg pipeline, a sqlite3 or aiosqlite
    call), which SQLAlchemy's cursor events do not see. `backend` is the dialect's name, `statement`
    the kind (`statement_kind`) or PIPELINE. A failed one is not timed, as with the cursor events."""
    started = time.perf_counter()
    yield
    found = _sql_children.get((backend, statement))
    if found is None:
        found = _sql_children[backend, statement] = sql_seconds.labels(backend, statement)
    found.observe(time.perf_counter() - started)


_redis_children: dict[str, Any] = {}


def _redis_child(command: str) -> Any:
    found = _redis_children.get(command)
    if found is None:
        found = _redis_children[command] = redis_seconds.labels(command)
    return found


_redis_error_children: dict[str, Any] = {}


def _count_redis_error(command: str) -> None:
    found = _redis_error_children.get(command)
    if found is None:
        found = _redis_error_children[command] = redis_errors.labels(command)
    found.inc()


def _command_name(args: tuple[Any, ...]) -> str:
    name = args[0] if args and isinstance(args[0], str) else "OTHER"
    return name.split(" ", 1)[0].upper()


class TimedPipeline(Pipeline):
    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        started = time.perf_counter()
        try:
            return await super().execute(raise_on_error)
        except redis.RedisError:
            _count_redis_error("PIPELINE")
            raise
        finally:
            _redis_child("PIPELINE").observe(time.perf_counter() - started)


class TimedRedis(redis.Redis):
    """redis.asyncio.Redis that times every command and pipeline round trip, and counts the ones
    that failed (`poker_redis_command_errors_total`: a refused or lost connection, a timeout, an
    error reply)."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        except redis.RedisError:
            _count_redis_error(_command_name(args))
            raise
        finally:
            _redis_child(_command_name(args)).observe(time.perf_counter() - started)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        return TimedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)
