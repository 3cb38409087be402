"""A bounded queue of jobs that must happen eventually (seed reveals, hand records to history).

A job that fails because its service is down is retried with backoff, in order, with the same ids;
a job that fails for good (the other side refuses it) is logged and dropped. When the queue is full
the oldest job is dropped and logged, so an outage of history never grows memory or stops play.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from service_runtime.errors import DomainError
from service_runtime.structured_logging import get_logger
from service_runtime.tasks import cancel_and_wait
from services.table.ports.remote import is_unavailable

T = TypeVar("T")
log = get_logger("table.retry_queue")


class RetryingQueue(Generic[T]):
    def __init__(
        self,
        name: str,
        handler: Callable[[T], Awaitable[None]],
        *,
        max_size: int,
        initial_backoff: float,
        max_backoff: float,
    ) -> None:
        self._name = name
        self._handler = handler
        self._max_size = max_size
        self._initial = initial_backoff
        self._max = max_backoff
        self._jobs: collections.deque[T] = collections.deque()
        # When each job was put (monotonic), for the lag metric: the same order as `_jobs`.
        self._put_at: collections.deque[float] = collections.deque()
        self._ready = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self.done_count = 0
        self.dropped_count = 0

    def put(self, job: T) -> None:
        if len(self._jobs) >= self._max_size:
            self._jobs.popleft()
            self._put_at.popleft()
            self.dropped_count += 1
            log.error("retry queue full: oldest job dropped", queue=self._name)
        self._jobs.append(job)
        self._put_at.append(time.monotonic())
        self._idle.clear()
        self._ready.set()

    def __len__(self) -> int:
        return len(self._jobs)

    def oldest_age(self) -> float:
        """Seconds the oldest job has waited (0 when the queue is empty)."""
        return time.monotonic() - self._put_at[0] if self._put_at else 0.0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"retry-queue-{self._name}")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def drained(self) -> None:
        """Wait until every job put so far is done or dropped."""
        await self._idle.wait()

    async def _run(self) -> None:
        backoff = self._initial
        while True:
            if not self._jobs:
                self._idle.set()
                self._ready.clear()
                await self._ready.wait()
                continue
            job = self._jobs[0]
            try:
                await self._handler(job)
            except DomainError as error:
                if is_unavailable(error):
                    await asyncio.sleep(backoff)
                    backoff = min(self._max, backoff * 2)
                    continue
                log.error("job refused for good: dropped", queue=self._name, reason=error.reason)
                self.dropped_count += 1
            except Exception:
                log.exception("job failed: dropped", queue=self._name)
                self.dropped_count += 1
            else:
                self.done_count += 1
            backoff = self._initial
            if self._jobs and self._jobs[0] is job:
                self._jobs.popleft()
                self._put_at.popleft()
