"""Database adapter of the fair-play pipeline (rules 17): the running totals of pairs and players
that RecordHand adds to, and the cases, within a caller's session (docs/integrity.md).

The additions are written on RecordHand's hot path, so they go to the driver like `storage.insert_hand`:
on PostgreSQL in the hand's own statement (`insert_weighed_hand`), on SQLite as one upsert each.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from poker.history.v1 import history_pb2
from service_runtime.database import driver_pipeline
from service_runtime.storage_metrics import driver_round_trip
from services.history.cases import COUNTERS, Baseline, PairTotals, TimingTotals
from services.history.storage import (
    INSERT_HAND_POSTGRES,
    Position,
    before_position,
    insert_hand,
    micros,
    serialise,
)
from services.history.tables import cases, pair_totals

_PAIR_KEYS = ("pool", "first_id", "second_id")
_PAIR_COLUMNS = (*_PAIR_KEYS, *COUNTERS, "first_seen_us", "last_seen_us")
_TIMING_BUCKETS = tuple(f"bucket_{index}" for index in range(7))
_TIMING_COLUMNS = ("player_id", *_TIMING_BUCKETS, "last_seen_us")


@functools.cache
def _adding_upsert(
    table: str,
    keys: tuple[str, ...],
    columns: tuple[str, ...],
    sums: tuple[str, ...],
    rows: int,
    dialect: str,
) -> str:
    """`INSERT ... VALUES (..), (..) ON CONFLICT (keys) DO UPDATE SET sum = sum + excluded.sum,
    last_seen_us = excluded.last_seen_us RETURNING columns` for `rows` rows, as driver SQL.

    The fair-play counters are written for every hand, so this skips SQLAlchemy's statement layer
    like `insert_hand`: compiling a multi-row upsert cost about 20 ms a hand (the profile of the
    RecordHand of a six-seat hand), the database a fraction of a millisecond."""
    mark = "%s" if dialect == "postgresql" else "?"
    row = "(" + ", ".join([mark] * len(columns)) + ")"
    updates = ", ".join(
        [*(f"{c} = {table}.{c} + excluded.{c}" for c in sums), "last_seen_us = excluded.last_seen_us"]
    )
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([row] * rows)} "
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {updates} RETURNING {', '.join(columns)}"
    )


async def _add_rows(
    session: AsyncSession,
    table: str,
    keys: tuple[str, ...],
    columns: tuple[str, ...],
    sums: tuple[str, ...],
    rows: list[tuple[Any, ...]],
) -> list[tuple[Any, ...]]:
    connection = await session.connection()
    driver: Any = (await connection.get_raw_connection()).driver_connection
    dialect = connection.dialect.name
    sql = _adding_upsert(table, keys, columns, sums, len(rows), dialect)
    with driver_round_trip(dialect, "INSERT"):
        cursor = await driver.execute(sql, [value for row in rows for value in row])
        return list(await cursor.fetchall())


async def add_pair_totals(
    session: AsyncSession, pool: int, increments: Sequence[tuple[str, str, dict[str, int]]], now_us: int
) -> list[PairTotals]:
    """Add one hand's evidence to the running totals of each of its pairs (one upsert statement,
    rows in key order so concurrent hands lock shared pairs in the same order); the new totals."""
    if not increments:
        return []
    rows = [
        (pool, first, second, *(counts[name] for name in COUNTERS), now_us, now_us)
        for first, second, counts in sorted(increments, key=lambda item: (item[0], item[1]))
    ]
    found = await _add_rows(session, "history_pair_totals", _PAIR_KEYS, _PAIR_COLUMNS, COUNTERS, rows)
    return [
        PairTotals(
            int(row[0]),
            str(row[1]),
            str(row[2]),
            **{name: int(row[3 + i]) for i, name in enumerate(COUNTERS)},
        )
        for row in found
    ]


async def add_timings(
    session: AsyncSession, timings: Sequence[tuple[str, tuple[int, ...]]], now_us: int
) -> list[TimingTotals]:
    """Add one hand's decision-time buckets to each player's (one upsert, rows in key order)."""
    if not timings:
        return []
    rows = [(player, *buckets, now_us) for player, buckets in sorted(timings)]
    found = await _add_rows(
        session, "history_player_timing", ("player_id",), _TIMING_COLUMNS, _TIMING_BUCKETS, rows
    )
    return [TimingTotals(str(row[0]), tuple(int(value) for value in row[1:8])) for row in found]


async def baseline(session: AsyncSession, pool: int, player_id: str) -> Baseline:
    """A player's hands, blatant gifts and whipsaws summed over every pair they are in (both key
    orders)."""
    t = pair_totals.c
    whipsaws = sa.func.coalesce(sa.func.sum(t.whipsaws_to_second + t.whipsaws_to_first), 0)
    as_first = sa.select(
        sa.func.coalesce(sa.func.sum(t.hands), 0),
        sa.func.coalesce(sa.func.sum(t.blatant_cbb_to_second), 0),
        whipsaws,
    ).where(t.pool == pool, t.first_id == player_id)
    as_second = sa.select(
        sa.func.coalesce(sa.func.sum(t.hands), 0),
        sa.func.coalesce(sa.func.sum(t.blatant_cbb_to_first), 0),
        whipsaws,
    ).where(t.pool == pool, t.second_id == player_id)
    first = (await session.execute(as_first)).one()
    second = (await session.execute(as_second)).one()
    return Baseline(
        int(first[0]) + int(second[0]), int(first[1]) + int(second[1]), int(first[2]) + int(second[2])
    )


async def case_bytes(session: AsyncSession, case_id: str) -> bytes | None:
    row = (await session.execute(sa.select(cases.c.record).where(cases.c.case_id == case_id))).first()
    return None if row is None else bytes(row.record)


async def save_case(session: AsyncSession, case: history_pb2.FairPlayCase, *, new: bool) -> None:
    values = {
        "kind": history_pb2.CaseKind.Name(case.kind),
        "updated_us": micros(case.last_seen_time),
        "record": serialise(case),
    }
    if new:
        await session.execute(sa.insert(cases).values(case_id=case.case_id, **values))
    else:
        await session.execute(sa.update(cases).where(cases.c.case_id == case.case_id).values(**values))


async def list_cases(
    session: AsyncSession, *, kind: str, after: Position | None, limit: int
) -> list[tuple[int, int, history_pb2.FairPlayCase]]:
    conditions = [before_position(cases.c.updated_us, cases.c.number, after)]
    if kind:
        conditions.append(cases.c.kind == kind)
    rows = await session.execute(
        sa.select(cases.c.number, cases.c.updated_us, cases.c.record)
        .where(*conditions)
        .order_by(cases.c.updated_us.desc(), cases.c.number.desc())
        .limit(limit)
    )
    return [
        (int(r.number), int(r.updated_us), history_pb2.FairPlayCase.FromString(bytes(r.record))) for r in rows
    ]


@functools.cache
def _weighed_hand_sql() -> str:
    """The hand, its players, and the additions to its pairs' totals and players' decision times,
    in one statement: the totals come back as JSON next to the hand's number."""
    counters = ", ".join(COUNTERS)
    pair_arrays = ", ".join(f"CAST(%(p_{name})s AS bigint[])" for name in COUNTERS)
    pair_sums = ", ".join(f"{name} = history_pair_totals.{name} + excluded.{name}" for name in COUNTERS)
    buckets = ", ".join(_TIMING_BUCKETS)
    bucket_arrays = ", ".join(f"CAST(%(t_{name})s AS bigint[])" for name in _TIMING_BUCKETS)
    bucket_sums = ", ".join(
        f"{name} = history_player_timing.{name} + excluded.{name}" for name in _TIMING_BUCKETS
    )
    hand_and_players = INSERT_HAND_POSTGRES.rsplit("SELECT number FROM hand", 1)[0].rstrip()
    return f"""{hand_and_players}, pairs AS (
        INSERT INTO history_pair_totals (pool, first_id, second_id, {counters}, first_seen_us, last_seen_us)
        SELECT CAST(%(pool)s AS smallint), p.first_id, p.second_id, {", ".join(f"p.{n}" for n in COUNTERS)},
               %(recorded_us)s, %(recorded_us)s
        FROM unnest(CAST(%(p_first)s AS text[]), CAST(%(p_second)s AS text[]), {pair_arrays})
             AS p(first_id, second_id, {counters})
        ORDER BY p.first_id, p.second_id
        ON CONFLICT (pool, first_id, second_id) DO UPDATE SET {pair_sums}, last_seen_us = excluded.last_seen_us
        RETURNING *
    ), timing AS (
        INSERT INTO history_player_timing (player_id, {buckets}, last_seen_us)
        SELECT t.player_id, {", ".join(f"t.{n}" for n in _TIMING_BUCKETS)}, %(recorded_us)s
        FROM unnest(CAST(%(t_player)s AS text[]), {bucket_arrays}) AS t(player_id, {buckets})
        ORDER BY t.player_id
        ON CONFLICT (player_id) DO UPDATE SET {bucket_sums}, last_seen_us = excluded.last_seen_us
        RETURNING *
    )
    SELECT (SELECT number FROM hand),
           (SELECT coalesce(json_agg(row_to_json(pairs)), '[]'::json) FROM pairs),
           (SELECT coalesce(json_agg(row_to_json(timing)), '[]'::json) FROM timing)
    """


@dataclass(frozen=True)
class Weighed:
    """A hand stored with its fair-play additions: its number and the totals as they are now."""

    number: int
    pairs: list[PairTotals]
    timings: list[TimingTotals]


async def insert_weighed_hand(
    session: AsyncSession,
    record: history_pb2.HandRecord,
    data: bytes,
    now_us: int,
    increments: Sequence[tuple[str, str, dict[str, int]]],
    timings: Sequence[tuple[str, tuple[int, ...]]],
) -> Weighed:
    """`insert_hand` for a hand the detectors weigh: the hand, its players, and the additions to its
    pairs' totals and its players' decision times. PostgreSQL: one statement (the hand's insert with
    two more data-modifying CTEs, rows in key order so concurrent hands lock shared rows alike), a
    round trip; the caller's COMMIT follows once the verdicts wrote what they found. SQLite: the
    hand, then one upsert each (local calls). A known hand id raises IntegrityError, stores nothing."""
    connection = await session.connection()
    if connection.dialect.name != "postgresql":
        number = await insert_hand(session, record, data, now_us)
        return Weighed(
            number,
            await add_pair_totals(session, int(record.pool), increments, now_us),
            await add_timings(session, timings, now_us),
        )
    seats = record.seats
    params: dict[str, Any] = {
        "hand_id": record.hand_id,
        "table_id": record.table_id,
        "room_id": record.room_id,
        "variant": int(record.variant),
        "pool": int(record.pool),
        "start_us": micros(record.start_time),
        "end_us": micros(record.end_time),
        "record": data,
        "recorded_us": now_us,
        "seats": [seat.seat for seat in seats],
        "players": [seat.player_id for seat in seats],
        "nets": [seat.net_result for seat in seats],
        "fingerprints": [seat.client_fingerprint for seat in seats],
        "p_first": [first for first, _, _ in increments],
        "p_second": [second for _, second, _ in increments],
        "t_player": [player for player, _ in timings],
    }
    for name in COUNTERS:
        params[f"p_{name}"] = [counts[name] for _, _, counts in increments]
    for index, name in enumerate(_TIMING_BUCKETS):
        params[f"t_{name}"] = [buckets[index] for _, buckets in timings]
    try:
        with driver_round_trip("postgresql"):
            async with driver_pipeline(connection) as driver:  # the BEGIN and the statement together
                cursor = await driver.execute(_weighed_hand_sql(), params)
        number, pairs, timed = await cursor.fetchone()
    except psycopg.errors.IntegrityError as error:
        raise IntegrityError("INSERT INTO history_hands", {"hand_id": record.hand_id}, error) from error
    return Weighed(
        int(number),
        [
            PairTotals(
                int(row["pool"]), row["first_id"], row["second_id"], **{n: int(row[n]) for n in COUNTERS}
            )
            for row in pairs
        ],
        [TimingTotals(row["player_id"], tuple(int(row[n]) for n in _TIMING_BUCKETS)) for row in timed],
    )
