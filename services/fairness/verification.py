"""The verifier: checks a hand's commitment, recomputes its deck and checks every dealt card, and
checks a table's commitment chain. Pure (hashlib and hmac through `shuffle`), so the `verify`
command can run anywhere from published values alone.
"""

from __future__ import annotations

import enum
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from services.fairness.shuffle import (
    DECK_SIZE,
    GENESIS_COMMITMENT,
    NONCE_BYTES,
    SEED_BYTES,
    SUPPORTED_VERSIONS,
    SeatSeed,
    ShuffleInputError,
    card_text,
    commitment_of,
    shuffle_deck,
)


class MismatchKind(enum.StrEnum):
    """Which check failed; the names are the proto `MismatchKind` values without their prefix."""

    COMMITMENT = "COMMITMENT"
    DEALT_CARD = "DEALT_CARD"
    DEALT_CARD_INVALID = "DEALT_CARD_INVALID"
    CHAIN_LINK = "CHAIN_LINK"
    MALFORMED = "MALFORMED"


@dataclass(frozen=True)
class Mismatch:
    """The first failed check: what, where, what was expected and what was found."""

    kind: MismatchKind
    description: str
    position: int = 0
    expected: str = ""
    actual: str = ""


@dataclass(frozen=True)
class DealtCard:
    """A card a game dealt and the deck position it came from (0 = first card of the deck)."""

    position: int
    card: int


@dataclass(frozen=True)
class PublishedHand:
    """What a reveal publishes: enough to recompute the deck and check the commitment."""

    server_seed: bytes
    client_seeds: tuple[SeatSeed, ...]
    nonce: bytes
    commitment: str
    shuffle_version: int = 1


@dataclass(frozen=True)
class VerificationResult:
    """The verdict: passed, or the first mismatch; with what the verifier computed."""

    first_mismatch: Mismatch | None
    computed_commitment: str
    deck: tuple[int, ...]
    dealt_cards_checked: int

    @property
    def passed(self) -> bool:
        return self.first_mismatch is None


@dataclass(frozen=True)
class ChainLink:
    """One hand's place in its table's chain."""

    hand_id: str
    sequence: int
    commitment: str
    previous_commitment: str


def dealt_from_prefix(prefix: Iterable[int]) -> tuple[DealtCard, ...]:
    """The deck prefix a game used, as dealt cards at positions 0, 1, 2, ..."""
    return tuple(DealtCard(position, card) for position, card in enumerate(prefix))


def _malformed(hand: PublishedHand) -> Mismatch | None:
    if len(hand.server_seed) != SEED_BYTES:
        return Mismatch(
            MismatchKind.MALFORMED,
            f"the server seed must be {SEED_BYTES} bytes",
            expected=str(SEED_BYTES),
            actual=str(len(hand.server_seed)),
        )
    if len(hand.nonce) != NONCE_BYTES:
        return Mismatch(
            MismatchKind.MALFORMED,
            f"the nonce must be {NONCE_BYTES} bytes",
            expected=str(NONCE_BYTES),
            actual=str(len(hand.nonce)),
        )
    if hand.shuffle_version not in SUPPORTED_VERSIONS:
        return Mismatch(
            MismatchKind.MALFORMED,
            "the shuffle version is not one this verifier knows",
            expected=",".join(str(v) for v in sorted(SUPPORTED_VERSIONS)),
            actual=str(hand.shuffle_version),
        )
    return None


def _check_dealt(deck: Sequence[int], dealt: Sequence[DealtCard]) -> tuple[Mismatch | None, int]:
    """The first mismatch among the dealt cards, and how many cards were checked up to it."""
    seen: set[int] = set()
    for checked, item in enumerate(dealt, start=1):
        if not 0 <= item.position < DECK_SIZE or not 0 <= item.card < DECK_SIZE:
            return Mismatch(
                MismatchKind.DEALT_CARD_INVALID,
                "a dealt card names a position or a card outside 0..51",
                position=item.position if 0 <= item.position < DECK_SIZE else 0,
                expected="0..51",
                actual=f"position {item.position}, card {item.card}",
            ), checked
        if item.position in seen:
            return Mismatch(
                MismatchKind.DEALT_CARD_INVALID,
                f"deck position {item.position} is listed twice",
                position=item.position,
                expected="each position once",
                actual=card_text(item.card),
            ), checked
        seen.add(item.position)
        if deck[item.position] != item.card:
            return Mismatch(
                MismatchKind.DEALT_CARD,
                f"deck position {item.position} holds {card_text(deck[item.position])}, "
                f"but {card_text(item.card)} was dealt",
                position=item.position,
                expected=card_text(deck[item.position]),
                actual=card_text(item.card),
            ), checked
    return None, len(dealt)


def verify_hand(hand: PublishedHand, dealt: Sequence[DealtCard] = ()) -> VerificationResult:
    """Check the commitment, recompute the deck and check each dealt card; stop at the first mismatch.

    The deck is recomputed even when the commitment fails, so a person can see what the values give.
    """
    malformed = _malformed(hand)
    if malformed is not None:
        return VerificationResult(malformed, "", (), 0)
    computed = commitment_of(hand.server_seed)
    try:
        deck = shuffle_deck(hand.server_seed, hand.client_seeds, hand.nonce, hand.shuffle_version)
    except ShuffleInputError as exc:
        return VerificationResult(Mismatch(MismatchKind.MALFORMED, str(exc)), computed, (), 0)
    if not hmac.compare_digest(computed, hand.commitment.strip().lower()):
        mismatch = Mismatch(
            MismatchKind.COMMITMENT,
            "SHA-256 of the server seed is not the published commitment",
            expected=hand.commitment,
            actual=computed,
        )
        return VerificationResult(mismatch, computed, deck, 0)
    dealt_mismatch, checked = _check_dealt(deck, dealt)
    return VerificationResult(dealt_mismatch, computed, deck, checked)


def verify_chain_link(link: ChainLink, previous: ChainLink | None) -> Mismatch | None:
    """A hand's previous commitment must be its predecessor's commitment (genesis for sequence 1)."""
    if link.sequence == 1:
        expected = GENESIS_COMMITMENT
    elif previous is None or previous.sequence != link.sequence - 1:
        return Mismatch(
            MismatchKind.CHAIN_LINK,
            f"hand {link.sequence - 1} of the table, which hand {link.hand_id} points back to, is missing",
            expected=f"sequence {link.sequence - 1}",
            actual="missing" if previous is None else f"sequence {previous.sequence}",
        )
    else:
        expected = previous.commitment
    if link.previous_commitment != expected:
        return Mismatch(
            MismatchKind.CHAIN_LINK,
            f"hand {link.hand_id} does not point back to the table's previous hand",
            expected=expected,
            actual=link.previous_commitment,
        )
    return None


def verify_chain(links: Sequence[ChainLink], *, starts_at_genesis: bool = True) -> Mismatch | None:
    """Check a run of a table's chain in sequence order: no gap, no reordering, every link intact.

    With `starts_at_genesis` the run must begin at sequence 1; otherwise its first link is trusted.
    """
    previous: ChainLink | None = None
    for index, link in enumerate(links):
        if index == 0 and not starts_at_genesis:
            previous = link
            continue
        mismatch = verify_chain_link(link, previous)
        if mismatch is not None:
            return mismatch
        previous = link
    return None
