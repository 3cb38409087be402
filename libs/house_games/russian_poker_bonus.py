"""Russian Poker bonus bet: settled on the five dealt cards, before any exchange, with jackpot shares.

Jackpot shares are whole chips: ``floor(balance * percent / 100)``, but at most
``floor(stake * award_stakes * percent / 100)`` (decision 13: a jackpot award scales with the bonus
stake, so no stake buys more than ``award_stakes`` times itself of jackpot; the rules' text only says
"% от джекпота"). The remainder stays in the jackpot. With the cap the bonus's return to the player
is bounded whatever the jackpot grows to (``max_bonus_return``), and the settings refuse pay tables
under which that bound reaches 100%. Several jackpot wins in one round are paid in dealing order,
each from what the earlier ones left. The bonus is not part of the table maximum, which the rules apply to combinations plus insurance.

A lost bonus stake is split (the rules are silent; an operator setting, ``jackpot_contribution_percent``):
``floor(stake * percent / 100)`` goes to the jackpot (a JACKPOT_CONTRIBUTION line, PLAYER_TO_JACKPOT),
the rest to the house bank (the BONUS line). The player loses the whole stake either way, so the
return to player does not depend on the setting; won and returned bonus stakes are not split (fixed
odds are paid by the house bank, jackpot shares by the jackpot). Contributions count toward the
jackpot balance of later rounds (``jackpot_after``), not toward the shares of the round that made them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

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


def jackpot_award(balance: int, percent: int, stake: int, award_stakes: int) -> int:
    """A jackpot hand's award: ``percent`` of the jackpot, at most ``percent`` of ``award_stakes``
    bonus stakes, whole chips rounded down."""
    return min(jackpot_share(balance, percent), stake * award_stakes * percent // 100)


def jackpot_contribution(stake: int, percent: int) -> int:
    """Whole chips of a lost bonus stake that go to the jackpot, rounded down (the rest to the house bank)."""
    return stake * percent // 100


def settle_bonus(
    box: int,
    stake: int,
    five_cards: Sequence[int],
    table: BonusPayTable,
    jackpot_balance: int,
    contribution_percent: int = 0,
    award_stakes: int | None = None,
) -> BonusResult:
    """Settle one box's bonus on its first five cards against the jackpot balance left so far; a lost
    stake gives ``contribution_percent`` of itself (rounded down) to the jackpot. ``award_stakes``
    caps a jackpot award at that many stakes (times the hand's percentage); None: no cap."""
    combination = five_card_bonus_combination(five_cards)
    percent = table.jackpot_share(combination)
    odds = table.fixed_odds(combination)
    lines: tuple[SettlementLine, ...]
    if percent is not None:
        # A jackpot hand: the stake is returned and the share comes out of the jackpot account.
        share = (
            jackpot_share(jackpot_balance, percent)
            if award_stakes is None
            else jackpot_award(jackpot_balance, percent, stake, award_stakes)
        )
        lines = (
            returned(Item.BONUS, stake, f"BONUS_{combination.name}"),
            SettlementLine(
                Item.JACKPOT, 0, Outcome.WON, share, Direction.JACKPOT_TO_PLAYER, f"JACKPOT_{percent}_PERCENT"
            ),
        )
    elif odds is not None:
        lines = (won(Item.BONUS, stake, stake * odds, f"BONUS_{combination.name}"),)
    else:
        contribution = jackpot_contribution(stake, contribution_percent)
        lines = (lost(Item.BONUS, stake - contribution, "BONUS_NO_COMBINATION"),)
        if contribution:
            lines += (
                SettlementLine(
                    Item.JACKPOT_CONTRIBUTION,
                    contribution,
                    Outcome.LOST,
                    contribution,
                    Direction.PLAYER_TO_JACKPOT,
                    f"JACKPOT_CONTRIBUTION_{contribution_percent}_PERCENT",
                ),
            )
    return BonusResult(box, combination, lines)


# How many of the 2,598,960 five-card hands make each combination (the known golden counts).
FIVE_CARD_COMBINATION_COUNTS: dict[RussianCombination, int] = {
    RussianCombination.ROYAL_FLUSH: 4,
    RussianCombination.STRAIGHT_FLUSH: 36,
    RussianCombination.FOUR_OF_A_KIND: 624,
    RussianCombination.FULL_HOUSE: 3_744,
    RussianCombination.FLUSH: 5_108,
    RussianCombination.STRAIGHT: 10_200,
    RussianCombination.THREE_OF_A_KIND: 54_912,
    RussianCombination.TWO_PAIR: 123_552,
    RussianCombination.ONE_PAIR: 1_098_240,
    # High-card hands split into those holding an ace and a king and the rest.
    RussianCombination.ACE_KING: 167_280,
    RussianCombination.NO_COMBINATION: 1_135_260,
}
FIVE_CARD_HANDS = 2_598_960


def bonus_return_to_player(
    table: BonusPayTable, jackpot_to_stake: Fraction, award_stakes: int | None = None
) -> Fraction:
    """Exact expected return per chip of bonus stake, with the jackpot at ``jackpot_to_stake`` stakes
    and jackpot awards capped at ``award_stakes`` stakes (times the hand's percentage; None: no cap).

    The bonus depends only on the five dealt cards, so this is exact (no simulation needed); jackpot
    shares are taken without the whole-chip rounding, which only ever lowers them.
    """
    awarded = jackpot_to_stake if award_stakes is None else min(jackpot_to_stake, Fraction(award_stakes))
    total = Fraction(0)
    for combination, count in FIVE_CARD_COMBINATION_COUNTS.items():
        percent = table.jackpot_share(combination)
        odds = table.fixed_odds(combination)
        if percent is not None:
            returned_per_stake = 1 + awarded * Fraction(percent, 100)
        elif odds is not None:
            returned_per_stake = Fraction(1 + odds)
        else:
            continue
        total += Fraction(count, FIVE_CARD_HANDS) * returned_per_stake
    return total


def max_bonus_return(table: BonusPayTable, award_stakes: int) -> Fraction:
    """The bonus's return per chip at the largest jackpot there can be: every jackpot hand paid its
    whole cap. The return only grows with the jackpot, so it is below this at every jackpot."""
    return bonus_return_to_player(table, Fraction(award_stakes), award_stakes)
