"""Casino Hold'em round: ante, two cards per box and to the dealer, the flop, call or fold, showdown.

Dealing order (deck positions, no burn cards), with boxes in ascending position b1 < b2 < ... < bn:
box bk gets deck[2k-2], deck[2k-1]; the dealer gets deck[2n], deck[2n+1]; the flop is deck[2n+2..2n+4],
the turn deck[2n+5] and the river deck[2n+6]. So any round can be re-derived from its deck.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from house_games.deck import DeckCursor
from house_games.errors import IllegalDecisionError, InvalidWagerError
from house_games.settings import CasinoHoldemSettings
from house_games.settlement import (
    BoxSettlement,
    Item,
    RoundSettlement,
    SettlementLine,
    cap_winnings,
    lost,
    returned,
    won,
)
from house_games.wagers import BoxWager, check_common_wagers
from poker_engine.cards import rank_of
from poker_engine.evaluator import HandCategory, HandValue, evaluate

# "Минимальная игра — «пара четвёрок»": the dealer qualifies with a pair of fours or better.
_FOURS = 2


class HoldemDecision(Enum):
    CALL = "CALL"
    FOLD = "FOLD"


class HoldemPhase(Enum):
    DECISIONS = "DECISIONS"
    COMPLETE = "COMPLETE"


@dataclass(frozen=True, slots=True)
class HoldemDecisionTaken:
    """Event record of one box's decision; ``bet`` is the bet placed (0 on a fold)."""

    box: int
    decision: HoldemDecision
    bet: int
    # COMPLETE when this was the last decision: the turn, river and dealer's cards are now shown.
    phase_after: HoldemPhase = HoldemPhase.DECISIONS


def dealer_qualifies(dealer: HandValue) -> bool:
    """A pair of fours or better among the dealer's best five."""
    if dealer.category >= HandCategory.TWO_PAIR:
        return True
    return dealer.category == HandCategory.ONE_PAIR and rank_of(dealer.best_five[0]) >= _FOURS


class CasinoHoldemRound:
    """One round at one table; decisions per box in any order, then ``settle()``."""

    def __init__(
        self,
        deck: Sequence[int],
        wagers: Sequence[BoxWager],
        settings: CasinoHoldemSettings | None = None,
    ) -> None:
        self.settings = settings or CasinoHoldemSettings()
        self.wagers = check_common_wagers(wagers, self.settings.max_boxes)
        for wager in self.wagers:
            if wager.dark or wager.bonus:
                raise InvalidWagerError("Casino Hold'em has no dark boxes or bonus bets", "NOT_IN_THIS_GAME")
        cursor = DeckCursor(deck)
        self._hole = {wager.box: cursor.deal(2) for wager in self.wagers}
        self._dealer = cursor.deal(2)
        self._board = cursor.deal(5)
        self._decisions: dict[int, HoldemDecision] = {}
        self._by_box = {wager.box: wager for wager in self.wagers}

    # Views -----------------------------------------------------------------------------------------

    @property
    def phase(self) -> HoldemPhase:
        done = len(self._decisions) == len(self.wagers)
        return HoldemPhase.COMPLETE if done else HoldemPhase.DECISIONS

    def hole_cards(self, box: int) -> tuple[int, ...]:
        self._wager(box)
        return self._hole[box]

    @property
    def flop(self) -> tuple[int, ...]:
        return self._board[:3]

    @property
    def board(self) -> tuple[int, ...]:
        """All five board cards; the turn and river are only dealt once every box has decided."""
        self._require_complete()
        return self._board

    @property
    def dealer_cards(self) -> tuple[int, ...]:
        self._require_complete()
        return self._dealer

    def player_hand(self, box: int) -> HandValue:
        self._require_complete()
        return evaluate(self.hole_cards(box) + self._board)

    def dealer_hand(self) -> HandValue:
        self._require_complete()
        return evaluate(self._dealer + self._board)

    def decision(self, box: int) -> HoldemDecision | None:
        self._wager(box)
        return self._decisions.get(box)

    def pending_boxes(self) -> tuple[int, ...]:
        return tuple(wager.box for wager in self.wagers if wager.box not in self._decisions)

    # Decisions: check raises, can answers, the verb applies ---------------------------------------

    def legal_decisions(self, box: int) -> frozenset[HoldemDecision]:
        return frozenset(decision for decision in HoldemDecision if self.can_decide(box, decision))

    def check_decision(self, box: int, decision: HoldemDecision) -> None:
        self._wager(box)
        if box in self._decisions:
            raise IllegalDecisionError(f"box {box} has already decided", reason="ALREADY_DECIDED")

    def can_decide(self, box: int, decision: HoldemDecision) -> bool:
        try:
            self.check_decision(box, decision)
        except IllegalDecisionError:
            return False
        return True

    def decide(self, box: int, decision: HoldemDecision) -> HoldemDecisionTaken:
        self.check_decision(box, decision)
        self._decisions[box] = decision
        # "Ставку в поле «BET», равную двум «ANTE»."
        bet = 2 * self._by_box[box].ante if decision is HoldemDecision.CALL else 0
        return HoldemDecisionTaken(box, decision, bet, self.phase)

    def call(self, box: int) -> HoldemDecisionTaken:
        return self.decide(box, HoldemDecision.CALL)

    def fold(self, box: int) -> HoldemDecisionTaken:
        return self.decide(box, HoldemDecision.FOLD)

    # Settlement ------------------------------------------------------------------------------------

    def settle(self) -> RoundSettlement:
        self._require_complete()
        dealer = self.dealer_hand()
        qualified = dealer_qualifies(dealer)
        boxes = tuple(self._settle_box(wager, dealer, qualified) for wager in self.wagers)
        return RoundSettlement(boxes)

    def _settle_box(self, wager: BoxWager, dealer: HandValue, qualified: bool) -> BoxSettlement:
        ante, bet = wager.ante, 2 * wager.ante
        lines: list[SettlementLine]
        if self._decisions[wager.box] is HoldemDecision.FOLD:
            # "Дилер забирает карты, ставка «ANTE» проигрывает."
            lines = [lost(Item.ANTE, ante, "FOLDED")]
            return BoxSettlement(wager.box, wager.player, tuple(lines))
        player = self.player_hand(wager.box)
        ante_paid = ante * self.settings.pay_table.ante(player.category)
        if not qualified:
            # Ante by the pay table, the bet returned.
            lines = [
                won(Item.ANTE, ante, ante_paid, "DEALER_DOES_NOT_QUALIFY"),
                returned(Item.BET, bet, "DEALER_DOES_NOT_QUALIFY"),
            ]
        elif player.strength > dealer.strength:
            lines = [
                won(Item.ANTE, ante, ante_paid, "PLAYER_HIGHER"),
                won(Item.BET, bet, bet, "PLAYER_HIGHER"),
            ]
        elif player.strength == dealer.strength:
            # Identical best fives push; the other two cards never count.
            lines = [returned(Item.ANTE, ante, "TIE"), returned(Item.BET, bet, "TIE")]
        else:
            lines = [lost(Item.ANTE, ante, "DEALER_HIGHER"), lost(Item.BET, bet, "DEALER_HIGHER")]
        cap_winnings(lines, self.settings.table_maximum, frozenset({Item.ANTE, Item.BET}))
        return BoxSettlement(wager.box, wager.player, tuple(lines))

    # Internals -------------------------------------------------------------------------------------

    def _wager(self, box: int) -> BoxWager:
        wager = self._by_box.get(box)
        if wager is None:
            raise IllegalDecisionError(f"no box {box} in this round", reason="UNKNOWN_BOX")
        return wager

    def _require_complete(self) -> None:
        if self.phase is not HoldemPhase.COMPLETE:
            raise IllegalDecisionError("some boxes have not decided yet", reason="DECISIONS_PENDING")
