"""Russian Poker rules on the wagers placed before the deal: boxes, light and dark, bonus."""

from __future__ import annotations

from collections.abc import Sequence

from house_games.errors import InvalidWagerError
from house_games.settings import RussianPokerSettings
from house_games.wagers import BoxWager, check_common_wagers


def check_russian_wagers(wagers: Sequence[BoxWager], settings: RussianPokerSettings) -> tuple[BoxWager, ...]:
    """Validate the wagers; return them in dealing order."""
    ordered = check_common_wagers(wagers, settings.max_boxes)
    by_player: dict[str, list[BoxWager]] = {}
    for wager in ordered:
        by_player.setdefault(wager.player, []).append(wager)
        if wager.bonus and not wager.dark and not settings.bonus_on_light_boxes:
            # "При игре «в тёмную» можно поставить дополнительные ставки на бонус" (decision 12: a setting).
            raise InvalidWagerError(
                f"box {wager.box}: only a dark box may bet the bonus", "BONUS_ON_LIGHT_BOX"
            )
        if wager.bonus and settings.bonus_stake is not None and wager.bonus != settings.bonus_stake:
            raise InvalidWagerError(
                f"box {wager.box}: the bonus stake is {settings.bonus_stake}", "BONUS_AMOUNT_NOT_ALLOWED"
            )
    for player, boxes in by_player.items():
        positions = [wager.box for wager in boxes]
        # "Они должны быть расположены рядом, то есть последовательно друг за другом."
        if positions != list(range(positions[0], positions[0] + len(positions))):
            raise InvalidWagerError(f"boxes of {player} are not adjacent", "BOXES_NOT_ADJACENT")
        light = [wager for wager in boxes if not wager.dark]
        if len(light) > settings.max_light_boxes_per_player:
            raise InvalidWagerError(f"{player} has too many light boxes", "TOO_MANY_LIGHT_BOXES")
        # "Ставки на светлых боксах должны быть равны между собой"; dark boxes may differ.
        if len({wager.ante for wager in light}) > 1:
            raise InvalidWagerError(f"light antes of {player} differ", "UNEQUAL_LIGHT_ANTES")
    return ordered
