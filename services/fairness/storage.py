"""Database adapter of the fairness service: reads and writes hand rows within a caller's transaction.

The application runs one short unit of work per use case (`service_runtime.database.Transactions`)
and passes its connection in; nothing here commits, decrypts or decides. Seeds stay ciphertext here until the application decrypts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.migrations import upgrade_to_head
from services.fairness.hands import ClientSeedRecord, HandRecord, HandState
from services.fairness.tables import client_seeds, hands

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


def _utc(moment: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; every stored time is UTC.
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
        found[row.hand_id].append(ClientSeedRecord(row.seat, row.player_id, bytes(row.client_seed)))
    return found


async def _stored(connection: AsyncConnection, row: Any) -> StoredHand:
    seeds = await _client_seeds_of(connection, [row.hand_id])
    return StoredHand(
        record=_record(row, seeds[row.hand_id]),
        seed_key_id=row.seed_key_id,
        seed_ciphertext=bytes(row.seed_ciphertext),
        revealed_seed=None if row.revealed_seed is None else bytes(row.revealed_seed),
    )


async def load_hand(
    connection: AsyncConnection, hand_id: str, *, for_update: bool = False
) -> StoredHand | None:
    """The hand with its client seeds, locked against concurrent changes when `for_update`.

    PostgreSQL locks the hand row first and reads its client seeds in a second statement: a joined
    read would keep the snapshot taken before it waited for the lock and miss a seed committed
    meanwhile. SQLite needs no row lock (the transaction holds the write lock from BEGIN), so one
    joined statement reads both.
    """
    if for_update and connection.dialect.name == "postgresql":
        query = sa.select(hands).where(hands.c.hand_id == hand_id).with_for_update()
        row = (await connection.execute(query)).first()
        return None if row is None else await _stored(connection, row)
    query = (
        sa.select(hands, client_seeds.c.seat, client_seeds.c.player_id, client_seeds.c.client_seed)
        .select_from(hands.outerjoin(client_seeds, client_seeds.c.hand_id == hands.c.hand_id))
        .where(hands.c.hand_id == hand_id)
    )
    rows = (await connection.execute(query)).all()
    if not rows:
        return None
    row = rows[0]
    seeds = [ClientSeedRecord(r.seat, r.player_id, bytes(r.client_seed)) for r in rows if r.seat is not None]
    return StoredHand(
        record=_record(row, seeds),
        seed_key_id=row.seed_key_id,
        seed_ciphertext=bytes(row.seed_ciphertext),
        revealed_seed=None if row.revealed_seed is None else bytes(row.revealed_seed),
    )


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
    row = (
        await connection.execute(
            sa.select(hands.c.sequence, hands.c.commitment)
            .where(hands.c.table_id == table_id)
            .order_by(hands.c.sequence.desc())
            .limit(1)
        )
    ).first()
    return None if row is None else (int(row.sequence), str(row.commitment))


async def hand_at_sequence(connection: AsyncConnection, table_id: str, sequence: int) -> HandRecord | None:
    row = (
        await connection.execute(
            sa.select(hands).where(hands.c.table_id == table_id, hands.c.sequence == sequence)
        )
    ).first()
    return None if row is None else (await _stored(connection, row)).record


async def insert_hand(connection: AsyncConnection, hand: StoredHand) -> None:
    record = hand.record
    await connection.execute(
        sa.insert(hands).values(
            hand_id=record.hand_id,
            request_id=record.request_id,
            table_id=record.table_id,
            sequence=record.sequence,
            commitment=record.commitment,
            server_seed_hash=record.server_seed_hash,
            previous_commitment=record.previous_commitment,
            nonce=record.nonce,
            shuffle_version=record.shuffle_version,
            deal_now=record.deal_now,
            state=record.state.value,
            seed_key_id=hand.seed_key_id,
            seed_ciphertext=hand.seed_ciphertext,
            revealed_seed=None,
            created_at=record.created_at,
            sealed_at=record.sealed_at,
            revealed_at=None,
            participants=participants_text(record.participants),
            participants_only=record.participants_only,
        )
    )


class StateMoved(Exception):
    """A transition found the hand no longer in the state it was decided from; nothing was written.

    Cannot happen while the transaction holds the hand (row lock on PostgreSQL, the write lock a
    SQLite transaction takes at BEGIN); the application then decides again from a fresh read.
    """


def _moved(result: Any, hand_id: str) -> None:
    # RETURNING rather than rowcount, which drivers do not all report for INSERT ... SELECT.
    if result.first() is None:
        raise StateMoved(hand_id)


async def insert_client_seed(
    connection: AsyncConnection, hand_id: str, seed: ClientSeedRecord, at: datetime
) -> None:
    """Add the seed only if the hand is still open for entropy (checked by the INSERT itself)."""
    still_committed = sa.exists().where(
        hands.c.hand_id == hand_id, hands.c.state == HandState.COMMITTED.value
    )
    values = sa.select(
        sa.literal(hand_id, sa.String),
        sa.literal(seed.seat, sa.Integer),
        sa.literal(seed.player_id, sa.String),
        sa.literal(seed.client_seed, sa.LargeBinary),
        sa.literal(at, sa.DateTime(timezone=True)),
    ).where(still_committed)
    result = await connection.execute(
        sa.insert(client_seeds)
        .from_select(["hand_id", "seat", "player_id", "client_seed", "added_at"], values)
        .returning(client_seeds.c.seat)
    )
    _moved(result, hand_id)


async def mark_sealed(
    connection: AsyncConnection, hand_id: str, at: datetime, participants: Sequence[str]
) -> None:
    """COMMITTED -> SEALED, only from COMMITTED, with the players dealt in."""
    result = await connection.execute(
        sa.update(hands)
        .where(hands.c.hand_id == hand_id, hands.c.state == HandState.COMMITTED.value)
        .values(state=HandState.SEALED.value, sealed_at=at, participants=participants_text(participants))
        .returning(hands.c.hand_id)
    )
    _moved(result, hand_id)


async def set_participants(
    connection: AsyncConnection, hand_id: str, leaving: HandState, participants: Sequence[str]
) -> None:
    """More players dealt in, named by a retried seal of a hand still in `leaving` (SEALED)."""
    result = await connection.execute(
        sa.update(hands)
        .where(hands.c.hand_id == hand_id, hands.c.state == leaving.value)
        .values(participants=participants_text(participants))
        .returning(hands.c.hand_id)
    )
    _moved(result, hand_id)


async def mark_ended(
    connection: AsyncConnection, hand_id: str, leaving: HandState, state: HandState, seed: bytes, at: datetime
) -> None:
    """`leaving` -> FINISHED or VOIDED, only from the state the decision was made in."""
    result = await connection.execute(
        sa.update(hands)
        .where(hands.c.hand_id == hand_id, hands.c.state == leaving.value)
        .values(state=state.value, revealed_seed=seed, revealed_at=at)
        .returning(hands.c.hand_id)
    )
    _moved(result, hand_id)


async def list_table_hands(
    connection: AsyncConnection,
    table_id: str,
    *,
    after_sequence: int,
    limit: int,
    private_to: str | None = None,
) -> list[HandRecord]:
    """Hands of the table with sequence above `after_sequence`, oldest first; with `private_to`,
    participants-only hands only if that player is one of their participants ("" for nobody)."""
    query = sa.select(hands).where(hands.c.table_id == table_id, hands.c.sequence > after_sequence)
    if private_to is not None:
        # Case-sensitive and free of patterns (LIKE ignores case on SQLite and treats % and _ as
        # wildcards): the position of "\n<id>\n" in the stored text.
        position = sa.func.strpos if connection.dialect.name == "postgresql" else sa.func.instr
        needle = sa.literal(f"\n{private_to}\n", sa.Text)
        played = position(hands.c.participants, needle) > 0 if private_to else sa.false()
        query = query.where(sa.or_(sa.not_(hands.c.participants_only), played))
    rows = (await connection.execute(query.order_by(hands.c.sequence).limit(limit))).all()
    seeds = await _client_seeds_of(connection, [row.hand_id for row in rows])
    return [_record(row, seeds[row.hand_id]) for row in rows]
