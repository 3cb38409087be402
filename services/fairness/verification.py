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

from services.fairness.deck_commitment import (
    HASH_BYTES,
    SALT_BYTES,
    TREE_DEPTH,
    CardOpening,
    client_seed_hash,
    commitment_v3,
    deal_order,
    opening_fault,
)
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
    # Version 3.
    OPENING = "OPENING"
    PERMUTATION = "PERMUTATION"
    NOT_OPENED = "NOT_OPENED"
    DUPLICATE_CARD = "DUPLICATE_CARD"
    CLIENT_SEED_HASH = "CLIENT_SEED_HASH"


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
class SeatSeedHash:
    """Version 3: the client-seed hash a seat recorded before the seal (step 3), as published; a seat
    with a hash and no seed in `PublishedHand.client_seeds` withheld its seed."""

    seat: int
    client_seed_hash: str


@dataclass(frozen=True)
class PublishedHand:
    """What a reveal publishes: enough to check the commitment and recompute the deck.

    Version 1 needs the first five fields; version 2 also the table and hand ids, the sequence, the
    previous commitment and the seed's hash, all of which its commitment binds; version 3 also the
    deck root its commitment binds, the openings of the positions the reader saw, and every seat's
    client-seed hash (`client_seeds` holds only the seeds that went into the deal).
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
    deck_root: str = ""
    openings: tuple[CardOpening, ...] = ()
    client_seed_hashes: tuple[SeatSeedHash, ...] = ()


@dataclass(frozen=True)
class VerificationResult:
    """The verdict: passed, or the first mismatch; with what the verifier computed."""

    first_mismatch: Mismatch | None
    computed_commitment: str
    deck: tuple[int, ...]
    dealt_cards_checked: int
    # Version 3: how many openings were checked against the commitment (all of them on PASS).
    openings_checked: int = 0

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
    as values published before versions existed are. Version 3: every seat's client-seed hash is
    kept to check its seed against; a seat listed with its hash and no seed gave the hash and
    withheld the seed: it was left out of the deal, and so is it here (not a seed of 0 bytes)."""
    version_3 = values.shuffle_version == 3
    return PublishedHand(
        server_seed=server_seed,
        client_seeds=tuple(
            SeatSeed(int(s.seat), bytes(s.client_seed))
            for s in values.client_seeds
            if not (version_3 and not s.client_seed and getattr(s, "client_seed_hash", ""))
        ),
        client_seed_hashes=tuple(
            SeatSeedHash(int(s.seat), s.client_seed_hash)
            for s in values.client_seeds
            if version_3 and getattr(s, "client_seed_hash", "")
        ),
        nonce=published_hex(values.nonce, "nonce"),
        commitment=values.commitment,
        shuffle_version=values.shuffle_version or 1,
        table_id=values.table_id,
        hand_id=values.hand_id,
        sequence=int(values.sequence),
        previous_commitment=values.previous_commitment,
        server_seed_hash=values.server_seed_hash,
        deck_root=getattr(values, "deck_root", ""),
        openings=openings_from(getattr(values, "openings", ())),
    )


def openings_from(values: Iterable[Any]) -> tuple[CardOpening, ...]:
    """Version 3 openings as the API carries them (`CardOpening` messages)."""
    return tuple(
        CardOpening(
            int(o.deal_position),
            int(o.committed_position),
            int(o.card.index),
            bytes(o.salt),
            tuple(bytes(h) for h in o.proof),
        )
        for o in values
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
        bad_seat = _seat_fault(seed.seat, seats, f"seat {seed.seat} is listed twice", "one seed per seat")
        if bad_seat is not None:
            return bad_seat
        if not 1 <= len(seed.client_seed) <= CLIENT_SEED_MAX_BYTES:
            return _bad(
                "client_seeds",
                f"the seed of seat {seed.seat} must be 1 to {CLIENT_SEED_MAX_BYTES} bytes",
                f"1..{CLIENT_SEED_MAX_BYTES}",
                len(seed.client_seed),
            )
    if hand.shuffle_version == 3:
        bad = _malformed_seed_hashes(hand)
        if bad is not None:
            return bad
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
    if hand.shuffle_version == 2:
        return None
    if not _is_digest(hand.deck_root):
        return _bad("deck_root", "must be 64 hex digits", "64 hex digits", _shown(hand.deck_root))
    return _malformed_openings(hand.openings)


def _seat_fault(seat: int, seen: set[int], twice: str, expected: str) -> Mismatch | None:
    """A client-seed entry's seat outside 0..1023 or already `seen`; otherwise it is added to `seen`."""
    if not 0 <= seat <= MAX_SEAT:
        return _bad("client_seeds", f"seat {seat} is outside 0..{MAX_SEAT}", f"0..{MAX_SEAT}", seat)
    if seat in seen:
        return _bad("client_seeds", twice, expected, seat)
    seen.add(seat)
    return None


def _malformed_seed_hashes(hand: PublishedHand) -> Mismatch | None:
    """Version 3: every seat's client-seed hash has its shape, and every seed in the deal has one (a
    hash with no seed is a withheld seat, which is fine)."""
    hashed: set[int] = set()
    for entry in hand.client_seed_hashes:
        twice = f"the hash of seat {entry.seat} is listed twice"
        bad_seat = _seat_fault(entry.seat, hashed, twice, "one hash per seat")
        if bad_seat is not None:
            return bad_seat
        if not _is_digest(entry.client_seed_hash):
            return _bad(
                "client_seeds",
                f"the client_seed_hash of seat {entry.seat} must be 64 hex digits",
                "64 hex digits",
                _shown(entry.client_seed_hash),
            )
    for seed in hand.client_seeds:
        if seed.seat not in hashed:
            return _bad(
                "client_seeds",
                f"the seed of seat {seed.seat} comes without its client_seed_hash",
                "64 hex digits",
                "''",
            )
    return None


def _malformed_openings(openings: Sequence[CardOpening]) -> Mismatch | None:
    positions: set[int] = set()
    for opening in openings:
        i = opening.deal_position
        if not all(0 <= v < DECK_SIZE for v in (i, opening.committed_position, opening.card)):
            return _bad(
                "openings",
                "deal position, committed position and card are each 0..51",
                "0..51",
                f"{i}, {opening.committed_position}, {opening.card}",
            )
        if i in positions:
            return _bad("openings", f"deal position {i} is opened twice", "each position once", i)
        positions.add(i)
        if len(opening.salt) != SALT_BYTES:
            return _bad(
                "openings",
                f"the salt of deal position {i} must be {SALT_BYTES} bytes",
                "32",
                len(opening.salt),
            )
        if len(opening.proof) != TREE_DEPTH or any(len(h) != HASH_BYTES for h in opening.proof):
            return _bad(
                "openings",
                f"the proof of deal position {i} must be {TREE_DEPTH} hashes of {HASH_BYTES} bytes",
                f"{TREE_DEPTH} x {HASH_BYTES} bytes",
                [len(h) for h in opening.proof],
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
    if hand.shuffle_version == 3:
        return _verify_version_3(hand, dealt)
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


def _seed_hash_mismatch(hand: PublishedHand) -> Mismatch | None:
    seed_hash = commitment_of(hand.server_seed)
    if hmac.compare_digest(seed_hash, hand.server_seed_hash.lower()):
        return None
    return Mismatch(
        MismatchKind.SERVER_SEED_HASH,
        "SHA-256 of the server seed is not the server seed hash published before the deal",
        expected=hand.server_seed_hash.lower(),
        actual=seed_hash,
    )


def _client_seed_hash_mismatch(hand: PublishedHand) -> Mismatch | None:
    """Version 3: each seed in the deal must give the hash its seat recorded before the seal (step 3),
    so the hash-first guarantee is checked here and does not rest on each client keeping the hashes."""
    recorded = {entry.seat: entry.client_seed_hash.lower() for entry in hand.client_seed_hashes}
    for seed in sorted(hand.client_seeds, key=lambda s: s.seat):
        computed = client_seed_hash(hand.commitment.lower(), seed.seat, seed.client_seed)
        if not hmac.compare_digest(computed, recorded[seed.seat]):
            return Mismatch(
                MismatchKind.CLIENT_SEED_HASH,
                f"the client seed of seat {seed.seat} does not give the hash recorded for that seat "
                "before the seal",
                expected=recorded[seed.seat],
                actual=computed,
            )
    return None


def _verify_version_3(hand: PublishedHand, dealt: Sequence[DealtCard]) -> VerificationResult:
    """Version 3: the seed's hash, the commitment with the deck root, each client seed against its
    seat's recorded hash, each opening against the deal order and the root, then each dealt card
    against the opening of its deal position. No verdict depends on a card the reader was not given
    an opening of, and no deck is returned."""
    binding = HandBinding(
        hand.table_id, hand.hand_id, hand.sequence, hand.previous_commitment.lower(), hand.nonce
    )
    computed = commitment_v3(hand.server_seed_hash.lower(), binding, hand.deck_root.lower())
    mismatch = _seed_hash_mismatch(hand)
    if mismatch is None and not hmac.compare_digest(computed, hand.commitment.lower()):
        mismatch = Mismatch(
            MismatchKind.COMMITMENT,
            "the commitment of these values is not the published commitment",
            expected=hand.commitment.lower(),
            actual=computed,
        )
    if mismatch is None:
        mismatch = _client_seed_hash_mismatch(hand)
    if mismatch is not None:
        return VerificationResult(mismatch, computed, (), 0)
    order = deal_order(hand.server_seed, hand.client_seeds, hand.nonce, hand.commitment.lower())
    root = bytes.fromhex(hand.deck_root)
    opened: dict[int, CardOpening] = {}
    holders: dict[int, int] = {}
    for checked, opening in enumerate(sorted(hand.openings, key=lambda o: o.deal_position)):
        i = opening.deal_position
        fault = opening_fault(opening, order, root)
        if fault == "PERMUTATION":
            mismatch = Mismatch(
                MismatchKind.PERMUTATION,
                f"the seeds deal position {i} from committed position {order[i]}, "
                f"not {opening.committed_position}",
                position=i,
                expected=str(order[i]),
                actual=str(opening.committed_position),
            )
        elif fault == "OPENING":
            mismatch = Mismatch(
                MismatchKind.OPENING,
                f"the opening of deal position {i} ({card_text(opening.card)}) does not lead to the deck root",
                position=i,
                expected=hand.deck_root.lower(),
                actual=card_text(opening.card),
            )
        elif opening.card in holders:
            mismatch = Mismatch(
                MismatchKind.DUPLICATE_CARD,
                f"deal positions {holders[opening.card]} and {i} both hold {card_text(opening.card)}",
                position=i,
                expected="52 distinct cards",
                actual=card_text(opening.card),
            )
        if mismatch is not None:
            return VerificationResult(mismatch, computed, (), 0, checked)
        holders[opening.card] = i
        opened[i] = opening
    count = len(opened)
    seen: set[int] = set()
    for checked, item in enumerate(dealt, start=1):
        mismatch = _opened_card_mismatch(item, seen, opened)
        if mismatch is not None:
            return VerificationResult(mismatch, computed, (), checked, count)
        seen.add(item.position)
    return VerificationResult(None, computed, (), len(dealt), count)


def _opened_card_mismatch(item: DealtCard, seen: set[int], opened: dict[int, CardOpening]) -> Mismatch | None:
    """A dealt card the reader gives against the opening of its deal position (version 3)."""
    if not 0 <= item.position < DECK_SIZE or not 0 <= item.card < DECK_SIZE:
        return Mismatch(
            MismatchKind.DEALT_CARD_INVALID,
            "a dealt card names a position or a card outside 0..51",
            position=item.position if 0 <= item.position < DECK_SIZE else 0,
            expected="0..51",
            actual=f"position {item.position}, card {item.card}",
        )
    if item.position in seen:
        return Mismatch(
            MismatchKind.DEALT_CARD_INVALID,
            f"deal position {item.position} is listed twice",
            position=item.position,
            expected="each position once",
            actual=card_text(item.card),
        )
    opening = opened.get(item.position)
    if opening is None:
        return Mismatch(
            MismatchKind.NOT_OPENED,
            f"deal position {item.position} is not among the positions opened to you",
            position=item.position,
            expected="an opened position",
            actual=str(item.position),
        )
    if opening.card != item.card:
        return Mismatch(
            MismatchKind.DEALT_CARD,
            f"deal position {item.position} was committed as {card_text(opening.card)}, "
            f"but {card_text(item.card)} was dealt",
            position=item.position,
            expected=card_text(opening.card),
            actual=card_text(item.card),
        )
    return None


_UNREADABLE = {
    "server_seed": ("seed", "derived or opened"),
    "deck_secret": ("deck secret", "opened"),
}


def unreadable_stored(part: str) -> VerificationResult:
    """By hand id: a stored value the check needs cannot be read (a damaged row, or its key is no
    longer configured): the seed (`server_seed`; an ended row whose seed is missing too), or version
    3's deck secret (`deck_secret`), so no card of the hand can be checked. Answered as a stored hand
    whose values cannot give a deck is: MALFORMED, and nothing else is checked."""
    what, done = _UNREADABLE[part]
    return VerificationResult(
        _bad(
            part,
            f"the hand's stored {what} cannot be read (a damaged row, or its key is no longer "
            f"configured), so none of its cards can be {done}",
            f"the {what} of this hand",
            "unreadable",
        ),
        "",
        (),
        0,
    )


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
