"""The coalescer: concurrent requests share batches, each keeps its own answer, none is stranded."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from services.cashier.coalescing import Answer, Coalescer


class Recorder:
    """A batch function that records its batches and how many ran at once."""

    def __init__(self, pause: float = 0.01, gate: asyncio.Event | None = None) -> None:
        self.batches: list[list[int]] = []
        self.running = 0
        self.most_at_once = 0
        self.pause = pause
        # When given, every batch waits for it (an order of events that no machine's speed changes).
        self.gate = gate

    async def __call__(self, items: Sequence[int]) -> list[Answer[int]]:
        self.batches.append(list(items))
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            if self.gate is not None:
                await self.gate.wait()
            await asyncio.sleep(self.pause)
        finally:
            self.running -= 1
        return [Answer(error=ValueError(item)) if item < 0 else Answer(result=item * 10) for item in items]


async def test_a_request_right_after_a_batch_finishes_is_still_run() -> None:
    # A runner that has just stopped is still in the coalescer's set until its done callback
    # runs; a request arriving in that window once waited forever.
    recorder = Recorder(pause=0)
    coalescer = Coalescer(recorder, limit=8, concurrency=1)
    for item in range(50):
        async with asyncio.timeout(1):  # submitted from this task, not a new one that starts later
            assert await coalescer.submit(item) == item * 10


@pytest.mark.parametrize("concurrency", [1, 2, 3])
async def test_waiting_requests_share_batches_and_at_most_concurrency_run_at_once(concurrency: int) -> None:
    recorder = Recorder()
    coalescer = Coalescer(recorder, limit=10, concurrency=concurrency)
    results = await asyncio.gather(*(coalescer.submit(item) for item in range(100)))
    assert results == [item * 10 for item in range(100)]
    assert recorder.most_at_once == concurrency
    assert sorted(item for batch in recorder.batches for item in batch) == list(range(100))
    assert all(len(batch) <= 10 for batch in recorder.batches)
    assert len(recorder.batches) < 100  # they did share


async def test_each_request_gets_its_own_error_and_equal_keys_never_share_a_batch() -> None:
    recorder = Recorder()
    coalescer = Coalescer(recorder, limit=10, key=lambda item: abs(item) % 3, concurrency=2)
    outcomes = await asyncio.gather(
        *(coalescer.submit(item) for item in (1, -2, 3, 4)), return_exceptions=True
    )
    assert [outcomes[0], outcomes[2], outcomes[3]] == [10, 30, 40]
    assert isinstance(outcomes[1], ValueError)
    for batch in recorder.batches:
        keys = [abs(item) % 3 for item in batch]
        assert len(keys) == len(set(keys))


async def test_a_failed_batch_fails_every_request_in_it_and_the_next_batch_still_runs() -> None:
    calls = 0

    async def flaky(items: Sequence[int]) -> list[Answer[int]]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("the shared transaction failed")
        return [Answer(result=item) for item in items]

    coalescer = Coalescer(flaky, limit=10)
    with pytest.raises(RuntimeError):
        await coalescer.submit(1)
    assert await coalescer.submit(2) == 2


async def test_a_second_transaction_opens_only_for_enough_waiting_requests() -> None:
    gate = asyncio.Event()
    recorder = Recorder(pause=0, gate=gate)
    coalescer = Coalescer(recorder, limit=100, concurrency=2, min_extra_batch=5)

    async def running(count: int) -> None:
        async with asyncio.timeout(5):  # a regression fails here instead of hanging
            while recorder.running != count:  # noqa: ASYNC110 (a counter, yielding to the loop)
                await asyncio.sleep(0)

    # Each first batch is held open by the gate while the others arrive, however slow the machine.
    first = asyncio.ensure_future(coalescer.submit(0))
    await running(1)
    few = [asyncio.ensure_future(coalescer.submit(item)) for item in (1, 2, 3)]
    for _ in range(20):
        await asyncio.sleep(0)
    assert recorder.running == 1  # three are too few for a second transaction
    gate.set()
    await asyncio.gather(first, *few)
    assert recorder.most_at_once == 1  # three were left for the running one to take next
    assert recorder.batches == [[0], [1, 2, 3]]

    gate.clear()
    recorder.batches.clear()
    first = asyncio.ensure_future(coalescer.submit(10))
    await running(1)
    many = [asyncio.ensure_future(coalescer.submit(item)) for item in range(11, 17)]
    await running(2)  # six waiting are enough: a second transaction opens beside the first
    gate.set()
    await asyncio.gather(first, *many)
    assert recorder.most_at_once == 2
    assert recorder.batches == [[10], [11, 12, 13, 14, 15, 16]]
