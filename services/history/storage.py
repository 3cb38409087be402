"""Database adapter of the history service: reads and writes rows within a caller's session.

The application opens one short transaction per use case and passes its session in; nothing here
commits or decides who may see what. Lists are keyset pages, newest first by (time, number).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

from poker.history.v1 import history_pb2
from service_runtime.migrations import upgrade_to_head
from services.history.tables import audit_events, dumping_signals, hand_players, hands

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "history_alembic_version"

# (time in microseconds, number) of the last row of the previous page.
Position = tuple[int, int]


def migrate(url: str) -> None:
    """Bring the history schema at `url` to the newest revision (synchronous; run it in a thread)."""
    upgrade_to_head(url, MIGRATIONS_DIR, VERSION_TABLE)


def micros(timestamp: object) -> int:
    """Microseconds since the epoch of a protobuf Timestamp."""
    return int(timestamp.ToMicroseconds())  # type: ignore[attr-defined]


@dataclass(frozen=True)
class StoredHand:
    number: int
    end_us: int
    record: history_pb2.HandRecord


def _decode(number: int, end_us: int, data: bytes) -> StoredHand:
    return StoredHand(int(number), int(end_us), history_pb2.HandRecord.FromString(bytes(data)))


def serialise(message: history_pb2.HandRecord | history_pb2.AuditEvent) -> bytes:
    """The canonical bytes of a record: a retry with the same record gives the same bytes."""
    return message.SerializeToString(deterministic=True)


async def insert_hand(session: AsyncSession, record: history_pb2.HandRecord, data: bytes, now_us: int) -> int:
    """Insert the hand and its players; the hand's number. A known hand id raises IntegrityError."""
    end_us = micros(record.end_time)
    result = await session.execute(
        sa.insert(hands).values(
            hand_id=record.hand_id,
            table_id=record.table_id,
            room_id=record.room_id,
            variant=int(record.variant),
            pool=int(record.pool),
            start_us=micros(record.start_time),
            end_us=end_us,
            record=data,
            recorded_us=now_us,
        )
    )
    key = cast(sa.CursorResult[Any], result).inserted_primary_key
    assert key is not None
    number = int(key[0])
    await session.execute(
        sa.insert(hand_players),
        [
            {
                "hand_number": number,
                "seat": seat.seat,
                "player_id": seat.player_id,
                "table_id": record.table_id,
                "end_us": end_us,
                "net_result": seat.net_result,
                "client_fingerprint": seat.client_fingerprint,
            }
            for seat in record.seats
        ],
    )
    return number


async def hand_by_id(session: AsyncSession, hand_id: str) -> StoredHand | None:
    row = (
        await session.execute(
            sa.select(hands.c.number, hands.c.end_us, hands.c.record).where(hands.c.hand_id == hand_id)
        )
    ).first()
    return None if row is None else _decode(row.number, row.end_us, row.record)


async def recorded_bytes(session: AsyncSession, hand_id: str) -> bytes | None:
    row = (await session.execute(sa.select(hands.c.record).where(hands.c.hand_id == hand_id))).first()
    return None if row is None else bytes(row.record)


def _before(
    time_column: sa.ColumnElement[int], number_column: sa.ColumnElement[int], after: Position | None
) -> sa.ColumnElement[bool]:
    if after is None:
        return sa.true()
    time_us, number = after
    return sa.or_(time_column < time_us, sa.and_(time_column == time_us, number_column < number))


async def player_hands(
    session: AsyncSession, player_id: str, *, table_id: str | None, after: Position | None, limit: int
) -> list[StoredHand]:
    """A player's hands (at one table, when given), newest first, after the position."""
    conditions = [
        hand_players.c.player_id == player_id,
        _before(hand_players.c.end_us, hand_players.c.hand_number, after),
    ]
    if table_id is not None:
        conditions.append(hand_players.c.table_id == table_id)
    page = (
        sa.select(hand_players.c.hand_number, hand_players.c.end_us)
        .where(*conditions)
        .order_by(hand_players.c.end_us.desc(), hand_players.c.hand_number.desc())
        .limit(limit)
        .subquery()
    )
    rows = await session.execute(
        sa.select(hands.c.number, hands.c.end_us, hands.c.record)
        .join(page, page.c.hand_number == hands.c.number)
        .order_by(hands.c.end_us.desc(), hands.c.number.desc())
    )
    return [_decode(row.number, row.end_us, row.record) for row in rows]


async def table_hands(
    session: AsyncSession, table_id: str, *, after: Position | None, limit: int
) -> list[StoredHand]:
    """Every hand of a table, newest first (admins and the detectors)."""
    rows = await session.execute(
        sa.select(hands.c.number, hands.c.end_us, hands.c.record)
        .where(hands.c.table_id == table_id, _before(hands.c.end_us, hands.c.number, after))
        .order_by(hands.c.end_us.desc(), hands.c.number.desc())
        .limit(limit)
    )
    return [_decode(row.number, row.end_us, row.record) for row in rows]


async def hands_by_ids(session: AsyncSession, hand_ids: Sequence[str]) -> dict[str, StoredHand]:
    rows = await session.execute(
        sa.select(hands.c.number, hands.c.end_us, hands.c.record, hands.c.hand_id).where(
            hands.c.hand_id.in_(hand_ids)
        )
    )
    return {row.hand_id: _decode(row.number, row.end_us, row.record) for row in rows}


async def insert_dumping_signal(
    session: AsyncSession,
    *,
    hand_number: int,
    table_id: str,
    loser_id: str,
    winner_id: str,
    amount: int,
    big_blind: int,
    pattern: str,
) -> None:
    await session.execute(
        sa.insert(dumping_signals).values(
            hand_number=hand_number,
            loser_id=loser_id,
            winner_id=winner_id,
            table_id=table_id,
            amount=amount,
            big_blind=big_blind,
            pattern=pattern,
        )
    )


async def window_start(session: AsyncSession, player_id: str, hands_back: int) -> Position:
    """(end time, number) of the player's `hands_back`-th newest hand ((0, 0) when they have fewer),
    so the detectors look at a bounded recent window however long a player's history grows."""
    row = (
        await session.execute(
            sa.select(hand_players.c.end_us, hand_players.c.hand_number)
            .where(hand_players.c.player_id == player_id)
            .order_by(hand_players.c.end_us.desc(), hand_players.c.hand_number.desc())
            .offset(hands_back - 1)
            .limit(1)
        )
    ).first()
    return (0, 0) if row is None else (int(row.end_us), int(row.hand_number))


async def pair_signals(
    session: AsyncSession, loser_id: str, winner_id: str, since_number: int
) -> tuple[int, int, int]:
    """(signals, total chips, largest big blind) of a (loser, winner) pair since a hand number."""
    row = (
        await session.execute(
            sa.select(
                sa.func.count(),
                sa.func.coalesce(sa.func.sum(dumping_signals.c.amount), 0),
                sa.func.coalesce(sa.func.max(dumping_signals.c.big_blind), 0),
            ).where(
                dumping_signals.c.loser_id == loser_id,
                dumping_signals.c.winner_id == winner_id,
                dumping_signals.c.hand_number >= since_number,
            )
        )
    ).one()
    return int(row[0]), int(row[1]), int(row[2])


async def pair_evidence(session: AsyncSession, loser_id: str, winner_id: str, limit: int) -> list[str]:
    """The newest `limit` hands that were signals for the pair, oldest first."""
    rows = await session.execute(
        sa.select(hands.c.hand_id)
        .join(dumping_signals, hands.c.number == dumping_signals.c.hand_number)
        .where(dumping_signals.c.loser_id == loser_id, dumping_signals.c.winner_id == winner_id)
        .order_by(dumping_signals.c.hand_number.desc())
        .limit(limit)
    )
    return [str(row.hand_id) for row in rows][::-1]


async def hands_together(session: AsyncSession, first: str, second: str, since: Position) -> int:
    """How many hands from a window start on both players were dealt into (an index range of the
    first player's hands, each looked up for the second)."""
    other = hand_players.alias("other")
    since_us, since_number = since
    count = await session.scalar(
        sa.select(sa.func.count())
        .select_from(hand_players.join(other, other.c.hand_number == hand_players.c.hand_number))
        .where(
            hand_players.c.player_id == first,
            hand_players.c.end_us >= since_us,
            hand_players.c.hand_number >= since_number,
            other.c.player_id == second,
        )
    )
    return int(count or 0)


async def audit_event_bytes(session: AsyncSession, event_id: str) -> bytes | None:
    row = (
        await session.execute(sa.select(audit_events.c.record).where(audit_events.c.event_id == event_id))
    ).first()
    return None if row is None else bytes(row.record)


async def insert_audit_event(session: AsyncSession, event: history_pb2.AuditEvent, data: bytes) -> None:
    await session.execute(
        sa.insert(audit_events).values(
            event_id=event.event_id, time_us=micros(event.time), kind=event.kind, record=data
        )
    )


async def list_audit_events(
    session: AsyncSession, *, kind: str, after: Position | None, limit: int
) -> list[tuple[int, int, history_pb2.AuditEvent]]:
    conditions = [_before(audit_events.c.time_us, audit_events.c.number, after)]
    if kind:
        conditions.append(audit_events.c.kind == kind)
    rows = await session.execute(
        sa.select(audit_events.c.number, audit_events.c.time_us, audit_events.c.record)
        .where(*conditions)
        .order_by(audit_events.c.time_us.desc(), audit_events.c.number.desc())
        .limit(limit)
    )
    return [(int(r.number), int(r.time_us), history_pb2.AuditEvent.FromString(bytes(r.record))) for r in rows]
