"""A service's database closes only after its last unit of work gave its connection back.

`make run`'s Ctrl-C printed SQLAlchemy's "Exception during reset or similar" traceback (two CI runs):
gRPC's stop cancels an in-flight call while it holds a pooled connection; SQLAlchemy returns that
connection in a task of its own (a ROLLBACK through aiosqlite's thread); the service then disposed
of its engine and its main coroutine returned at once, and `asyncio.run` cancelled every task still
running, that ROLLBACK among them. `close_engine` waits (bounded) for the pool to have every
connection back before it disposes of the engine."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from service_runtime.database import close_engine, create_engine


def test_the_engine_is_disposed_only_once_a_cancelled_unit_gave_its_connection_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    happened: list[str] = []

    async def main() -> None:
        engine = create_engine(f"sqlite:///{tmp_path / 'service.db'}")

        @event.listens_for(engine.sync_engine, "checkin")
        def _checked_in(_connection: Any, _record: Any) -> None:
            happened.append("connection back")

        @event.listens_for(engine.sync_engine, "engine_disposed")
        def _disposed(_engine: Any) -> None:
            happened.append("disposed")

        holding = asyncio.Event()
        slow_thread = threading.Event()
        blocking: list[asyncio.Future[Any]] = []

        async def unit() -> None:
            async with engine.begin() as connection:
                await connection.execute(text("select 1"))
                raw: Any = (await connection.get_raw_connection()).driver_connection
                # The ROLLBACK that returns the connection queues behind this in aiosqlite's thread:
                # a loaded machine, where that thread runs late.
                blocking.append(asyncio.ensure_future(raw._execute(slow_thread.wait)))
                holding.set()
                await asyncio.Event().wait()  # an RPC in flight when the server stops

        task = asyncio.create_task(unit())
        await holding.wait()
        task.cancel()  # what the server's stop does to a call still running after its grace
        asyncio.get_running_loop().call_later(0.05, slow_thread.set)
        await close_engine(engine)

    with caplog.at_level(logging.WARNING, logger="sqlalchemy.pool"):
        asyncio.run(main())
    assert happened == ["connection back", "disposed"]
    assert [r.getMessage() for r in caplog.records if r.name.startswith("sqlalchemy.pool")] == []
