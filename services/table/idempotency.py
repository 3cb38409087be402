"""Idempotency of a table's mutating RPCs by `(caller, method, request id)`, inside the table.

A retry with the same key returns the first answer, a refusal included; the same key with other
fields is ALREADY_EXISTS `IDEMPOTENCY_CONFLICT` and changes nothing. An UNAVAILABLE answer is not
remembered, so a retry after an outage does the work. The memory keeps the newest answers only.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from service_runtime.errors import AlreadyExists, DomainError
from services.table.remote import is_unavailable

T = TypeVar("T")

DEFAULT_SIZE = 20_000


class AnswerMemory:
    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._answers: collections.OrderedDict[Hashable, tuple[Hashable, Any]] = collections.OrderedDict()

    async def once(self, key: Hashable, fingerprint: Hashable, run: Callable[[], Awaitable[T]]) -> T:
        known = self._answers.get(key)
        if known is not None:
            first, outcome = known
            if first != fingerprint:
                raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the request id was used with other fields")
            if isinstance(outcome, DomainError):
                raise outcome
            return outcome  # type: ignore[no-any-return]
        try:
            answer = await run()
        except DomainError as error:
            if not is_unavailable(error):
                self._remember(key, fingerprint, error)
            raise
        self._remember(key, fingerprint, answer)
        return answer

    def _remember(self, key: Hashable, fingerprint: Hashable, outcome: Any) -> None:
        self._answers[key] = (fingerprint, outcome)
        while len(self._answers) > self._size:
            self._answers.popitem(last=False)
