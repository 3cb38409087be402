"""Release requests (four-eyes on releasing held chips, issue 38): their rows (`tables.release_requests`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

from services.history.tables import release_requests


class ReleaseState(enum.StrEnum):
    PENDING = "PENDING"
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"


@dataclass(frozen=True)
class ReleaseRow:
    request_id: str
    case_release: bool
    player_id: str
    case_id: str
    reason: str
    asked_by: str
    asked_us: int
    state: ReleaseState
    hold_request_id: str = ""
    decision_id: str | None = None
    decided_by: str | None = None
    decision_reason: str = ""
    decided_us: int | None = None
    done: bool = False


def _row(row: Any) -> ReleaseRow:
    return ReleaseRow(
        row.request_id,
        bool(row.case_release),
        row.player_id,
        row.case_id,
        row.reason,
        row.asked_by,
        int(row.asked_us),
        ReleaseState(row.state),
        row.hold_request_id,
        row.decision_id,
        row.decided_by,
        row.decision_reason,
        None if row.decided_us is None else int(row.decided_us),
        bool(row.done),
    )


async def release(session: AsyncSession, request_id: str, *, for_update: bool = False) -> ReleaseRow | None:
    query = sa.select(release_requests).where(release_requests.c.request_id == request_id)
    if for_update:
        query = query.with_for_update()
    row = (await session.execute(query)).first()
    return None if row is None else _row(row)


async def release_by_decision(session: AsyncSession, decision_id: str) -> ReleaseRow | None:
    row = (
        await session.execute(
            sa.select(release_requests).where(release_requests.c.decision_id == decision_id)
        )
    ).first()
    return None if row is None else _row(row)


async def approved_for_hold(session: AsyncSession, hold_request_id: str) -> bool:
    """Whether a release of this hold was approved already (another request about the same hold)."""
    c = release_requests.c
    found = await session.scalar(
        sa.select(c.request_id)
        .where(c.hold_request_id == hold_request_id)
        .where(c.state == ReleaseState.APPROVED.value)
        .limit(1)
    )
    return found is not None


async def insert_release(session: AsyncSession, asked: ReleaseRow) -> None:
    """A new pending request; one with this id raises IntegrityError."""
    await session.execute(
        sa.insert(release_requests).values(
            request_id=asked.request_id,
            case_release=asked.case_release,
            player_id=asked.player_id,
            case_id=asked.case_id,
            reason=asked.reason,
            hold_request_id=asked.hold_request_id,
            asked_by=asked.asked_by,
            asked_us=asked.asked_us,
            state=asked.state.value,
            done=asked.done,
        )
    )


async def decide(
    session: AsyncSession,
    request_id: str,
    *,
    decision_id: str,
    state: ReleaseState,
    by: str,
    reason: str,
    at_us: int,
) -> None:
    """Record the decision on a pending request (a rejection is done at once)."""
    await session.execute(
        sa.update(release_requests)
        .where(release_requests.c.request_id == request_id)
        .where(release_requests.c.state == ReleaseState.PENDING.value)
        .values(
            state=state.value,
            decision_id=decision_id,
            decided_by=by,
            decision_reason=reason,
            decided_us=at_us,
            done=state is ReleaseState.REJECTED,
        )
    )


async def mark_done(session: AsyncSession, request_id: str) -> None:
    await session.execute(
        sa.update(release_requests).where(release_requests.c.request_id == request_id).values(done=True)
    )


async def page(
    session: AsyncSession, *, state: ReleaseState | None, after: tuple[int, str] | None, limit: int
) -> list[ReleaseRow]:
    """Newest first, after (asked_us, request_id)."""
    c = release_requests.c
    query = sa.select(release_requests).order_by(c.asked_us.desc(), c.request_id.desc()).limit(limit)
    if state is not None:
        query = query.where(c.state == state.value)
    if after is not None:
        query = query.where(
            sa.or_(c.asked_us < after[0], sa.and_(c.asked_us == after[0], c.request_id < after[1]))
        )
    return [_row(row) for row in (await session.execute(query)).all()]
