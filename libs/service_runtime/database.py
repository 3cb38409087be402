"""SQLAlchemy asyncio engine and session factory, created once per process next to each other.

SQLite (embedded default for `make run`) and PostgreSQL (production, CI) are both supported. Code
that uses a session never creates one: the application layer opens one short transaction per unit
of work with `async with sessions.begin() as session`.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import make_url
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
    """An async engine; SQLite gets its folder created, WAL mode and foreign keys on."""
    url = normalise_url(url)
    if is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": 30})

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):  # type: ignore[no-untyped-def]
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        return engine
    # No pre-ping: it costs a round trip per checkout on the ledger's hot path; stale connections are
    # recycled instead, and a dropped one fails its transaction, which callers retry.
    return create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_recycle=1800)


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
