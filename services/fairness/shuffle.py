"""The versioned, deterministic shuffle of `docs/fairness.md`: seed commitment, key derivation, DRBG, deck.

This module needs nothing but `hashlib` and `hmac` so that anyone can run it, and the `verify`
command, from published values alone. It never draws randomness of its own: the same inputs always
give the same deck. Changing anything observable here is a new shuffle version, never an edit of v1.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

SHUFFLE_VERSION = 1
SUPPORTED_VERSIONS = frozenset({SHUFFLE_VERSION})
DECK_SIZE = 52
SEED_BYTES = 32
NONCE_BYTES = 16
CLIENT_SEED_MAX_BYTES = 64
MAX_SEAT = 1023
# The previous commitment of the first hand of a table: there is no earlier hand to point at.
GENESIS_COMMITMENT = "0" * 64

# Domain-separation labels (ASCII, no terminator) so no value of one step can be replayed in another.
TAG_CLIENT_SEEDS = b"poker-fairness/v1/client-seeds"
TAG_DECK_KEY = b"poker-fairness/v1/deck-key"
TAG_STREAM = b"poker-fairness/v1/stream"

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
    """The public commitment: lower-case hex SHA-256 of the seed."""
    return hashlib.sha256(server_seed).hexdigest()


def client_seeds_digest(client_seeds: Iterable[SeatSeed]) -> bytes:
    """SHA-256 over the client seeds in ascending seat order, each length-prefixed (spec step 2)."""
    ordered = sorted(client_seeds)
    seats = [s.seat for s in ordered]
    if len(set(seats)) != len(seats):
        raise ShuffleInputError("each seat contributes at most one client seed")
    digest = hashlib.sha256(TAG_CLIENT_SEEDS)
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


def derive_deck_key(server_seed: bytes, client_seeds: Iterable[SeatSeed], nonce: bytes) -> bytes:
    """HKDF-SHA256 (RFC 5869): salt = nonce, IKM = seed, info = label || client-seeds digest, L = 32."""
    if len(server_seed) != SEED_BYTES:
        raise ShuffleInputError(f"the server seed is {SEED_BYTES} bytes, got {len(server_seed)}")
    if len(nonce) != NONCE_BYTES:
        raise ShuffleInputError(f"the nonce is {NONCE_BYTES} bytes, got {len(nonce)}")
    pseudo_random_key = hmac.digest(nonce, server_seed, "sha256")
    info = TAG_DECK_KEY + client_seeds_digest(client_seeds)
    return hmac.digest(pseudo_random_key, info + b"\x01", "sha256")


def random_words(deck_key: bytes) -> Iterator[int]:
    """The DRBG: HMAC-SHA256(key, label || u64be(i)) for i = 0, 1, ... read as big-endian u32 words."""
    counter = 0
    while True:
        block = hmac.digest(deck_key, TAG_STREAM + counter.to_bytes(8, "big"), "sha256")
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
    version: int = SHUFFLE_VERSION,
) -> tuple[int, ...]:
    """The deck of a hand: Fisher-Yates from the top index down, fed by the DRBG; deck[0] is dealt first."""
    if version not in SUPPORTED_VERSIONS:
        raise ShuffleInputError(f"unknown shuffle version {version}")
    words = random_words(derive_deck_key(server_seed, client_seeds, nonce))
    deck = list(range(DECK_SIZE))
    for i in range(DECK_SIZE - 1, 0, -1):
        j = uniform_below(i + 1, words)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def deck_text(deck: Sequence[int]) -> str:
    """The deck as space-separated card texts, for people and for the known-answer vectors."""
    return " ".join(card_text(c) for c in deck)
