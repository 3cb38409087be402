"""The client's words in Russian and English: every catalogue entry in both, with the same parameters;
how the language is chosen (`--lang`, POKER_PLAY_LANG, the locale); and what the services send in
English (hand names, notices, refusals) said in Russian."""

from __future__ import annotations

import re

import pytest

from clients.play import texts
from clients.play import view_model as vm
from clients.play.catalogue import CATALOGUE, hands
from clients.play.main import build_parser, settings_from
from clients.play.notices import notice_text
from clients.play.words import hand_text, note_text, refusal_text, words
from poker.table.v1 import table_pb2
from poker_engine.cards import RANK_NAMES, RANK_PLURALS, parse_cards
from poker_engine.config import PostKind, Variant
from poker_engine.evaluator import evaluate
from poker_engine.events import (
    BlindPosted,
    CardsMucked,
    Event,
    HandEnded,
    HandStarted,
    SeatInfo,
    SeatResult,
    UncalledBetReturned,
)
from services.fairness.verification import MismatchKind
from services.table.cash.views import event_body

CYRILLIC = re.compile(r"[А-Яа-яЁё]")
# Entries whose Russian is rightly the same letters as the English (names, symbols, figures).
SAME_IN_BOTH = frozenset({"sticker.gg"})


def test_every_entry_is_in_russian_and_english_with_the_same_parameters() -> None:
    assert len(CATALOGUE) > 300
    for key, entry in CATALOGUE.items():
        assert set(entry) == set(texts.LANGUAGES), key
        assert entry["ru"].strip(), key
        assert entry["en"].strip(), key
        assert texts.parameters(entry["ru"]) == texts.parameters(entry["en"]), key
        # Both format with their parameters (no stray brace).
        values = {name: "1" for name in texts.parameters(entry["en"])}
        russian, english = entry["ru"].format(**values), entry["en"].format(**values)
        assert not CYRILLIC.search(english), key
        # The Russian is in Russian (its only Latin words are names such as GRAM or POKER_AUTH_KEYS).
        if key not in SAME_IN_BOTH:
            assert CYRILLIC.search(russian) or not re.search(r"[A-Za-z]{3,}", russian), key


def test_the_ranks_are_the_engines() -> None:
    assert hands.RANK_NAMES == RANK_NAMES
    assert hands.RANK_PLURALS == RANK_PLURALS


# One hand of each category, as the engine names it.
HANDS = [
    ("As Ks Qs Js Ts", "Роял-флеш"),
    ("9h 8h 7h 6h 5h", "Стрит-флеш до девятки"),
    ("Ac Ad Ah As 2c", "Каре тузов"),
    ("Ac Ad Ah Kc Kd", "Фулл-хаус, тузы на королях"),
    ("Ac 9c 7c 4c 2c", "Флеш до туза"),
    ("5c 4d 3h 2s Ac", "Стрит до пятёрки"),
    ("Qc Qd Qh 9s 2c", "Тройка дам"),
    ("Ac Ad Kc Kd 2c", "Две пары, тузы и короли"),
    ("Kc Kd 9h 7s 2c", "Пара королей"),
    ("Ac Jd 9h 7s 2c", "Старшая карта: туз"),
]


@pytest.mark.parametrize(("cards", "russian"), HANDS)
def test_the_engines_hand_names_read_in_both_languages(cards: str, russian: str) -> None:
    description = evaluate(parse_cards(cards)).describe()
    assert hand_text(description) == description  # English: the engine's own words
    with texts.using("ru"):
        assert hand_text(description) == russian
    assert hand_text("a flush") == "a flush"  # not the engine's form: as it came


def test_the_language_is_the_flag_then_poker_play_lang_then_the_locale() -> None:
    choose = texts.choose_language
    assert choose("en", "ru", {"LANG": "ru_RU.UTF-8"}) == "en"
    assert choose(None, "en", {"LANG": "ru_RU.UTF-8"}) == "en"
    assert choose(None, "", {"LANG": "ru_RU.UTF-8"}) == "ru"
    assert choose(None, "", {"LANG": "en_GB.UTF-8"}) == "en"
    assert choose(None, "", {"LANG": "de_DE.UTF-8"}) == "en"
    assert choose(None, "", {"LC_ALL": "ru_UA.UTF-8", "LANG": "en_US.UTF-8"}) == "ru"
    assert choose(None, "", {"LC_ALL": "", "LC_MESSAGES": "en_US", "LANG": "ru_RU"}) == "en"
    # No locale, or the plain C / POSIX one: Russian, as the operator's players read.
    for nothing in ({}, {"LANG": "C"}, {"LANG": "C.UTF-8"}, {"LC_ALL": "POSIX"}, {"LANG": ""}):
        assert choose(None, "", nothing) == "ru", nothing
    assert choose("de", "fr", {"LANG": "en_US"}) == "en"  # no language: passed over


def test_the_command_line_and_the_environment_choose_the_language() -> None:
    assert settings_from([], {"LANG": "en_US.UTF-8"}).lang == "en"
    assert settings_from([], {"LANG": "C"}).lang == "ru"
    assert settings_from([], {"POKER_PLAY_LANG": "en", "LANG": "ru_RU.UTF-8"}).lang == "en"
    assert settings_from(["--lang", "ru"], {"POKER_PLAY_LANG": "en"}).lang == "ru"
    assert settings_from(["--lang=en"], {}).lang == "en"
    with pytest.raises(SystemExit):
        settings_from([], {"POKER_PLAY_LANG": "de"})
    with pytest.raises(SystemExit):
        settings_from(["--lang", "de"], {})
    # Choosing is not setting: the screens' language changes when the client starts (main).
    assert texts.language() == "en"


def test_help_names_the_option_in_the_language_chosen(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--lang {ru,en}" in build_parser("en").format_help()
    assert "POKER_PLAY_LANG" in build_parser("en").format_help()
    for argv, env, words_shown in (
        (["--help"], {"LANG": "ru_RU.UTF-8"}, "язык экранов"),
        (["--lang", "en", "--help"], {"LANG": "ru_RU.UTF-8"}, "language of the screens"),
        (["--help"], {"POKER_PLAY_LANG": "en"}, "language of the screens"),
    ):
        with pytest.raises(SystemExit):
            settings_from(argv, env)
        assert words_shown in capsys.readouterr().out


def test_the_tables_notices_read_in_russian_and_an_unknown_one_as_it_came() -> None:
    with texts.using("ru"):
        assert notice_text("HAND_STARTED", "hand h-9 started") == "раздача h-9 началась"
        assert notice_text("BLIND_POSTED", "posts small blind 5") == "ставит малый блайнд 5"
        assert notice_text("BLIND_POSTED", "posts dead small blind 5") == "ставит мёртвый малый блайнд 5"
        assert notice_text("HAND_ENDED", "hand ended, rake 3") == "раздача окончена, рейк 3"
        assert notice_text("PLAYER_SAT_OUT", "bob timed out 2 hands in a row") == (
            "bob пропускает раздачи: время хода вышло в раздачах подряд: 2"
        )
        assert notice_text("PLAYER_SAT_OUT", "bob") == "bob пропускает раздачи"
        assert notice_text("HOUSE_DECISION", "box 1: TAKE_ANTE") == "бокс 1: забрать анте"
        assert notice_text("SOMETHING_NEW", "a new notice") == "a new notice"
        assert notice_text("HAND_STARTED", "the hand began") == "the hand began"
    assert notice_text("HAND_STARTED", "hand h-9 started") == "hand h-9 started"


def test_every_notice_the_table_makes_of_a_hand_reads_in_russian() -> None:
    """The table's own words for the engine's events (services/table/cash/views.py), not a copy of them."""
    seats = (SeatInfo(0, "ann", 1000), SeatInfo(1, "bob", 1000))
    events: list[Event] = [
        HandStarted("h-7", Variant.NO_LIMIT, 0, 5, 10, 0, 0, 1, 500, 30, seats),
        *(BlindPosted(0, post, 5, all_in=False) for post in PostKind),
        UncalledBetReturned(1, 40),
        CardsMucked(1, (0, 1)),
        HandEnded((SeatResult(0, "ann", 1000, 1010), SeatResult(1, "bob", 1000, 990)), 2, (), ()),
    ]
    for event in events:
        _, fields = event_body(event, None)
        sent = fields["notice"]
        assert isinstance(sent, table_pb2.TableNotice)
        with texts.using("ru"):
            said = notice_text(sent.code, sent.text)
        assert said != sent.text, sent
        assert CYRILLIC.search(said), said
        assert not re.search(r"[A-Za-z]{3,}", said.replace("h-7", "")), said
        assert notice_text(sent.code, sent.text) == sent.text  # English: the table's own line


def test_codes_and_refusals_read_in_russian() -> None:
    with texts.using("ru"):
        assert words("HOUSE_GAME_RESULT") == "игра против дилера"
        assert words("COMBINATION_TWO_PAIR") == "комбинация: две пары"
        assert words("BONUS_NO_COMBINATION") == "бонус: нет комбинации"
        assert words("JACKPOT_CONTRIBUTION_10_PERCENT") == "взнос в джекпот 10%"
        assert note_text("TIMEOUT box 2 FOLD") == "бокс 2: время вышло - фолд (решение по правилам)"
        assert note_text("RESUMED after a shard restart or takeover") == (
            "возобновлён после перезапуска или смены сервера"
        )
        refused = refusal_text("FAILED_PRECONDITION", "NOT_YOUR_TURN", "seat 2 is to act")
        assert refused == "сейчас не ваш ход (FAILED_PRECONDITION NOT_YOUR_TURN)"
        # A reason the catalogue does not know: the services' own words stay, with the codes.
        assert refusal_text("ABORTED", "BRAND_NEW", "try again") == "try again (ABORTED BRAND_NEW)"
    assert words("COMBINATION_TWO_PAIR") == "combination two pair"
    assert refusal_text("FAILED_PRECONDITION", "NOT_YOUR_TURN", "seat 2 is to act") == (
        "FAILED_PRECONDITION NOT_YOUR_TURN: seat 2 is to act"
    )


def test_the_last_hand_reads_in_russian() -> None:
    """`X won 395 with One pair, Kings`, in the words of a Russian poker room."""
    view = table_pb2.TableView(
        seats=[
            table_pb2.SeatView(seat=1, player_id="ann", display_name="ann"),
            table_pb2.SeatView(seat=2, player_id="bob", display_name="bob"),
        ],
        awards=[
            table_pb2.PotAward(pot_index=0, seats=[2], amounts=[395], hand_description="One pair, Kings")
        ],
    )
    results = (vm.SeatResult("bob", "bob", 195), vm.SeatResult("ann", "ann", -195))
    with texts.using("ru"):
        assert vm.awards_text(view, results, "ann") == (
            "прошлая раздача - bob +195, вы -195; банк 395: победитель - bob, комбинация: Пара королей"
        )
        choices = vm.action_choices(
            table_pb2.LegalActions(
                actions=[table_pb2.ACTION_KIND_FOLD, table_pb2.ACTION_KIND_CALL, table_pb2.ACTION_KIND_RAISE],
                call_amount=10,
                min_amount=20,
                max_amount=995,
            )
        )
        assert [c.label for c in choices] == ["Фолд", "Колл 10", "Рейз до 20-995"]
        assert vm.pot_names(3) == ["основной банк", "побочный банк 1", "побочный банк 2"]


def test_every_fairness_verdict_a_check_can_give_has_words_in_both_languages() -> None:
    """A failed check names its verdict in the player's words: every MismatchKind the verifier knows
    (issue 41 added CLIENT_SEED_HASH), none left to the verifier's English description."""
    missing = [kind.value for kind in MismatchKind if not texts.known(f"mismatch.{kind.value}")]
    assert missing == []
