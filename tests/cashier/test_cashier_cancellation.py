"""A cashier transaction, once begun, is never cut by its caller's cancellation (a client's deadline,
a client gone): the caller is answered at once, the transaction commits or rolls back on its own and
gives its connection back. On the embedded default a cut transaction could keep SQLite's one pooled
connection, and every later call of the cashier waited for it (found 2026-12-06: 4 of 10 runs of
holds whose first tries met a 1-20 ms deadline hung)."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from services.cashier.application import Cashier


async def test_a_transaction_whose_caller_is_cancelled_runs_to_its_end_and_frees_its_connection(
    any_cashier: Cashier,
) -> None:
    inside, release = asyncio.Event(), asyncio.Event()
    finished: list[str] = []

    async def work(conn: AsyncConnection) -> str:
        await conn.execute(sa.text("SELECT 1"))
        inside.set()
        await release.wait()
        await conn.execute(sa.text("SELECT 1"))
        finished.append("committed")
        return "done"

    caller = asyncio.ensure_future(any_cashier._transaction(work))
    await inside.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller  # answered at once, the transaction still open
    assert finished == []
    release.set()

    # The next transaction gets a connection (on SQLite: the same one, given back).
    async def count(conn: AsyncConnection) -> int:
        return int((await conn.execute(sa.text("SELECT 1"))).scalar_one())

    assert await asyncio.wait_for(any_cashier._transaction(count), timeout=30) == 1
    assert finished == ["committed"]
