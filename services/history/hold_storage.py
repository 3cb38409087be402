"""Database adapter of the holds (docs/integrity.md "Holds" and "Automatic holds"), within a caller's
session: the withdrawal holds strong chip-dumping cases make due (`history_auto_holds`), the
operators' ResolveCase decisions (`history_case_resolutions`) and their HoldPlayer / ReleasePlayer
requests (`history_hold_requests`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from services.history.tables import auto_holds, case_resolutions, hold_requests

MAX_NOTE_LENGTH = 256


class HoldState(enum.StrEnum):
    DUE = "DUE"  # recorded with the case; to be applied at the cashier
    HELD = "HELD"  # the cashier holds the player's withdrawals
    RELEASED = "RELEASED"  # lifted (or never applied) by ResolveCase RELEASE
    FAILED = "FAILED"  # the cashier refused it for good


ACTIVE = (HoldState.DUE, HoldState.HELD)


class Resolution(enum.StrEnum):
    RELEASE = "RELEASE"
    CONFIRM = "CONFIRM"


@dataclass(frozen=True)
class AutoHold:
    """One automatic withdrawal hold of a case."""

    case_id: str
    player_id: str
    role: str  # the player's role in the case when the hold became due (SUSPECT, BENEFICIARY)
    state: HoldState
    due_us: int
    held_us: int | None
    released_us: int | None
    note: str


@dataclass(frozen=True)
class CaseResolution:
    """One ResolveCase decision."""

    request_id: str
    case_id: str
    resolution: Resolution
    reason: str
    actor: str
    resolved_us: int
    done: bool


@dataclass(frozen=True)
class HoldRequest:
    """One operator's HoldPlayer (`held`) or ReleasePlayer, claimed by its request id."""

    request_id: str
    player_id: str
    held: bool
    reason: str
    case_id: str
    actor: str
    requested_us: int
    done: bool


def _hold(row: Any) -> AutoHold:
    return AutoHold(
        row.case_id,
        row.player_id,
        row.role,
        HoldState(row.state),
        int(row.due_us),
        None if row.held_us is None else int(row.held_us),
        None if row.released_us is None else int(row.released_us),
        row.note,
    )


def _resolution(row: Any) -> CaseResolution:
    return CaseResolution(
        row.request_id,
        row.case_id,
        Resolution(row.resolution),
        row.reason,
        row.actor,
        int(row.resolved_us),
        bool(row.done),
    )


async def record_due(
    session: AsyncSession, case_id: str, players: Sequence[tuple[str, str]], now_us: int
) -> int:
    """Make the case's players (id, role) due an automatic hold, unless the case already has one for
    them (a hold is recorded once per case and player, whatever became of it); how many are new."""
    if not players:
        return 0
    connection = await session.connection()
    insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
    statement = (
        insert(auto_holds)
        .values(
            [
                {
                    "case_id": case_id,
                    "player_id": player_id,
                    "role": role,
                    "state": HoldState.DUE.value,
                    "due_us": now_us,
                    "note": "",
                }
                for player_id, role in players
            ]
        )
        .on_conflict_do_nothing(index_elements=["case_id", "player_id"])
        .returning(auto_holds.c.player_id)
    )
    # The rows it returns are the ones it inserted (the driver's row count is not reliable here).
    return len((await session.execute(statement)).all())


async def due_holds(session: AsyncSession, limit: int) -> list[AutoHold]:
    """The holds still to apply, oldest first, but none of a case an operator is releasing."""
    released = sa.select(case_resolutions.c.case_id).where(
        case_resolutions.c.resolution == Resolution.RELEASE.value
    )
    rows = await session.execute(
        sa.select(auto_holds)
        .where(auto_holds.c.state == HoldState.DUE.value, auto_holds.c.case_id.not_in(released))
        .order_by(auto_holds.c.due_us, auto_holds.c.case_id, auto_holds.c.player_id)
        .limit(limit)
    )
    return [_hold(row) for row in rows]


async def hold_of(session: AsyncSession, case_id: str, player_id: str) -> AutoHold | None:
    row = (
        await session.execute(
            sa.select(auto_holds).where(auto_holds.c.case_id == case_id, auto_holds.c.player_id == player_id)
        )
    ).first()
    return None if row is None else _hold(row)


async def holds_of_cases(session: AsyncSession, case_ids: Sequence[str]) -> dict[str, list[AutoHold]]:
    """Each case's holds, in the order they became due (then by player)."""
    found: dict[str, list[AutoHold]] = {}
    if not case_ids:
        return found
    rows = await session.execute(
        sa.select(auto_holds)
        .where(auto_holds.c.case_id.in_(list(case_ids)))
        .order_by(auto_holds.c.due_us, auto_holds.c.player_id)
    )
    for row in rows:
        found.setdefault(row.case_id, []).append(_hold(row))
    return found


async def other_active_cases(session: AsyncSession, player_id: str, case_id: str) -> list[str]:
    """The other cases whose automatic hold of the player is due or held."""
    rows = await session.execute(
        sa.select(auto_holds.c.case_id)
        .where(
            auto_holds.c.player_id == player_id,
            auto_holds.c.state.in_([state.value for state in ACTIVE]),
            auto_holds.c.case_id != case_id,
        )
        .order_by(auto_holds.c.case_id)
    )
    return [str(row.case_id) for row in rows]


async def set_state(
    session: AsyncSession,
    case_id: str,
    player_id: str,
    state: HoldState,
    *,
    note: str,
    held_us: int | None = None,
    released_us: int | None = None,
) -> None:
    values: dict[str, Any] = {"state": state.value, "note": note[:MAX_NOTE_LENGTH]}
    if held_us is not None:
        values["held_us"] = held_us
    if released_us is not None:
        values["released_us"] = released_us
    await session.execute(
        sa.update(auto_holds)
        .where(auto_holds.c.case_id == case_id, auto_holds.c.player_id == player_id)
        .values(**values)
    )


async def resolution_by_request(session: AsyncSession, request_id: str) -> CaseResolution | None:
    row = (
        await session.execute(sa.select(case_resolutions).where(case_resolutions.c.request_id == request_id))
    ).first()
    return None if row is None else _resolution(row)


async def resolutions_of_cases(session: AsyncSession, case_ids: Sequence[str]) -> dict[str, CaseResolution]:
    if not case_ids:
        return {}
    rows = await session.execute(
        sa.select(case_resolutions).where(case_resolutions.c.case_id.in_(list(case_ids)))
    )
    # The case's standing decision: a RELEASE once there is one (it may follow a CONFIRM), else the CONFIRM.
    found: dict[str, CaseResolution] = {}
    for row in rows:
        resolution = _resolution(row)
        if row.case_id not in found or resolution.resolution is Resolution.RELEASE:
            found[row.case_id] = resolution
    return found


async def insert_resolution(session: AsyncSession, resolution: CaseResolution) -> None:
    """Record a decision; a second one of its kind for the case (or a reused request id) raises
    IntegrityError."""
    await session.execute(
        sa.insert(case_resolutions).values(
            request_id=resolution.request_id,
            case_id=resolution.case_id,
            resolution=resolution.resolution.value,
            reason=resolution.reason,
            actor=resolution.actor,
            resolved_us=resolution.resolved_us,
            done=resolution.done,
        )
    )


async def delete_resolution(session: AsyncSession, request_id: str) -> None:
    """A RELEASE finance rejected (four-eyes, releases.py): the case is open to a decision again."""
    await session.execute(sa.delete(case_resolutions).where(case_resolutions.c.request_id == request_id))


async def mark_resolution_done(session: AsyncSession, request_id: str) -> None:
    await session.execute(
        sa.update(case_resolutions).where(case_resolutions.c.request_id == request_id).values(done=True)
    )


async def hold_request(session: AsyncSession, request_id: str) -> HoldRequest | None:
    row = (
        await session.execute(sa.select(hold_requests).where(hold_requests.c.request_id == request_id))
    ).first()
    if row is None:
        return None
    return HoldRequest(
        row.request_id,
        row.player_id,
        bool(row.held),
        row.reason,
        row.case_id,
        row.actor,
        int(row.requested_us),
        bool(row.done),
    )


async def lock_hold_request(session: AsyncSession, request_id: str) -> None:
    """Lock a hold's claim row until the transaction ends (PostgreSQL; a no-op on SQLite)."""
    await session.execute(
        sa.select(hold_requests.c.request_id)
        .where(hold_requests.c.request_id == request_id)
        .with_for_update()
    )


async def latest_hold_change(session: AsyncSession, player_id: str) -> HoldRequest | None:
    """The player's last hold or release carried out through history (HoldPlayer, an approved
    ReleasePlayer), if any: which hold a release is about, and whether it is still the current one."""
    row = (
        await session.execute(
            sa.select(hold_requests)
            .where(hold_requests.c.player_id == player_id)
            .where(hold_requests.c.done.is_(True))
            .order_by(hold_requests.c.requested_us.desc(), hold_requests.c.request_id.desc())
            .limit(1)
        )
    ).first()
    if row is None:
        return None
    return await hold_request(session, row.request_id)


async def insert_hold_request(session: AsyncSession, request: HoldRequest) -> None:
    """Claim the request id; a claimed one raises IntegrityError."""
    await session.execute(
        sa.insert(hold_requests).values(
            request_id=request.request_id,
            player_id=request.player_id,
            held=request.held,
            reason=request.reason,
            case_id=request.case_id,
            actor=request.actor,
            requested_us=request.requested_us,
            done=request.done,
        )
    )


async def mark_hold_request_done(session: AsyncSession, request_id: str) -> None:
    await session.execute(
        sa.update(hold_requests).where(hold_requests.c.request_id == request_id).values(done=True)
    )
