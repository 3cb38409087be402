"""The shuffle, versions 1 and 2: known-answer vectors (read from docs/fairness.md), a second
implementation written from the spec alone, tamper detection, a defined verdict for every malformed
published value, rejection sampling and uniformity of card positions."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import re
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.fairness.shuffle import (
    DECK_SIZE,
    GENESIS_COMMITMENT,
    SUPPORTED_VERSIONS,
    HandBinding,
    SeatSeed,
    ShuffleInputError,
    card_index,
    card_text,
    client_seeds_digest,
    commitment_of,
    commitment_v2,
    deck_text,
    derive_deck_key,
    random_words,
    shuffle_deck,
    uniform_below,
)
from services.fairness.verification import (
    DealtCard,
    MismatchKind,
    PublishedHand,
    dealt_from_prefix,
    verify_hand,
)
from tests.node import require_node

SPEC = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"


def _vectors() -> dict[str, Any]:
    text = SPEC.read_text(encoding="utf-8")
    block = re.search(
        r"<!-- known-answer-vectors:begin -->\s*```json\n(.*?)```\s*<!-- known-answer-vectors:end -->",
        text,
        re.S,
    )
    assert block is not None, "docs/fairness.md lost its known-answer vector block"
    data: dict[str, Any] = json.loads(block.group(1))
    return data


VECTORS = _vectors()
SHUFFLE_VECTORS = VECTORS["shuffle_vectors"]


# --- A second implementation, written from docs/fairness.md alone (own HMAC, own stream reader). ---


def _spec_hmac(key: bytes, message: bytes) -> bytes:
    block_size = 64
    if len(key) > block_size:
        key = hashlib.sha256(key).digest()
    key = key.ljust(block_size, b"\x00")
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in key) + message).digest()
    return hashlib.sha256(bytes(b ^ 0x5C for b in key) + inner).digest()


class _SpecStream:
    def __init__(self, key: bytes, version: int) -> None:
        self.key, self.counter, self.buffer = key, 0, b""
        self.label = f"poker-fairness/v{version}/stream".encode()

    def next_word(self) -> int:
        if len(self.buffer) < 4:
            self.buffer += _spec_hmac(self.key, self.label + struct.pack(">Q", self.counter))
            self.counter += 1
        (word,) = struct.unpack(">I", self.buffer[:4])
        self.buffer = self.buffer[4:]
        return int(word)


def spec_commitment_v2(vector: dict[str, Any]) -> str:
    def prefixed(text: str) -> bytes:
        return struct.pack(">I", len(text.encode())) + text.encode()

    payload = (
        b"poker-fairness/v2/commitment"
        + struct.pack(">I", 2)
        + prefixed(vector["table_id"])
        + prefixed(vector["hand_id"])
        + struct.pack(">Q", vector["sequence"])
        + bytes.fromhex(vector["previous_commitment"])
        + bytes.fromhex(vector["nonce"])
        + hashlib.sha256(bytes.fromhex(vector["server_seed"])).digest()
    )
    return hashlib.sha256(payload).hexdigest()


def spec_deck(
    server_seed: bytes, nonce: bytes, client_seeds: dict[int, bytes], version: int = 1, commitment: str = ""
) -> list[int]:
    label = f"poker-fairness/v{version}/".encode()
    payload = label + b"client-seeds" + struct.pack(">I", len(client_seeds))
    for seat in sorted(client_seeds):
        payload += struct.pack(">II", seat, len(client_seeds[seat])) + client_seeds[seat]
    prk = _spec_hmac(nonce, server_seed)
    bound = bytes.fromhex(commitment) if version == 2 else b""
    key = _spec_hmac(prk, label + b"deck-key" + bound + hashlib.sha256(payload).digest() + b"\x01")
    stream = _SpecStream(key, version)
    cards = list(range(52))
    i = 51
    while i > 0:
        n = i + 1
        accept_below = (2**32 // n) * n
        word = stream.next_word()
        while word >= accept_below:
            word = stream.next_word()
        j = word % n
        cards[i], cards[j] = cards[j], cards[i]
        i -= 1
    return cards


# --- Helpers over the vectors. ---


def _seeds(vector: dict[str, Any]) -> tuple[SeatSeed, ...]:
    return tuple(SeatSeed(s["seat"], bytes.fromhex(s["client_seed"])) for s in vector["client_seeds"])


def _published(vector: dict[str, Any]) -> PublishedHand:
    return PublishedHand(
        server_seed=bytes.fromhex(vector["server_seed"]),
        client_seeds=_seeds(vector),
        nonce=bytes.fromhex(vector["nonce"]),
        commitment=vector["commitment"],
        shuffle_version=vector["shuffle_version"],
        table_id=vector.get("table_id", ""),
        hand_id=vector.get("hand_id", ""),
        sequence=vector.get("sequence", 0),
        previous_commitment=vector.get("previous_commitment", ""),
        server_seed_hash=vector.get("server_seed_hash", ""),
    )


@pytest.mark.parametrize("vector", SHUFFLE_VECTORS, ids=[v["name"] for v in SHUFFLE_VECTORS])
def test_reference_shuffle_reproduces_every_intermediate_value_of_the_known_answer_vectors(
    vector: dict[str, Any],
) -> None:
    seed, nonce, seeds = bytes.fromhex(vector["server_seed"]), bytes.fromhex(vector["nonce"]), _seeds(vector)
    version, commitment = vector["shuffle_version"], vector["commitment"]
    if version == 1:
        assert commitment_of(seed) == commitment
    else:
        assert commitment_of(seed) == vector["server_seed_hash"]
        binding = HandBinding(
            vector["table_id"], vector["hand_id"], vector["sequence"], vector["previous_commitment"], nonce
        )
        assert commitment_v2(vector["server_seed_hash"], binding) == commitment
    assert client_seeds_digest(seeds, version).hex() == vector["client_seeds_digest"]
    key = derive_deck_key(seed, seeds, nonce, version, commitment)
    assert key.hex() == vector["deck_key"]
    assert list(itertools.islice(random_words(key, version), 4)) == vector["first_words"]
    deck = shuffle_deck(seed, seeds, nonce, version, commitment)
    assert list(deck) == vector["deck"]
    assert deck_text(deck) == vector["deck_text"]
    assert verify_hand(_published(vector), dealt_from_prefix(vector["deck"])).passed


def test_vectors_cover_every_supported_version_and_chain_the_v2_hands_of_one_table() -> None:
    # Version 3's vectors have their own block (tests/fairness/test_deck_commitment.py).
    assert {v["shuffle_version"] for v in SHUFFLE_VECTORS} | {3} == set(SUPPORTED_VERSIONS)
    first, second = (v for v in SHUFFLE_VECTORS if v.get("table_id") == "table-1")
    assert (first["sequence"], first["previous_commitment"]) == (1, GENESIS_COMMITMENT)
    assert (second["sequence"], second["previous_commitment"]) == (2, first["commitment"])


@pytest.mark.parametrize("vector", SHUFFLE_VECTORS, ids=[v["name"] for v in SHUFFLE_VECTORS])
def test_independent_implementation_from_the_spec_agrees_with_the_known_answer_vectors(
    vector: dict[str, Any],
) -> None:
    seeds = {s["seat"]: bytes.fromhex(s["client_seed"]) for s in vector["client_seeds"]}
    version = vector["shuffle_version"]
    if version == 2:
        assert spec_commitment_v2(vector) == vector["commitment"]
    deck = spec_deck(
        bytes.fromhex(vector["server_seed"]),
        bytes.fromhex(vector["nonce"]),
        seeds,
        version,
        vector["commitment"],
    )
    assert deck == vector["deck"]


@settings(max_examples=40, deadline=None)
@given(
    server_seed=st.binary(min_size=32, max_size=32),
    nonce=st.binary(min_size=16, max_size=16),
    client_seeds=st.dictionaries(st.integers(0, 1023), st.binary(min_size=1, max_size=64), max_size=9),
)
def test_independent_implementation_agrees_on_arbitrary_inputs(
    server_seed: bytes, nonce: bytes, client_seeds: dict[int, bytes]
) -> None:
    seat_seeds = [SeatSeed(seat, seed) for seat, seed in client_seeds.items()]
    deck = shuffle_deck(server_seed, seat_seeds, nonce)
    assert sorted(deck) == list(range(DECK_SIZE))
    assert list(deck) == spec_deck(server_seed, nonce, client_seeds)


@pytest.mark.parametrize("case", VECTORS["uniform_below_vectors"], ids=lambda c: f"bound-{c['bound']}")
def test_rejection_sampling_discards_words_at_or_above_the_limit(case: dict[str, Any]) -> None:
    words = iter(case["words"])
    assert uniform_below(case["bound"], words) == case["result"]
    assert len(list(words)) == len(case["words"]) - case["words_consumed"]


def test_rejection_sampling_limit_is_the_largest_multiple_of_the_bound() -> None:
    limit = 2**32 - 2**32 % 52
    assert uniform_below(52, iter([limit - 1])) == (limit - 1) % 52
    assert uniform_below(52, iter([limit, limit + 3, 5])) == 5


def test_client_seed_order_of_submission_does_not_matter_but_seats_do() -> None:
    seed, nonce = bytes(32), bytes(16)
    a, b = SeatSeed(1, b"alice"), SeatSeed(4, b"bob")
    assert shuffle_deck(seed, [a, b], nonce) == shuffle_deck(seed, [b, a], nonce)
    swapped = [SeatSeed(1, b"bob"), SeatSeed(4, b"alice")]
    assert shuffle_deck(seed, swapped, nonce) != shuffle_deck(seed, [a, b], nonce)


def test_length_prefixes_keep_adjacent_client_seeds_apart() -> None:
    seed, nonce = bytes(32), bytes(16)
    assert shuffle_deck(seed, [SeatSeed(1, b"ab"), SeatSeed(2, b"c")], nonce) != shuffle_deck(
        seed, [SeatSeed(1, b"a"), SeatSeed(2, b"bc")], nonce
    )


@pytest.mark.parametrize(
    ("seed", "nonce", "client_seeds"),
    [
        (bytes(31), bytes(16), []),
        (bytes(32), bytes(15), []),
        (bytes(32), bytes(16), [SeatSeed(1, b"")]),
        (bytes(32), bytes(16), [SeatSeed(1, bytes(65))]),
        (bytes(32), bytes(16), [SeatSeed(1024, b"x")]),
        (bytes(32), bytes(16), [SeatSeed(1, b"x"), SeatSeed(1, b"y")]),
    ],
    ids=[
        "short-seed",
        "short-nonce",
        "empty-client-seed",
        "long-client-seed",
        "seat-out-of-range",
        "seat-twice",
    ],
)
def test_malformed_inputs_are_refused(seed: bytes, nonce: bytes, client_seeds: list[SeatSeed]) -> None:
    with pytest.raises(ShuffleInputError):
        shuffle_deck(seed, client_seeds, nonce)


def test_card_encoding_matches_the_common_proto() -> None:
    assert card_text(0) == "2c"
    assert card_text(1) == "2d"
    assert card_text(4) == "3c"
    assert card_text(51) == "As"
    assert [card_index(card_text(i)) for i in range(52)] == list(range(52))


# --- Tamper detection through the verifier. ---

VECTOR = SHUFFLE_VECTORS[1]
DEALT = dealt_from_prefix(VECTOR["deck"][:9])


def test_untampered_hand_passes_with_every_dealt_card_checked() -> None:
    result = verify_hand(_published(VECTOR), DEALT)
    assert result.passed
    assert result.dealt_cards_checked == 9
    assert list(result.deck) == VECTOR["deck"]


def test_tampered_seed_fails_the_commitment() -> None:
    hand = _published(VECTOR)
    tampered = PublishedHand(bytes([hand.server_seed[0] ^ 1]) + hand.server_seed[1:], *_rest(hand))
    mismatch = verify_hand(tampered, DEALT).first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.COMMITMENT


def test_tampered_commitment_is_detected() -> None:
    hand = _published(VECTOR)
    forged = PublishedHand(hand.server_seed, hand.client_seeds, hand.nonce, "f" * 64)
    mismatch = verify_hand(forged, DEALT).first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.COMMITMENT
    assert mismatch.actual == VECTOR["commitment"]


def test_tampered_client_seed_changes_the_deck_so_a_dealt_card_mismatches() -> None:
    hand = _published(VECTOR)
    seeds = (SeatSeed(1, b"alice-seee"), SeatSeed(4, b"bob"))
    mismatch = verify_hand(
        PublishedHand(hand.server_seed, seeds, hand.nonce, hand.commitment), DEALT
    ).first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.DEALT_CARD


def test_dropped_client_seed_changes_the_deck_so_a_dealt_card_mismatches() -> None:
    hand = _published(VECTOR)
    seeds = (SeatSeed(4, b"bob"),)
    mismatch = verify_hand(
        PublishedHand(hand.server_seed, seeds, hand.nonce, hand.commitment), DEALT
    ).first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.DEALT_CARD


def test_tampered_nonce_changes_the_deck_so_a_dealt_card_mismatches() -> None:
    hand = _published(VECTOR)
    nonce = bytes([hand.nonce[0] ^ 0x80]) + hand.nonce[1:]
    result = verify_hand(PublishedHand(hand.server_seed, hand.client_seeds, nonce, hand.commitment), DEALT)
    assert result.first_mismatch is not None
    assert result.first_mismatch.kind is MismatchKind.DEALT_CARD


def test_tampered_dealt_card_reports_its_position_and_both_cards() -> None:
    dealt = list(DEALT)
    true_card = dealt[5].card
    dealt[5] = DealtCard(5, (true_card + 1) % 52)
    result = verify_hand(_published(VECTOR), dealt)
    mismatch = result.first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.DEALT_CARD
    assert (mismatch.position, mismatch.expected, mismatch.actual) == (
        5,
        card_text(true_card),
        card_text(dealt[5].card),
    )
    assert result.dealt_cards_checked == 6


@pytest.mark.parametrize(
    "dealt",
    [
        [DealtCard(52, 0)],
        [DealtCard(0, 52)],
        [DealtCard(3, VECTOR["deck"][3]), DealtCard(3, VECTOR["deck"][3])],
    ],
    ids=["position-out-of-range", "card-out-of-range", "position-twice"],
)
def test_invalid_dealt_cards_are_reported_not_crashed_on(dealt: list[DealtCard]) -> None:
    mismatch = verify_hand(_published(VECTOR), dealt).first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.DEALT_CARD_INVALID


VECTOR_V2 = next(v for v in SHUFFLE_VECTORS if v["shuffle_version"] == 2 and v["client_seeds"])


def _v2(**changes: Any) -> PublishedHand:
    return dataclasses.replace(_published(VECTOR_V2), **changes)


def test_the_malformed_check_names_every_field_the_spec_lists() -> None:
    # The spec's table of malformed values and the cases below must list the same fields.
    text = SPEC.read_text(encoding="utf-8")
    table = text[text.index("<!-- malformed-values:begin -->") : text.index("<!-- malformed-values:end -->")]
    fields = set(re.findall(r"^\| `(\w+)` \|", table, re.M))
    # Version 3's own fields are exercised in tests/fairness/test_deck_commitment.py.
    assert fields == {field for field, _ in MALFORMED_CASES.values()} | {"deck_root", "openings"}


MALFORMED_CASES: dict[str, tuple[str, Any]] = {
    "unknown-version": ("shuffle_version", {"shuffle_version": 4}),
    "seed-of-0-bytes": ("server_seed", {"server_seed": b""}),
    "seed-of-31-bytes": ("server_seed", {"server_seed": bytes(31)}),
    "seed-of-65-bytes": ("server_seed", {"server_seed": bytes(65)}),
    "nonce-of-15-bytes": ("nonce", {"nonce": bytes(15)}),
    "commitment-of-63-digits": ("commitment", {"commitment": "f" * 63}),
    "commitment-not-hex": ("commitment", {"commitment": "g" * 64}),
    "commitment-empty": ("commitment", {"commitment": ""}),
    "seat-twice": ("client_seeds", {"client_seeds": (SeatSeed(1, b"a"), SeatSeed(1, b"b"))}),
    "seat-out-of-range": ("client_seeds", {"client_seeds": (SeatSeed(1024, b"a"),)}),
    "client-seed-of-0-bytes": ("client_seeds", {"client_seeds": (SeatSeed(1, b""),)}),
    "client-seed-of-65-bytes": ("client_seeds", {"client_seeds": (SeatSeed(1, bytes(65)),)}),
    "table-id-empty": ("table_id", {"table_id": ""}),
    "table-id-too-long": ("table_id", {"table_id": "t" * 129}),
    "table-id-control-character": ("table_id", {"table_id": "t\x00"}),
    "hand-id-empty": ("hand_id", {"hand_id": ""}),
    "sequence-0": ("sequence", {"sequence": 0}),
    "previous-commitment-short": ("previous_commitment", {"previous_commitment": "0" * 62}),
    "server-seed-hash-not-hex": ("server_seed_hash", {"server_seed_hash": "x" * 64}),
}


@pytest.mark.parametrize("case", MALFORMED_CASES, ids=list(MALFORMED_CASES))
def test_every_malformed_published_value_is_a_malformed_verdict_naming_the_field(case: str) -> None:
    field, changes = MALFORMED_CASES[case]
    result = verify_hand(_v2(**changes), dealt_from_prefix(VECTOR_V2["deck"][:3]))
    assert result.first_mismatch is not None
    assert result.first_mismatch.kind is MismatchKind.MALFORMED
    assert result.first_mismatch.description.startswith(f"{field}:")
    assert (result.deck, result.dealt_cards_checked) == ((), 0)


def test_a_version_1_hand_ignores_the_fields_only_version_2_binds() -> None:
    hand = dataclasses.replace(_published(VECTOR), table_id="", hand_id="", sequence=0)
    assert verify_hand(hand, DEALT).passed


@pytest.mark.parametrize(
    "changes",
    [
        {"table_id": "table-2"},
        {"hand_id": "00000000-0000-4000-8000-000000000003"},
        {"sequence": 3},
        {"previous_commitment": "0" * 64},
        {"nonce": bytes(16)},
        {"shuffle_version": 1},
    ],
    ids=["table-id", "hand-id", "sequence", "previous-commitment", "nonce", "version"],
)
def test_every_value_a_v2_commitment_binds_is_bound(changes: dict[str, Any]) -> None:
    mismatch = verify_hand(_v2(**changes)).first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.COMMITMENT


def test_a_v2_seed_that_is_not_the_published_hash_fails_on_the_hash() -> None:
    hand = _v2()
    mismatch = verify_hand(
        _v2(server_seed=bytes([hand.server_seed[0] ^ 1]) + hand.server_seed[1:])
    ).first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.SERVER_SEED_HASH
    # A seed hash swapped together with the seed is caught by the commitment that binds the hash.
    other_seed = bytes(32)
    mismatch = verify_hand(
        _v2(server_seed=other_seed, server_seed_hash=commitment_of(other_seed))
    ).first_mismatch
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.COMMITMENT


def test_a_v2_deck_is_bound_to_its_hand() -> None:
    # The same seed, nonce and client seeds under another hand's commitment give another deck.
    hand = _v2()
    other = shuffle_deck(hand.server_seed, hand.client_seeds, hand.nonce, 2, "0" * 64)
    assert list(other) != VECTOR_V2["deck"]


def _rest(hand: PublishedHand) -> tuple[tuple[SeatSeed, ...], bytes, str]:
    return hand.client_seeds, hand.nonce, hand.commitment


# --- Uniformity. ---


def regularized_upper_gamma(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a): a series below a + 1, a continued fraction above (Lentz)."""
    if x <= 0:
        return 1.0
    log_prefix = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        denominator = a
        for _ in range(100_000):
            denominator += 1
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return 1.0 - total * math.exp(log_prefix)
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_prefix) * h


def chi_square_p_value(statistic: float, degrees_of_freedom: int) -> float:
    return regularized_upper_gamma(degrees_of_freedom / 2, statistic / 2)


def test_p_value_function_matches_known_chi_square_quantiles() -> None:
    # Quantiles from standard tables: P(chi2_1 > 3.841) = 0.05, P(chi2_10 > 23.209) = 0.01,
    # P(chi2_100 > 124.342) = 0.05.
    assert chi_square_p_value(3.841, 1) == pytest.approx(0.05, abs=2e-4)
    assert chi_square_p_value(23.209, 10) == pytest.approx(0.01, abs=1e-4)
    assert chi_square_p_value(124.342, 100) == pytest.approx(0.05, abs=2e-4)


SHUFFLES_FOR_UNIFORMITY = 20_000


def test_every_card_is_uniformly_distributed_over_the_deck_positions(record_property: Any) -> None:
    # Fixed seeds so the test is deterministic; the statistic is over the 52 x 52 card-by-position
    # table (rows and columns both sum to the number of shuffles, so 51 * 51 degrees of freedom).
    counts = [[0] * DECK_SIZE for _ in range(DECK_SIZE)]
    nonce = bytes(16)
    for i in range(SHUFFLES_FOR_UNIFORMITY):
        seed = hashlib.sha256(b"uniformity" + i.to_bytes(4, "big")).digest()
        for position, card in enumerate(shuffle_deck(seed, (), nonce)):
            counts[card][position] += 1
    expected = SHUFFLES_FOR_UNIFORMITY / DECK_SIZE
    per_card = [sum((o - expected) ** 2 / expected for o in row) for row in counts]
    statistic = sum(per_card)
    p_value = chi_square_p_value(statistic, (DECK_SIZE - 1) ** 2)
    worst_card_p = min(chi_square_p_value(s, DECK_SIZE - 1) for s in per_card)
    record_property("chi_square", statistic)
    record_property("p_value", p_value)
    print(
        f"\nchi-square {statistic:.1f} on {(DECK_SIZE - 1) ** 2} df, p = {p_value:.4f}; worst card p = {worst_card_p:.4f}"
    )
    assert p_value > 0.001
    # Bonferroni over the 52 cards: no single card's positions may look biased either.
    assert worst_card_p > 0.001 / DECK_SIZE


def test_a_biased_shuffle_is_caught_by_the_same_statistic() -> None:
    # Guard against a test that always passes: a modulo-biased shuffle with byte-sized draws must fail.
    counts = [[0] * DECK_SIZE for _ in range(DECK_SIZE)]
    for i in range(SHUFFLES_FOR_UNIFORMITY // 4):
        stream = hashlib.sha256(b"biased" + i.to_bytes(4, "big")).digest() * 2
        deck = list(range(DECK_SIZE))
        for step, position in enumerate(range(DECK_SIZE - 1, 0, -1)):
            j = stream[step] % (position + 1)
            deck[position], deck[j] = deck[j], deck[position]
        for position, card in enumerate(deck):
            counts[card][position] += 1
    expected = (SHUFFLES_FOR_UNIFORMITY // 4) / DECK_SIZE
    statistic = sum((o - expected) ** 2 / expected for row in counts for o in row)
    assert chi_square_p_value(statistic, (DECK_SIZE - 1) ** 2) < 1e-6


def test_a_javascript_implementation_from_the_spec_agrees(tmp_path: Path) -> None:
    # A third implementation in another language (tests/fairness/spec_shuffle.mjs) shows the spec is
    # enough to re-implement the shuffle; it needs Node.js, which the machines have for `buf`.
    node = require_node("the JavaScript cross-check of the spec")
    done = subprocess.run(
        [node, str(Path(__file__).with_name("spec_shuffle.mjs"))],
        input=json.dumps(VECTORS),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    results = [json.loads(line) for line in done.stdout.splitlines()]
    expected = [
        {"name": v["name"], "commitment": v["commitment"], "deck": v["deck"]} for v in SHUFFLE_VECTORS
    ]
    assert results == expected
