"""A hand's fairness record and its lifecycle rules: what may happen in which state. No I/O.

States move only forward: COMMITTED -> SEALED -> FINISHED, or COMMITTED / SEALED -> VOIDED. Player
entropy is accepted only while COMMITTED; the seed is shown only once FINISHED or VOIDED.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

from service_runtime.errors import FailedPrecondition
from services.fairness.shuffle import SeatSeed
from services.fairness.verification import ChainLink, PublishedHand


class HandState(enum.StrEnum):
    COMMITTED = "committed"
    SEALED = "sealed"
    FINISHED = "finished"
    VOIDED = "voided"


class HandOutcome(enum.StrEnum):
    FINISHED = "finished"
    VOIDED = "voided"


ENDED_STATES = frozenset({HandState.FINISHED, HandState.VOIDED})


@dataclass(frozen=True)
class ClientSeedRecord:
    """A player's client seed as the table relayed it."""

    seat: int
    player_id: str
    client_seed: bytes


@dataclass(frozen=True)
class HandRecord:
    """The public record of a hand: everything but the seed (and the deck, which the seed gives)."""

    hand_id: str
    request_id: str
    table_id: str
    sequence: int
    commitment: str
    previous_commitment: str
    nonce: bytes
    shuffle_version: int
    deal_now: bool
    state: HandState
    client_seeds: tuple[ClientSeedRecord, ...]
    created_at: datetime
    sealed_at: datetime | None = None
    revealed_at: datetime | None = None
    # SHA-256 of the seed, published before the deal; version 2 commitments bind it, and for a
    # version 1 hand it is the commitment itself.
    server_seed_hash: str = ""

    @property
    def ended(self) -> bool:
        return self.state in ENDED_STATES

    @property
    def seat_seeds(self) -> tuple[SeatSeed, ...]:
        return tuple(SeatSeed(s.seat, s.client_seed) for s in self.client_seeds)

    def chain_link(self) -> ChainLink:
        return ChainLink(self.hand_id, self.sequence, self.commitment, self.previous_commitment)

    def check_accepts_entropy(self) -> None:
        """Entropy after the deal could steer nothing the server does not already know, but it would
        make the reveal disagree with the dealt deck, so it is refused."""
        if self.state is not HandState.COMMITTED:
            raise FailedPrecondition(
                "ENTROPY_CLOSED", "the hand was already dealt or ended", {"hand_id": self.hand_id}
            )

    def check_can_seal(self) -> None:
        if self.ended:
            raise FailedPrecondition(
                "HAND_ALREADY_REVEALED", "the hand already ended", {"hand_id": self.hand_id}
            )

    def check_can_end(self, outcome: HandOutcome) -> bool:
        """True when the hand must move to `outcome`; False when it already did (an idempotent retry)."""
        if self.ended:
            if self.state.value == outcome.value:
                return False
            raise FailedPrecondition(
                "HAND_ALREADY_REVEALED",
                f"the hand already ended as {self.state.value}",
                {"hand_id": self.hand_id, "state": self.state.value},
            )
        if outcome is HandOutcome.FINISHED and self.state is not HandState.SEALED:
            raise FailedPrecondition(
                "HAND_NOT_DEALT", "a hand that was never dealt can only be voided", {"hand_id": self.hand_id}
            )
        return True

    def check_revealed(self) -> None:
        """Nobody, whatever their role, sees the seed (or a verdict on the deck) before the end."""
        if not self.ended:
            raise FailedPrecondition(
                "HAND_NOT_FINISHED",
                "the seed is revealed only after the hand ended",
                {"hand_id": self.hand_id},
            )


@dataclass(frozen=True)
class DealtHand:
    """A hand with its deck; only ever returned to the service role."""

    hand: HandRecord
    deck: tuple[int, ...] = field(repr=False)


@dataclass(frozen=True)
class RevealedHand:
    """An ended hand with its now public seed and deck."""

    hand: HandRecord
    server_seed: bytes = field(repr=False)
    deck: tuple[int, ...] = field(repr=False)

    def published(self) -> PublishedHand:
        return published_hand(self.hand, self.server_seed)


def published_hand(hand: HandRecord, server_seed: bytes) -> PublishedHand:
    """Everything a reveal publishes about `hand`, as the verifier takes it."""
    return PublishedHand(
        server_seed=server_seed,
        client_seeds=hand.seat_seeds,
        nonce=hand.nonce,
        commitment=hand.commitment,
        shuffle_version=hand.shuffle_version,
        table_id=hand.table_id,
        hand_id=hand.hand_id,
        sequence=hand.sequence,
        previous_commitment=hand.previous_commitment,
        server_seed_hash=hand.server_seed_hash,
    )
