"""The verifier: checks a hand's commitment, recomputes its deck and checks every dealt card, and
checks a table's commitment chain. Pure (hashlib and hmac through `shuffle`), so the `verify`
command can run anywhere from published values alone.
"""

from __future__ import annotations

import enum
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from services.fairness.shuffle import (
    CLIENT_SEED_MAX_BYTES,
    DECK_SIZE,
    GENESIS_COMMITMENT,
    MAX_ID_CHARACTERS,
    MAX_SEAT,
    NONCE_BYTES,
    SEED_BYTES,
    SUPPORTED_VERSIONS,
    HandBinding,
    SeatSeed,
    ShuffleInputError,
    card_text,
    commitment_of,
    commitment_v2,
    shuffle_deck,
)

_HEX_DIGITS = frozenset("0123456789abcdef")


class MismatchKind(enum.StrEnum):
    """Which check failed; the names are the proto `MismatchKind` values without their prefix."""

    COMMITMENT = "COMMITMENT"
    DEALT_CARD = "DEALT_CARD"
    DEALT_CARD_INVALID = "DEALT_CARD_INVALID"
    CHAIN_LINK = "CHAIN_LINK"
    MALFORMED = "MALFORMED"
    SERVER_SEED_HASH = "SERVER_SEED_HASH"
    SHOWN_BEFORE_DEAL = "SHOWN_BEFORE_DEAL"


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
    """What a reveal publishes: enough to check the commitment and recompute the deck.

    Version 1 needs the first five fields; version 2 also the table and hand ids, the sequence, the
    previous commitment and the seed's hash, all of which its commitment binds.
    """

    server_seed: bytes
    client_seeds: tuple[SeatSeed, ...]
    nonce: bytes
    commitment: str
    shuffle_version: int = 1
    table_id: str = ""
    hand_id: str = ""
    sequence: int = 0
    previous_commitment: str = ""
    server_seed_hash: str = ""


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


class MalformedValue(ValueError):
    """A published value cannot even be read (text that is not hex, for one): the verdict is
    MALFORMED, exactly as for a value of the wrong size."""

    def __init__(self, field: str, description: str, expected: str, actual: str) -> None:
        super().__init__(description)
        self.mismatch = Mismatch(
            MismatchKind.MALFORMED, f"{field}: {description}", expected=expected, actual=actual
        )

    def result(self) -> VerificationResult:
        return VerificationResult(self.mismatch, "", (), 0)


def published_hex(value: str, field: str) -> bytes:
    """Hex text of a published byte string (either case, two digits per byte), or `MalformedValue`;
    its length is checked with the other shapes by `malformed`."""
    if len(value) % 2 or any(c not in _HEX_DIGITS for c in value.lower()):
        raise MalformedValue(field, "must be hex digits, two per byte", "hex", _shown(value))
    return bytes.fromhex(value)


def published_hand(server_seed: bytes, values: Any) -> PublishedHand:
    """The verifier's `PublishedHand` from the published values as the API carries them: a reveal's
    commitment record (`Reveal.commitment`) or VerifyHand's `PublishedHand`, which have the same field
    names. A nonce that is not hex raises `MalformedValue`; version 0 (proto3's "not set") is version 1,
    as values published before versions existed are."""
    return PublishedHand(
        server_seed=server_seed,
        client_seeds=tuple(SeatSeed(int(s.seat), bytes(s.client_seed)) for s in values.client_seeds),
        nonce=published_hex(values.nonce, "nonce"),
        commitment=values.commitment,
        shuffle_version=values.shuffle_version or 1,
        table_id=values.table_id,
        hand_id=values.hand_id,
        sequence=int(values.sequence),
        previous_commitment=values.previous_commitment,
        server_seed_hash=values.server_seed_hash,
    )


def _shown(value: str) -> str:
    """A bad value as text for a person, cut short so a huge input cannot flood a report."""
    return repr(value[:80] + ("..." if len(value) > 80 else ""))


def dealt_from_prefix(prefix: Iterable[int]) -> tuple[DealtCard, ...]:
    """The deck prefix a game used, as dealt cards at positions 0, 1, 2, ..."""
    return tuple(DealtCard(position, card) for position, card in enumerate(prefix))


def _bad(field: str, description: str, expected: str, actual: object) -> Mismatch:
    return Mismatch(MismatchKind.MALFORMED, f"{field}: {description}", expected=expected, actual=str(actual))


def _is_digest(value: str) -> bool:
    return len(value) == 64 and all(c in _HEX_DIGITS for c in value.lower())


def _bad_id(value: str) -> bool:
    return not 1 <= len(value) <= MAX_ID_CHARACTERS or not value.isprintable()


def malformed(hand: PublishedHand) -> Mismatch | None:
    """The first published value with a bad shape, in the order of the spec's table; None if none."""
    if hand.shuffle_version not in SUPPORTED_VERSIONS:
        known = ",".join(str(v) for v in sorted(SUPPORTED_VERSIONS))
        return _bad("shuffle_version", "not a version this verifier knows", known, hand.shuffle_version)
    if len(hand.server_seed) != SEED_BYTES:
        return _bad("server_seed", f"must be {SEED_BYTES} bytes", str(SEED_BYTES), len(hand.server_seed))
    if len(hand.nonce) != NONCE_BYTES:
        return _bad("nonce", f"must be {NONCE_BYTES} bytes", str(NONCE_BYTES), len(hand.nonce))
    if not _is_digest(hand.commitment):
        return _bad("commitment", "must be 64 hex digits", "64 hex digits", _shown(hand.commitment))
    seats: set[int] = set()
    for seed in hand.client_seeds:
        if not 0 <= seed.seat <= MAX_SEAT:
            return _bad(
                "client_seeds", f"seat {seed.seat} is outside 0..{MAX_SEAT}", f"0..{MAX_SEAT}", seed.seat
            )
        if seed.seat in seats:
            return _bad("client_seeds", f"seat {seed.seat} is listed twice", "one seed per seat", seed.seat)
        seats.add(seed.seat)
        if not 1 <= len(seed.client_seed) <= CLIENT_SEED_MAX_BYTES:
            return _bad(
                "client_seeds",
                f"the seed of seat {seed.seat} must be 1 to {CLIENT_SEED_MAX_BYTES} bytes",
                f"1..{CLIENT_SEED_MAX_BYTES}",
                len(seed.client_seed),
            )
    if hand.shuffle_version == 1:
        return None
    if _bad_id(hand.table_id):
        return _bad(
            "table_id",
            f"must be 1 to {MAX_ID_CHARACTERS} characters, none a control character",
            "",
            _shown(hand.table_id),
        )
    if _bad_id(hand.hand_id):
        return _bad(
            "hand_id",
            f"must be 1 to {MAX_ID_CHARACTERS} characters, none a control character",
            "",
            _shown(hand.hand_id),
        )
    if not 1 <= hand.sequence < 1 << 63:
        return _bad("sequence", "must be 1 or more", ">= 1", hand.sequence)
    if not _is_digest(hand.previous_commitment):
        return _bad(
            "previous_commitment", "must be 64 hex digits", "64 hex digits", _shown(hand.previous_commitment)
        )
    if not _is_digest(hand.server_seed_hash):
        return _bad(
            "server_seed_hash", "must be 64 hex digits", "64 hex digits", _shown(hand.server_seed_hash)
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
    """Check the published values' shapes, the commitment (and for version 2 the seed's hash and
    everything the commitment binds), recompute the deck and check each dealt card; stop at the
    first mismatch. The deck is recomputed even when the commitment fails, so a person can see what
    the values give."""
    bad = malformed(hand)
    if bad is not None:
        return VerificationResult(bad, "", (), 0)
    commitment = hand.commitment.lower()
    seed_hash = commitment_of(hand.server_seed)
    mismatch: Mismatch | None = None
    if hand.shuffle_version == 1:
        computed = seed_hash
    else:
        computed = commitment_v2(
            hand.server_seed_hash.lower(),
            HandBinding(
                hand.table_id, hand.hand_id, hand.sequence, hand.previous_commitment.lower(), hand.nonce
            ),
            hand.shuffle_version,
        )
        if not hmac.compare_digest(seed_hash, hand.server_seed_hash.lower()):
            mismatch = Mismatch(
                MismatchKind.SERVER_SEED_HASH,
                "SHA-256 of the server seed is not the server seed hash published before the deal",
                expected=hand.server_seed_hash.lower(),
                actual=seed_hash,
            )
    try:
        deck = shuffle_deck(hand.server_seed, hand.client_seeds, hand.nonce, hand.shuffle_version, commitment)
    except ShuffleInputError as exc:  # pragma: no cover - `malformed` refuses every such input first
        return VerificationResult(Mismatch(MismatchKind.MALFORMED, str(exc)), computed, (), 0)
    if mismatch is None and not hmac.compare_digest(computed, commitment):
        what = "SHA-256 of the server seed" if hand.shuffle_version == 1 else "the commitment of these values"
        mismatch = Mismatch(
            MismatchKind.COMMITMENT,
            f"{what} is not the published commitment",
            expected=commitment,
            actual=computed,
        )
    if mismatch is not None:
        return VerificationResult(mismatch, computed, deck, 0)
    dealt_mismatch, checked = _check_dealt(deck, dealt)
    return VerificationResult(dealt_mismatch, computed, deck, checked)


def check_shown_commitment(shown: str, published: str) -> Mismatch | None:
    """The commitment a player kept from before the deal against the one published now."""
    if not _is_digest(shown):
        return _bad("shown commitment", "must be 64 hex digits", "64 hex digits", _shown(shown))
    if not hmac.compare_digest(shown.lower(), published.lower()):
        return Mismatch(
            MismatchKind.SHOWN_BEFORE_DEAL,
            "the commitment shown before the deal is not the one published for this hand",
            expected=shown.lower(),
            actual=published,
        )
    return None


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
