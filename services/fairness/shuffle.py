"""The versioned, deterministic shuffle of `docs/fairness.md`: seed commitment, key derivation, DRBG, deck.

This module needs nothing but `hashlib` and `hmac` so that anyone can run it, and the `verify`
command, from published values alone. It never draws randomness of its own: the same inputs always
give the same deck. Changing anything observable here is a new shuffle version, never an edit of an
old one: version 1 (commitment = SHA-256 of the seed) and version 2 (a commitment that binds the
seed's hash, the version, the table and hand, the chain position, the nonce and the previous link,
and a deck key that binds that commitment) are both kept so that every hand keeps verifying.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

# The version new hands are dealt with; every version listed stays verifiable forever. Version 3
# (`deck_commitment.py`) uses this module's steps 2 to 6 with its own labels to derive the deal order.
SHUFFLE_VERSION = 3
SUPPORTED_VERSIONS = frozenset({1, 2, 3})
DECK_SIZE = 52
SEED_BYTES = 32
NONCE_BYTES = 16
CLIENT_SEED_MAX_BYTES = 64
MAX_SEAT = 1023
# Table and hand ids bound by a version 2 commitment: 1 to 128 characters, none a control character.
MAX_ID_CHARACTERS = 128
# The previous commitment of the first hand of a table: there is no earlier hand to point at.
GENESIS_COMMITMENT = "0" * 64

# Domain-separation labels (ASCII, no terminator) so no value of one step, or of one version, can be
# replayed in another.
TAG_CLIENT_SEEDS = b"poker-fairness/v1/client-seeds"
TAG_DECK_KEY = b"poker-fairness/v1/deck-key"
TAG_STREAM = b"poker-fairness/v1/stream"
TAG_COMMITMENT_V2 = b"poker-fairness/v2/commitment"
_TAGS = {
    1: (TAG_CLIENT_SEEDS, TAG_DECK_KEY, TAG_STREAM),
    2: (b"poker-fairness/v2/client-seeds", b"poker-fairness/v2/deck-key", b"poker-fairness/v2/stream"),
    3: (b"poker-fairness/v3/client-seeds", b"poker-fairness/v3/deck-key", b"poker-fairness/v3/stream"),
}

RANKS = "23456789TJQKA"
SUITS = "cdhs"


class ShuffleInputError(ValueError):
    """An input has the wrong size or shape for the shuffle version (seed length, seat, nonce...)."""


@dataclass(frozen=True, order=True)
class SeatSeed:
    """One player's client seed and the seat it belongs to; seeds enter the shuffle by seat."""

    seat: int
    client_seed: bytes


def card_text(index: int) -> str:
    """`2c` for 0 ... `As` for 51: rank = index // 4 (2..A), suit = index % 4 (c, d, h, s)."""
    if not 0 <= index < DECK_SIZE:
        raise ShuffleInputError(f"a card index is 0..51, got {index}")
    return RANKS[index // 4] + SUITS[index % 4]


def card_index(text: str) -> int:
    """The inverse of `card_text`: `As` -> 51."""
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ShuffleInputError(f"a card is a rank of {RANKS} and a suit of {SUITS}, got {text!r}")
    return 4 * RANKS.index(text[0]) + SUITS.index(text[1])


def commitment_of(server_seed: bytes) -> str:
    """Lower-case hex SHA-256 of the seed: the whole commitment of version 1, and the
    `server_seed_hash` that a version 2 commitment binds."""
    return hashlib.sha256(server_seed).hexdigest()


server_seed_hash = commitment_of


@dataclass(frozen=True)
class HandBinding:
    """What a version 2 commitment binds besides the seed's hash: published before the deal."""

    table_id: str
    hand_id: str
    sequence: int
    previous_commitment: str
    nonce: bytes


def bound_id(value: str, name: str) -> bytes:
    if not 1 <= len(value) <= MAX_ID_CHARACTERS or not value.isprintable():
        raise ShuffleInputError(f"the {name} is 1..{MAX_ID_CHARACTERS} characters, none a control character")
    encoded = value.encode("utf-8")
    return len(encoded).to_bytes(4, "big") + encoded


def digest_bytes(value: str, name: str) -> bytes:
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise ShuffleInputError(f"the {name} is 64 lower-case hex digits")
    return bytes.fromhex(value)


def commitment_v2(seed_hash: str, binding: HandBinding, version: int = 2) -> str:
    """The version 2 commitment (spec step 1): SHA-256 over the label, the version, the table and
    hand ids (length-prefixed UTF-8), the chain sequence, the previous commitment, the nonce and the
    SHA-256 of the seed."""
    if len(binding.nonce) != NONCE_BYTES:
        raise ShuffleInputError(f"the nonce is {NONCE_BYTES} bytes, got {len(binding.nonce)}")
    if not 1 <= binding.sequence < 1 << 63:
        raise ShuffleInputError("the sequence is 1 or more")
    digest = hashlib.sha256(TAG_COMMITMENT_V2)
    digest.update(version.to_bytes(4, "big"))
    digest.update(bound_id(binding.table_id, "table id"))
    digest.update(bound_id(binding.hand_id, "hand id"))
    digest.update(binding.sequence.to_bytes(8, "big"))
    digest.update(digest_bytes(binding.previous_commitment, "previous commitment"))
    digest.update(binding.nonce)
    digest.update(digest_bytes(seed_hash, "server seed hash"))
    return digest.hexdigest()


def client_seeds_digest(client_seeds: Iterable[SeatSeed], version: int = 1) -> bytes:
    """SHA-256 over the client seeds in ascending seat order, each length-prefixed (spec step 2)."""
    ordered = sorted(client_seeds)
    seats = [s.seat for s in ordered]
    if len(set(seats)) != len(seats):
        raise ShuffleInputError("each seat contributes at most one client seed")
    digest = hashlib.sha256(_tags(version)[0])
    digest.update(len(ordered).to_bytes(4, "big"))
    for item in ordered:
        if not 0 <= item.seat <= MAX_SEAT:
            raise ShuffleInputError(f"a seat is 0..{MAX_SEAT}, got {item.seat}")
        if not 1 <= len(item.client_seed) <= CLIENT_SEED_MAX_BYTES:
            raise ShuffleInputError(f"a client seed is 1..{CLIENT_SEED_MAX_BYTES} bytes")
        digest.update(item.seat.to_bytes(4, "big"))
        digest.update(len(item.client_seed).to_bytes(4, "big"))
        digest.update(item.client_seed)
    return digest.digest()


def _tags(version: int) -> tuple[bytes, bytes, bytes]:
    tags = _TAGS.get(version)
    if tags is None:
        raise ShuffleInputError(f"unknown shuffle version {version}")
    return tags


def derive_deck_key(
    server_seed: bytes,
    client_seeds: Iterable[SeatSeed],
    nonce: bytes,
    version: int = 1,
    commitment: str = "",
) -> bytes:
    """HKDF-SHA256 (RFC 5869): salt = nonce, IKM = seed, L = 32, info = label || client-seeds digest
    (version 1) or label || commitment || client-seeds digest (versions 2 and 3, so the deck is bound
    to the table, the hand and the chain position the commitment names)."""
    if len(server_seed) != SEED_BYTES:
        raise ShuffleInputError(f"the server seed is {SEED_BYTES} bytes, got {len(server_seed)}")
    if len(nonce) != NONCE_BYTES:
        raise ShuffleInputError(f"the nonce is {NONCE_BYTES} bytes, got {len(nonce)}")
    label = _tags(version)[1]
    bound = b"" if version == 1 else digest_bytes(commitment, "commitment")
    pseudo_random_key = hmac.digest(nonce, server_seed, "sha256")
    info = label + bound + client_seeds_digest(client_seeds, version)
    return hmac.digest(pseudo_random_key, info + b"\x01", "sha256")


def random_words(deck_key: bytes, version: int = 1) -> Iterator[int]:
    """The DRBG: HMAC-SHA256(key, label || u64be(i)) for i = 0, 1, ... read as big-endian u32 words."""
    return labelled_words(deck_key, _tags(version)[2])


def labelled_words(key: bytes, label: bytes) -> Iterator[int]:
    """The DRBG of step 4 under any label (version 3 also shuffles its secret deck with it)."""
    counter = 0
    while True:
        block = hmac.digest(key, label + counter.to_bytes(8, "big"), "sha256")
        for offset in range(0, len(block), 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
        counter += 1


def uniform_below(bound: int, words: Iterator[int]) -> int:
    """A uniform integer in [0, bound) by rejection sampling: words at or above the largest multiple
    of `bound` below 2**32 are discarded, so every result is equally likely (no modulo bias)."""
    if not 1 <= bound <= 1 << 32:
        raise ShuffleInputError(f"the bound is 1..2**32, got {bound}")
    limit = (1 << 32) - ((1 << 32) % bound)
    for word in words:
        if word < limit:
            return word % bound
    raise AssertionError("the DRBG stream is infinite")  # pragma: no cover


def shuffle_deck(
    server_seed: bytes,
    client_seeds: Iterable[SeatSeed] = (),
    nonce: bytes = b"",
    version: int = 1,
    commitment: str = "",
) -> tuple[int, ...]:
    """The deck of a hand: Fisher-Yates from the top index down, fed by the DRBG; deck[0] is dealt
    first. Versions 2 and 3 also need the hand's commitment, which the deck key binds. Under version 3
    the result is the deal order: the committed positions in the order they are dealt."""
    words = random_words(derive_deck_key(server_seed, client_seeds, nonce, version, commitment), version)
    return fisher_yates(words)


def fisher_yates(words: Iterator[int]) -> tuple[int, ...]:
    """Step 6: [0, 1, ..., 51] shuffled from the top index down, each swap partner by step 5."""
    deck = list(range(DECK_SIZE))
    for i in range(DECK_SIZE - 1, 0, -1):
        j = uniform_below(i + 1, words)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def deck_text(deck: Sequence[int]) -> str:
    """The deck as space-separated card texts, for people and for the known-answer vectors."""
    return " ".join(card_text(c) for c in deck)
