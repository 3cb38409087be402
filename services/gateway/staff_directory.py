"""Who may sign in to the back office: the gateway's Secret allow-list first (`staff_list.py`, the
bootstrap: the first administrators, and anyone the operator keeps there), then history's staff
directory, which staff administrators keep from the console (SetStaffMember; docs/backoffice.md
"Adding a staff member").

The door asks the directory at every sign-in and renewal (FindStaffMember, as `service:gateway`),
so a change made in the console reaches a person's next token without a restart. A Secret entry
wins for its Telegram account; a directory entry whose name is a Secret entry's name (another
account) is never honoured, so nobody signs in under a name the Secret gives someone else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import grpc
import structlog

from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.clients import reason_of
from service_runtime.errors import Unavailable
from service_runtime.staff_names import STAFF_ROLE_NAMES, valid_staff_name
from services.gateway.staff_list import StaffList, StaffMember

log = structlog.get_logger("gateway.staff")

LOOKUP_TIMEOUT_SECONDS = 3.0
MAX_TELEGRAM_ID = 2**53  # history's bound on an account id


class DirectoryLookup(Protocol):
    async def __call__(self, request: history_pb2.FindStaffMemberRequest) -> history_pb2.StaffMember | None:
        """The person, listed; None when the directory does not list them."""


def history_lookup(
    stub: Callable[[], history_pb2_grpc.HistoryServiceStub], token: Callable[[], str]
) -> DirectoryLookup:
    """FindStaffMember at history with the gateway's own token; UNAVAILABLE when history cannot say."""

    async def find(request: history_pb2.FindStaffMemberRequest) -> history_pb2.StaffMember | None:
        try:
            reply = await stub().FindStaffMember(
                request,
                metadata=(("authorization", f"Bearer {token()}"),),
                timeout=LOOKUP_TIMEOUT_SECONDS,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND and reason_of(error) == "STAFF_MEMBER_NOT_FOUND":
                return None
            log.warning(
                "staff directory not read",
                code=error.code().name,
                reason=reason_of(error),
                details=error.details(),
            )
            raise Unavailable(
                "UNAVAILABLE", "the staff directory cannot be read now: try again", {"dependency": "history"}
            ) from error
        member: history_pb2.StaffMember = reply.member
        return member

    return find


async def no_directory(request: history_pb2.FindStaffMemberRequest) -> history_pb2.StaffMember | None:
    return None


class StaffDirectory:
    """The Secret's list, then the directory (see the module docstring)."""

    def __init__(self, secret: StaffList, lookup: DirectoryLookup) -> None:
        self._secret = secret
        self._names = {name.lower() for name in secret.by_name}
        self._lookup = lookup

    async def member(self, telegram_id: int) -> StaffMember | None:
        listed = self._secret.member(telegram_id)
        if listed is not None:
            return listed
        if not 0 < telegram_id < MAX_TELEGRAM_ID:
            return None
        return self._honoured(await self._lookup(history_pb2.FindStaffMemberRequest(telegram_id=telegram_id)))

    async def named(self, name: str) -> StaffMember | None:
        listed = self._secret.named(name)
        if listed is not None:
            return listed
        if name.lower() in self._names or not valid_staff_name(name):
            return None  # not a name the directory could hold: not listed (never a lookup's refusal)
        return self._honoured(await self._lookup(history_pb2.FindStaffMemberRequest(name=name)))

    def _honoured(self, found: history_pb2.StaffMember | None) -> StaffMember | None:
        if found is None or not found.active:
            return None
        if found.name.lower() in self._names:
            log.warning("staff directory entry shadowed by the Secret's", name=found.name)
            return None
        roles = frozenset(STAFF_ROLE_NAMES[r] for r in found.roles if r in STAFF_ROLE_NAMES)
        if not roles:
            return None
        return StaffMember(found.telegram_id, found.name, roles)
