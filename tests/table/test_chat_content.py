"""What a chat message may hold (rules 14; issue 23, item 8): no character that changes how other
text is shown without being seen itself, judged by Unicode category and bidirectional class.

On the old code the check knew C0/C1 controls and two separators only, so U+202E (RIGHT-TO-LEFT
OVERRIDE) and U+2066 (LEFT-TO-RIGHT ISOLATE) reversed or hid what other players read.
"""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service_runtime.errors import InvalidArgument
from services.table.streams.chat import check_text

BIDI_CONTROLS = ("LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI")
EVERY_CODE_POINT = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def _refused(text: str) -> bool:
    try:
        check_text(text)
    except InvalidArgument as error:
        return error.reason == "CHAT_CONTROL_CHARACTERS"
    return False


@pytest.mark.parametrize(
    "char", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
)
def test_each_bidirectional_control_is_refused(char: str) -> None:
    assert _refused(f"gg{char}wp")


def test_every_bidirectional_embedding_override_and_isolate_in_unicode_is_refused() -> None:
    bidi = [c for c in EVERY_CODE_POINT if unicodedata.bidirectional(c) in BIDI_CONTROLS]
    assert len(bidi) >= 9
    assert all(_refused(f"a{c}b") for c in bidi)


def test_invisible_format_characters_are_refused_but_emoji_joiners_are_not() -> None:
    for char in ("\u200b", "\u200e", "\u200f", "\u2060", "\ufeff", "\u00ad", "\u061c"):
        assert _refused(f"a{char}b"), hex(ord(char))
    # Join controls build emoji sequences and are part of Persian and Indic spelling.
    assert not _refused("\U0001f468\u200d\U0001f469\u200d\U0001f467")
    assert not _refused("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645")
    assert not _refused("Привет, удачи! 🍀 ♠♥")


@given(st.text(min_size=1, max_size=50))
def test_a_message_passes_exactly_when_it_holds_no_control_format_or_unassigned_character(text: str) -> None:
    bad = any(
        unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") and c not in "\u200c\u200d"
        for c in text
    )
    if len(text) <= 200:
        assert _refused(text) is bad


def _empty(text: str) -> bool:
    try:
        check_text(text)
    except InvalidArgument as error:
        return error.reason == "CHAT_EMPTY"
    return False


@pytest.mark.parametrize(
    "text",
    [
        " ",
        "   ",
        "\u00a0",  # NO-BREAK SPACE
        "\u3000\u2003",  # IDEOGRAPHIC SPACE, EM SPACE
        "\u3164",  # HANGUL FILLER: a letter that is drawn as nothing
        "\uffa0",  # HALFWIDTH HANGUL FILLER
        "\u115f\u1160",  # HANGUL CHOSEONG and JUNGSEONG FILLERS
        "\u2800\u2800",  # BRAILLE PATTERN BLANK
        "\u17b4\u17b5",  # KHMER VOWEL INHERENT AQ and AA
        "\u0301\u0301",  # combining marks with nothing to sit on
        " \u034f ",  # COMBINING GRAPHEME JOINER between spaces
    ],
)
def test_a_message_that_shows_nothing_is_empty(text: str) -> None:
    """Spaces and characters drawn as nothing passed as a message: a blank line in everyone's chat
    (found against `make run`: "\\u3164", "\\u2800\\u2800" and "   " were all accepted)."""
    assert _empty(text)


def test_a_message_with_something_to_show_is_not_empty() -> None:
    for text in (".", " gg ", "\u00a0ok", "\u3164a", "e\u0301", "\U0001f340", "\u0645\u06cc\u200c\u062e"):
        check_text(text)


def test_marks_stacked_on_one_character_past_what_any_script_needs_are_refused() -> None:
    """Found against `make run`: "a" with 150 x U+0301 was accepted and spilled over the chat lines
    around it. Scripts stack a few marks (Vietnamese two, Hebrew with points and accents four); more
    than `MAX_MARKS_PER_CHARACTER` on one character is refused, with a reason of its own."""
    for text in ("a" + "\u0301" * 150, "ok " + "e" + "\u0300\u0301\u0302\u0303\u0304\u0305\u0306"):
        with pytest.raises(InvalidArgument) as refused:
            check_text(text)
        assert refused.value.reason == "CHAT_STACKED_MARKS"
    for text in (
        "Vie\u0323\u0302t Nam",  # Vietnamese, decomposed: two marks on one letter
        "\u05d1\u05bc\u05b0\u05bc\u0591\u05bd",  # Hebrew: a letter with dagesh, sheva, an accent, meteg
        "e" + "\u0301" * 6,
        "\u0915\u094d\u0937\u093f",  # Devanagari conjunct with a vowel sign
    ):
        check_text(text)
