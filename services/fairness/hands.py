"""A hand's fairness record and its lifecycle rules: what may happen in which state. No I/O.

States move only forward: COMMITTED -> SEALED -> FINISHED, or COMMITTED / SEALED -> VOIDED. Player
entropy is accepted only while COMMITTED; the seed is shown only once FINISHED or VOIDED.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

from service_runtime.errors import AlreadyExists, FailedPrecondition, NotFound, PermissionDenied
from services.fairness.deck_commitment import CardOpening
from services.fairness.shuffle import SeatSeed
from services.fairness.verification import ChainLink, PublishedHand, SeatSeedHash
from services.fairness.visibility import Visibility


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
    """A player's client seed as the table relayed it. Version 3: `client_seed_hash` is recorded
    first when the player sent only the hash, and the seed (empty until then) at the seal."""

    seat: int
    player_id: str
    client_seed: bytes
    client_seed_hash: str = ""

    @property
    def revealed(self) -> bool:
        return bool(self.client_seed)


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
    # The players dealt in (named at the commitment or the seal): they alone, with admins, read
    # what the end of the hand reveals. Never shown to other callers.
    participants: tuple[str, ...] = ()
    # A house-game round: the hand exists only for its participants and admins.
    participants_only: bool = False
    # A private room's hand (as the table read its room at the commitment): likewise.
    private_room: bool = False
    # Version 3: the Merkle root over the committed deck, bound by the commitment.
    deck_root: str = ""
    # Version 3, once ended: which deal positions were public and which each participant saw.
    visibility: Visibility = field(default_factory=Visibility)

    @property
    def ended(self) -> bool:
        return self.state in ENDED_STATES

    @property
    def for_participants_only(self) -> bool:
        """The hand exists only for its participants and admins: a house-game round or a private
        room's hand."""
        return self.participants_only or self.private_room

    @property
    def seat_seeds(self) -> tuple[SeatSeed, ...]:
        """The seeds that go into the deal: a version 3 seat that gave only a hash is left out."""
        return tuple(SeatSeed(s.seat, s.client_seed) for s in self.client_seeds if s.revealed)

    @property
    def never_dealt(self) -> bool:
        """Voided before the seal: no deck was ever derived or handed to the table."""
        return self.state is HandState.VOIDED and self.sealed_at is None

    @property
    def opens_per_position(self) -> bool:
        """Version 3: the reveal is openings of the positions each reader saw, not the seed's deck."""
        return self.shuffle_version == 3

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
        """True when the hand must move to `outcome`; False when it already did (an idempotent retry).
        RevealHand is keyed by the hand id, so another outcome for an ended hand is that request with
        a field changed: a conflict."""
        if self.ended:
            if self.state.value == outcome.value:
                return False
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT",
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
class Reader:
    """Who reads a hand: an admin reads every hand in full; a player (by id) reads the public record
    of the hands they may know of and the reveal of the hands they played; anyone else (a service,
    which only deals) is a stranger to every hand."""

    player_id: str = ""
    admin: bool = False

    def played(self, hand: HandRecord) -> bool:
        return self.admin or (bool(self.player_id) and self.player_id in hand.participants)

    def may_know_of(self, hand: HandRecord) -> bool:
        """A participants-only hand (a house-game round, a private room's hand) does not exist for
        anyone else."""
        return not hand.for_participants_only or self.played(hand)

    def check_may_know_of(self, hand: HandRecord) -> None:
        if not self.may_know_of(hand):
            raise NotFound("HAND_NOT_FOUND", "no hand with this id", {"hand_id": hand.hand_id})

    def positions_of(self, hand: HandRecord) -> frozenset[int]:
        """The deal positions of a version 3 hand whose openings this reader gets. None of a hand
        voided before the seal, admins included: no card of it was dealt, so there is nothing to
        dispute, and a card nobody was dealt is opened to nobody who need not see it."""
        if hand.never_dealt:
            return frozenset()
        return hand.visibility.positions_for(
            admin=self.admin, participant=self.player_id if self.played(hand) else None
        )

    def check_may_read_reveal(self, hand: HandRecord) -> None:
        """Versions 1 and 2: the participants and admins (the seed gives every card). Version 3:
        anyone who may know of the hand, since each reader gets only the openings they may see."""
        if hand.opens_per_position:
            self.check_may_know_of(hand)
        else:
            self.check_played(hand)

    def check_played(self, hand: HandRecord) -> None:
        """The seed and deck of a version 1 or 2 hand give every folded hole card of it: only the
        players dealt in (and admins) may have them."""
        self.check_may_know_of(hand)
        if not self.played(hand):
            raise PermissionDenied(
                "NOT_YOUR_RESOURCE",
                "only the hand's participants may read its reveal",
                {"hand_id": hand.hand_id},
            )


ADMIN_READER = Reader(admin=True)


@dataclass(frozen=True)
class DealtHand:
    """A hand with its deck; only ever returned to the service role."""

    hand: HandRecord
    deck: tuple[int, ...] = field(repr=False)


@dataclass(frozen=True)
class RevealedHand:
    """An ended hand with its now public seed and, for versions 1 and 2, its deck; for version 3
    the openings of the positions the reader saw, and never the deck."""

    hand: HandRecord
    server_seed: bytes = field(repr=False)
    deck: tuple[int, ...] = field(repr=False)
    openings: tuple[CardOpening, ...] = field(default=(), repr=False)

    def published(self) -> PublishedHand:
        return published_hand(self.hand, self.server_seed, self.openings)


def published_hand(
    hand: HandRecord, server_seed: bytes, openings: tuple[CardOpening, ...] = ()
) -> PublishedHand:
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
        deck_root=hand.deck_root,
        openings=openings,
        client_seed_hashes=tuple(SeatSeedHash(s.seat, s.client_seed_hash) for s in hand.client_seeds)
        if hand.opens_per_position
        else (),
    )
