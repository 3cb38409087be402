"""What the key of a mutating fairness request binds (docs/fairness.md, "Retries"). No I/O.

CommitHand is keyed by its request id and SealHand by the hand id; each hand row keeps the SHA-256
of the request that committed it and of the one that sealed it, as the service read them, so a retry
is answered as the first only when every field is the same. (RevealHand, keyed by the hand id too,
is checked against what the row holds already: its outcome and, version 3, its visibility.)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from service_runtime.errors import AlreadyExists
from services.fairness.client_seeds import with_hash
from services.fairness.hands import ClientSeedRecord, HandRecord

_COMMIT_LABEL = "poker-fairness/commit-request/v1"
_SEAL_LABEL = "poker-fairness/seal-request/v1"


def _digest(label: str, fields: dict[str, object]) -> str:
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(f"{label}\x00{text}".encode()).hexdigest()


def _player_set(players: Iterable[str]) -> list[str]:
    """Participants are a set: their order and repeats mean nothing."""
    return sorted(set(players))


@dataclass(frozen=True)
class CommitRequest:
    """A CommitHand request as the service reads it (its request id aside, the key)."""

    table_id: str
    deal_now: bool
    participants: tuple[str, ...]
    participants_only: bool
    private_room: bool
    version: int  # 0 read as the default version it asks for

    def digest(self) -> str:
        return _digest(
            _COMMIT_LABEL,
            {
                "table_id": self.table_id,
                "deal_now": self.deal_now,
                "participant_ids": _player_set(self.participants),
                "participants_only": self.participants_only,
                "private_room": self.private_room,
                "shuffle_version": self.version,
            },
        )

    def matches_unbound(self, record: HandRecord) -> bool:
        """A hand committed before requests were recorded (migration 0006): its fields as stored,
        and the participants among the hand's (a seal may have named more since)."""
        return (
            record.shuffle_version == self.version
            and record.table_id == self.table_id
            and record.deal_now == self.deal_now
            and (record.participants_only, record.private_room) == (self.participants_only, self.private_room)
            and set(self.participants) <= set(record.participants)
        )


def check_commit_retry(record: HandRecord, recorded: str | None, request: CommitRequest) -> None:
    """IDEMPOTENCY_CONFLICT unless `request` is the one that committed the hand (`recorded`: its
    digest, None before migration 0006)."""
    same = request.matches_unbound(record) if recorded is None else recorded == request.digest()
    if not same:
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT",
            "this request id started another hand with different fields",
            {"request_id": record.request_id},
        )


@dataclass(frozen=True)
class SealRequest:
    """A SealHand request as the service reads it (its hand id aside, the key): the client seeds
    validated, the participants as given."""

    seeds: tuple[ClientSeedRecord, ...] = ()
    participants: tuple[str, ...] = ()

    @property
    def names_nothing(self) -> bool:
        """The takeover's form: a shard that holds only the hand id asks for its deck again."""
        return not self.seeds and not self.participants

    def digest(self) -> str:
        return _digest(
            _SEAL_LABEL,
            {
                "client_seeds": [
                    [s.seat, s.player_id, s.client_seed.hex()]
                    for s in sorted(self.seeds, key=lambda s: s.seat)
                ],
                "participant_ids": _player_set(self.participants),
            },
        )

    def changes_nothing(self, record: HandRecord) -> bool:
        """Every seed recorded as it is given and every player already dealt in."""
        return set(self.participants) <= set(record.participants) and all(
            with_hash(record, seed) in record.client_seeds for seed in self.seeds
        )


# A hand dealt at its commitment (`deal_now`) was sealed by it, as by a SealHand naming nothing.
SEALED_BY_COMMITMENT = SealRequest().digest()


def check_seal_retry(record: HandRecord, recorded: str | None, request: SealRequest) -> None:
    """For a hand already sealed: IDEMPOTENCY_CONFLICT unless `request` is the one that sealed it
    (`recorded`: its digest; None when sealed before migration 0006, and then a request that would
    change nothing is taken) or names nothing (the deck again)."""
    if request.names_nothing:
        return
    same = request.changes_nothing(record) if recorded is None else recorded == request.digest()
    if not same:
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT",
            "the hand was sealed by a request with other client seeds or participants",
            {"hand_id": record.hand_id},
        )
