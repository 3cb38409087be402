"""The staff directory (issue 38; docs/backoffice.md "Adding a staff member"): who may sign in to the
back office besides the gateway's Secret allow-list, under which name, with which roles.

Staff administrators (the `admin` role) add people, change their roles and take them off
(SetStaffMember, idempotent by its request id, which binds the whole request) and list them
(ListStaff); the gateway's staff door reads one person at every sign-in and renewal
(FindStaffMember), so a change reaches the person's next token without a restart. A person is their
Telegram account; their name is their identity in every token and in the trail, so it is given once
and never changes, and no two accounts share one. Nobody changes their own entry (an administrator
cannot give themself finance): another administrator must. The staff door records each change in
the audit trail like every staff action.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from poker.history.v1 import history_pb2
from service_runtime.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from service_runtime.staff_names import STAFF_ROLE_NAMES, valid_staff_name
from services.history import staff_storage
from services.history.page_tokens import PageTokens, keyset_position, page_size_of
from services.history.records import check_id
from services.history.staff_storage import StaffChange, StaffRow

ATTEMPTS = 4
MAX_TELEGRAM_ID = 2**53  # Telegram's user ids fit 52 bits; JSON clients read them as numbers


class _Raced(Exception):
    """Another request for the same person committed between two reads of one attempt: try again."""


def _invalid(field: str, message: str) -> InvalidArgument:
    return InvalidArgument("FIELD_INVALID", message, {"field": field})


def _conflict(field: str) -> AlreadyExists:
    return AlreadyExists("IDEMPOTENCY_CONFLICT", "this id was used for another request", {"field": field})


def _not_found() -> NotFound:
    return NotFound("STAFF_MEMBER_NOT_FOUND", "the staff directory does not list this person")


def staff_member_pb(row: StaffRow) -> history_pb2.StaffMember:
    shown = history_pb2.StaffMember(
        telegram_id=row.telegram_id,
        name=row.name,
        roles=list(row.roles),
        active=row.active,
        updated_by=row.updated_by,
    )
    shown.update_time.FromMicroseconds(row.updated_us)
    return shown


def check_telegram_id(telegram_id: int) -> int:
    if telegram_id == 0:
        raise InvalidArgument("FIELD_REQUIRED", "telegram_id is required", {"field": "telegram_id"})
    if not 0 < telegram_id < MAX_TELEGRAM_ID:
        raise _invalid("telegram_id", "telegram_id is a Telegram account's positive id")
    return telegram_id


def check_staff_name(name: str) -> str:
    if not name:
        raise InvalidArgument("FIELD_REQUIRED", "name is required", {"field": "name"})
    if not valid_staff_name(name):
        raise _invalid(
            "name",
            "a name is 1-56 letters, digits, '.', '_', '@' or '-' (not service:, admin:, history-, tg:)",
        )
    return name


def check_roles(roles: list[str], *, active: bool) -> tuple[str, ...]:
    if any(role not in STAFF_ROLE_NAMES for role in roles) or len(set(roles)) != len(roles):
        raise _invalid("roles", f"roles are staff roles ({', '.join(sorted(STAFF_ROLE_NAMES))}), each once")
    if active and not roles:
        raise InvalidArgument("FIELD_REQUIRED", "a listed person has at least one role", {"field": "roles"})
    return tuple(sorted(roles))


class StaffDirectory:
    """The directory's use cases (mixed into HistoryApplication)."""

    _sessions: async_sessionmaker[AsyncSession]
    _tokens: PageTokens
    _clock: Callable[[], datetime]
    _writing: Callable[[], AbstractAsyncContextManager[AsyncSession]]

    async def set_staff_member(
        self, actor: str, request: history_pb2.SetStaffMemberRequest
    ) -> tuple[StaffRow, bool]:
        """SetStaffMember (the module docstring); the entry as the change left it, and whether this
        request id was applied before."""
        request_id = check_id(request.request_id, "request_id")
        if len(request_id) > 64:
            raise _invalid("request_id", "request_id is at most 64 characters")
        telegram_id = check_telegram_id(request.telegram_id)
        name = check_staff_name(request.name)
        asked_roles = check_roles(list(request.roles), active=request.active)
        for attempt in range(ATTEMPTS):
            try:
                async with self._writing() as session:
                    earlier = await staff_storage.change(session, request_id)
                    if earlier is not None:
                        break
                    current = await staff_storage.member_by_id(session, telegram_id)
                    applied = await self._change(
                        session, actor, request_id, telegram_id, name, asked_roles, request.active, current
                    )
                    await staff_storage.apply(session, applied, new=current is None)
                    return applied.left(), False
            except (IntegrityError, _Raced):
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
                continue
        else:
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT", "concurrent requests kept racing; retry", {"field": "request_id"}
            )
        for field, was, now in (
            ("request_id", earlier.actor, actor),
            ("telegram_id", earlier.telegram_id, telegram_id),
            ("name", earlier.name, name),
            ("roles", earlier.asked_roles, asked_roles),
            ("active", earlier.active, request.active),
        ):
            if was != now:
                raise _conflict(field)
        return earlier.left(), True

    async def _change(
        self,
        session: AsyncSession,
        actor: str,
        request_id: str,
        telegram_id: int,
        name: str,
        asked_roles: tuple[str, ...],
        active: bool,
        current: StaffRow | None,
    ) -> StaffChange:
        if actor.lower() == name.lower() or (current is not None and current.name.lower() == actor.lower()):
            raise PermissionDenied(
                "OWN_STAFF_ENTRY", "nobody changes their own staff entry: another administrator must"
            )
        if current is None:
            if not active:
                raise _not_found()
            holder = await staff_storage.member_by_name(session, name)
            if holder is not None and holder.telegram_id == telegram_id:
                # This person was added between this transaction's reads (another request for them
                # committed meanwhile, as PostgreSQL's read committed lets each statement see): read
                # again, as after a unique-key race.
                raise _Raced
            if holder is not None:
                raise FailedPrecondition(
                    "STAFF_NAME_TAKEN",
                    "another person of the staff directory has this name",
                    {"field": "name"},
                )
        elif current.name.lower() != name.lower():
            raise FailedPrecondition(
                "STAFF_NAME_FIXED",
                "this person is listed under another name, which never changes",
                {"field": "name", "name": current.name},
            )
        roles = asked_roles or (current.roles if current is not None else ())
        return StaffChange(
            request_id,
            actor,
            telegram_id,
            current.name if current is not None else name,
            asked_roles,
            active,
            roles,
            int(self._clock().astimezone(UTC).timestamp() * 1_000_000),
        )

    async def list_staff(
        self, *, include_inactive: bool, page_size: int, page_token: str
    ) -> tuple[list[history_pb2.StaffMember], str]:
        size = page_size_of(page_size)
        scope = f"staff\x00{int(include_inactive)}"
        after = None
        if page_token:
            (after,) = keyset_position(self._tokens.read(page_token, scope), (str,))
        async with self._sessions() as session:
            rows = await staff_storage.page(
                session, include_inactive=include_inactive, after=after, limit=size + 1
            )
        token = ""
        if len(rows) > size:
            token = self._tokens.issue(scope, [rows[size - 1].name.lower()])
        return [staff_member_pb(row) for row in rows[:size]], token

    async def find_staff_member(self, request: history_pb2.FindStaffMemberRequest) -> history_pb2.StaffMember:
        key = request.WhichOneof("key")
        async with self._sessions() as session:
            if key == "telegram_id":
                found = await staff_storage.member_by_id(session, check_telegram_id(request.telegram_id))
            elif key == "name":
                found = await staff_storage.member_by_name(session, check_staff_name(request.name))
            else:
                raise InvalidArgument("FIELD_REQUIRED", "telegram_id or name is required", {"field": "key"})
        if found is None or not found.active:
            raise _not_found()
        return staff_member_pb(found)
