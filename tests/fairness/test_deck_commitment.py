"""Fairness version 3 (docs/fairness.md, "Version 3"): known-answer vectors read from the doc, a
JavaScript implementation from the spec that agrees with them and with 1,000 random hands, and the
properties: every honest opening holds and a changed card, salt, proof, position or deal order
fails; the deal order is a bijection, uniform given an honest seed; openings exist for exactly the
positions asked for."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.fairness.deck_commitment import (
    DECK_SECRET_BYTES,
    TAG_LEAF,
    TAG_NODE,
    TAG_PADDING_LEAF,
    TREE_DEPTH,
    CardOpening,
    SecretDeck,
    client_seed_hash,
    commitment_v3,
    deal_order,
    dealt_cards,
    deck_root,
    open_positions,
    opening_fault,
    proof_of,
    root_from_opening,
    secret_deck_from,
    tree_levels,
)
from services.fairness.hands import HandRecord, HandState, Reader
from services.fairness.shuffle import DECK_SIZE, HandBinding, SeatSeed, ShuffleInputError, commitment_of
from services.fairness.verification import (
    DealtCard,
    MismatchKind,
    PublishedHand,
    SeatSeedHash,
    verify_hand,
)
from services.fairness.visibility import Visibility
from tests.fairness.test_shuffle import chi_square_p_value
from tests.node import require_node

SPEC = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"


def _doc_vectors() -> list[dict[str, Any]]:
    text = SPEC.read_text(encoding="utf-8")
    block = re.search(
        r"<!-- v3-known-answer-vectors:begin -->\s*```json\n(.*?)```\s*<!-- v3-known-answer-vectors:end -->",
        text,
        re.S,
    )
    assert block is not None, "docs/fairness.md lost its version 3 known-answer vector block"
    vectors: list[dict[str, Any]] = json.loads(block.group(1))["hands"]
    return vectors


def _hand_values(v: dict[str, Any]) -> tuple[SecretDeck, bytes, bytes, HandBinding, list[SeatSeed]]:
    seeds = [SeatSeed(c["seat"], bytes.fromhex(c["client_seed"])) for c in v["client_seeds"]]
    nonce = bytes.fromhex(v["nonce"])
    binding = HandBinding(v["table_id"], v["hand_id"], v["sequence"], v["previous_commitment"], nonce)
    return (
        secret_deck_from(bytes.fromhex(v["deck_secret"])),
        bytes.fromhex(v["server_seed"]),
        nonce,
        binding,
        seeds,
    )


def computed_vector(v: dict[str, Any]) -> dict[str, Any]:
    """What the reference implementation makes of a vector's inputs (the doc's outputs)."""
    secret, server_seed, nonce, binding, seeds = _hand_values(v)
    levels = tree_levels(secret)
    root = deck_root(levels)
    commitment = commitment_v3(commitment_of(server_seed), binding, root)
    order = deal_order(server_seed, seeds, nonce, commitment)
    opening = open_positions(secret, levels, order, [0])[0]
    return {
        "deck_root": root,
        "commitment": commitment,
        "client_seed_hashes": [client_seed_hash(commitment, s.seat, s.client_seed) for s in seeds],
        "order": list(order),
        "dealt": list(dealt_cards(secret, order)),
        "opening_of_deal_position_0": {
            "deal_position": 0,
            "committed_position": opening.committed_position,
            "card": opening.card,
            "salt": opening.salt.hex(),
            "proof": [h.hex() for h in opening.proof],
        },
    }


DOC_VECTORS = _doc_vectors()


@pytest.mark.parametrize("vector", DOC_VECTORS, ids=[v["name"] for v in DOC_VECTORS])
def test_the_known_answer_vectors_of_the_doc_hold(vector: dict[str, Any]) -> None:
    expected = {key: vector[key] for key in computed_vector(vector)}
    assert computed_vector(vector) == expected
    opening = vector["opening_of_deal_position_0"]
    root = bytes.fromhex(vector["deck_root"])
    proof = [bytes.fromhex(h) for h in opening["proof"]]
    salt = bytes.fromhex(opening["salt"])
    assert root_from_opening(opening["committed_position"], opening["card"], salt, proof) == root


def _random_hand(rng: random.Random, index: int) -> dict[str, Any]:
    seats = rng.sample(range(1024), rng.randrange(0, 4))
    return {
        "name": f"random {index}",
        "deck_secret": rng.randbytes(32).hex(),
        "server_seed": rng.randbytes(32).hex(),
        "nonce": rng.randbytes(16).hex(),
        "table_id": rng.choice(["t", "table-1", "стол-7", "x" * 128]),
        "hand_id": f"hand-{index}",
        "sequence": rng.randrange(1, 1 << 40),
        "previous_commitment": rng.randbytes(32).hex(),
        "client_seeds": [
            {"seat": s, "client_seed": rng.randbytes(rng.randrange(1, 65)).hex()} for s in seats
        ],
    }


def _openings_json(v: dict[str, Any], positions: list[int]) -> list[dict[str, Any]]:
    secret, server_seed, nonce, binding, seeds = _hand_values(v)
    levels = tree_levels(secret)
    commitment = commitment_v3(commitment_of(server_seed), binding, deck_root(levels))
    order = deal_order(server_seed, seeds, nonce, commitment)
    return [
        {
            "deal_position": o.deal_position,
            "committed_position": o.committed_position,
            "card": o.card,
            "salt": o.salt.hex(),
            "proof": [h.hex() for h in o.proof],
        }
        for o in open_positions(secret, levels, order, positions)
    ]


def test_a_javascript_implementation_from_the_spec_agrees_on_the_vectors_and_1000_random_hands() -> None:
    node = require_node("the JavaScript cross-check of version 3")
    rng = random.Random(24)
    hands = [dict(v) for v in DOC_VECTORS] + [_random_hand(rng, i) for i in range(1000)]
    for hand in hands:
        hand["openings"] = _openings_json(hand, rng.sample(range(DECK_SIZE), 3))
    done = subprocess.run(
        [node, str(Path(__file__).with_name("spec_v3.mjs"))],
        input=json.dumps({"hands": hands}),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(hands)
    for hand, result in zip(hands, results, strict=True):
        ours = computed_vector(hand)
        assert result["deck_root"] == ours["deck_root"], hand["name"]
        assert result["commitment"] == ours["commitment"], hand["name"]
        assert result["client_seed_hashes"] == ours["client_seed_hashes"], hand["name"]
        assert result["order"] == ours["order"], hand["name"]
        assert result["dealt"] == ours["dealt"], hand["name"]
        assert result["proof_of_deal_position_0"] == ours["opening_of_deal_position_0"]["proof"]
        assert result["openings_hold"], hand["name"]
        assert result["tampered_fail"], hand["name"]


# --- Properties. ---

secrets_32 = st.binary(min_size=DECK_SECRET_BYTES, max_size=DECK_SECRET_BYTES)
positions = st.integers(0, DECK_SIZE - 1)


def _hand(deck_secret: bytes, server_seed: bytes, seeds: list[SeatSeed]) -> tuple[Any, ...]:
    secret = secret_deck_from(deck_secret)
    levels = tree_levels(secret)
    binding = HandBinding("table-p", "hand-p", 3, "ab" * 32, b"\x07" * 16)
    commitment = commitment_v3(commitment_of(server_seed), binding, deck_root(levels))
    order = deal_order(server_seed, seeds, binding.nonce, commitment)
    return secret, levels, order, levels[-1][0]


@settings(max_examples=40, deadline=None)
@given(deck_secret=secrets_32, server_seed=secrets_32, position=positions)
def test_every_honest_opening_holds_and_each_changed_part_fails(
    deck_secret: bytes, server_seed: bytes, position: int
) -> None:
    secret, levels, order, root = _hand(deck_secret, server_seed, [])
    (opening,) = open_positions(secret, levels, order, [position])
    assert opening_fault(opening, order, root) is None
    assert dealt_cards(secret, order)[position] == opening.card
    other_card = (opening.card + 1) % DECK_SIZE
    flipped_salt = bytes((opening.salt[0] ^ 1,)) + opening.salt[1:]
    bad_proof = (opening.proof[0][::-1], *opening.proof[1:])
    other_q = (opening.committed_position + 1) % DECK_SIZE
    tampered = {
        "card": CardOpening(position, opening.committed_position, other_card, opening.salt, opening.proof),
        "salt": CardOpening(position, opening.committed_position, opening.card, flipped_salt, opening.proof),
        "proof": CardOpening(position, opening.committed_position, opening.card, opening.salt, bad_proof),
        "committed position": CardOpening(position, other_q, opening.card, opening.salt, opening.proof),
    }
    for what, bad in tampered.items():
        assert opening_fault(bad, order, root) is not None, what
    # The same opening claimed for another deal position contradicts the deal order.
    other_i = (position + 1) % DECK_SIZE
    moved = CardOpening(other_i, opening.committed_position, opening.card, opening.salt, opening.proof)
    assert opening_fault(moved, order, root) == "PERMUTATION"
    # A position's opening with the committed position it really has but another position's proof.
    sibling_q = opening.committed_position ^ 1
    sibling = CardOpening(
        position, opening.committed_position, opening.card, opening.salt, proof_of(levels, sibling_q)
    )
    assert opening_fault(sibling, order, root) == "OPENING"


@settings(max_examples=30, deadline=None)
@given(
    deck_secret=secrets_32,
    server_seed=secrets_32,
    asked=st.sets(positions, max_size=DECK_SIZE),
)
def test_openings_exist_for_exactly_the_positions_asked_and_the_order_is_a_bijection(
    deck_secret: bytes, server_seed: bytes, asked: set[int]
) -> None:
    secret, levels, order, _ = _hand(deck_secret, server_seed, [SeatSeed(2, b"ann")])
    assert sorted(order) == list(range(DECK_SIZE))
    assert sorted(dealt_cards(secret, order)) == list(range(DECK_SIZE))
    openings = open_positions(secret, levels, order, asked)
    assert [o.deal_position for o in openings] == sorted(asked)
    assert {o.committed_position for o in openings} == {order[i] for i in asked}


@settings(max_examples=25, deadline=None)
@given(deck_secret=secrets_32, server_seed=secrets_32, seed=st.binary(min_size=1, max_size=64))
def test_every_seed_and_the_server_share_move_the_order(
    deck_secret: bytes, server_seed: bytes, seed: bytes
) -> None:
    _, _, with_seed, _ = _hand(deck_secret, server_seed, [SeatSeed(1, seed)])
    _, _, other_seed, _ = _hand(deck_secret, server_seed, [SeatSeed(1, seed + b"!")])
    _, _, other_share, _ = _hand(deck_secret, bytes(b ^ 0xFF for b in server_seed), [SeatSeed(1, seed)])
    assert with_seed != other_seed
    assert with_seed != other_share


def test_the_order_is_uniform_for_an_honest_seed_whatever_deck_and_share_the_server_fixed() -> None:
    # The server's deck and share are fixed (adversarial: a sorted deck, a constant share); only the
    # honest player's seed varies. Where deal position 0's card comes from, and which card the first
    # player's first hole card is, must both be uniform over 52.
    sorted_deck = SecretDeck(tuple(range(DECK_SIZE)), tuple(bytes(32) for _ in range(DECK_SIZE)))
    levels = tree_levels(sorted_deck)
    binding = HandBinding("table-u", "hand-u", 1, "0" * 64, bytes(16))
    server_seed = bytes(32)
    commitment = commitment_v3(commitment_of(server_seed), binding, deck_root(levels))
    rng = random.Random(7)
    samples = 52 * 100
    counts = [0] * DECK_SIZE
    for _ in range(samples):
        order = deal_order(server_seed, [SeatSeed(0, rng.randbytes(32))], binding.nonce, commitment)
        counts[dealt_cards(sorted_deck, order)[0]] += 1
    expected = samples / DECK_SIZE
    statistic = sum((c - expected) ** 2 / expected for c in counts)
    assert chi_square_p_value(statistic, DECK_SIZE - 1) > 1e-4


def test_the_commitment_binds_the_root_and_every_value_version_2_binds() -> None:
    binding = HandBinding("table-1", "hand-1", 1, "0" * 64, bytes(16))
    seed_hash = commitment_of(bytes(32))
    base = commitment_v3(seed_hash, binding, "ab" * 32)
    assert commitment_v3(seed_hash, binding, "ac" + "ab" * 31) != base
    assert commitment_v3(commitment_of(bytes(31) + b"\x01"), binding, "ab" * 32) != base
    for changed in (
        HandBinding("table-2", "hand-1", 1, "0" * 64, bytes(16)),
        HandBinding("table-1", "hand-2", 1, "0" * 64, bytes(16)),
        HandBinding("table-1", "hand-1", 2, "0" * 64, bytes(16)),
        HandBinding("table-1", "hand-1", 1, "1" + "0" * 63, bytes(16)),
        HandBinding("table-1", "hand-1", 1, "0" * 64, b"\x01" + bytes(15)),
    ):
        assert commitment_v3(seed_hash, changed, "ab" * 32) != base


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ShuffleInputError):
        secret_deck_from(bytes(31))
    with pytest.raises(ShuffleInputError):
        root_from_opening(0, 0, bytes(32), [bytes(32)] * (TREE_DEPTH - 1))
    with pytest.raises(ShuffleInputError):
        root_from_opening(0, 52, bytes(32), [bytes(32)] * TREE_DEPTH)
    with pytest.raises(ShuffleInputError):
        SecretDeck(tuple(range(51)), tuple(bytes(32) for _ in range(51)))


# --- The verifier on published version 3 values: the tampering suite. ---


def _published_v3(
    seen: list[int],
    seeds: tuple[SeatSeed, ...] = (SeatSeed(3, b"ann-seed"),),
    withheld: tuple[SeatSeedHash, ...] = (),
) -> tuple[PublishedHand, list[DealtCard]]:
    """An honest version 3 hand from published values: each seed with the hash its seat recorded
    before the seal, and `withheld` seats (a hash and no seed), which are left out of the deal."""
    secret = secret_deck_from(bytes(range(32)))
    levels = tree_levels(secret)
    server_seed = bytes(range(32, 64))
    binding = HandBinding("table-v", "hand-v", 5, "cd" * 32, bytes(range(16)))
    root = deck_root(levels)
    commitment = commitment_v3(commitment_of(server_seed), binding, root)
    order = deal_order(server_seed, seeds, binding.nonce, commitment)
    dealt = dealt_cards(secret, order)
    published = PublishedHand(
        server_seed=server_seed,
        client_seeds=seeds,
        nonce=binding.nonce,
        commitment=commitment,
        shuffle_version=3,
        table_id=binding.table_id,
        hand_id=binding.hand_id,
        sequence=binding.sequence,
        previous_commitment=binding.previous_commitment,
        server_seed_hash=commitment_of(server_seed),
        deck_root=root,
        openings=open_positions(secret, levels, order, seen),
        client_seed_hashes=(
            *(SeatSeedHash(s.seat, client_seed_hash(commitment, s.seat, s.client_seed)) for s in seeds),
            *withheld,
        ),
    )
    return published, [DealtCard(i, dealt[i]) for i in seen]


SEEN = [0, 5, 20, 21, 22, 24, 26]


def test_the_verifier_passes_honest_openings_and_counts_them() -> None:
    published, dealt = _published_v3(SEEN)
    result = verify_hand(published, dealt)
    assert result.passed, result.first_mismatch
    assert (result.openings_checked, result.dealt_cards_checked, result.deck) == (7, 7, ())


def _replace_opening(published: PublishedHand, index: int, **changes: Any) -> PublishedHand:
    openings = list(published.openings)
    openings[index] = dataclasses.replace(openings[index], **changes)
    return dataclasses.replace(published, openings=tuple(openings))


def test_the_tampering_suite_each_change_is_caught_by_its_check() -> None:
    published, dealt = _published_v3(SEEN)
    first = published.openings[1]
    cases: dict[str, tuple[PublishedHand, list[DealtCard], MismatchKind]] = {
        "changed card": (
            _replace_opening(published, 1, card=(first.card + 1) % DECK_SIZE),
            dealt,
            MismatchKind.OPENING,
        ),
        "changed salt": (
            _replace_opening(published, 1, salt=bytes(32)),
            dealt,
            MismatchKind.OPENING,
        ),
        "changed proof": (
            _replace_opening(published, 1, proof=(bytes(32), *first.proof[1:])),
            dealt,
            MismatchKind.OPENING,
        ),
        "changed committed position": (
            _replace_opening(published, 1, committed_position=(first.committed_position + 1) % DECK_SIZE),
            dealt,
            MismatchKind.PERMUTATION,
        ),
        "opening moved to another deal position": (
            _replace_opening(published, 1, deal_position=1),
            [d for d in dealt if d.position != 5],
            MismatchKind.PERMUTATION,
        ),
        "changed server share": (
            dataclasses.replace(published, server_seed=bytes(32)),
            dealt,
            MismatchKind.SERVER_SEED_HASH,
        ),
        "changed client seed": (
            dataclasses.replace(published, client_seeds=(SeatSeed(3, b"ann-seeD"),)),
            dealt,
            MismatchKind.CLIENT_SEED_HASH,
        ),
        "changed client seed, with its hash": (
            dataclasses.replace(
                published,
                client_seeds=(SeatSeed(3, b"ann-seeD"),),
                client_seed_hashes=(SeatSeedHash(3, client_seed_hash(published.commitment, 3, b"ann-seeD")),),
            ),
            dealt,
            MismatchKind.PERMUTATION,
        ),
        "dropped client seed": (
            dataclasses.replace(published, client_seeds=()),
            dealt,
            MismatchKind.PERMUTATION,
        ),
        "changed deck root": (
            dataclasses.replace(published, deck_root="00" * 32),
            dealt,
            MismatchKind.COMMITMENT,
        ),
        "changed chain link": (
            dataclasses.replace(published, previous_commitment="ce" * 32),
            dealt,
            MismatchKind.COMMITMENT,
        ),
        "a card other than the opened one": (
            published,
            [*dealt[:-1], DealtCard(dealt[-1].position, (dealt[-1].card + 1) % DECK_SIZE)],
            MismatchKind.DEALT_CARD,
        ),
        "a card at a position not opened": (published, [*dealt, DealtCard(1, 0)], MismatchKind.NOT_OPENED),
        # The hash-first guarantee is checked, not left to the client: a seed that is not the one
        # its seat fixed by its hash before the seal fails, wherever its openings would lead.
        "a seed that does not match its seat's recorded hash": (
            dataclasses.replace(
                published,
                client_seed_hashes=(
                    SeatSeedHash(3, client_seed_hash(published.commitment, 3, b"another seed")),
                ),
            ),
            dealt,
            MismatchKind.CLIENT_SEED_HASH,
        ),
        "the hash of the same seed at another seat": (
            dataclasses.replace(
                published,
                client_seed_hashes=(SeatSeedHash(3, client_seed_hash(published.commitment, 4, b"ann-seed")),),
            ),
            dealt,
            MismatchKind.CLIENT_SEED_HASH,
        ),
        "a dealt card outside 0..51": (
            published,
            [*dealt, DealtCard(52, 0)],
            MismatchKind.DEALT_CARD_INVALID,
        ),
        "a deal position given twice": (published, [*dealt, dealt[0]], MismatchKind.DEALT_CARD_INVALID),
    }
    for name, (changed, cards, kind) in cases.items():
        result = verify_hand(changed, cards)
        assert result.first_mismatch is not None, name
        assert result.first_mismatch.kind is kind, (name, result.first_mismatch)


def test_a_duplicated_committed_card_is_caught_among_the_openings() -> None:
    cards = list(range(DECK_SIZE))
    cards[1] = 0  # two committed positions hold 2c
    secret = SecretDeck(tuple(cards), tuple(bytes([q]) * 32 for q in range(DECK_SIZE)))
    levels = tree_levels(secret)
    server_seed = bytes(32)
    binding = HandBinding("t", "h", 1, "0" * 64, bytes(16))
    commitment = commitment_v3(commitment_of(server_seed), binding, deck_root(levels))
    order = deal_order(server_seed, (), binding.nonce, commitment)
    both = [order.index(0), order.index(1)]
    published = PublishedHand(
        server_seed,
        (),
        binding.nonce,
        commitment,
        3,
        "t",
        "h",
        1,
        "0" * 64,
        commitment_of(server_seed),
        deck_root(levels),
        open_positions(secret, levels, order, both),
    )
    result = verify_hand(published)
    assert result.first_mismatch is not None
    assert result.first_mismatch.kind is MismatchKind.DUPLICATE_CARD


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("deck_root", {"deck_root": "xyz"}),
        ("openings", {"opening": {"salt": bytes(31)}}),
        ("openings", {"opening": {"proof": (bytes(32),) * 5}}),
        ("openings", {"opening": {"card": 52}}),
        ("openings", {"opening": {"deal_position": 0}}),
    ],
)
def test_malformed_version_3_values_are_a_malformed_verdict_naming_the_field(
    field: str, change: dict[str, Any]
) -> None:
    published, dealt = _published_v3(SEEN)
    if "opening" in change:
        changed = _replace_opening(published, 1, **change["opening"])
    else:
        changed = dataclasses.replace(published, **change)
    result = verify_hand(changed, dealt)
    assert result.first_mismatch is not None
    assert result.first_mismatch.kind is MismatchKind.MALFORMED
    assert result.first_mismatch.description.startswith(f"{field}:")


def test_a_withheld_seat_is_left_out_of_the_deal_and_an_upper_case_hash_is_read_as_its_digits() -> None:
    """docs/fairness.md, "Malformed published values": a version 3 seat listed with its hash and no
    seed withheld its seed (left out of the deal order, not malformed); hex in either case."""
    withheld = (SeatSeedHash(7, "ab" * 32),)
    published, dealt = _published_v3(SEEN, withheld=withheld)
    result = verify_hand(published, dealt)
    assert result.passed, result.first_mismatch
    upper = tuple(
        dataclasses.replace(h, client_seed_hash=h.client_seed_hash.upper())
        for h in published.client_seed_hashes
    )
    result = verify_hand(dataclasses.replace(published, client_seed_hashes=upper), dealt)
    assert result.passed, result.first_mismatch
    # In upper case, a hash the seed does not give is still that mismatch.
    other = (SeatSeedHash(3, client_seed_hash(published.commitment, 3, b"another seed").upper()), *withheld)
    result = verify_hand(dataclasses.replace(published, client_seed_hashes=other), dealt)
    assert result.first_mismatch is not None
    assert result.first_mismatch.kind is MismatchKind.CLIENT_SEED_HASH


@pytest.mark.parametrize(
    "hashes",
    [
        pytest.param((), id="a seed without its hash"),
        pytest.param((SeatSeedHash(3, "zz" * 32),), id="a hash that is not hex"),
        pytest.param((SeatSeedHash(3, "ab" * 31),), id="a hash of 62 digits"),
        pytest.param((SeatSeedHash(1024, "ab" * 32),), id="a hash at a seat outside 0..1023"),
        pytest.param((SeatSeedHash(7, "ab" * 32), SeatSeedHash(7, "cd" * 32)), id="a seat's hash twice"),
    ],
)
def test_a_version_3_seed_hash_of_a_bad_shape_is_malformed_client_seeds(
    hashes: tuple[SeatSeedHash, ...],
) -> None:
    published, dealt = _published_v3(SEEN)
    honest = published.client_seed_hashes
    given = hashes if not hashes or hashes[0].seat == 3 else (*honest, *hashes)
    result = verify_hand(dataclasses.replace(published, client_seed_hashes=given), dealt)
    assert result.first_mismatch is not None
    assert result.first_mismatch.kind is MismatchKind.MALFORMED
    assert result.first_mismatch.description.startswith("client_seeds:"), result.first_mismatch


def test_the_hash_input_sizes_the_doc_states_are_the_codes() -> None:
    """docs/fairness.md, version 3 step 1: the byte counts a re-implementer is told."""
    text = " ".join(SPEC.read_text(encoding="utf-8").split())
    leaf, node, padding = len(TAG_LEAF) + 4 + 1 + 32, len(TAG_NODE) + 32 + 32, len(TAG_PADDING_LEAF) + 4
    assert (leaf, node, padding) == (59, 86, 34)
    assert (
        f"the leaf hashes are {leaf} bytes of input, the padding leaves {padding}, the node hashes {node}"
        in text
    )


# --- Who gets which openings (visibility.py), for any report and any reader. ---

players = st.sampled_from(["ann", "bob", "cat", "dan"])


@settings(max_examples=60, deadline=None)
@given(
    public=st.sets(positions, max_size=12),
    seen=st.dictionaries(players, st.sets(positions, max_size=4), max_size=4),
    reader=st.one_of(players, st.just("eve"), st.just("")),
    admin=st.booleans(),
    deck_secret=secrets_32,
)
def test_no_reader_but_an_admin_gets_an_opening_of_a_position_they_did_not_see(
    public: set[int], seen: dict[str, set[int]], reader: str, admin: bool, deck_secret: bytes
) -> None:
    participants = sorted(seen)
    visibility = Visibility.reported(public, seen.items(), participants)
    hand = HandRecord(
        hand_id="h", request_id="r", table_id="t", sequence=1, commitment="00" * 32,
        previous_commitment="0" * 64, nonce=bytes(16), shuffle_version=3, deal_now=False,
        state=HandState.FINISHED, client_seeds=(), created_at=datetime.now(UTC),
        participants=tuple(participants), visibility=visibility,
    )  # fmt: skip
    allowed = visibility.positions_for(admin=admin, participant=reader if reader in participants else None)
    who = Reader(player_id=reader, admin=admin)
    assert who.positions_of(hand) == allowed
    if admin:
        assert allowed == frozenset(range(DECK_SIZE))
    else:
        assert allowed == public | (seen.get(reader, set()) if reader in participants else set())
    secret, levels, order, _ = _hand(deck_secret, bytes(32), [])
    opened = {o.deal_position for o in open_positions(secret, levels, order, who.positions_of(hand))}
    assert opened == allowed
    # Round trip of the stored form.
    assert Visibility.from_text(visibility.to_text()) == visibility


@pytest.mark.parametrize(
    "stored",
    ["{", "[]", '{"public": 3, "seen": {}}', '{"public": [99], "seen": {}}', '{"public": ["x"], "seen": {}}'],
)
def test_a_damaged_stored_report_opens_nothing_and_raises_nothing(stored: str) -> None:
    assert Visibility.from_text(stored) == Visibility()
