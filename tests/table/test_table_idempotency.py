"""The table's idempotency memory: the first answer for a retry, a conflict for other fields, and a
bound in time and count (a long-running table must not grow with every action it ever answered)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service_runtime.errors import AlreadyExists, FailedPrecondition, Unavailable
from services.table.idempotency import AnswerMemory


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_retry_gets_the_first_answer_and_other_fields_conflict() -> None:
    memory = AnswerMemory()
    calls: list[int] = []

    async def run() -> int:
        calls.append(1)
        return len(calls)

    assert await memory.once("k", ("a",), run) == 1
    assert await memory.once("k", ("a",), run) == 1
    with pytest.raises(AlreadyExists):
        await memory.once("k", ("b",), run)
    assert calls == [1]


async def test_a_refusal_is_remembered_but_an_outage_is_not() -> None:
    memory = AnswerMemory()

    async def refuse() -> int:
        raise FailedPrecondition("NOT_YOUR_TURN", "no")

    async def down() -> int:
        raise Unavailable("UNAVAILABLE", "down")

    async def ok() -> int:
        return 7

    with pytest.raises(FailedPrecondition):
        await memory.once("r", (), refuse)
    with pytest.raises(FailedPrecondition):
        await memory.once("r", (), ok)
    with pytest.raises(Unavailable):
        await memory.once("u", (), down)
    assert await memory.once("u", (), ok) == 7


@settings(deadline=None)  # pure and fast; a loaded machine once took 348 ms for one example
@given(st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=200))
def test_the_memory_is_bounded_in_count_and_time(steps: list[float]) -> None:
    clock = Clock()
    memory = AnswerMemory(size=50, ttl_seconds=60, clock=clock)

    async def answer() -> int:
        return 1

    async def play() -> None:
        for n, step in enumerate(steps):
            clock.now += step
            await memory.once(n, (), answer)
            assert len(memory) <= 50
        # Nothing older than the time bound is kept.
        clock.now += 61
        await memory.once("last", (), answer)
        assert len(memory) == 1

    asyncio.run(play())


async def test_two_calls_of_one_key_at_once_run_once_and_other_fields_conflict_at_once() -> None:
    """Found by an independent tester: two CloseTable calls with one request id and two tables, at
    the same moment, both closed their table (the key was not held while the first ran), and the
    retry of one got IDEMPOTENCY_CONFLICT for a close that happened. The first call holds its key
    while it runs: the same fields wait for its answer, other fields are a conflict at once."""
    memory = AnswerMemory()
    gate = asyncio.Event()
    ran: list[str] = []

    async def close(table: str) -> str:
        ran.append(table)
        await gate.wait()
        return f"closed {table}"

    first = asyncio.create_task(memory.once("k", ("t1",), lambda: close("t1")))
    same = asyncio.create_task(memory.once("k", ("t1",), lambda: close("t1")))
    other = asyncio.create_task(memory.once("k", ("t2",), lambda: close("t2")))
    await asyncio.sleep(0)
    gate.set()
    assert await first == await same == "closed t1"
    with pytest.raises(AlreadyExists):
        await other
    assert ran == ["t1"]
    assert await memory.once("k", ("t1",), lambda: close("t1")) == "closed t1"


async def test_a_call_under_way_that_fails_on_an_outage_lets_the_next_one_run() -> None:
    memory = AnswerMemory()
    gate = asyncio.Event()

    async def down() -> int:
        await gate.wait()
        raise Unavailable("UNAVAILABLE", "down")

    async def ok() -> int:
        return 7

    first = asyncio.create_task(memory.once("u", (), down))
    waiting = asyncio.create_task(memory.once("u", (), ok))
    await asyncio.sleep(0)
    gate.set()
    with pytest.raises(Unavailable):
        await first
    with pytest.raises(Unavailable):
        await waiting  # it waited for the call under way, whose answer was the outage
    assert await memory.once("u", (), ok) == 7
