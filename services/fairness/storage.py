"""Database adapter of the fairness service: reads and writes hand rows within a caller's session.

The application opens one short transaction per unit of work and passes its session in; nothing
here commits, decrypts or decides. Seeds stay ciphertext here until the application decrypts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

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
    )


async def _client_seeds_of(
    session: AsyncSession, hand_ids: Sequence[str]
) -> dict[str, list[ClientSeedRecord]]:
    found: dict[str, list[ClientSeedRecord]] = {hand_id: [] for hand_id in hand_ids}
    if not hand_ids:
        return found
    rows = await session.execute(
        sa.select(client_seeds).where(client_seeds.c.hand_id.in_(hand_ids)).order_by(client_seeds.c.seat)
    )
    for row in rows:
        found[row.hand_id].append(ClientSeedRecord(row.seat, row.player_id, bytes(row.client_seed)))
    return found


async def _stored(session: AsyncSession, row: Any) -> StoredHand:
    seeds = await _client_seeds_of(session, [row.hand_id])
    return StoredHand(
        record=_record(row, seeds[row.hand_id]),
        seed_key_id=row.seed_key_id,
        seed_ciphertext=bytes(row.seed_ciphertext),
        revealed_seed=None if row.revealed_seed is None else bytes(row.revealed_seed),
    )


async def load_hand(session: AsyncSession, hand_id: str, *, for_update: bool = False) -> StoredHand | None:
    """The hand, locked against concurrent changes on PostgreSQL when `for_update` (SQLite serialises)."""
    query = sa.select(hands).where(hands.c.hand_id == hand_id)
    if for_update:
        query = query.with_for_update()
    row = (await session.execute(query)).first()
    return None if row is None else await _stored(session, row)


async def find_by_request_id(session: AsyncSession, request_id: str) -> StoredHand | None:
    row = (await session.execute(sa.select(hands).where(hands.c.request_id == request_id))).first()
    return None if row is None else await _stored(session, row)


async def lock_table_chain(session: AsyncSession, table_id: str) -> None:
    """Serialise commits of one table until the transaction ends, so each reads the true last link.

    PostgreSQL: a transaction-scoped advisory lock on the table id's hash. SQLite serialises writers
    itself; a commit that still loses the race hits the unique (table_id, sequence) and retries.
    """
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtextextended(table_id, 0))))


async def last_link_of_table(session: AsyncSession, table_id: str) -> tuple[int, str] | None:
    """(sequence, commitment) of the newest hand of the table, if it has any."""
    row = (
        await session.execute(
            sa.select(hands.c.sequence, hands.c.commitment)
            .where(hands.c.table_id == table_id)
            .order_by(hands.c.sequence.desc())
            .limit(1)
        )
    ).first()
    return None if row is None else (int(row.sequence), str(row.commitment))


async def hand_at_sequence(session: AsyncSession, table_id: str, sequence: int) -> HandRecord | None:
    row = (
        await session.execute(
            sa.select(hands).where(hands.c.table_id == table_id, hands.c.sequence == sequence)
        )
    ).first()
    return None if row is None else (await _stored(session, row)).record


async def insert_hand(session: AsyncSession, hand: StoredHand) -> None:
    record = hand.record
    await session.execute(
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
        )
    )


class StateMoved(Exception):
    """A transition found the hand no longer in the state it was decided from; nothing was written.

    Cannot happen while the transaction holds the hand (row lock on PostgreSQL, the write lock a
    SQLite transaction takes at BEGIN); the application then decides again from a fresh read.
    """


def _moved(result: Any, hand_id: str) -> None:
    # RETURNING rather than rowcount, which the ORM session does not report for INSERT ... SELECT.
    if result.first() is None:
        raise StateMoved(hand_id)


async def insert_client_seed(
    session: AsyncSession, hand_id: str, seed: ClientSeedRecord, at: datetime
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
    result = await session.execute(
        sa.insert(client_seeds)
        .from_select(["hand_id", "seat", "player_id", "client_seed", "added_at"], values)
        .returning(client_seeds.c.seat)
    )
    _moved(result, hand_id)


async def mark_sealed(session: AsyncSession, hand_id: str, at: datetime) -> None:
    """COMMITTED -> SEALED, only from COMMITTED."""
    result = await session.execute(
        sa.update(hands)
        .where(hands.c.hand_id == hand_id, hands.c.state == HandState.COMMITTED.value)
        .values(state=HandState.SEALED.value, sealed_at=at)
        .returning(hands.c.hand_id)
    )
    _moved(result, hand_id)


async def mark_ended(
    session: AsyncSession, hand_id: str, leaving: HandState, state: HandState, seed: bytes, at: datetime
) -> None:
    """`leaving` -> FINISHED or VOIDED, only from the state the decision was made in."""
    result = await session.execute(
        sa.update(hands)
        .where(hands.c.hand_id == hand_id, hands.c.state == leaving.value)
        .values(state=state.value, revealed_seed=seed, revealed_at=at)
        .returning(hands.c.hand_id)
    )
    _moved(result, hand_id)


async def list_table_hands(
    session: AsyncSession, table_id: str, *, after_sequence: int, limit: int
) -> list[HandRecord]:
    """Hands of the table with sequence above `after_sequence`, oldest first."""
    rows = (
        await session.execute(
            sa.select(hands)
            .where(hands.c.table_id == table_id, hands.c.sequence > after_sequence)
            .order_by(hands.c.sequence)
            .limit(limit)
        )
    ).all()
    seeds = await _client_seeds_of(session, [row.hand_id for row in rows])
    return [_record(row, seeds[row.hand_id]) for row in rows]
