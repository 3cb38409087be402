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
import time
from collections.abc import Iterator
from typing import Any

import redis.asyncio as redis
from redis.asyncio.client import Pipeline
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from service_runtime.metrics import redis_seconds, sql_seconds

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


class TimedPipeline(Pipeline):
    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        started = time.perf_counter()
        try:
            return await super().execute(raise_on_error)
        finally:
            _redis_child("PIPELINE").observe(time.perf_counter() - started)


class TimedRedis(redis.Redis):
    """redis.asyncio.Redis that times every command and pipeline round trip."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        finally:
            name = args[0] if args and isinstance(args[0], str) else "OTHER"
            _redis_child(name.split(" ", 1)[0].upper()).observe(time.perf_counter() - started)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        return TimedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)
