"""The table shell's clock: the one source of time, timers and fresh ids of a table (issue 42).

Every time the shell reads (a log entry's `at`, a turn's deadline, a countdown's phase, a seat's
reserve, the spectators' delay line), every timer it sets and every id it makes comes from the
`Clock` it was given. Production runs on `WallClock` (wall seconds, asyncio's timers); tests and the
table simulator run on `SimulatedClock`, whose time moves only when the test moves it, so a 30 s turn
clock or a 90 s seat reserve takes no wall time and fires exactly at its deadline however loaded the
machine is. `make lint` holds the table's shell to it: no module of `services.table` imports `time`,
`random` or `uuid` but this one (`.importlinter`).

All times are wall seconds since the epoch, the clock of the logs and the pure cores.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Wall seconds since the epoch."""

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time."""

    def timeout_at(self, when: float | None) -> AbstractAsyncContextManager[Any]:
        """An `async with` that raises TimeoutError in its body once the clock reaches `when`
        (None: never)."""

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` once the clock reaches `when` (at once if it has)."""

    def new_id(self) -> str:
        """A fresh id (32 hex digits), never one this clock gave before."""


class WallClock:
    """Real time: `time.time()` and asyncio's timers."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def timeout_at(self, when: float | None) -> asyncio.Timeout:
        return asyncio.timeout(None if when is None else max(0.0, when - time.time()))

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(0.0, when - time.time()), callback)

    def new_id(self) -> str:
        return uuid.uuid4().hex


WALL_CLOCK = WallClock()


class _Scheduled:
    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _SimulatedTimeout:
    """`asyncio.timeout` driven by a `SimulatedClock`: its deadline is the clock's, not the loop's."""

    def __init__(self, clock: SimulatedClock, when: float | None) -> None:
        self._clock = clock
        self._when = when
        self._timer: Timer | None = None
        self._inner: asyncio.Timeout | None = None

    async def __aenter__(self) -> _SimulatedTimeout:
        self._inner = asyncio.timeout(None)
        await self._inner.__aenter__()
        if self._when is not None:
            inner = self._inner
            # Expiring the inner timeout now (the loop's time) cancels the body at the loop's next
            # turn, and turns that cancel into TimeoutError as asyncio.timeout does.
            self._timer = self._clock.call_at(
                self._when, lambda: inner.reschedule(asyncio.get_running_loop().time())
            )
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        if self._timer is not None:
            self._timer.cancel()
        assert self._inner is not None
        await self._inner.__aexit__(*exc)  # type: ignore[arg-type]
        return None


class SimulatedClock:
    """Time that moves only when `advance` (or `run_for`) moves it; timers fire in the order of their
    times, each with the clock set to its time. Ids come from a seeded generator: equal seeds, equal
    ids."""

    def __init__(self, start: float = 1_800_000_000.0, seed: int = 0) -> None:
        self._now = start
        self._queue: list[tuple[float, int, _Scheduled]] = []
        self._order = itertools.count()
        self._ids = random.Random(seed)

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        timer = self.call_at(self._now + max(0.0, seconds), wake)
        try:
            await future
        finally:
            timer.cancel()

    def timeout_at(self, when: float | None) -> _SimulatedTimeout:
        return _SimulatedTimeout(self, when)

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        scheduled = _Scheduled(callback)
        if when <= self._now:

            def run() -> None:
                if not scheduled.cancelled:
                    callback()

            asyncio.get_running_loop().call_soon(run)
        else:
            heapq.heappush(self._queue, (when, next(self._order), scheduled))
        return scheduled

    def new_id(self) -> str:
        return f"{self._ids.getrandbits(128):032x}"

    def next_due(self) -> float | None:
        """The time of the next timer that is still set, or None."""
        while self._queue and self._queue[0][2].cancelled:
            heapq.heappop(self._queue)
        return self._queue[0][0] if self._queue else None

    def advance(self, seconds: float) -> None:
        """Move the time on by `seconds`, firing every timer due on the way (their tasks run when the
        caller next yields to the loop)."""
        self.advance_to(self._now + seconds)

    def advance_to(self, when: float) -> None:
        while True:
            due = self.next_due()
            if due is None or due > when:
                break
            _, _, scheduled = heapq.heappop(self._queue)
            self._now = max(self._now, due)
            scheduled.callback()
        self._now = max(self._now, when)

    async def run_for(self, seconds: float, *, turns: int = 64) -> None:
        """Move the time on by `seconds` one timer at a time, letting the loop run `turns` turns after
        each (the tasks a timer woke, and the timers they set in turn, run at that time)."""
        end = self._now + seconds
        await _turns(turns)
        while True:
            due = self.next_due()
            if due is None or due > end:
                break
            self.advance_to(due)
            await _turns(turns)
        self.advance_to(end)
        await _turns(turns)


async def _turns(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(0)
