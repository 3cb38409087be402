"""Idempotency of the lobby's mutating RPCs: the first reply to (method, caller, request id) is kept.

A retry with the same fingerprint (a hash of the request without its id) gets the stored reply; the
same id with any other field is IDEMPOTENCY_CONFLICT and changes nothing. A request that failed
stores nothing, so its retry is judged afresh (no lobby mutation moves chips).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from service_runtime.errors import AlreadyExists
from services.lobby import storage
from services.lobby.rooms import check_id

Work = Callable[[AsyncSession], Awaitable[str]]


class RequestReplies:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Callable[[], datetime]) -> None:
        self._sessions = sessions
        self._clock = clock

    async def once(self, method: str, caller: str, request_id: str, fingerprint: str, work: Work) -> str:
        """Run `work` in one transaction unless this request ran before; return its reply."""
        check_id(request_id, "request_id")
        # The caller's token subject is stored (set_by, added_by, redeemer): it must fit like any id.
        check_id(caller, "caller")
        for attempt in range(2):
            try:
                async with self._sessions.begin() as session:
                    stored = await storage.find_reply(session, method, caller, request_id)
                    if stored is not None:
                        if stored.fingerprint != fingerprint:
                            raise AlreadyExists(
                                "IDEMPOTENCY_CONFLICT",
                                "this request id was used with different fields",
                                {"request_id": request_id},
                            )
                        return stored.reply
                    reply = await work(session)
                    await storage.insert_reply(
                        session, method, caller, request_id, fingerprint, reply, self._clock()
                    )
                    return reply
            except IntegrityError:
                # A concurrent twin of this request committed first: the second pass finds its reply.
                if attempt:
                    raise
        raise AssertionError("unreachable")
