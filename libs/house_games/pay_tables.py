"""Pay tables of both games as frozen settings, with the operator's defaults and JSON-friendly loading.

Odds are "N to 1" integers: a winning stake S is returned and N * S is paid on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from house_games.errors import InvalidSettingsError
from house_games.russian_combinations import RussianCombination
from poker_engine.evaluator import HandCategory


def _frozen(mapping: Mapping[str, int]) -> Mapping[str, int]:
    return MappingProxyType(dict(mapping))


def _parse_odds(raw: object, names: tuple[str, ...], what: str) -> dict[str, int]:
    if not isinstance(raw, Mapping):
        raise InvalidSettingsError(f"{what} must be a mapping of combination name to odds")
    unknown = sorted(set(raw) - set(names))
    missing = sorted(set(names) - set(raw))
    problems = [f"unknown {name}" for name in unknown] + [f"missing {name}" for name in missing]
    for name in names:
        value = raw.get(name)
        if name in raw and (type(value) is not int or value < 0):
            problems.append(f"{name} must be a non-negative integer, got {value!r}")
    if problems:
        raise InvalidSettingsError(f"{what}: " + "; ".join(problems))
    return {name: int(raw[name]) for name in names}


_HOLDEM_NAMES = tuple(category.name for category in HandCategory)

DEFAULT_CASINO_HOLDEM_ANTE_ODDS: Mapping[str, int] = _frozen(
    {
        "ROYAL_FLUSH": 100,
        "STRAIGHT_FLUSH": 20,
        "FOUR_OF_A_KIND": 10,
        "FULL_HOUSE": 3,
        "FLUSH": 2,
        # "Straight or lower 1:1".
        "STRAIGHT": 1,
        "THREE_OF_A_KIND": 1,
        "TWO_PAIR": 1,
        "ONE_PAIR": 1,
        "HIGH_CARD": 1,
    }
)


@dataclass(frozen=True, slots=True)
class CasinoHoldemPayTable:
    """Ante odds by the player's hand category (the bet always pays 1:1)."""

    ante_odds: Mapping[str, int] = field(default_factory=lambda: DEFAULT_CASINO_HOLDEM_ANTE_ODDS)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "ante_odds", _frozen(_parse_odds(self.ante_odds, _HOLDEM_NAMES, "ante pay table"))
        )

    def ante(self, category: HandCategory) -> int:
        return self.ante_odds[category.name]


_RUSSIAN_NAMES = tuple(kind.name for kind in RussianCombination if kind != RussianCombination.NO_COMBINATION)

DEFAULT_RUSSIAN_POKER_ODDS: Mapping[str, int] = _frozen(
    {
        "ACE_KING": 1,
        "ONE_PAIR": 1,
        "TWO_PAIR": 2,
        "THREE_OF_A_KIND": 3,
        "STRAIGHT": 4,
        "FLUSH": 5,
        "FULL_HOUSE": 7,
        "FOUR_OF_A_KIND": 20,
        "STRAIGHT_FLUSH": 50,
        "ROYAL_FLUSH": 100,
    }
)


@dataclass(frozen=True, slots=True)
class RussianPokerPayTable:
    """Odds paid on the bet by combination (main pay table)."""

    odds: Mapping[str, int] = field(default_factory=lambda: DEFAULT_RUSSIAN_POKER_ODDS)

    def __post_init__(self) -> None:
        object.__setattr__(self, "odds", _frozen(_parse_odds(self.odds, _RUSSIAN_NAMES, "main pay table")))

    def bet(self, kind: RussianCombination) -> int:
        if kind == RussianCombination.NO_COMBINATION:
            return 0
        return self.odds[kind.name]


_BONUS_FIXED_NAMES = ("TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH", "FULL_HOUSE", "FOUR_OF_A_KIND")
_BONUS_JACKPOT_NAMES = ("STRAIGHT_FLUSH", "ROYAL_FLUSH")

DEFAULT_BONUS_ODDS: Mapping[str, int] = _frozen(
    {
        "TWO_PAIR": 2,
        "THREE_OF_A_KIND": 7,
        "STRAIGHT": 40,
        "FLUSH": 50,
        "FULL_HOUSE": 70,
        "FOUR_OF_A_KIND": 200,
    }
)
DEFAULT_BONUS_JACKPOT_PERCENT: Mapping[str, int] = _frozen({"STRAIGHT_FLUSH": 10, "ROYAL_FLUSH": 100})


@dataclass(frozen=True, slots=True)
class BonusPayTable:
    """Bonus bet: fixed odds from two pairs to four of a kind, a jackpot percentage above that."""

    odds: Mapping[str, int] = field(default_factory=lambda: DEFAULT_BONUS_ODDS)
    jackpot_percent: Mapping[str, int] = field(default_factory=lambda: DEFAULT_BONUS_JACKPOT_PERCENT)

    def __post_init__(self) -> None:
        object.__setattr__(self, "odds", _frozen(_parse_odds(self.odds, _BONUS_FIXED_NAMES, "bonus table")))
        percent = _parse_odds(self.jackpot_percent, _BONUS_JACKPOT_NAMES, "bonus jackpot percentages")
        over = [name for name, value in percent.items() if value > 100]
        if over:
            raise InvalidSettingsError(f"bonus jackpot percentages over 100: {', '.join(over)}")
        object.__setattr__(self, "jackpot_percent", _frozen(percent))

    def fixed_odds(self, kind: RussianCombination) -> int | None:
        """Odds for a fixed-odds bonus combination, None when the combination is not on that part."""
        return self.odds.get(kind.name)

    def jackpot_share(self, kind: RussianCombination) -> int | None:
        """Percentage of the jackpot won by ``kind``, None when it does not win the jackpot."""
        return self.jackpot_percent.get(kind.name)
