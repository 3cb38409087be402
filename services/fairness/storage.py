"""Database adapter of the fairness service: reads and writes hand rows within a caller's transaction.

The application runs one short unit of work per use case (`service_runtime.database.Transactions`)
and passes its connection in; nothing here decrypts or decides. Seeds stay ciphertext here until the
application decrypts them.

The statements of a hand's lifecycle (commit, entropy, seal, reveal) skip SQLAlchemy's statement
layer, which cost about 1 ms of CPU per statement, more than the database spent on them, and run on
the driver under the unit's connection (docs/performance.md, "Fairness"):

- PostgreSQL: psycopg prepared statements in pipeline mode. A transition's reads travel in one
  round trip with the BEGIN psycopg opens the transaction with; its writes in one more, with the
  COMMIT when the unit asks for it (`commit=True`: the last thing it does; the unit's own commit
  then has nothing left to do). An error still surfaces before anything is committed: the server
  skips the rest of a pipeline after a failed statement.
- SQLite: the sqlite3 connection aiosqlite drives, called directly: the unit holds the connection
  and its write lock (BEGIN IMMEDIATE), so nothing else uses it meanwhile, and a statement on pages
  in memory takes microseconds, less than the hop to aiosqlite's thread. BEGIN and COMMIT (the disk
  sync) stay on that thread. sqlite3 keeps each statement compiled in its cache.

The drivers' own errors are raised unwrapped (`INTEGRITY_ERRORS` names the constraint violations
in both forms); `service_runtime.database.is_outage` knows them, so a database that is away still
answers DATABASE_UNAVAILABLE.
"""

from __future__ import annotations

import collections
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.database import driver_pipeline
from service_runtime.migrations import upgrade_to_head
from service_runtime.storage_metrics import driver_round_trip, statement_kind
from services.fairness.hands import ClientSeedRecord, HandRecord, HandState
from services.fairness.tables import client_seeds, hands
from services.fairness.visibility import Visibility

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "fairness_alembic_version"


def migrate(url: str) -> None:
    """Bring the fairness schema at `url` to the newest revision (synchronous; run it in a thread)."""
    upgrade_to_head(url, MIGRATIONS_DIR, VERSION_TABLE)


@dataclass(frozen=True)
class StoredHand:
    """A hand row: the public record plus the encrypted seed (and the clear seed once revealed)."""

    record: HandRecord
    seed_key_id: str
    seed_ciphertext: bytes = field(repr=False)
    revealed_seed: bytes | None = field(default=None, repr=False)
    # Version 3: the encrypted deck secret (never revealed); None for versions 1 and 2.
    deck_secret_ciphertext: bytes | None = field(default=None, repr=False)
    # The digests of the requests that committed and sealed the hand (`request_binding.py`); None
    # before migration 0006, and the seal's until the hand is sealed.
    commit_request_sha256: str | None = None
    seal_request_sha256: str | None = None


def _utc(moment: datetime | str | None) -> datetime | None:
    # SQLite hands back naive datetimes (text, read on the driver); every stored time is UTC.
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def participants_text(players: Sequence[str]) -> str:
    """The stored form of a hand's participants: each between two newlines, "" for none."""
    return "".join(f"\n{p}" for p in players) + "\n" if players else ""


def _participants(text: str) -> tuple[str, ...]:
    return tuple(p for p in text.split("\n") if p)


def _record(row: Any, seeds: Sequence[ClientSeedRecord]) -> HandRecord:
    created = _utc(row.created_at)
    assert created is not None
    return HandRecord(
        hand_id=row.hand_id,
        request_id=row.request_id,
        table_id=row.table_id,
        sequence=int(row.sequence),
        commitment=row.commitment,
        server_seed_hash=row.server_seed_hash,
        previous_commitment=row.previous_commitment,
        nonce=bytes(row.nonce),
        shuffle_version=int(row.shuffle_version),
        deal_now=bool(row.deal_now),
        state=HandState(row.state),
        client_seeds=tuple(sorted(seeds, key=lambda s: s.seat)),
        created_at=created,
        sealed_at=_utc(row.sealed_at),
        revealed_at=_utc(row.revealed_at),
        participants=_participants(row.participants),
        participants_only=bool(row.participants_only),
        private_room=bool(row.private_room),
        deck_root=row.deck_root,
        visibility=Visibility.from_text(row.visibility),
    )


def _seed_record(row: Any) -> ClientSeedRecord:
    return ClientSeedRecord(row.seat, row.player_id, bytes(row.client_seed), row.client_seed_hash)


# --- The lifecycle's statements on the driver (see the module docstring). ---

# A unique or check constraint refused a write: as SQLAlchemy wraps it, and as each driver raises it.
INTEGRITY_ERRORS: tuple[type[Exception], ...] = (
    sa_exc.IntegrityError,
    psycopg.IntegrityError,
    sqlite3.IntegrityError,
)

_HAND_COLUMNS = tuple(column.name for column in hands.columns)
_HandRow: Any = collections.namedtuple("_HandRow", _HAND_COLUMNS)  # type: ignore[misc]  # rows by name
_CAST = re.compile(r"::\w+")
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


@dataclass(frozen=True)
class _Statement:
    """One statement in both dialects: PostgreSQL's text (`%(name)s`, with the casts a value in a
    SELECT list needs), and SQLite's derived from it (`:name`, no casts)."""

    postgres: str
    sqlite: str = ""
    # False for a statement that returns nothing (the hand's INSERT): its rows are not fetched.
    returns_rows: bool = True
    kind: str = field(init=False, default="")  # SELECT, UPDATE, ...: its label in the SQL latency figure

    def __post_init__(self) -> None:
        if not self.sqlite:
            object.__setattr__(self, "sqlite", _sqlite_text(self.postgres))
        object.__setattr__(self, "kind", statement_kind(self.sqlite))


def _sqlite_text(postgres: str) -> str:
    return _PLACEHOLDER.sub(r":\1", _CAST.sub("", postgres))


# A guarded write that finds the hand moved on must fail, not just change nothing, on PostgreSQL:
# the COMMIT may be in the same pipeline, and a failed statement makes the server skip it. So there
# the write runs in a CTE whose count divides one (division_by_zero when it changed no row).


def _guarded(postgres: str) -> _Statement:
    """A write returning the row it changed; on PostgreSQL an error when it changed none."""
    return _Statement(
        f"WITH changed AS ({postgres}) SELECT 1 / count(*) FROM changed", _sqlite_text(postgres)
    )


def _sqlite_value(value: Any) -> Any:
    # SQLAlchemy's SQLite DateTime text, which its own reads parse (sqlite3's adapter adds an offset).
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return value


async def _run(
    connection: AsyncConnection,
    statements: Sequence[tuple[_Statement, Mapping[str, Any]]],
    *,
    commit: bool = False,
) -> list[list[tuple[Any, ...]]]:
    """Run `statements` in order inside the unit's transaction; the rows of each. PostgreSQL: one
    pipeline (one round trip), with the COMMIT after them when `commit`."""
    backend = connection.dialect.name
    if backend == "postgresql":
        with driver_round_trip(backend):
            async with driver_pipeline(connection) as driver:  # leaving it: one Sync, every result
                cursors = [await driver.execute(s.postgres, params, prepare=True) for s, params in statements]
                if commit:
                    await driver.execute("COMMIT")  # skipped by the server if a statement failed
        # Fetched by what each statement is, not by `cursor.description` (which builds the columns).
        return [
            list(await cursor.fetchall()) if s.returns_rows else []
            for cursor, (s, _) in zip(cursors, statements, strict=True)
        ]
    raw = await connection.get_raw_connection()
    sqlite_driver: Any = raw.driver_connection
    database: sqlite3.Connection = (
        sqlite_driver._conn
    )  # aiosqlite's sqlite3 connection, idle while we hold it
    results = []
    for s, params in statements:
        with driver_round_trip(backend, s.kind):
            results.append(
                database.execute(s.sqlite, {k: _sqlite_value(v) for k, v in params.items()}).fetchall()
            )
    return results


_LOCK_HAND = _Statement(
    f"SELECT {', '.join(_HAND_COLUMNS)} FROM fairness_hands WHERE hand_id = %(hand_id)s FOR UPDATE",
    f"SELECT {', '.join(_HAND_COLUMNS)} FROM fairness_hands WHERE hand_id = :hand_id",
)
_SEEDS_OF_HAND = _Statement(
    "SELECT seat, player_id, client_seed, client_seed_hash FROM fairness_client_seeds"
    " WHERE hand_id = %(hand_id)s ORDER BY seat"
)
_LAST_LINK = _Statement(
    "SELECT sequence, commitment FROM fairness_hands WHERE table_id = %(table_id)s"
    " ORDER BY sequence DESC LIMIT 1"
)
_INSERT_HAND = _Statement(
    f"INSERT INTO fairness_hands ({', '.join(_HAND_COLUMNS)})"
    f" VALUES ({', '.join(f'%({name})s' for name in _HAND_COLUMNS)})",
    returns_rows=False,
)
_STILL_COMMITTED = "EXISTS (SELECT 1 FROM fairness_hands WHERE hand_id = %(hand_id)s AND state = 'committed')"
_INSERT_SEED = _guarded(
    "INSERT INTO fairness_client_seeds (hand_id, seat, player_id, client_seed, client_seed_hash, added_at)"
    " SELECT %(hand_id)s::text, %(seat)s::integer, %(player_id)s::text, %(client_seed)s::bytea,"
    f" %(client_seed_hash)s::text, %(at)s::timestamptz WHERE {_STILL_COMMITTED} RETURNING seat"
)
_REVEAL_SEED = _guarded(
    "UPDATE fairness_client_seeds SET client_seed = %(client_seed)s WHERE hand_id = %(hand_id)s"
    f" AND seat = %(seat)s AND client_seed = %(empty)s AND {_STILL_COMMITTED} RETURNING seat"
)
_MARK_SEALED = _guarded(
    "UPDATE fairness_hands SET state = 'sealed', sealed_at = %(at)s, participants = %(participants)s,"
    " seal_request_sha256 = %(seal_request)s WHERE hand_id = %(hand_id)s AND state = 'committed'"
    " RETURNING hand_id"
)
_MARK_ENDED = _guarded(
    "UPDATE fairness_hands SET state = %(state)s, revealed_seed = %(seed)s, revealed_at = %(at)s,"
    " visibility = %(visibility)s WHERE hand_id = %(hand_id)s AND state = %(leaving)s RETURNING hand_id"
)


async def _client_seeds_of(
    connection: AsyncConnection, hand_ids: Sequence[str]
) -> dict[str, list[ClientSeedRecord]]:
    found: dict[str, list[ClientSeedRecord]] = {hand_id: [] for hand_id in hand_ids}
    if not hand_ids:
        return found
    rows = await connection.execute(
        sa.select(client_seeds).where(client_seeds.c.hand_id.in_(hand_ids)).order_by(client_seeds.c.seat)
    )
    for row in rows:
        found[row.hand_id].append(_seed_record(row))
    return found


def _stored_of(row: Any, seeds: Sequence[ClientSeedRecord]) -> StoredHand:
    return StoredHand(
        record=_record(row, seeds),
        seed_key_id=row.seed_key_id,
        seed_ciphertext=bytes(row.seed_ciphertext),
        revealed_seed=None if row.revealed_seed is None else bytes(row.revealed_seed),
        deck_secret_ciphertext=None
        if row.deck_secret_ciphertext is None
        else bytes(row.deck_secret_ciphertext),
        commit_request_sha256=row.commit_request_sha256,
        seal_request_sha256=row.seal_request_sha256,
    )


async def _stored(connection: AsyncConnection, row: Any) -> StoredHand:
    seeds = await _client_seeds_of(connection, [row.hand_id])
    return _stored_of(row, seeds[row.hand_id])


async def load_hand(
    connection: AsyncConnection, hand_id: str, *, for_update: bool = False
) -> StoredHand | None:
    """The hand with its client seeds, locked against concurrent changes when `for_update` (the
    lifecycle's transitions, on the driver: two statements in one round trip).

    PostgreSQL locks the hand row first and reads its client seeds in a second statement, pipelined
    behind it: a joined read would keep the snapshot taken before it waited for the lock and miss a
    seed committed meanwhile, while the second statement's snapshot is taken once the lock is held.
    SQLite needs no row lock (the transaction holds the write lock from BEGIN). A plain read is one
    joined statement (one snapshot).
    """
    if for_update:
        params = {"hand_id": hand_id}
        found, seed_rows = await _run(connection, [(_LOCK_HAND, params), (_SEEDS_OF_HAND, params)])
        if not found:
            return None
        seeds = [
            ClientSeedRecord(seat, player, bytes(seed), hashed) for seat, player, seed, hashed in seed_rows
        ]
        return _stored_of(_HandRow._make(found[0]), seeds)
    query = (
        sa.select(
            hands,
            client_seeds.c.seat,
            client_seeds.c.player_id,
            client_seeds.c.client_seed,
            client_seeds.c.client_seed_hash,
        )
        .select_from(hands.outerjoin(client_seeds, client_seeds.c.hand_id == hands.c.hand_id))
        .where(hands.c.hand_id == hand_id)
    )
    rows = (await connection.execute(query)).all()
    if not rows:
        return None
    return _stored_of(rows[0], [_seed_record(r) for r in rows if r.seat is not None])


async def find_by_request_id(connection: AsyncConnection, request_id: str) -> StoredHand | None:
    row = (await connection.execute(sa.select(hands).where(hands.c.request_id == request_id))).first()
    return None if row is None else await _stored(connection, row)


async def lock_table_chain(connection: AsyncConnection, table_id: str) -> None:
    """Serialise commits of one table until the transaction ends, so each reads the true last link.

    PostgreSQL: a transaction-scoped advisory lock on the table id's hash. SQLite serialises writers
    itself; a commit that still loses the race hits the unique (table_id, sequence) and retries.
    """
    if connection.dialect.name == "postgresql":
        await connection.execute(
            sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtextextended(table_id, 0)))
        )


async def last_link_of_table(connection: AsyncConnection, table_id: str) -> tuple[int, str] | None:
    """(sequence, commitment) of the newest hand of the table, if it has any."""
    (rows,) = await _run(connection, [(_LAST_LINK, {"table_id": table_id})])
    return (int(rows[0][0]), str(rows[0][1])) if rows else None


async def hand_at_sequence(connection: AsyncConnection, table_id: str, sequence: int) -> HandRecord | None:
    row = (
        await connection.execute(
            sa.select(hands).where(hands.c.table_id == table_id, hands.c.sequence == sequence)
        )
    ).first()
    return None if row is None else (await _stored(connection, row)).record


async def insert_hand(connection: AsyncConnection, hand: StoredHand, *, commit: bool = False) -> None:
    """Add the hand; a taken request id or chain position raises one of `INTEGRITY_ERRORS`."""
    record = hand.record
    values = {
        "hand_id": record.hand_id,
        "request_id": record.request_id,
        "table_id": record.table_id,
        "sequence": record.sequence,
        "commitment": record.commitment,
        "server_seed_hash": record.server_seed_hash,
        "previous_commitment": record.previous_commitment,
        "nonce": record.nonce,
        "shuffle_version": record.shuffle_version,
        "deal_now": record.deal_now,
        "state": record.state.value,
        "seed_key_id": hand.seed_key_id,
        "seed_ciphertext": hand.seed_ciphertext,
        "revealed_seed": None,
        "created_at": record.created_at,
        "sealed_at": record.sealed_at,
        "revealed_at": None,
        "participants": participants_text(record.participants),
        "participants_only": record.participants_only,
        "private_room": record.private_room,
        "deck_root": record.deck_root,
        "deck_secret_ciphertext": hand.deck_secret_ciphertext,
        "visibility": "",
        "commit_request_sha256": hand.commit_request_sha256,
        "seal_request_sha256": hand.seal_request_sha256,
    }
    await _run(connection, [(_INSERT_HAND, values)], commit=commit)


class StateMoved(Exception):
    """A transition found the hand no longer in the state it was decided from; nothing was written.

    Cannot happen while the transaction holds the hand (row lock on PostgreSQL, the write lock a
    SQLite transaction takes at BEGIN); the application then decides again from a fresh read.
    """


@dataclass(frozen=True)
class Write:
    """One guarded write of a transition: it changes a row only from the state it was decided in,
    and returns the row it changed (RETURNING: drivers do not all report a rowcount for INSERT ...
    SELECT)."""

    statement: _Statement
    params: Mapping[str, Any]


async def write(
    connection: AsyncConnection, hand_id: str, writes: Sequence[Write], *, commit: bool = False
) -> None:
    """A transition's writes in one round trip (with the COMMIT when `commit`); StateMoved if any
    found the hand moved on, and then nothing of them is committed (on PostgreSQL the failed
    statement skips the rest of the pipeline; the caller's transaction rolls back)."""
    try:
        results = await _run(connection, [(w.statement, w.params) for w in writes], commit=commit)
    except psycopg.errors.DivisionByZero as error:  # _guarded: a write on PostgreSQL changed nothing
        raise StateMoved(hand_id) from error
    if any(not rows for rows in results):
        raise StateMoved(hand_id)


def seed_insert(hand_id: str, seed: ClientSeedRecord, at: datetime) -> Write:
    """Add the seed only if the hand is still open for entropy (checked by the INSERT itself)."""
    return Write(
        _INSERT_SEED,
        {
            "hand_id": hand_id,
            "seat": seed.seat,
            "player_id": seed.player_id,
            "client_seed": seed.client_seed,
            "client_seed_hash": seed.client_seed_hash,
            "at": at,
        },
    )


def seed_reveal(hand_id: str, seed: ClientSeedRecord) -> Write:
    """Version 3: the seed of a seat that recorded only its hash, while the hand is still COMMITTED
    and the seat still has no seed (checked by the UPDATE itself)."""
    return Write(
        _REVEAL_SEED, {"hand_id": hand_id, "seat": seed.seat, "client_seed": seed.client_seed, "empty": b""}
    )


def sealing(hand_id: str, at: datetime, participants: Sequence[str], seal_request: str) -> Write:
    """COMMITTED -> SEALED, only from COMMITTED, with the players dealt in and the digest of the
    SealHand request that sealed it."""
    return Write(
        _MARK_SEALED,
        {
            "hand_id": hand_id,
            "at": at,
            "participants": participants_text(participants),
            "seal_request": seal_request,
        },
    )


def ending(
    hand_id: str,
    leaving: HandState,
    state: HandState,
    seed: bytes,
    at: datetime,
    visibility: Visibility | None = None,
) -> Write:
    """`leaving` -> FINISHED or VOIDED, only from the state the decision was made in; version 3
    hands record who saw which positions."""
    return Write(
        _MARK_ENDED,
        {
            "hand_id": hand_id,
            "leaving": leaving.value,
            "state": state.value,
            "seed": seed,
            "at": at,
            "visibility": (visibility or Visibility()).to_text(),
        },
    )


async def insert_client_seed(
    connection: AsyncConnection, hand_id: str, seed: ClientSeedRecord, at: datetime
) -> None:
    await write(connection, hand_id, [seed_insert(hand_id, seed, at)])


async def reveal_client_seed(connection: AsyncConnection, hand_id: str, seed: ClientSeedRecord) -> None:
    await write(connection, hand_id, [seed_reveal(hand_id, seed)])


async def mark_sealed(
    connection: AsyncConnection, hand_id: str, at: datetime, participants: Sequence[str], seal_request: str
) -> None:
    await write(connection, hand_id, [sealing(hand_id, at, participants, seal_request)])


async def mark_ended(
    connection: AsyncConnection,
    hand_id: str,
    leaving: HandState,
    state: HandState,
    seed: bytes,
    at: datetime,
    visibility: Visibility | None = None,
) -> None:
    await write(connection, hand_id, [ending(hand_id, leaving, state, seed, at, visibility)])


async def list_table_hands(
    connection: AsyncConnection,
    table_id: str,
    *,
    after_sequence: int,
    limit: int,
    private_to: str | None = None,
) -> list[HandRecord]:
    """Hands of the table with sequence above `after_sequence`, oldest first; with `private_to`,
    participants-only hands (house-game rounds, a private room's hands: `for_participants_only`)
    only if that player is one of their participants ("" for nobody)."""
    query = sa.select(hands).where(hands.c.table_id == table_id, hands.c.sequence > after_sequence)
    if private_to is not None:
        # Case-sensitive and free of patterns (LIKE ignores case on SQLite and treats % and _ as
        # wildcards): the position of "\n<id>\n" in the stored text.
        position = sa.func.strpos if connection.dialect.name == "postgresql" else sa.func.instr
        needle = sa.literal(f"\n{private_to}\n", sa.Text)
        played = position(hands.c.participants, needle) > 0 if private_to else sa.false()
        for_all = sa.and_(sa.not_(hands.c.participants_only), sa.not_(hands.c.private_room))
        query = query.where(sa.or_(for_all, played))
    rows = (await connection.execute(query.order_by(hands.c.sequence).limit(limit))).all()
    seeds = await _client_seeds_of(connection, [row.hand_id for row in rows])
    return [_record(row, seeds[row.hand_id]) for row in rows]
