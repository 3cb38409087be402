"""The display-name rules (services/lobby/display_names.py), pure: normalisation, what is refused and
why, the lenient cleaning of a sign-in's suggestion, and the names tried for a new profile."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service_runtime.errors import InvalidArgument
from services.lobby.display_names import (
    MAX_LENGTH,
    candidates,
    is_valid,
    name_key,
    normalise,
    suggestion_from,
)


def _refusal(name: str) -> str:
    with pytest.raises(InvalidArgument) as caught:
        normalise(name)
    assert caught.value.reason == "DISPLAY_NAME_INVALID"
    assert caught.value.metadata == {"field": "display_name"}
    return caught.value.message


def test_normalise_folds_compatibility_forms_and_collapses_spaces() -> None:
    assert normalise("  Ann \u00a0\u3000 Lee  ") == "Ann Lee"
    assert normalise("\uff21\uff4e\uff4e") == "Ann"  # full-width letters
    assert normalise("Дуэль") == "Дуэль"
    assert normalise("李明") == "李明"
    assert normalise("o'k".replace("'", "_")) == "o_k"
    assert normalise("R2-D2.v1") == "R2-D2.v1"
    assert name_key("ANN  lee") == name_key("ann Lee") == "ann lee"


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("A", "2 to 24 characters"),
        ("   ", "2 to 24 characters"),
        ("x" * 25, "2 to 24 characters"),
        ("tg:1", "':'"),
        ("Ann:Lee", "':'"),
        ("Ann\x00", "control"),
        ("Ann\tLee", "control"),
        ("Ann\nLee", "control"),
        ("Ann\u200bLee", "control"),  # zero-width space (Cf)
        ("Ann!", "letters, digits, spaces"),
        ("Ann 🌸", "letters, digits, spaces"),
        ("a/b", "letters, digits, spaces"),
        ("12345", "at least one letter"),
        ("--..", "at least one letter"),
        ("Dealer", "reserved"),
        ("HOUSE", "reserved"),
        ("admin", "reserved"),
        ("Lobby", "reserved"),
        ("payments", "reserved"),
        ("Player 1234", "reserved for generated names"),
        ("player   77", "reserved for generated names"),
        # The shape of another seat's handle (`p-` and 12 hex digits, table views): found by a tester.
        ("p-170feaf2e5b9", "handle"),
        ("P-170FEAF2E5B9", "handle"),
    ],
)
def test_invalid_names_are_refused_naming_the_rule(name: str, rule: str) -> None:
    assert rule in _refusal(name)


def test_names_near_the_reserved_ones_are_fine() -> None:
    assert normalise("Dealer Dan") == "Dealer Dan"
    assert normalise("Player") == "Player"
    assert normalise("Player One") == "Player One"
    assert normalise("xx") == "xx"
    assert normalise("x" * MAX_LENGTH) == "x" * MAX_LENGTH


def test_a_suggestion_is_cleaned_leniently_and_a_telegram_id_is_never_one() -> None:
    assert suggestion_from("Ann 🌸", "tg:42") == "Ann"
    assert suggestion_from("  Ann\tLee ", "tg:42") == "Ann Lee"
    assert suggestion_from("A very long first name indeed, really", "tg:42") == "A very long first name i"
    assert suggestion_from("🌸🌸", "tg:42") is None
    assert suggestion_from("A", "tg:42") is None
    assert suggestion_from("Admin", "tg:42") is None
    assert suggestion_from("", "tg:4242") is None
    # A name that spells the Telegram account would give it away.
    assert suggestion_from("tg:4242", "tg:4242") is None
    assert suggestion_from("Ann 4242", "tg:4242") is None
    # Development and bot ids are names already.
    assert suggestion_from("", "alice") == "alice"
    assert suggestion_from("", "bot-1") == "bot-1"
    assert suggestion_from("Bob", "alice") == "Bob"


def test_candidates_start_with_the_base_then_add_ever_longer_numbers() -> None:
    names = list(candidates("Ann", random.Random(7)))
    assert names[0] == "Ann"
    digits = [len(name.split(" ")[1]) for name in names[1:]]
    assert digits == sorted(digits)
    assert digits[0] == 2
    assert all(re.fullmatch(r"Ann \d+", name) for name in names[1:])
    long = list(candidates("x" * 24, random.Random(7)))
    assert long[0] == "x" * 24
    assert all(len(name) <= MAX_LENGTH for name in long)
    assert re.fullmatch(r"x{21} \d\d", long[1])
    generated = list(candidates(None, random.Random(7)))
    assert generated
    assert all(re.fullmatch(r"Player \d{4,6}", name) for name in generated)


# --------------------------------------------------------------------------------- properties

ANY_TEXT = st.text(max_size=40)
# Text made of what names are made of, and some of what they are not.
NAME_LIKE = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("abcXYZ019 ._-:!\t\u00a0\u3000")),
        st.characters(categories=["L", "N", "Zs"]),
    ),
    max_size=40,
)


@given(st.one_of(ANY_TEXT, NAME_LIKE))
def test_normalise_is_idempotent(text: str) -> None:
    try:
        once = normalise(text)
    except InvalidArgument:
        return
    assert normalise(once) == once
    assert is_valid(once)
    assert name_key(once) == name_key(text)


@given(st.one_of(ANY_TEXT, NAME_LIKE), st.characters(categories=["Cc", "Cf"]), st.integers(0, 40))
def test_normalise_never_accepts_a_control_character_or_a_colon(text: str, bad: str, at: int) -> None:
    for inserted in (text[:at] + bad + text[at:], text[:at] + ":" + text[at:]):
        try:
            result = normalise(inserted)
        except InvalidArgument:
            continue
        assert ":" not in result
        assert not any(unicodedata.category(c).startswith("C") for c in result)
        raise AssertionError(f"accepted {inserted!r} as {result!r}")


@given(st.one_of(ANY_TEXT, NAME_LIKE), st.sampled_from(["tg:4242", "alice", "bot-1", "x:y"]), st.integers())
def test_every_candidate_is_valid_and_fits(suggested: str, player_id: str, seed: int) -> None:
    suggestion = suggestion_from(suggested, player_id)
    assert suggestion is None or is_valid(suggestion)
    assert suggestion is None or ":" not in suggestion
    rng = random.Random(seed)
    names = [*candidates(suggestion, rng), *candidates(None, rng)]
    assert names
    for name in names:
        assert len(name) <= MAX_LENGTH
        assert is_valid(name, generated=True), name
        assert ":" not in name
