"""Group concurrent requests into shared transactions, the way TigerBeetle batches its clients.

While the transactions in flight run (`concurrency` of them, one by default), requests that arrive
queue up; the next transaction takes all of them (up to a limit). A lone request on an idle cashier
runs at once, so coalescing adds no latency; under load, many callers share one lock-and-load, one
write and one commit, and with two in flight Python decides one batch while PostgreSQL works on
the other. Each request keeps its own answer or error: the batch function decides every request on
its own and only the database work is shared. Transactions in flight at once may touch the same
rows: they lock them in one order, so one waits for the other, and a key recorded by both makes
the later one fail on the unique index and run again (see `unit_of_work.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass(frozen=True)
class Answer(Generic[Result]):
    """What one request of a batch gets: a result, or the error to raise to its caller."""

    result: Result | None = None
    error: BaseException | None = None


@dataclass
class _Waiting(Generic[Item, Result]):
    item: Item
    future: asyncio.Future[Result]


class Coalescer(Generic[Item, Result]):
    """Runs `run_batch` over whatever requests are waiting, up to `concurrency` batches at a time."""

    def __init__(
        self,
        run_batch: Callable[[Sequence[Item]], Awaitable[Sequence[Answer[Result]]]],
        *,
        limit: int,
        key: Callable[[Item], Hashable] | None = None,
        concurrency: int = 1,
        min_extra_batch: int = 1,
    ) -> None:
        # `key`: requests with equal keys never share a batch (a later one must see the earlier one's rows).
        self._run_batch = run_batch
        self._limit = limit
        self._key = key
        self._waiting: list[_Waiting[Item, Result]] = []
        self._concurrency = concurrency
        # A transaction beside one already running opens only for this many waiting requests.
        self._min_extra_batch = min_extra_batch
        self._runners: set[asyncio.Task[None]] = set()
        self._busy = 0  # runners inside `run_batch`

    async def submit(self, item: Item) -> Result:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        self._waiting.append(_Waiting(item, future))
        # A runner that has finished leaves the set only later (done callbacks are scheduled), so
        # count the ones still running: a request must never wait for a runner that has stopped.
        # Beside a running one, a new runner is only worth starting once enough requests wait.
        self._runners = {runner for runner in self._runners if not runner.done()}
        if not self._runners or (
            len(self._runners) < self._concurrency and len(self._waiting) >= self._min_extra_batch
        ):
            self._runners.add(loop.create_task(self._run()))
        return await future

    def _next_batch(self) -> list[_Waiting[Item, Result]]:
        # Runners that are free share what waits: when a burst arrives with both free, each takes
        # half, so the two transactions overlap instead of one taking all and the other idling.
        free = max(1, sum(not runner.done() for runner in self._runners) - self._busy)
        share = min(self._limit, -(-len(self._waiting) // free))
        batch: list[_Waiting[Item, Result]] = []
        later: list[_Waiting[Item, Result]] = []
        keys: set[Hashable] = set()
        for waiting in self._waiting:
            if waiting.future.done():
                continue  # the caller gave up before its turn
            key = self._key(waiting.item) if self._key is not None else None
            if len(batch) >= share or (key is not None and key in keys):
                later.append(waiting)
                continue
            batch.append(waiting)
            if key is not None:
                keys.add(key)
        self._waiting = later
        return batch

    async def _run(self) -> None:
        while self._waiting:
            if self._busy and len(self._waiting) < self._min_extra_batch:
                # Too few to be worth a transaction of their own beside the one running: the busy
                # runner takes them when it is done (it always looks again before it stops).
                return
            batch = self._next_batch()
            if not batch:
                continue
            self._busy += 1
            try:
                answers = await self._run_batch([waiting.item for waiting in batch])
            except Exception as error:  # the shared transaction failed: every caller in it gets the error
                for waiting in batch:
                    if not waiting.future.done():
                        waiting.future.set_exception(error)
                continue
            finally:
                self._busy -= 1
            for waiting, answer in zip(batch, answers, strict=True):
                if waiting.future.done():
                    continue
                if answer.error is not None:
                    waiting.future.set_exception(answer.error)
                else:
                    waiting.future.set_result(answer.result)  # type: ignore[arg-type]
