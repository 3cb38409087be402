"""Poker hands as people name them: the engine describes a winning hand in English ("Two pair, Aces and
Kings"); `clients.play.words.hand_text` reads that and says it with these entries. A rank has one
entry per form the hand names need: English has two (`Ace`, `Aces`), Russian five cases
(`туз`, `до туза`, `тузы`, `пара тузов`, `тузы на тузах`)."""

from __future__ import annotations

# Per rank, weakest first: English name and plural; Russian name (nominative), of one (genitive,
# "стрит до туза"), several (nominative plural), of several (genitive plural, "пара тузов"), on
# several (prepositional plural, "тузы на королях").
_RANKS = (
    ("Two", "Twos", "двойка", "двойки", "двойки", "двоек", "двойках"),
    ("Three", "Threes", "тройка", "тройки", "тройки", "троек", "тройках"),
    ("Four", "Fours", "четвёрка", "четвёрки", "четвёрки", "четвёрок", "четвёрках"),
    ("Five", "Fives", "пятёрка", "пятёрки", "пятёрки", "пятёрок", "пятёрках"),
    ("Six", "Sixes", "шестёрка", "шестёрки", "шестёрки", "шестёрок", "шестёрках"),
    ("Seven", "Sevens", "семёрка", "семёрки", "семёрки", "семёрок", "семёрках"),
    ("Eight", "Eights", "восьмёрка", "восьмёрки", "восьмёрки", "восьмёрок", "восьмёрках"),
    ("Nine", "Nines", "девятка", "девятки", "девятки", "девяток", "девятках"),
    ("Ten", "Tens", "десятка", "десятки", "десятки", "десяток", "десятках"),
    ("Jack", "Jacks", "валет", "валета", "валеты", "валетов", "валетах"),
    ("Queen", "Queens", "дама", "дамы", "дамы", "дам", "дамах"),
    ("King", "Kings", "король", "короля", "короли", "королей", "королях"),
    ("Ace", "Aces", "туз", "туза", "тузы", "тузов", "тузах"),
)

RANK_NAMES: tuple[str, ...] = tuple(rank[0] for rank in _RANKS)
RANK_PLURALS: tuple[str, ...] = tuple(rank[1] for rank in _RANKS)


def _rank_entries() -> dict[str, dict[str, str]]:
    entries: dict[str, dict[str, str]] = {}
    for en_one, en_many, ru_one, ru_of_one, ru_many, ru_of_many, ru_on_many in _RANKS:
        entries[f"rank.{en_one}.one"] = {"ru": ru_one, "en": en_one}
        entries[f"rank.{en_one}.of_one"] = {"ru": ru_of_one, "en": en_one}
        entries[f"rank.{en_one}.many"] = {"ru": ru_many, "en": en_many}
        entries[f"rank.{en_one}.of_many"] = {"ru": ru_of_many, "en": en_many}
        entries[f"rank.{en_one}.on_many"] = {"ru": ru_on_many, "en": en_many}
    return entries


TEXTS: dict[str, dict[str, str]] = {
    "hand.royal_flush": {"ru": "Роял-флеш", "en": "Royal flush"},
    "hand.straight_flush": {"ru": "Стрит-флеш до {high}", "en": "Straight flush, {high} high"},
    "hand.four_of_a_kind": {"ru": "Каре {rank}", "en": "Four of a kind, {rank}"},
    "hand.full_house": {"ru": "Фулл-хаус, {three} на {pair}", "en": "Full house, {three} full of {pair}"},
    "hand.flush": {"ru": "Флеш до {high}", "en": "Flush, {high} high"},
    "hand.straight": {"ru": "Стрит до {high}", "en": "Straight, {high} high"},
    "hand.three_of_a_kind": {"ru": "Тройка {rank}", "en": "Three of a kind, {rank}"},
    "hand.two_pair": {"ru": "Две пары, {high} и {low}", "en": "Two pair, {high} and {low}"},
    "hand.one_pair": {"ru": "Пара {rank}", "en": "One pair, {rank}"},
    "hand.high_card": {"ru": "Старшая карта: {rank}", "en": "High card, {rank}"},
    # Russian Poker's combinations (the settlement's reasons name them: COMBINATION_TWO_PAIR).
    "combination.NO_COMBINATION": {"ru": "нет комбинации", "en": "no combination"},
    "combination.ACE_KING": {"ru": "туз-король", "en": "ace king"},
    "combination.ONE_PAIR": {"ru": "пара", "en": "one pair"},
    "combination.TWO_PAIR": {"ru": "две пары", "en": "two pair"},
    "combination.THREE_OF_A_KIND": {"ru": "тройка", "en": "three of a kind"},
    "combination.STRAIGHT": {"ru": "стрит", "en": "straight"},
    "combination.FLUSH": {"ru": "флеш", "en": "flush"},
    "combination.FULL_HOUSE": {"ru": "фулл-хаус", "en": "full house"},
    "combination.FOUR_OF_A_KIND": {"ru": "каре", "en": "four of a kind"},
    "combination.STRAIGHT_FLUSH": {"ru": "стрит-флеш", "en": "straight flush"},
    "combination.ROYAL_FLUSH": {"ru": "роял-флеш", "en": "royal flush"},
    **_rank_entries(),
}
