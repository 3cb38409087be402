"""Table settings of both games: pay tables plus the limits the operator configures per table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from house_games.errors import InvalidSettingsError
from house_games.pay_tables import BonusPayTable, CasinoHoldemPayTable, RussianPokerPayTable
from house_games.russian_poker_bonus import max_bonus_return

DEFAULT_TABLE_MAXIMUM = 50_000
MAX_BOXES = 7
DEFAULT_JACKPOT_CONTRIBUTION_PERCENT = 25
# Decision 13: a jackpot hand wins its percentage of the jackpot, but at most that percentage of this
# many bonus stakes. With the default bonus table the bonus then returns at most 78.2% at any jackpot
# (72.3% at none); any cap below 94,606 keeps it under 100%.
DEFAULT_JACKPOT_AWARD_STAKES = 20_000


def _check_positive(problems: list[str], name: str, value: object) -> None:
    if type(value) is not int or value <= 0:
        problems.append(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True, slots=True)
class CasinoHoldemSettings:
    pay_table: CasinoHoldemPayTable = field(default_factory=CasinoHoldemPayTable)
    # Caps what one box can win in one round (the operator's "Максимальная выплата 50 000").
    table_maximum: int = DEFAULT_TABLE_MAXIMUM
    max_boxes: int = MAX_BOXES

    def __post_init__(self) -> None:
        problems: list[str] = []
        _check_positive(problems, "table_maximum", self.table_maximum)
        _check_positive(problems, "max_boxes", self.max_boxes)
        # 2 cards per box plus 2 for the dealer and 5 on the board must fit in one deck.
        if type(self.max_boxes) is int and 2 * self.max_boxes + 7 > 52:
            problems.append("max_boxes does not fit in one deck")
        if problems:
            raise InvalidSettingsError("; ".join(problems))

    @classmethod
    def from_mapping(cls, raw: Mapping[str, object]) -> CasinoHoldemSettings:
        """Build from JSON-like data: {"ante_odds": {...}, "table_maximum": 50000}."""
        _refuse_unknown(raw, {"ante_odds", "table_maximum", "max_boxes"}, "Casino Hold'em")
        defaults = cls()
        return cls(
            pay_table=CasinoHoldemPayTable(_odds(raw, "ante_odds", defaults.pay_table.ante_odds)),
            table_maximum=_int(raw, "table_maximum", defaults.table_maximum),
            max_boxes=_int(raw, "max_boxes", defaults.max_boxes),
        )


class StillNoGameAnte(Enum):
    """What the ante of a box that bought a game gets when the dealer again has no game (decision 1).

    The text says only "ставка Бет не оплачивается и не забирается": the operator chooses.
    """

    PAY = "PAY"  # paid 1:1 as in any no-game, so buying and missing nets zero (+1 ante, -1 fee)
    RETURN = "RETURN"  # returned: the box gave up the ante win when it chose to buy a game


@dataclass(frozen=True, slots=True)
class RussianPokerSettings:
    pay_table: RussianPokerPayTable = field(default_factory=RussianPokerPayTable)
    bonus_pay_table: BonusPayTable = field(default_factory=BonusPayTable)
    # Total paid on a box (combinations plus insurance) never exceeds this.
    table_maximum: int = DEFAULT_TABLE_MAXIMUM
    # The issue: one dealer card face up is a table setting, on by default (the text is silent).
    dealer_upcard: bool = True
    # "Вы можете играть «в светлую» на одном или двух боксах."
    max_light_boxes_per_player: int = 2
    max_boxes: int = MAX_BOXES
    # When set, every bonus bet must be exactly this amount (jackpot shares do not scale with the stake).
    bonus_stake: int | None = None
    # Decision 12: "при игре «в тёмную» можно поставить ... на бонус" reads as dark boxes only (False);
    # "бонус оплачивается до начала обмена и покупки карт", which only light boxes make, as any box (True).
    bonus_on_light_boxes: bool = False
    # Decision 1: the ante of a bought game that still gives no game.
    still_no_game_ante: StillNoGameAnte = StillNoGameAnte.PAY
    # Decision 9: the share (whole percent, rounded down to whole chips) of a lost bonus stake that goes
    # to the jackpot; the rest goes to the house bank. The text is silent; 25 awaits the operator.
    jackpot_contribution_percent: int = DEFAULT_JACKPOT_CONTRIBUTION_PERCENT
    # Decision 13 (issue 23): jackpot awards scale with the bonus stake, so the bonus never returns
    # more than it costs, whatever the jackpot (the settings refuse a table under which it could).
    jackpot_award_stakes: int = DEFAULT_JACKPOT_AWARD_STAKES

    def __post_init__(self) -> None:
        problems: list[str] = []
        _check_positive(problems, "table_maximum", self.table_maximum)
        _check_positive(problems, "jackpot_award_stakes", self.jackpot_award_stakes)
        if type(self.jackpot_award_stakes) is int and self.jackpot_award_stakes > 0:
            worst = max_bonus_return(self.bonus_pay_table, self.jackpot_award_stakes)
            if worst >= 1:
                problems.append(
                    f"the bonus would return {float(worst):.2%} of its stake at a large jackpot: lower "
                    "jackpot_award_stakes or the bonus odds until it returns less than 100%"
                )
        percent = self.jackpot_contribution_percent
        if type(percent) is not int or not 0 <= percent <= 100:
            problems.append(f"jackpot_contribution_percent must be an integer 0 to 100, got {percent!r}")
        if not isinstance(self.bonus_on_light_boxes, bool):
            problems.append(f"bonus_on_light_boxes must be true or false, got {self.bonus_on_light_boxes!r}")
        if not isinstance(self.still_no_game_ante, StillNoGameAnte):
            problems.append(f"still_no_game_ante must be PAY or RETURN, got {self.still_no_game_ante!r}")
        _check_positive(problems, "max_light_boxes_per_player", self.max_light_boxes_per_player)
        _check_positive(problems, "max_boxes", self.max_boxes)
        if self.bonus_stake is not None:
            _check_positive(problems, "bonus_stake", self.bonus_stake)
        # The deal itself (five cards per box and five for the dealer) plus the two cards a bought game
        # may need must fit; exchanges that would not fit are simply not offered (see russian_poker).
        if type(self.max_boxes) is int and 5 * self.max_boxes + 5 + 2 > 52:
            problems.append("max_boxes does not fit in one deck")
        if problems:
            raise InvalidSettingsError("; ".join(problems))

    @classmethod
    def from_mapping(cls, raw: Mapping[str, object]) -> RussianPokerSettings:
        """Build from JSON-like data: {"odds": {...}, "bonus_odds": {...}, "jackpot_percent": {...}, ...}."""
        known = {
            "odds",
            "bonus_odds",
            "jackpot_percent",
            "table_maximum",
            "dealer_upcard",
            "max_light_boxes_per_player",
            "max_boxes",
            "bonus_stake",
            "bonus_on_light_boxes",
            "still_no_game_ante",
            "jackpot_contribution_percent",
            "jackpot_award_stakes",
        }
        _refuse_unknown(raw, known, "Russian Poker")
        defaults = cls()
        upcard = raw.get("dealer_upcard", defaults.dealer_upcard)
        if not isinstance(upcard, bool):
            raise InvalidSettingsError(f"dealer_upcard must be true or false, got {upcard!r}")
        light_bonus = raw.get("bonus_on_light_boxes", defaults.bonus_on_light_boxes)
        if not isinstance(light_bonus, bool):
            raise InvalidSettingsError(f"bonus_on_light_boxes must be true or false, got {light_bonus!r}")
        still_no_game = raw.get("still_no_game_ante", defaults.still_no_game_ante.value)
        if still_no_game not in {choice.value for choice in StillNoGameAnte}:
            raise InvalidSettingsError(f"still_no_game_ante must be PAY or RETURN, got {still_no_game!r}")
        bonus_stake = raw.get("bonus_stake")
        return cls(
            pay_table=RussianPokerPayTable(_odds(raw, "odds", defaults.pay_table.odds)),
            bonus_pay_table=BonusPayTable(
                odds=_odds(raw, "bonus_odds", defaults.bonus_pay_table.odds),
                jackpot_percent=_odds(raw, "jackpot_percent", defaults.bonus_pay_table.jackpot_percent),
            ),
            table_maximum=_int(raw, "table_maximum", defaults.table_maximum),
            dealer_upcard=upcard,
            max_light_boxes_per_player=_int(
                raw, "max_light_boxes_per_player", defaults.max_light_boxes_per_player
            ),
            max_boxes=_int(raw, "max_boxes", defaults.max_boxes),
            bonus_stake=None if bonus_stake is None else _int(raw, "bonus_stake", 0),
            bonus_on_light_boxes=light_bonus,
            still_no_game_ante=StillNoGameAnte(still_no_game),
            jackpot_contribution_percent=_int(
                raw, "jackpot_contribution_percent", defaults.jackpot_contribution_percent
            ),
            jackpot_award_stakes=_int(raw, "jackpot_award_stakes", defaults.jackpot_award_stakes),
        )


def _refuse_unknown(raw: Mapping[str, object], known: set[str], game: str) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        raise InvalidSettingsError(f"unknown {game} settings: {', '.join(unknown)}")


def _int(raw: Mapping[str, object], key: str, default: int) -> int:
    value = raw.get(key, default)
    if type(value) is not int:
        raise InvalidSettingsError(f"{key} must be an integer, got {value!r}")
    return value


def _odds(raw: Mapping[str, object], key: str, default: Mapping[str, int]) -> Mapping[str, int]:
    value = raw.get(key, default)
    if not isinstance(value, Mapping):
        raise InvalidSettingsError(f"{key} must be a mapping of combination name to integer")
    # Entries are checked by the pay table itself; a partial mapping overrides only what it names.
    merged = dict(default)
    merged.update(value)
    return merged
