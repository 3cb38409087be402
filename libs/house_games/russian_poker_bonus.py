"""Russian Poker bonus bet: settled on the five dealt cards, before any exchange, with jackpot shares.

Jackpot shares are whole chips: ``floor(balance * percent / 100)``; the remainder stays in the
jackpot. Several jackpot wins in one round are paid in dealing order, each from what the earlier ones
left. The bonus is not part of the table maximum, which the rules apply to combinations plus insurance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from house_games.pay_tables import BonusPayTable
from house_games.russian_combinations import RussianCombination, five_card_bonus_combination
from house_games.settlement import Direction, Item, Outcome, SettlementLine, lost, returned, won


@dataclass(frozen=True, slots=True)
class BonusResult:
    """The bonus outcome of one box: its combination and the lines (bonus, then jackpot if won)."""

    box: int
    combination: RussianCombination
    lines: tuple[SettlementLine, ...]


def jackpot_share(balance: int, percent: int) -> int:
    """Whole chips of ``percent`` of the jackpot, rounded down (the remainder stays in the jackpot)."""
    return balance * percent // 100


def settle_bonus(
    box: int, stake: int, five_cards: Sequence[int], table: BonusPayTable, jackpot_balance: int
) -> BonusResult:
    """Settle one box's bonus on its first five cards against the jackpot balance left so far."""
    combination = five_card_bonus_combination(five_cards)
    percent = table.jackpot_share(combination)
    odds = table.fixed_odds(combination)
    lines: tuple[SettlementLine, ...]
    if percent is not None:
        # A jackpot hand: the stake is returned and the share comes out of the jackpot account.
        share = jackpot_share(jackpot_balance, percent)
        lines = (
            returned(Item.BONUS, stake, f"BONUS_{combination.name}"),
            SettlementLine(
                Item.JACKPOT, 0, Outcome.WON, share, Direction.JACKPOT_TO_PLAYER, f"JACKPOT_{percent}_PERCENT"
            ),
        )
    elif odds is not None:
        lines = (won(Item.BONUS, stake, stake * odds, f"BONUS_{combination.name}"),)
    else:
        lines = (lost(Item.BONUS, stake, "BONUS_NO_COMBINATION"),)
    return BonusResult(box, combination, lines)
