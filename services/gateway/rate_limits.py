"""Token buckets per player and per client address, in memory (each gateway replica limits alone).

A bucket holds up to `burst` calls and refills at `rate` per second; a call that finds it empty is
refused with RESOURCE_EXHAUSTED GATEWAY_RATE_LIMITED and the seconds until one call is free again.
The table of buckets is bounded: past `max_keys` the least recently used bucket is dropped (a
dropped bucket starts full again, which errs on the side of letting a player play).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from service_runtime.errors import ResourceExhausted

MAX_KEYS = 100_000


@dataclass(frozen=True)
class Rate:
    per_second: float
    burst: int


class RateLimiter:
    def __init__(
        self, rate: Rate, what: str, clock: Callable[[], float] = time.monotonic, max_keys: int = MAX_KEYS
    ) -> None:
        self._rate = rate
        self._what = what
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key: str) -> None:
        """Spend one call of `key`'s bucket, or raise GATEWAY_RATE_LIMITED."""
        now = self._clock()
        tokens, last = self._buckets.get(key, (float(self._rate.burst), now))
        tokens = min(float(self._rate.burst), tokens + (now - last) * self._rate.per_second)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            self._buckets.move_to_end(key)
            wait = math.ceil((1.0 - tokens) / self._rate.per_second)
            raise ResourceExhausted(
                "GATEWAY_RATE_LIMITED",
                f"too many calls from this {self._what}; retry in {wait} s",
                {"retry_after_seconds": str(wait)},
            )
        self._buckets[key] = (tokens - 1.0, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
