"""Fairness version 3 of `docs/fairness.md`: a commitment to the card at every position of a secret
deck (a Merkle root over salted per-position hashes), the deal order derived from the server's
committed share and the players' seeds, and openings that prove one card at a time.

Pure (hashlib and hmac only, no I/O, no randomness of its own), like `shuffle.py`, so the verifier
runs anywhere from published values. Version 3 reveals the server's share (which gives only the
deal order) and, per position, a salt and a proof: a card nobody saw is never computable from what
is published, because its salt is never published.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from services.fairness.shuffle import (
    DECK_SIZE,
    NONCE_BYTES,
    SEED_BYTES,
    HandBinding,
    SeatSeed,
    ShuffleInputError,
    bound_id,
    digest_bytes,
    fisher_yates,
    labelled_words,
    shuffle_deck,
)

FAIRNESS_VERSION = 3
SALT_BYTES = 32
DECK_SECRET_BYTES = 32
# The tree has 64 leaves: the 52 positions, then 12 fixed padding leaves; every proof is 6 hashes.
TREE_LEAVES = 64
TREE_DEPTH = 6
HASH_BYTES = 32

TAG_COMMITMENT_V3 = b"poker-fairness/v3/commitment"
TAG_LEAF = b"poker-fairness/v3/leaf"
TAG_PADDING_LEAF = b"poker-fairness/v3/padding-leaf"
TAG_NODE = b"poker-fairness/v3/node"
TAG_CLIENT_SEED_HASH = b"poker-fairness/v3/client-seed-hash"
# The reference way of choosing the secret deck and its salts (not part of verification: the
# guarantees hold whatever deck the server committed to).
TAG_SECRET_DECK = b"poker-fairness/v3/secret-deck"
TAG_SALT = b"poker-fairness/v3/salt"


def _u32(value: int) -> bytes:
    return value.to_bytes(4, "big")


@dataclass(frozen=True)
class SecretDeck:
    """The card and salt at every committed position; never published as a whole."""

    cards: tuple[int, ...] = field(repr=False)
    salts: tuple[bytes, ...] = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.cards) != DECK_SIZE or len(self.salts) != DECK_SIZE:
            raise ShuffleInputError(f"a secret deck has {DECK_SIZE} cards and {DECK_SIZE} salts")
        if any(not 0 <= c < DECK_SIZE for c in self.cards) or any(len(s) != SALT_BYTES for s in self.salts):
            raise ShuffleInputError(f"cards are 0..51 and salts {SALT_BYTES} bytes")


def secret_deck_from(deck_secret: bytes) -> SecretDeck:
    """The reference implementation's secret deck: Fisher-Yates fed by the step 4 stream under
    key HMAC(deck_secret, "poker-fairness/v3/secret-deck"), and salt q = HMAC(deck_secret,
    "poker-fairness/v3/salt" || u32be(q)); 32 secret bytes stand for 52 salts and an order."""
    if len(deck_secret) != DECK_SECRET_BYTES:
        raise ShuffleInputError(f"the deck secret is {DECK_SECRET_BYTES} bytes")
    key = hmac.digest(deck_secret, TAG_SECRET_DECK, "sha256")
    cards = fisher_yates(labelled_words(key, TAG_SECRET_DECK))
    salts = tuple(hmac.digest(deck_secret, TAG_SALT + _u32(q), "sha256") for q in range(DECK_SIZE))
    return SecretDeck(cards, salts)


def leaf_hash(position: int, card: int, salt: bytes) -> bytes:
    """SHA-256("poker-fairness/v3/leaf" || u32be(position) || u8(card) || salt)."""
    if not 0 <= position < DECK_SIZE or not 0 <= card < DECK_SIZE or len(salt) != SALT_BYTES:
        raise ShuffleInputError("a leaf is a position 0..51, a card 0..51 and a 32-byte salt")
    return hashlib.sha256(TAG_LEAF + _u32(position) + bytes((card,)) + salt).digest()


def padding_leaf(position: int) -> bytes:
    """SHA-256("poker-fairness/v3/padding-leaf" || u32be(position)) for positions 52..63."""
    return hashlib.sha256(TAG_PADDING_LEAF + _u32(position)).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256("poker-fairness/v3/node" || left || right)."""
    return hashlib.sha256(TAG_NODE + left + right).digest()


def tree_levels(secret: SecretDeck) -> tuple[tuple[bytes, ...], ...]:
    """Every level of the Merkle tree, leaves first (64 hashes), root last (1 hash)."""
    level = tuple(leaf_hash(q, secret.cards[q], secret.salts[q]) for q in range(DECK_SIZE)) + tuple(
        padding_leaf(q) for q in range(DECK_SIZE, TREE_LEAVES)
    )
    levels = [level]
    while len(level) > 1:
        level = tuple(node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2))
        levels.append(level)
    return tuple(levels)


def deck_root(levels: Sequence[Sequence[bytes]]) -> str:
    return levels[-1][0].hex()


def proof_of(levels: Sequence[Sequence[bytes]], position: int) -> tuple[bytes, ...]:
    """The 6 sibling hashes from the leaf of `position` up to (not including) the root."""
    return tuple(levels[k][(position >> k) ^ 1] for k in range(TREE_DEPTH))


def root_from_opening(position: int, card: int, salt: bytes, proof: Sequence[bytes]) -> bytes:
    """The root an opening leads to: the leaf, then at level k the sibling on the left when bit k
    of the position is 1, on the right when it is 0."""
    if len(proof) != TREE_DEPTH or any(len(h) != HASH_BYTES for h in proof):
        raise ShuffleInputError(f"a proof is {TREE_DEPTH} hashes of {HASH_BYTES} bytes")
    current = leaf_hash(position, card, salt)
    for k, sibling in enumerate(proof):
        current = node_hash(sibling, current) if (position >> k) & 1 else node_hash(current, sibling)
    return current


def commitment_v3(seed_hash: str, binding: HandBinding, root: str) -> str:
    """The version 3 commitment: version 2's layout under its own label and version number, with the
    deck root appended."""
    if len(binding.nonce) != NONCE_BYTES:
        raise ShuffleInputError(f"the nonce is {NONCE_BYTES} bytes, got {len(binding.nonce)}")
    if not 1 <= binding.sequence < 1 << 63:
        raise ShuffleInputError("the sequence is 1 or more")
    digest = hashlib.sha256(TAG_COMMITMENT_V3)
    digest.update(_u32(FAIRNESS_VERSION))
    digest.update(bound_id(binding.table_id, "table id"))
    digest.update(bound_id(binding.hand_id, "hand id"))
    digest.update(binding.sequence.to_bytes(8, "big"))
    digest.update(digest_bytes(binding.previous_commitment, "previous commitment"))
    digest.update(binding.nonce)
    digest.update(digest_bytes(seed_hash, "server seed hash"))
    digest.update(digest_bytes(root, "deck root"))
    return digest.hexdigest()


def client_seed_hash(commitment: str, seat: int, client_seed: bytes) -> str:
    """What a player publishes first, before anyone's seed is disclosed: SHA-256 over the label, the
    hand's commitment, the seat and the length-prefixed seed."""
    digest = hashlib.sha256(TAG_CLIENT_SEED_HASH)
    digest.update(digest_bytes(commitment, "commitment"))
    digest.update(_u32(seat))
    digest.update(_u32(len(client_seed)))
    digest.update(client_seed)
    return digest.hexdigest()


def deal_order(
    server_seed: bytes, client_seeds: Iterable[SeatSeed], nonce: bytes, commitment: str
) -> tuple[int, ...]:
    """Deal position i takes the card committed at position order[i]: steps 2 to 6 of version 2
    with the version 3 labels."""
    if len(server_seed) != SEED_BYTES:
        raise ShuffleInputError(f"the server seed is {SEED_BYTES} bytes, got {len(server_seed)}")
    return shuffle_deck(server_seed, client_seeds, nonce, FAIRNESS_VERSION, commitment)


def dealt_cards(secret: SecretDeck, order: Sequence[int]) -> tuple[int, ...]:
    """The deck the table deals from: the card committed at order[0] first."""
    return tuple(secret.cards[q] for q in order)


@dataclass(frozen=True)
class CardOpening:
    """Proof that the card dealt at `deal_position` was fixed before the deal: its committed
    position, the card, the salt and the Merkle proof."""

    deal_position: int
    committed_position: int
    card: int
    salt: bytes = field(repr=False)
    proof: tuple[bytes, ...] = field(repr=False)


def open_positions(
    secret: SecretDeck,
    levels: Sequence[Sequence[bytes]],
    order: Sequence[int],
    deal_positions: Iterable[int],
) -> tuple[CardOpening, ...]:
    """The openings of exactly the deal positions given (ascending), and of no other."""
    openings = []
    for i in sorted(set(deal_positions)):
        if not 0 <= i < DECK_SIZE:
            raise ShuffleInputError("a deal position is 0..51")
        q = order[i]
        openings.append(CardOpening(i, q, secret.cards[q], secret.salts[q], proof_of(levels, q)))
    return tuple(openings)


def opening_fault(opening: CardOpening, order: Sequence[int], root: bytes) -> str | None:
    """Why an opening fails against the deal order and the committed root, or None when it holds:
    "PERMUTATION" when the deal order does not map its deal position to its committed position,
    "OPENING" when card, salt, position and proof do not lead to the root."""
    if order[opening.deal_position] != opening.committed_position:
        return "PERMUTATION"
    found = root_from_opening(opening.committed_position, opening.card, opening.salt, opening.proof)
    return None if hmac.compare_digest(found, root) else "OPENING"
