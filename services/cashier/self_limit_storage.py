"""Storage of the limits players set on themselves: reads and writes inside a transaction the caller
owns (`self_control`, `self_limits`, `self_limit_changes`; migration 0010), and the window figures
enforcement needs (purchases credited to a wallet, seat sessions opened, house-game stakes and
payments)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from services.cashier.ledger import Pool, TransferKind, wallet_account_id
from services.cashier.self_limits import BreakKind, BreakState, LimitKind, LimitState
from services.cashier.storage import _insert_ignoring_duplicates, _utc
from services.cashier.tables import seat_sessions, self_control, self_limit_changes, self_limits, transfers


@dataclass(frozen=True)
class SelfControl:
    """A player's reminder and break, as stored."""

    player_id: str
    reminder_minutes: int = 0
    brk: BreakState | None = None


@dataclass(frozen=True)
class SelfLimitChange:
    """One row of the history: one request of the player, by its request id."""

    request_id: str
    player_id: str
    action: str  # LIMIT, REMINDER, BREAK
    pool: str
    kind: str
    requested: int
    old_value: str
    new_value: str
    effective_at: datetime
    ends_at: datetime | None
    changed_at: datetime


def _control(row: Any) -> SelfControl:
    brk = None
    if row["break_kind"] is not None:
        brk = BreakState(
            BreakKind(row["break_kind"]), _utc(row["break_started_at"]), _utc(row["break_until"])
        )
    return SelfControl(row["player_id"], int(row["reminder_minutes"]), brk)


async def self_control_of(conn: AsyncConnection, player_id: str, *, lock: bool = False) -> SelfControl:
    """The player's reminder and break (defaults when they never set any). `lock`: make the row and
    lock it, so the player's changes are decided one at a time."""
    if lock:
        await conn.execute(
            _insert_ignoring_duplicates(conn, self_control).values(player_id=player_id, reminder_minutes=0)
        )
    query = select(self_control).where(self_control.c.player_id == player_id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return SelfControl(player_id) if row is None else _control(row)


async def save_self_control(conn: AsyncConnection, control: SelfControl) -> None:
    brk = control.brk
    await conn.execute(
        update(self_control)
        .where(self_control.c.player_id == control.player_id)
        .values(
            reminder_minutes=control.reminder_minutes,
            break_kind=brk.kind.value if brk else None,
            break_started_at=brk.started_at if brk else None,
            break_until=brk.until if brk else None,
        )
    )


def _limit(row: Any) -> LimitState:
    pending_at = row["pending_at"]
    return LimitState(
        LimitKind(row["kind"]),
        int(row["amount"]),
        None if row["pending_amount"] is None else int(row["pending_amount"]),
        None if pending_at is None else _utc(pending_at),
    )


async def limits_of(
    conn: AsyncConnection, player_id: str, pool: Pool | None = None
) -> dict[Pool, list[LimitState]]:
    """The player's stored limits by pool (of one pool, when given), in kind order."""
    query = select(self_limits).where(self_limits.c.player_id == player_id)
    if pool is not None:
        query = query.where(self_limits.c.pool == pool.value)
    found: dict[Pool, list[LimitState]] = {}
    for row in (await conn.execute(query.order_by(self_limits.c.pool, self_limits.c.kind))).mappings():
        found.setdefault(Pool(row["pool"]), []).append(_limit(row))
    order = list(LimitKind)
    for states in found.values():
        states.sort(key=lambda state: order.index(state.kind))
    return found


async def save_limit(conn: AsyncConnection, player_id: str, pool: Pool, state: LimitState) -> None:
    values = {
        "amount": state.amount,
        "pending_amount": state.pending_amount,
        "pending_at": state.pending_at,
    }
    where = and_(
        self_limits.c.player_id == player_id,
        self_limits.c.pool == pool.value,
        self_limits.c.kind == state.kind.value,
    )
    updated = await conn.execute(update(self_limits).where(where).values(**values))
    if updated.rowcount == 0:
        await conn.execute(
            insert(self_limits).values(player_id=player_id, pool=pool.value, kind=state.kind.value, **values)
        )


def _change(row: Any) -> SelfLimitChange:
    return SelfLimitChange(
        request_id=row["request_id"],
        player_id=row["player_id"],
        action=row["action"],
        pool=row["pool"],
        kind=row["kind"],
        requested=int(row["requested"]),
        old_value=row["old_value"],
        new_value=row["new_value"],
        effective_at=_utc(row["effective_at"]),
        ends_at=None if row["ends_at"] is None else _utc(row["ends_at"]),
        changed_at=_utc(row["changed_at"]),
    )


async def self_limit_change(conn: AsyncConnection, player_id: str, request_id: str) -> SelfLimitChange | None:
    """The player's change recorded under their request id, or None."""
    query = select(self_limit_changes).where(
        self_limit_changes.c.player_id == player_id, self_limit_changes.c.request_id == request_id
    )
    row = (await conn.execute(query)).mappings().first()
    return None if row is None else _change(row)


async def record_self_limit_change(conn: AsyncConnection, change: SelfLimitChange) -> None:
    """Append one change to the history (its request id is unique per player)."""
    await conn.execute(
        insert(self_limit_changes).values(
            request_id=change.request_id,
            player_id=change.player_id,
            action=change.action,
            pool=change.pool,
            kind=change.kind,
            requested=change.requested,
            old_value=change.old_value,
            new_value=change.new_value,
            effective_at=change.effective_at,
            ends_at=change.ends_at,
            changed_at=change.changed_at,
        )
    )


async def self_limit_history(conn: AsyncConnection, player_id: str) -> list[SelfLimitChange]:
    """Every change the player made, oldest first (the audit trail)."""
    query = (
        select(self_limit_changes)
        .where(self_limit_changes.c.player_id == player_id)
        .order_by(self_limit_changes.c.seq)
    )
    return [_change(row) for row in (await conn.execute(query)).mappings()]


async def purchases_since(
    conn: AsyncConnection, player_id: str, pool: Pool, since: datetime
) -> list[tuple[datetime, int]]:
    """The applied purchases credited to the player's wallet of `pool` after `since`: (time, chips)."""
    query = select(transfers.c.created_at, transfers.c.amount).where(
        transfers.c.credit_account_id == wallet_account_id(pool, player_id),
        transfers.c.kind == TransferKind.PURCHASE.value,
        transfers.c.failure_reason.is_(None),
        transfers.c.created_at > since,
    )
    return [(_utc(row.created_at), int(row.amount)) for row in await conn.execute(query)]


async def losses_since(
    conn: AsyncConnection, player_id: str, pool: Pool, since: datetime
) -> list[tuple[datetime, int]]:
    """What the player lost in `pool` after `since`, as (time, chips) events: each seat session
    opened then (buy-in minus what it cashed out so far; an open session counts its whole buy-in),
    and each applied house-game transfer of the wallet (a stake lost, a payment back won)."""
    query = select(
        seat_sessions.c.opened_at, seat_sessions.c.buy_in_amount, seat_sessions.c.cash_out_amount
    ).where(
        seat_sessions.c.player_id == player_id,
        seat_sessions.c.pool == pool.value,
        seat_sessions.c.opened_at > since,
    )
    events = [
        (_utc(row.opened_at), int(row.buy_in_amount) - int(row.cash_out_amount))
        for row in await conn.execute(query)
    ]
    wallet = wallet_account_id(pool, player_id)
    for side, sign in ((transfers.c.debit_account_id, 1), (transfers.c.credit_account_id, -1)):
        house = select(transfers.c.created_at, transfers.c.amount).where(
            side == wallet,
            transfers.c.kind == TransferKind.HOUSE_GAME_RESULT.value,
            transfers.c.failure_reason.is_(None),
            transfers.c.created_at > since,
        )
        events += [(_utc(row.created_at), sign * int(row.amount)) for row in await conn.execute(house)]
    return events
