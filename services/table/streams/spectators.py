"""The spectators' delay line (rules 14): public table updates released `delay` seconds after they
happened, every one, in order; the newest released update is the snapshot a new spectator starts from,
so that snapshot is itself at least `delay` old.

Pure: times are wall-clock seconds passed in; nothing here does I/O or knows grpc. The table actor
pushes each public update (already cut for a recipient with no seat) and delivers what `release`
returns to its spectators, all in one message (issue 28). The line comes due `batch_seconds` after
its oldest update is `delay` old, so the updates of a burst (one hand's quick steps) are released
together: each is between `delay` and `delay + batch_seconds` late.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Stamped(Generic[T]):
    at: float  # wall clock seconds the update happened
    item: T


class DelayLine(Generic[T]):
    def __init__(self, delay: float, max_pending: int = 10_000, batch_seconds: float = 0.0) -> None:
        self.delay = delay
        self.batch_seconds = batch_seconds
        self._max_pending = max_pending
        self._pending: collections.deque[Stamped[T]] = collections.deque()
        self._base: Stamped[T] | None = None
        self.dropped = 0

    def push(self, at: float, item: T) -> None:
        """An update that happened at `at` (not earlier than the last one pushed)."""
        if self._pending and at < self._pending[-1].at:
            at = self._pending[-1].at
        self._pending.append(Stamped(at, item))
        while len(self._pending) > self._max_pending:
            # Far more updates than any table makes in a delay: the oldest is lost (counted), never
            # released early.
            self._pending.popleft()
            self.dropped += 1

    def release(self, now: float) -> list[Stamped[T]]:
        """The updates at least `delay` old, in order; the newest of them becomes the base."""
        out: list[Stamped[T]] = []
        while self._pending and now - self._pending[0].at >= self.delay:
            out.append(self._pending.popleft())
        if out:
            self._base = out[-1]
        return out

    @property
    def base(self) -> Stamped[T] | None:
        """The newest released update (call `release(now)` first for the current one)."""
        return self._base

    def next_due(self) -> float | None:
        """When to release next: the batch window after the oldest pending update is `delay` old."""
        return self._pending[0].at + self.delay + self.batch_seconds if self._pending else None

    def __len__(self) -> int:
        return len(self._pending)
