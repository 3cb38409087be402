"""A player's client seed as AddPlayerEntropy and SealHand take it, and what it is to the seat's
record: new, an idempotent retry, version 3's seed after its hash, or a conflict. No I/O."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence

from service_runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument
from service_runtime.validation import require_text
from services.fairness.deck_commitment import client_seed_hash
from services.fairness.hands import ClientSeedRecord, HandRecord
from services.fairness.shuffle import CLIENT_SEED_MAX_BYTES, MAX_SEAT

# Ids the fairness service takes (player, table, hand, request): at most this many characters.
MAX_ID_LENGTH = 128
_HEX = frozenset("0123456789abcdef")


def validated_seed(
    seat: int, player_id: str, client_seed: bytes, prefix: str = "", seed_hash: str = ""
) -> ClientSeedRecord:
    """A client seed (or, version 3, only its hash) as AddPlayerEntropy and SealHand take it, validated;
    a hash in either case is the same digits, recorded in lower case (as every hex value fairness
    reads)."""
    require_text(player_id, f"{prefix}player_id", limit=MAX_ID_LENGTH)
    if not 0 <= seat <= MAX_SEAT:
        raise InvalidArgument("FIELD_INVALID", f"seat is 0..{MAX_SEAT}", {"field": f"{prefix}seat"})
    if seed_hash:
        if client_seed:
            raise InvalidArgument(
                "FIELD_INVALID", "give the client seed or its hash, not both", {"field": "client_seed_hash"}
            )
        seed_hash = seed_hash.lower()
        if len(seed_hash) != 64 or not seed_hash.isascii() or not set(seed_hash) <= _HEX:
            raise InvalidArgument(
                "FIELD_INVALID", "client_seed_hash is 64 hex digits", {"field": "client_seed_hash"}
            )
        return ClientSeedRecord(seat, player_id, b"", seed_hash)
    if not client_seed:
        raise InvalidArgument("FIELD_REQUIRED", "client_seed is required", {"field": f"{prefix}client_seed"})
    if len(client_seed) > CLIENT_SEED_MAX_BYTES:
        raise InvalidArgument(
            "FIELD_INVALID",
            f"client_seed is at most {CLIENT_SEED_MAX_BYTES} bytes",
            {"field": f"{prefix}client_seed"},
        )
    return ClientSeedRecord(seat, player_id, client_seed)


def with_hash(record: HandRecord, seed: ClientSeedRecord) -> ClientSeedRecord:
    """Version 3: the contribution with its client-seed hash (computed when the seed is given);
    versions 1 and 2 take no hash."""
    if not record.opens_per_position:
        if seed.client_seed_hash:
            raise InvalidArgument(
                "FIELD_INVALID",
                "client_seed_hash is for version 3 hands only",
                {"hand_id": record.hand_id, "field": "client_seed_hash"},
            )
        return seed
    if seed.client_seed:
        return dataclasses.replace(
            seed, client_seed_hash=client_seed_hash(record.commitment, seed.seat, seed.client_seed)
        )
    return seed


class Recorded(enum.Enum):
    NEW = "new"  # the seat has nothing yet: insert
    ALREADY = "already"  # this very contribution is recorded: an idempotent retry
    REVEAL = "reveal"  # version 3: the seed of a seat that recorded its hash first


def recorded_as(record: HandRecord, seed: ClientSeedRecord) -> Recorded:
    """What a contribution is to the seat's record; another seed (or hash) for the seat is a
    conflict, and a version 3 seed that does not match the seat's recorded hash is refused."""
    recorded = next((s for s in record.client_seeds if s.seat == seed.seat), None)
    if recorded is None:
        return Recorded.NEW
    if recorded == seed or (
        not seed.revealed
        and recorded.client_seed_hash == seed.client_seed_hash
        and recorded.player_id == seed.player_id
    ):
        return Recorded.ALREADY
    if (
        record.opens_per_position
        and seed.revealed
        and not recorded.revealed
        and recorded.player_id == seed.player_id
    ):
        if recorded.client_seed_hash != seed.client_seed_hash:
            raise FailedPrecondition(
                "CLIENT_SEED_HASH_MISMATCH",
                "the client seed does not match the hash recorded for this seat",
                {"hand_id": record.hand_id, "seat": str(seed.seat)},
            )
        return Recorded.REVEAL
    raise AlreadyExists(
        "IDEMPOTENCY_CONFLICT",
        "this seat already contributed another client seed",
        {"hand_id": record.hand_id, "seat": str(seed.seat)},
    )


def with_seeds(record: HandRecord, seeds: Sequence[ClientSeedRecord]) -> HandRecord:
    """The record with these contributions replacing the seats' earlier ones."""
    by_seat = {s.seat: s for s in record.client_seeds}
    by_seat.update({s.seat: s for s in seeds})
    return dataclasses.replace(record, client_seeds=tuple(by_seat[seat] for seat in sorted(by_seat)))
