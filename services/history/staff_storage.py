"""The staff directory's rows (`tables.staff_members`, `tables.staff_changes`; issue 38)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

from services.history.tables import staff_changes, staff_members


@dataclass(frozen=True)
class StaffRow:
    telegram_id: int
    name: str
    roles: tuple[str, ...]  # sorted
    active: bool
    updated_by: str
    updated_us: int


@dataclass(frozen=True)
class StaffChange:
    request_id: str
    actor: str
    telegram_id: int
    name: str
    asked_roles: tuple[str, ...]  # sorted, as asked
    active: bool
    roles: tuple[str, ...]  # the entry's roles after the change
    applied_us: int

    def left(self) -> StaffRow:
        """The entry as this change left it."""
        return StaffRow(self.telegram_id, self.name, self.roles, self.active, self.actor, self.applied_us)


def joined(roles: tuple[str, ...]) -> str:
    return "+".join(roles)


def _split(text: str) -> tuple[str, ...]:
    return tuple(r for r in text.split("+") if r)


def _member(row: Any) -> StaffRow:
    return StaffRow(
        int(row.telegram_id),
        row.name,
        _split(row.roles),
        bool(row.active),
        row.updated_by,
        int(row.updated_us),
    )


async def member_by_id(session: AsyncSession, telegram_id: int) -> StaffRow | None:
    row = (
        await session.execute(sa.select(staff_members).where(staff_members.c.telegram_id == telegram_id))
    ).first()
    return None if row is None else _member(row)


async def member_by_name(session: AsyncSession, name: str) -> StaffRow | None:
    row = (
        await session.execute(sa.select(staff_members).where(staff_members.c.name_key == name.lower()))
    ).first()
    return None if row is None else _member(row)


async def change(session: AsyncSession, request_id: str) -> StaffChange | None:
    row = (
        await session.execute(sa.select(staff_changes).where(staff_changes.c.request_id == request_id))
    ).first()
    if row is None:
        return None
    return StaffChange(
        row.request_id,
        row.actor,
        int(row.telegram_id),
        row.name,
        _split(row.asked_roles),
        bool(row.active),
        _split(row.roles),
        int(row.applied_us),
    )


async def apply(session: AsyncSession, applied: StaffChange, *, new: bool) -> None:
    """Store the change and the entry it leaves (a new person's row, or their row updated); a
    request id or a name already taken raises IntegrityError."""
    await session.execute(
        sa.insert(staff_changes).values(
            request_id=applied.request_id,
            actor=applied.actor,
            telegram_id=applied.telegram_id,
            name=applied.name,
            asked_roles=joined(applied.asked_roles),
            active=applied.active,
            roles=joined(applied.roles),
            applied_us=applied.applied_us,
        )
    )
    values = {
        "roles": joined(applied.roles),
        "active": applied.active,
        "updated_by": applied.actor,
        "updated_us": applied.applied_us,
    }
    if new:
        await session.execute(
            sa.insert(staff_members).values(
                telegram_id=applied.telegram_id, name=applied.name, name_key=applied.name.lower(), **values
            )
        )
    else:
        await session.execute(
            sa.update(staff_members)
            .where(staff_members.c.telegram_id == applied.telegram_id)
            .values(**values)
        )


async def page(
    session: AsyncSession, *, include_inactive: bool, after: str | None, limit: int
) -> list[StaffRow]:
    """By name (without case), after the name key `after`."""
    c = staff_members.c
    query = sa.select(staff_members).order_by(c.name_key).limit(limit)
    if not include_inactive:
        query = query.where(c.active.is_(True))
    if after is not None:
        query = query.where(c.name_key > after)
    return [_member(row) for row in (await session.execute(query)).all()]
