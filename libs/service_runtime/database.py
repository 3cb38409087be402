"""SQLAlchemy asyncio engine and session factory, created once per process next to each other.

SQLite (embedded default for `make run`) and PostgreSQL (production, CI) are both supported. Code
that uses a session never creates one: the application layer opens one short transaction per unit
of work with `async with sessions.begin() as session`.

SQLite keeps the promises PostgreSQL's row locks give: every transaction begins with `BEGIN
IMMEDIATE`, so it holds the database's write lock from its first statement and a read-check-write
cannot interleave with another writer (Python's sqlite3 would otherwise run the SELECTs outside any
transaction and begin one only at the first INSERT/UPDATE, and `FOR UPDATE` means nothing there).
This is SQLAlchemy's documented recipe for pysqlite/aiosqlite: the driver's own BEGIN is switched
off (`isolation_level = None`) and the engine's "begin" event emits ours. Within one process the
pool has a single connection, so transactions queue on the pool in asyncio rather than on SQLite's
busy handler, whose sleeps (1 to 100 ms each) would dominate the latency; another process (an admin
script, a migration) waits on the lock itself for up to `busy_timeout`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine


def normalise_url(url: str) -> str:
    """Accept plain `postgresql://` and `sqlite://` URLs and pick the async drivers we ship."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    elif parsed.drivername == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    return parsed.render_as_string(hide_password=False)


def sync_url(url: str) -> str:
    """The same database through a synchronous driver, for Alembic and admin scripts."""
    parsed = make_url(normalise_url(url))
    if parsed.drivername == "sqlite+aiosqlite":
        parsed = parsed.set(drivername="sqlite")
    return parsed.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """An async engine; SQLite gets its folder created, WAL mode, foreign keys on and transactions
    that take the write lock when they begin (see the module docstring)."""
    url = normalise_url(url)
    if is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        # One connection: the pool is the process's queue for the write lock. `pool_size` is for
        # PostgreSQL, where transactions do run side by side.
        engine = create_async_engine(url, connect_args={"timeout": 30}, pool_size=1, max_overflow=0)
        _begin_sqlite_transactions_immediately(engine)
        return engine
    # No pre-ping: it costs a round trip per checkout on the ledger's hot path; stale connections are
    # recycled instead, and a dropped one fails its transaction, which callers retry.
    return create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_recycle=1800)


def _begin_sqlite_transactions_immediately(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
        # The driver must not begin transactions itself (it would, lazily, at the first write).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _sqlite_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
