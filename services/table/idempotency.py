"""Idempotency of a table's mutating RPCs by `(caller, method, request id)`, inside the table.

A retry with the same key returns the first answer, a refusal included; the same key with other
fields is ALREADY_EXISTS `IDEMPOTENCY_CONFLICT` and changes nothing. An UNAVAILABLE answer is not
remembered, so a retry after an outage does the work. The memory keeps the answers of the last
`ttl_seconds` (5 minutes: a client's retries come within seconds), at most `size` of them, so a
long-running table does not grow with every action it ever answered (the soak run measured that).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from service_runtime.errors import AlreadyExists, DomainError
from services.table.ports.clock import WALL_CLOCK
from services.table.ports.remote import is_unavailable

T = TypeVar("T")

DEFAULT_SIZE = 2_000
DEFAULT_TTL_SECONDS = 300.0


class AnswerMemory:
    def __init__(
        self,
        size: int = DEFAULT_SIZE,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = WALL_CLOCK.now,
    ) -> None:
        self._size = size
        self._ttl = ttl_seconds
        self._clock = clock
        self._answers: collections.OrderedDict[Hashable, tuple[float, Hashable, Any]] = (
            collections.OrderedDict()
        )
        # Keys whose first call is under way: its fields and the future of its answer.
        self._running: dict[Hashable, tuple[Hashable, asyncio.Future[Any]]] = {}

    def __len__(self) -> int:
        return len(self._answers)

    def known(self, key: Hashable, fingerprint: Hashable) -> Any:
        """The first answer to `key`, or None if it has none yet; a remembered refusal raises, and
        so does the same key with other fields (IDEMPOTENCY_CONFLICT)."""
        self._forget_old()
        found = self._answers.get(key)
        if found is None:
            return None
        _, first, outcome = found
        if first != fingerprint:
            raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the request id was used with other fields")
        if isinstance(outcome, DomainError):
            raise outcome
        return outcome

    async def once(self, key: Hashable, fingerprint: Hashable, run: Callable[[], Awaitable[T]]) -> T:
        """`run` once per key: a retry gets the first answer (a remembered refusal raises again), the
        same key with other fields is IDEMPOTENCY_CONFLICT. The key is held while its first call
        runs: a second call with the same fields waits for that call's answer (an outage included),
        one with other fields is a conflict at once (two calls at the same moment never both run)."""
        known = self.known(key, fingerprint)
        if known is not None:
            return known  # type: ignore[no-any-return]
        running = self._running.get(key)
        if running is not None:
            first, under_way = running
            if first != fingerprint:
                raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the request id was used with other fields")
            return await asyncio.shield(under_way)
        answer_of: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        answer_of.add_done_callback(lambda f: f.cancelled() or f.exception())  # nobody may wait
        self._running[key] = (fingerprint, answer_of)
        try:
            answer = await run()
        except BaseException as error:
            if isinstance(error, DomainError) and not is_unavailable(error):
                self._remember(key, fingerprint, error)
            if isinstance(error, Exception):
                answer_of.set_exception(error)
            else:
                answer_of.cancel()
            raise
        finally:
            self._running.pop(key, None)
        self._remember(key, fingerprint, answer)
        answer_of.set_result(answer)
        return answer

    def remember(self, key: Hashable, fingerprint: Hashable, outcome: Any) -> None:
        """Take an answer given elsewhere (the last owner of a table taken over) as the first one."""
        self._remember(key, fingerprint, outcome)

    def _remember(self, key: Hashable, fingerprint: Hashable, outcome: Any) -> None:
        self._answers[key] = (self._clock(), fingerprint, outcome)
        self._answers.move_to_end(key)
        self._forget_old()

    def _forget_old(self) -> None:
        oldest = self._clock() - self._ttl
        while self._answers and (
            len(self._answers) > self._size or next(iter(self._answers.values()))[0] < oldest
        ):
            self._answers.popitem(last=False)
