"""Database adapter of the history service: reads and writes rows within a caller's session.

The application opens one short transaction per use case and passes its session in; nothing here
commits or decides who may see what. Lists are keyset pages, newest first by (time, number).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from poker.history.v1 import history_pb2
from service_runtime.migrations import upgrade_to_head
from services.history.detectors import DumpingSignal
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


# The hand, its players and its dumping signals in one statement (PostgreSQL): the players' and
# signals' rows come as arrays, one per column, and take the hand's number from the first insert.
# Foreign keys are checked at the end of the statement, when the hand row exists.
_INSERT_HAND_POSTGRES = """
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
    ), signals AS (
        INSERT INTO history_dumping_signals (hand_number, loser_id, winner_id, table_id, amount, big_blind, pattern)
        SELECT hand.number, s.loser_id, s.winner_id, %(table_id)s, s.amount, %(big_blind)s, s.pattern
        FROM hand, unnest(CAST(%(losers)s AS text[]), CAST(%(winners)s AS text[]),
                          CAST(%(amounts)s AS bigint[]), CAST(%(patterns)s AS text[]))
             AS s(loser_id, winner_id, amount, pattern)
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
_INSERT_SIGNALS_SQLITE = (
    "INSERT INTO history_dumping_signals (hand_number, loser_id, winner_id, table_id, amount, big_blind, "
    "pattern) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


async def insert_hand(
    session: AsyncSession,
    record: history_pb2.HandRecord,
    data: bytes,
    now_us: int,
    signals: Sequence[DumpingSignal] = (),
    *,
    commit: bool = False,
) -> int:
    """Insert the hand, its players and its dumping signals; the hand's number. A known hand id
    raises IntegrityError and inserts nothing.

    This is the hot path of RecordHand, so it skips SQLAlchemy's statement layer (building and
    compiling three statements cost more CPU than the database spent on them) and talks to the
    driver under the session's transaction. PostgreSQL: one statement, sent in a pipeline with the
    BEGIN that opens the transaction; `commit=True` (nothing else to write) sends the COMMIT with it
    too, so a hand costs one round trip. SQLite: the hand row, then the players and signals (one
    executemany each) on the connection that holds the write lock; `commit` is ignored (the caller's
    transaction commits as usual, possibly with other hands: group commit).
    """
    end_us = micros(record.end_time)
    connection = await session.connection()
    raw = await connection.get_raw_connection()
    driver: Any = raw.driver_connection
    try:
        if connection.dialect.name == "postgresql":
            return await _insert_hand_postgres(driver, record, data, now_us, end_us, signals, commit)
        return await _insert_hand_sqlite(driver, record, data, now_us, end_us, signals)
    except (psycopg.errors.IntegrityError, sqlite3.IntegrityError) as error:
        raise IntegrityError("INSERT INTO history_hands", {"hand_id": record.hand_id}, error) from error


async def _insert_hand_postgres(
    driver: Any,
    record: history_pb2.HandRecord,
    data: bytes,
    now_us: int,
    end_us: int,
    signals: Sequence[DumpingSignal],
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
        "big_blind": record.big_blind,
        "losers": [signal.loser_id for signal in signals],
        "winners": [signal.winner_id for signal in signals],
        "amounts": [signal.amount for signal in signals],
        "patterns": [signal.pattern for signal in signals],
    }
    async with driver.pipeline():  # leaving it sends one Sync and reads every result
        cursor = await driver.execute(_INSERT_HAND_POSTGRES, params)
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
    signals: Sequence[DumpingSignal],
) -> int:
    table_id = record.table_id
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
    await driver.executemany(
        _INSERT_PLAYERS_SQLITE,
        [
            (number, seat.seat, seat.player_id, table_id, end_us, seat.net_result, seat.client_fingerprint)
            for seat in record.seats
        ],
    )
    if signals:
        await driver.executemany(
            _INSERT_SIGNALS_SQLITE,
            [
                (number, s.loser_id, s.winner_id, table_id, s.amount, record.big_blind, s.pattern)
                for s in signals
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


# What the chip-dumping verdict needs of a (loser, winner) pair, in one statement: whether the pair
# was flagged already, where the loser's window of recent hands starts, and the pair's signals since
# then (this runs for every signal, inside RecordHand's transaction: three statements were half of
# its time on SQLite).
_PAIR_STATE = """
    WITH since AS (
        SELECT end_us, hand_number FROM history_hand_players WHERE player_id = %(loser)s
        ORDER BY end_us DESC, hand_number DESC LIMIT 1 OFFSET %(back)s
    )
    SELECT
        (SELECT count(*) FROM history_audit_events WHERE event_id = %(event_id)s),
        coalesce((SELECT end_us FROM since), 0),
        coalesce((SELECT hand_number FROM since), 0),
        count(*), coalesce(sum(s.amount), 0), coalesce(max(s.big_blind), 0)
    FROM history_dumping_signals s
    WHERE s.loser_id = %(loser)s AND s.winner_id = %(winner)s
      AND s.hand_number >= coalesce((SELECT hand_number FROM since), 0)
"""
_PAIR_STATE_SQLITE = re.sub(r"%\((\w+)\)s", r":\1", _PAIR_STATE)


@dataclass(frozen=True)
class PairState:
    """A (loser, winner) pair as the verdict sees it."""

    # Its event is recorded already: the pair is flagged once.
    flagged: bool
    # (end time, number) of the loser's `hands_back`-th newest hand ((0, 0) when they have fewer),
    # so the detectors look at a bounded recent window however long a player's history grows.
    since: Position
    signals: int
    total_amount: int
    big_blind: int


async def pair_state(
    session: AsyncSession, event_id: str, loser_id: str, winner_id: str, hands_back: int
) -> PairState:
    """Whether the pair's event exists, the loser's window start, and the pair's signals (count,
    chips, largest big blind) from that window start on, through the driver in one statement."""
    params = {"event_id": event_id, "loser": loser_id, "winner": winner_id, "back": hands_back - 1}
    connection = await session.connection()
    driver: Any = (await connection.get_raw_connection()).driver_connection
    if connection.dialect.name == "postgresql":
        cursor = await driver.execute(_PAIR_STATE, params)
    else:
        cursor = await driver.execute(_PAIR_STATE_SQLITE, params)
    flagged, since_us, since_number, signals, total, big_blind = await cursor.fetchone()
    return PairState(
        bool(flagged), (int(since_us), int(since_number)), int(signals), int(total), int(big_blind)
    )


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


def hands_together_query(first: str, second: str, since: Position) -> sa.Select[Any]:
    """The count of hands from a window start that both players were dealt into (an index range of
    the first player's hands, each looked up for the second).

    The join names the hand's end time as well as its number (each seat row carries its hand's end
    time, so this selects the same rows): the second player's row is then one point lookup in the
    (player_id, end_us, hand_number) index. Joined on the number alone, SQLite's planner scanned the
    second player's whole history for every hand of the first (78 ms a call for two players with
    800 hands each, growing with both histories; the profile of issue 28's RecordHand bench)."""
    other = hand_players.alias("other")
    since_us, since_number = since
    return (
        sa.select(sa.func.count())
        .select_from(
            hand_players.join(
                other,
                sa.and_(
                    other.c.player_id == second,
                    other.c.end_us == hand_players.c.end_us,
                    other.c.hand_number == hand_players.c.hand_number,
                ),
            )
        )
        .where(
            hand_players.c.player_id == first,
            hand_players.c.end_us >= since_us,
            hand_players.c.hand_number >= since_number,
        )
    )


async def hands_together(session: AsyncSession, first: str, second: str, since: Position) -> int:
    """How many hands from a window start on both players were dealt into."""
    return int(await session.scalar(hands_together_query(first, second, since)) or 0)


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
