"""Idempotency of a table's mutating RPCs by `(caller, method, request id)`, inside the table.

A retry with the same key returns the first answer, a refusal included; the same key with other
fields is ALREADY_EXISTS `IDEMPOTENCY_CONFLICT` and changes nothing. An UNAVAILABLE answer is not
remembered, so a retry after an outage does the work. The memory keeps the answers of the last
`ttl_seconds` (5 minutes: a client's retries come within seconds), at most `size` of them, so a
long-running table does not grow with every action it ever answered (the soak run measured that).
"""

from __future__ import annotations

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
        known = self.known(key, fingerprint)
        if known is not None:
            return known  # type: ignore[no-any-return]
        try:
            answer = await run()
        except DomainError as error:
            if not is_unavailable(error):
                self._remember(key, fingerprint, error)
            raise
        self._remember(key, fingerprint, answer)
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
