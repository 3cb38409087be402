"""Stopping background tasks for certain.

On Python 3.11 one `Task.cancel()` can be lost: `asyncio.wait_for` returns the inner result when the
inner awaitable finishes in the same loop turn as the cancel (CPython gh-86296, fixed in 3.12), and
redis-py calls `wait_for` on every socket write when a socket timeout is set (its default is 5 s).
A task cancelled while it writes to Redis can therefore carry on as if nothing happened, and
`task.cancel(); await task` then waits for ever. `cancel_and_wait` cancels again until the task ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from service_runtime.structured_logging import get_logger

log = get_logger(__name__)

RECANCEL_SECONDS = 0.5
WARN_AFTER_SECONDS = 10.0


async def cancel_and_wait(
    task: asyncio.Task[Any] | None, *, recancel_seconds: float = RECANCEL_SECONDS
) -> None:
    """Cancel `task` and return once it has ended, whatever it raised (a failure was the task's own
    business: log it where it happens). Cancels again every `recancel_seconds` while it runs on."""
    if task is None:
        return
    loop = asyncio.get_running_loop()
    started = loop.time()
    warned = False
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=recancel_seconds)
        if not task.done() and not warned and loop.time() - started >= WARN_AFTER_SECONDS:
            warned = True
            log.warning("task still running after cancel", task=task.get_name())
    if not task.cancelled():
        with contextlib.suppress(BaseException):
            task.exception()  # retrieved, so asyncio does not report it again
