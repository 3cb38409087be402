"""Database adapter of the history service: reads and writes rows within a caller's session.

The application opens one short transaction per use case and passes its session in; nothing here
commits or decides who may see what. Lists are keyset pages, newest first by (time, number).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from poker.history.v1 import history_pb2
from service_runtime.database import driver_pipeline
from service_runtime.migrations import upgrade_to_head
from service_runtime.storage_metrics import driver_round_trip
from services.history.tables import audit_event_players, audit_events, hand_players, hands

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


def serialise(message: history_pb2.HandRecord | history_pb2.AuditEvent | history_pb2.FairPlayCase) -> bytes:
    """The canonical bytes of a record: a retry with the same record gives the same bytes."""
    return message.SerializeToString(deterministic=True)


# The hand and its players in one statement (PostgreSQL): the players' rows come as arrays, one per
# column, and take the hand's number from the first insert. Foreign keys are checked at the end of
# the statement, when the hand row exists.
INSERT_HAND_POSTGRES = """
    WITH hand AS (
        INSERT INTO history_hands (hand_id, table_id, room_id, variant, pool, start_us, end_us, record, recorded_us)
        VALUES (%(hand_id)s, %(table_id)s, %(room_id)s, %(variant)s, %(pool)s, %(start_us)s, %(end_us)s,
                %(record)s, %(recorded_us)s)
        RETURNING number
    ), players AS (
        INSERT INTO history_hand_players (hand_number, seat, player_id, table_id, end_us, net_result,
                                          client_fingerprint)
        SELECT hand.number, p.seat, p.player_id, %(table_id)s, %(end_us)s, p.net_result, p.fingerprint
        FROM hand, unnest(CAST(%(seats)s AS smallint[]), CAST(%(players)s AS text[]),
                          CAST(%(nets)s AS bigint[]), CAST(%(fingerprints)s AS text[]))
             AS p(seat, player_id, net_result, fingerprint)
    )
    SELECT number FROM hand
"""
_INSERT_HAND_SQLITE = (
    "INSERT INTO history_hands (hand_id, table_id, room_id, variant, pool, start_us, end_us, record, recorded_us) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_PLAYERS_SQLITE = (
    "INSERT INTO history_hand_players (hand_number, seat, player_id, table_id, end_us, net_result, "
    "client_fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


async def insert_hand(
    session: AsyncSession,
    record: history_pb2.HandRecord,
    data: bytes,
    now_us: int,
    *,
    commit: bool = False,
) -> int:
    """Insert the hand and its players; the hand's number. A known hand id raises IntegrityError
    and inserts nothing.

    This is the hot path of RecordHand, so it skips SQLAlchemy's statement layer (building and
    compiling the statements cost more CPU than the database spent on them) and talks to the
    driver under the session's transaction. PostgreSQL: one statement, sent in a pipeline with the
    BEGIN that opens the transaction; `commit=True` (nothing else to write) sends the COMMIT with it
    too, so a hand costs one round trip. SQLite: the hand row, then the players (one executemany)
    on the connection that holds the write lock; `commit` is ignored (the caller's
    transaction commits as usual, possibly with other hands: group commit).
    """
    end_us = micros(record.end_time)
    connection = await session.connection()
    raw = await connection.get_raw_connection()
    driver: Any = raw.driver_connection
    try:
        if connection.dialect.name == "postgresql":
            return await _insert_hand_postgres(connection, record, data, now_us, end_us, commit)
        return await _insert_hand_sqlite(driver, record, data, now_us, end_us)
    except (psycopg.errors.IntegrityError, sqlite3.IntegrityError) as error:
        raise IntegrityError("INSERT INTO history_hands", {"hand_id": record.hand_id}, error) from error


async def _insert_hand_postgres(
    connection: AsyncConnection,
    record: history_pb2.HandRecord,
    data: bytes,
    now_us: int,
    end_us: int,
    commit: bool,
) -> int:
    seats = record.seats
    params = {
        "hand_id": record.hand_id,
        "table_id": record.table_id,
        "room_id": record.room_id,
        "variant": int(record.variant),
        "pool": int(record.pool),
        "start_us": micros(record.start_time),
        "end_us": end_us,
        "record": data,
        "recorded_us": now_us,
        "seats": [seat.seat for seat in seats],
        "players": [seat.player_id for seat in seats],
        "nets": [seat.net_result for seat in seats],
        "fingerprints": [seat.client_fingerprint for seat in seats],
    }
    with driver_round_trip("postgresql"):
        async with driver_pipeline(connection) as driver:  # leaving it: one Sync, every result
            cursor = await driver.execute(INSERT_HAND_POSTGRES, params)
            if commit:
                await driver.execute("COMMIT")  # skipped by the server if the insert failed
    row = await cursor.fetchone()
    return int(row[0])


async def _insert_hand_sqlite(
    driver: Any,
    record: history_pb2.HandRecord,
    data: bytes,
    now_us: int,
    end_us: int,
) -> int:
    table_id = record.table_id
    with driver_round_trip("sqlite", "INSERT"):
        cursor = await driver.execute(
            _INSERT_HAND_SQLITE,
            (
                record.hand_id,
                table_id,
                record.room_id,
                int(record.variant),
                int(record.pool),
                micros(record.start_time),
                end_us,
                data,
                now_us,
            ),
        )
    number = int(cursor.lastrowid)
    with driver_round_trip("sqlite", "INSERT"):
        await driver.executemany(
            _INSERT_PLAYERS_SQLITE,
            [
                (
                    number,
                    seat.seat,
                    seat.player_id,
                    table_id,
                    end_us,
                    seat.net_result,
                    seat.client_fingerprint,
                )
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


def before_position(
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
        before_position(hand_players.c.end_us, hand_players.c.hand_number, after),
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


@dataclass(frozen=True)
class HandListed:
    """A hand as a list shows it to one of its players: the hand's columns and the player's net (no
    record read, none parsed: a page of 50 summaries read 50 records before, issue 45)."""

    number: int
    hand_id: str
    table_id: str
    room_id: str
    variant: int
    pool: int
    start_us: int
    end_us: int
    net_result: int


async def player_hand_list(
    session: AsyncSession, player_id: str, *, table_id: str | None, after: Position | None, limit: int
) -> list[HandListed]:
    """`player_hands`' page as summaries: the same keyset, the hand's columns and the player's net."""
    conditions = [
        hand_players.c.player_id == player_id,
        before_position(hand_players.c.end_us, hand_players.c.hand_number, after),
    ]
    if table_id is not None:
        conditions.append(hand_players.c.table_id == table_id)
    page = (
        sa.select(hand_players.c.hand_number, hand_players.c.end_us, hand_players.c.net_result)
        .where(*conditions)
        .order_by(hand_players.c.end_us.desc(), hand_players.c.hand_number.desc())
        .limit(limit)
        .subquery()
    )
    rows = await session.execute(
        sa.select(
            hands.c.number,
            hands.c.hand_id,
            hands.c.table_id,
            hands.c.room_id,
            hands.c.variant,
            hands.c.pool,
            hands.c.start_us,
            hands.c.end_us,
            page.c.net_result,
        )
        .join(page, page.c.hand_number == hands.c.number)
        .order_by(hands.c.end_us.desc(), hands.c.number.desc())
    )
    return [
        HandListed(
            number=int(row.number),
            hand_id=str(row.hand_id),
            table_id=str(row.table_id),
            room_id=str(row.room_id),
            variant=int(row.variant),
            pool=int(row.pool),
            start_us=int(row.start_us),
            end_us=int(row.end_us),
            net_result=int(row.net_result),
        )
        for row in rows
    ]


async def table_hands(
    session: AsyncSession, table_id: str, *, after: Position | None, limit: int
) -> list[StoredHand]:
    """Every hand of a table, newest first (admins and the detectors)."""
    rows = await session.execute(
        sa.select(hands.c.number, hands.c.end_us, hands.c.record)
        .where(hands.c.table_id == table_id, before_position(hands.c.end_us, hands.c.number, after))
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


async def audit_event_bytes(session: AsyncSession, event_id: str) -> bytes | None:
    row = (
        await session.execute(sa.select(audit_events.c.record).where(audit_events.c.event_id == event_id))
    ).first()
    return None if row is None else bytes(row.record)


async def insert_audit_event(session: AsyncSession, event: history_pb2.AuditEvent, data: bytes) -> None:
    """Append the event, and the players it concerns for the search by player."""
    inserted = await session.execute(
        sa.insert(audit_events)
        .values(
            event_id=event.event_id,
            time_us=micros(event.time),
            kind=event.kind,
            record=data,
            actor=event.actor,
        )
        .returning(audit_events.c.number)
    )
    number = inserted.scalar_one()
    players = list(dict.fromkeys(event.player_ids))
    if players:
        await session.execute(
            sa.insert(audit_event_players), [{"player_id": player, "number": number} for player in players]
        )


async def list_audit_events(
    session: AsyncSession,
    *,
    kind: str,
    after: Position | None,
    limit: int,
    actor: str = "",
    player_id: str = "",
) -> list[tuple[int, int, history_pb2.AuditEvent]]:
    """Events newest first, of one kind, by one actor, about one player (each filter optional)."""
    conditions = [before_position(audit_events.c.time_us, audit_events.c.number, after)]
    if kind:
        conditions.append(audit_events.c.kind == kind)
    if actor:
        conditions.append(audit_events.c.actor == actor)
    if player_id:
        conditions.append(
            audit_events.c.number.in_(
                sa.select(audit_event_players.c.number).where(audit_event_players.c.player_id == player_id)
            )
        )
    rows = await session.execute(
        sa.select(audit_events.c.number, audit_events.c.time_us, audit_events.c.record)
        .where(*conditions)
        .order_by(audit_events.c.time_us.desc(), audit_events.c.number.desc())
        .limit(limit)
    )
    return [(int(r.number), int(r.time_us), history_pb2.AuditEvent.FromString(bytes(r.record))) for r in rows]
