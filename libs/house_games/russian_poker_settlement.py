"""Settlement of one Russian Poker box once the dealer's hand is final (bonus aside, see the bonus module).

The rules, as lines:
* fold: the ante is lost; an exchange or sixth-card fee is never returned.
* dealer has a game and the box's combination is higher: the bet is paid by the main pay table and the
  ante is returned, not paid; a second combination is paid on the bet as well; equal combinations
  compare by the higher cards and a complete tie pushes; a higher dealer takes ante and bet.
* dealer has no game: the box takes the ante paid 1:1 with the bet returned, or buys a game for one
  ante and is then compared with the dealer's new hand (still no game: bet returned, ante paid 1:1 or
  returned, the setting `still_no_game_ante`).
* insurance is settled on the dealer's hand as first shown: no game 1:1, a lower game lost, an equal
  or higher game returned.
* the total paid on a box (ante, combinations, insurance) never exceeds the table maximum.
"""

from __future__ import annotations

from dataclasses import dataclass

from house_games.russian_combinations import RussianHand
from house_games.settings import RussianPokerSettings, StillNoGameAnte
from house_games.settlement import Item, SettlementLine, cap_winnings, fee, lost, returned, won
from house_games.wagers import BoxWager

_CAPPED = frozenset({Item.ANTE, Item.BET, Item.SECOND_COMBINATION, Item.INSURANCE})


@dataclass(frozen=True, slots=True)
class FinalBox:
    """A box at showdown: its final cards and every decision taken on it."""

    wager: BoxWager
    hand: RussianHand
    folded: bool
    card_fee: Item | None = None  # EXCHANGE_FEE or SIXTH_CARD_FEE when the box changed its cards
    insurance: int = 0
    bought_game: bool = False

    @property
    def bet(self) -> int:
        # "Ставку, равную двум Анте."
        return 2 * self.wager.ante


def settle_russian_box(
    box: FinalBox, first_dealer: RussianHand, final_dealer: RussianHand, settings: RussianPokerSettings
) -> tuple[SettlementLine, ...]:
    """Lines of one box, excluding the bonus; ``final_dealer`` differs only after a bought game."""
    ante, bet = box.wager.ante, box.bet
    lines: list[SettlementLine] = []
    if box.card_fee is not None:
        lines.append(fee(box.card_fee, ante, box.card_fee.value))
    if box.folded:
        lines.append(lost(Item.ANTE, ante, "FOLDED"))
        return tuple(lines)
    if not first_dealer.has_game:
        if box.bought_game:
            # "Купить игру" costs one ante, whatever happens next.
            lines.append(fee(Item.BUY_GAME_FEE, ante, "BUY_GAME_FEE"))
            if final_dealer.has_game:
                lines.extend(_compare(box, final_dealer, settings))
            else:
                # "Ставка Бет не оплачивается и не забирается"; the ante is the operator's choice
                # (decision 1): paid 1:1 as in any no-game, or returned.
                if settings.still_no_game_ante is StillNoGameAnte.PAY:
                    lines.append(won(Item.ANTE, ante, ante, "DEALER_STILL_NO_GAME"))
                else:
                    lines.append(returned(Item.ANTE, ante, "DEALER_STILL_NO_GAME"))
                lines.append(returned(Item.BET, bet, "DEALER_STILL_NO_GAME"))
        else:
            lines.append(won(Item.ANTE, ante, ante, "DEALER_NO_GAME"))
            lines.append(returned(Item.BET, bet, "DEALER_NO_GAME"))
    else:
        lines.extend(_compare(box, first_dealer, settings))
    if box.insurance:
        lines.append(_insurance_line(box, first_dealer))
    cap_winnings(lines, settings.table_maximum, _CAPPED)
    return tuple(lines)


def _compare(box: FinalBox, dealer: RussianHand, settings: RussianPokerSettings) -> list[SettlementLine]:
    ante, bet = box.wager.ante, box.bet
    hand = box.hand
    if hand.strength > dealer.strength:
        lines = [
            # "Ставка Анте в данном случае не оплачивается."
            returned(Item.ANTE, ante, "ANTE_RETURNED_ON_WIN"),
            won(
                Item.BET,
                bet,
                bet * settings.pay_table.bet(hand.main.kind),
                f"COMBINATION_{hand.main.kind.name}",
            ),
        ]
        if hand.second is not None:
            # Both combinations are paid when the main one beats the dealer.
            odds = settings.pay_table.bet(hand.second.kind)
            lines.append(won(Item.SECOND_COMBINATION, 0, bet * odds, f"COMBINATION_{hand.second.kind.name}"))
        return lines
    if hand.strength == dealer.strength:
        return [returned(Item.ANTE, ante, "TIE"), returned(Item.BET, bet, "TIE")]
    return [lost(Item.ANTE, ante, "DEALER_HIGHER"), lost(Item.BET, bet, "DEALER_HIGHER")]


def _insurance_line(box: FinalBox, first_dealer: RussianHand) -> SettlementLine:
    stake = box.insurance
    if not first_dealer.has_game:
        return won(Item.INSURANCE, stake, stake, "DEALER_NO_GAME")
    if first_dealer.strength < box.hand.strength:
        return lost(Item.INSURANCE, stake, "DEALER_GAME_LOWER")
    return returned(Item.INSURANCE, stake, "DEALER_EQUAL_OR_HIGHER")


def expected_payout(hand: RussianHand, bet: int, settings: RussianPokerSettings) -> int:
    """What the hand would be paid if it beat a qualified dealer (the cap on the insurance stake)."""
    odds = settings.pay_table.bet(hand.main.kind)
    if hand.second is not None:
        odds += settings.pay_table.bet(hand.second.kind)
    return min(bet * odds, settings.table_maximum)
