"""The web client in Russian and English (issue 36): one catalogue (web/src/i18n) holds every text the
page shows, each in both languages with its plural forms and the same parameters; every refusal
reason of the error catalogue reads as a sentence a player understands, never its code; the
language comes from the player's choice, then Telegram's `language_code`, then the browser; numbers
and chips are written as each language writes them. And no text reaches the page from anywhere else:
web/e2e/i18n_scan.mjs follows, with the TypeScript checker, every value that lands in the DOM back to
its literals and names each one that is not the catalogue's (run here on the page, and on a
fixture with each kind of leak, so the scan is known to see them)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from tests.node import WEB, require_node, run_web_script

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "protos" / "poker" / "common" / "v1" / "common.proto"
THIN = "\u202f"


def _cases(tmp_path: Path, cases: dict[str, Any]) -> list[dict[str, Any]]:
    return run_web_script("e2e/i18n_cases.ts", cases, tmp_path, "the page's catalogue")


def _answers(lines: list[dict[str, Any]], kind: str) -> list[Any]:
    return [line[kind] for line in lines if kind in line]


def _reasons() -> list[str]:
    enum = PROTO.read_text().split("enum ErrorReason {", 1)[1].split("}", 1)[0]
    return [name for name in re.findall(r"ERROR_REASON_([A-Z0-9_]+) = \d+;", enum) if name != "UNSPECIFIED"]


def test_every_entry_has_russian_and_english_none_empty_with_the_same_parameters(tmp_path: Path) -> None:
    lines = _cases(tmp_path, {})
    assert _answers(lines, "catalogue") == [[]]
    [uncovered] = _answers(lines, "uncovered")
    assert uncovered == {"reasons": [], "codes": []}
    assert next(line["reasons"] for line in lines if "reasons" in line) == len(_reasons())


def test_the_catalogue_check_names_each_missing_empty_or_mismatched_entry(tmp_path: Path) -> None:
    bad = {
        "ok.entry": {"ru": "Лобби", "en": "Lobby"},
        "no.russian": {"en": "Lobby"},
        "empty.english": {"ru": "Лобби", "en": " "},
        "plural.short": {
            "ru": {"one": "{count} место", "other": "{count} места"},
            "en": {"one": "a", "other": "b"},
        },
        "params.differ": {"ru": "{amount} фишек", "en": "{count} chips"},
        "untranslated": {"ru": "Buy chips", "en": "Buy chips"},
        "russian.in.english": {"ru": "Купить", "en": "Купить"},
    }
    [problems] = _answers(_cases(tmp_path, {"catalogue": bad}), "catalogue")
    assert problems == [
        "no.russian: no ru",
        "empty.english: en is empty",
        'plural.short: ru has no plural form "few"',
        'plural.short: ru has no plural form "many"',
        "plural.short: ru fills {count} but en {}",
        "params.differ: ru fills {amount} but en {count}",
        'untranslated: ru has the English word "Buy"',
        'untranslated: ru has the English word "chips"',
        'russian.in.english: en has the Russian word "Купить"',
    ]


def test_the_language_is_the_players_choice_then_telegrams_then_the_browsers(tmp_path: Path) -> None:
    sources = [
        ({"telegram": "ru"}, "ru"),
        # The languages whose players read Russian get the Russian page.
        ({"telegram": "uk"}, "ru"),
        ({"telegram": "be"}, "ru"),
        ({"telegram": "kk"}, "ru"),
        ({"telegram": "en"}, "en"),
        ({"telegram": "pt-br"}, "en"),
        # Telegram's language before the browser's; the player's own choice before both.
        ({"telegram": "en", "browser": ["ru-RU"]}, "en"),
        ({"stored": "en", "telegram": "ru", "browser": ["ru-RU"]}, "en"),
        ({"stored": "ru", "browser": ["en-US"]}, "ru"),
        ({"stored": "de", "browser": ["kk-KZ"]}, "ru"),
        # Outside Telegram the browser's first language decides; nothing at all is Russian.
        ({"browser": ["en-US", "ru"]}, "en"),
        ({"browser": ["de-DE", "ru"]}, "en"),
        ({"browser": ["ru-RU"]}, "ru"),
        ({}, "ru"),
    ]
    lines = _cases(tmp_path, {"pick": [given for given, _ in sources]})
    assert _answers(lines, "pick") == [expected for _, expected in sources]


def test_russian_plurals_take_the_form_of_the_count_and_numbers_are_written_per_language(
    tmp_path: Path,
) -> None:
    counts = [0, 1, 2, 4, 5, 11, 12, 14, 21, 22, 25, 101, 111, 1_000_001]
    texts = [{"lang": "ru", "key": "room.free_seats", "params": {"count": n}} for n in counts]
    texts += [{"lang": "en", "key": "room.free_seats", "params": {"count": n}} for n in (1, 2)]
    texts += [{"lang": "ru", "key": "purchase.credited", "params": {"count": n}} for n in (1, 3, 5000)]
    numbers = [
        {"lang": "ru", "value": "1234567"},
        {"lang": "en", "value": "1234567"},
        {"lang": "ru", "value": "-1500", "signed": True},
        {"lang": "en", "value": "445", "signed": True},
        {"lang": "ru", "value": "999"},
    ]
    lines = _cases(tmp_path, {"texts": texts, "numbers": numbers})
    assert _answers(lines, "text") == [
        "0 свободных мест",
        "1 свободное место",
        "2 свободных места",
        "4 свободных места",
        "5 свободных мест",
        "11 свободных мест",
        "12 свободных мест",
        "14 свободных мест",
        "21 свободное место",
        "22 свободных места",
        "25 свободных мест",
        "101 свободное место",
        "111 свободных мест",
        f"1{THIN}000{THIN}001 свободное место",
        "1 free seat",
        "2 free seats",
        "Зачислена 1 фишка",
        "Зачислены 3 фишки",
        f"Зачислено 5{THIN}000 фишек",
    ]
    assert _answers(lines, "number") == [
        f"1{THIN}234{THIN}567",
        "1,234,567",
        f"-1{THIN}500",
        "+445",
        "999",
    ]


def test_hands_and_table_notices_read_in_russian_from_the_tables_english(tmp_path: Path) -> None:
    hands = [
        ("Two pair, Aces and Kings", "Две пары, тузы и короли"),
        ("Full house, Kings full of Sixes", "Фулл-хаус, короли на шестёрках"),
        ("Straight, Ace high", "Стрит до туза"),
        ("One pair, Fours", "Пара четвёрок"),
        ("Three of a kind, Queens", "Тройка дам"),
        ("High card, Jack", "Старшая карта: валет"),
        ("Royal flush", "Роял-флеш"),
        ("Something new", "Something new"),  # a name this page does not know: as it came
    ]
    notices = [
        ("BLIND_POSTED", "posts small blind 5", "малый блайнд 5"),
        ("BLIND_POSTED", "posts big blind 1000", f"большой блайнд 1{THIN}000"),
        ("UNCALLED_BET_RETURNED", "660 returned", "возвращено 660 (неуравненная ставка)"),
        ("CARDS_MUCKED", "mucked", "карты сброшены без показа"),
        ("HAND_ENDED", "hand ended, rake 0", "раздача окончена, рейк 0"),
        (
            "PLAYER_SAT_OUT",
            "bob timed out 2 hands in a row",
            "bob отходит: время хода вышло в 2 раздачах подряд",
        ),
        ("HOUSE_DECISION", "box 1: TAKE_ANTE", "бокс 1: забрать анте"),
        (
            "TABLE_CLOSING",
            "this table closes after the hand; your chips go back to your wallet",
            "стол закрывается после этой раздачи; ваши фишки вернутся в кошелёк",
        ),
        ("NEW_CODE", "something new", "something new"),
    ]
    lines = _cases(
        tmp_path,
        {
            "hands": [{"lang": "ru", "description": d} for d, _ in hands]
            + [{"lang": "en", "description": "Two pair, Aces and Kings"}],
            "notices": [{"lang": "ru", "code": c, "text": text} for c, text, _ in notices]
            + [{"lang": "en", "code": "BLIND_POSTED", "text": "posts small blind 5"}],
        },
    )
    assert _answers(lines, "hand") == [expected for _, expected in hands] + ["Two pair, Aces and Kings"]
    assert _answers(lines, "notice") == [expected for *_, expected in notices] + ["small blind 5"]


def test_every_refusal_reason_reads_as_a_sentence_in_both_languages_never_as_its_code(tmp_path: Path) -> None:
    reasons = _reasons()
    refusals = [
        {"lang": lang, "code": "FailedPrecondition", "reason": r} for lang in ("ru", "en") for r in reasons
    ]
    # Without a reason (the network, the gateway): the Connect code's sentence; a reason this page does
    # not know yet: a general sentence with the code, so support can tell what it was.
    refusals += [
        {"lang": "ru", "code": "Unavailable", "reason": ""},
        {"lang": "en", "code": "Unknown", "reason": ""},
        {"lang": "ru", "code": "FailedPrecondition", "reason": "A_REASON_FROM_THE_FUTURE"},
        {"lang": "en", "code": "FailedPrecondition", "reason": "A_REASON_FROM_THE_FUTURE"},
    ]
    answers = _answers(_cases(tmp_path, {"refusals": refusals}), "refusal")
    words = dict(zip([(r["lang"], r["reason"]) for r in refusals], answers, strict=True))
    for lang in ("ru", "en"):
        for reason in reasons:
            sentence = words[(lang, reason)]
            assert reason not in sentence, (lang, reason, sentence)
            assert "_" not in sentence, (lang, reason, sentence)
            assert sentence[0].isupper(), (lang, reason, sentence)
            assert sentence.endswith("."), (lang, reason, sentence)
            assert bool(re.search("[а-яё]", sentence)) == (lang == "ru"), (lang, reason, sentence)
    assert words[("ru", "NOT_YOUR_TURN")] == "Сейчас не ваш ход."
    assert words[("en", "INIT_DATA_INVALID")] == (
        "Telegram could not confirm your sign-in. Close the Mini App and open it again from the bot."
    )
    assert words[("ru", "")] == "Нет связи с сервером. Попробуйте через минуту."
    assert "initData" not in " ".join(answers)
    assert "A_REASON_FROM_THE_FUTURE" in words[("ru", "A_REASON_FROM_THE_FUTURE")]
    assert "A_REASON_FROM_THE_FUTURE" in words[("en", "A_REASON_FROM_THE_FUTURE")]


def _scan(root: Path | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    node = require_node("the catalogue scan", WEB / "node_modules" / "typescript", WEB / "src" / "gen")
    args = [node, "e2e/i18n_scan.mjs"] + ([str(root)] if root else [])
    done = subprocess.run(args, cwd=WEB, capture_output=True, text=True, timeout=180, check=True)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return [line for line in lines if "summary" not in line], lines[-1]["summary"]


def test_no_text_reaches_the_page_from_outside_the_catalogue() -> None:
    found, summary = _scan()
    assert found == [], "\n".join(f"{f['file']}:{f['line']}: {f['text']} ({f['sink']})" for f in found)
    # Every screen was read, and the scan saw the page's texts land (not a scan of nothing).
    assert {"main.ts", "lobby.ts", "table_screen.ts", "house_screen.ts", "hands_screen.ts", "ui.ts"} <= set(
        summary["files"]
    )
    assert summary["sinks"] > 300


FIXTURE_UI = """
export function h(tag: string, attributes: Record<string, unknown> = {}, ...children: unknown[]): HTMLElement {
  const element = document.createElement(tag);
  void attributes;
  element.append(...children.map(String));
  return element;
}
export function toast(text: string): void {
  document.getElementById("toast")?.replaceChildren(text);
}
"""
FIXTURE_CATALOGUE = """
export function t(key: string, params: Record<string, unknown> = {}): string {
  return key + Object.keys(params).join("");
}
"""
FIXTURE_SCREEN = """
import { h, toast } from "./ui";
import { t } from "./i18n";

type Link = "live" | "lost";
interface State { link: Link; text: string }
const STREET: Record<number, string> = { 1: "Pre-flop" };
const RANKS = "AKQJT"; // i18n-neutral: card notation
const CODES = new Set(["POT_AWARDED"]);

function seats(n: number): string {
  return n > 1 ? `${n} free seats` : t("room.one_seat");
}

export function screen(state: State, n: number): HTMLElement {
  const element = h("div", { title: "Close", class: "room big", "data-pool": "GRAM" }, STREET[n], seats(n), RANKS[n], t("hello", { who: "You" }));
  if (state.link === "lost" && CODES.has("POT_AWARDED")) element.textContent = "Hello";
  localStorage.setItem("poker.key", "value");
  toast(`cashed out ${n}`);
  return element;
}

export function connect(onLink: (s: State) => void): void {
  onLink({ link: "live", text: "connected" });
}

export function show(state: State, element: HTMLElement): void {
  element.textContent = state.text;
}

function note(line: string, log: HTMLElement): void {
  log.append(h("li", {}, line));
}

function seedStep(say: (line: string) => void): void {
  say("Your seed went in");
}

export function wire(log: HTMLElement): void {
  seedStep((line) => note(line, log));
  for (const line of ["a line of the log"]) note(line, log);
  const problems: string[] = [];
  problems.push("a problem");
  log.replaceChildren(...problems.map((p) => h("p", {}, p)));
}
"""


def test_the_scan_names_each_text_that_reaches_the_page_from_outside_the_catalogue(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "i18n").mkdir(parents=True)
    (src / "ui.ts").write_text(FIXTURE_UI)
    (src / "i18n" / "index.ts").write_text(FIXTURE_CATALOGUE)
    (src / "screen.ts").write_text(FIXTURE_SCREEN)
    found, summary = _scan(src)
    assert summary["files"] == ["screen.ts", "ui.ts"]
    assert sorted(f["text"] for f in found) == sorted(
        [
            '"Pre-flop"',  # through a table of words
            "`${n} free seats`",  # a function's result
            '"Close"',  # a title attribute
            '"You"',  # a catalogue entry's parameter
            '"Hello"',  # textContent
            "`cashed out ${n}`",  # toast
            '"connected"',  # a property of the page's own type, filled by an object literal
            '"Your seed went in"',  # a callback that puts its argument on the page
            '"a line of the log"',  # a for-of element through a function's parameter
            '"a problem"',  # pushed to an array whose elements reach the page
        ]
    )
    # Not text: class, data-* and storage keys, codes typed as string-literal unions, comparisons,
    # card notation marked i18n-neutral.
    texts = " ".join(f["text"] for f in found)
    for code in ("room big", "GRAM", "poker.key", '"live"', '"lost"', "POT_AWARDED", "AKQJT"):
        assert code not in texts
