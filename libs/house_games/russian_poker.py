"""Russian Poker round: ante (and dark bets and bonus) before the deal, per-box decisions in dealing
order, the dealer's hand, the no-game choice (take the ante or buy a game), settlement.

Dealing order (deck positions), with boxes in ascending position b1 < ... < bn: box bk gets
deck[5k-5 .. 5k-1] (its cards 0..4 in that order), the dealer deck[5n .. 5n+4]; with the upcard setting
on, the dealer's first card (deck[5n]) is face up. Every later card comes from the next unused position
in the order the decisions take it: exchanged and sixth cards in turn order (an exchange replaces the
discarded cards in place, in the order of the box's cards), then at most two cards for a bought game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum

from house_games.deck import DeckCursor
from house_games.errors import IllegalDecisionError, InvalidSettingsError
from house_games.russian_combinations import RussianCombination, RussianHand, assess_hand
from house_games.russian_poker_bonus import BonusResult, settle_bonus
from house_games.russian_poker_settlement import FinalBox, expected_payout, settle_russian_box
from house_games.russian_poker_wagers import check_russian_wagers
from house_games.settings import RussianPokerSettings
from house_games.settlement import BoxSettlement, Item, RoundSettlement
from house_games.wagers import BoxWager
from poker_engine.cards import rank_of

# Cards kept back for a bought game: the replacement and the one free second replacement.
_BUY_GAME_RESERVE = 2


class RussianPhase(Enum):
    DECISIONS = "DECISIONS"  # light boxes play, fold or change cards, one box at a time
    NO_GAME_CHOICES = "NO_GAME_CHOICES"  # dealer has no game: boxes take the ante or buy a game
    COMPLETE = "COMPLETE"


class DecisionKind(Enum):
    PLAY = "PLAY"
    FOLD = "FOLD"
    EXCHANGE = "EXCHANGE"
    BUY_SIXTH_CARD = "BUY_SIXTH_CARD"
    TAKE_ANTE = "TAKE_ANTE"
    BUY_GAME = "BUY_GAME"


@dataclass(frozen=True, slots=True)
class Play:
    """Place the bet (two antes); ``insurance`` > 0 also insures a three of a kind or better."""

    insurance: int = 0
    kind = DecisionKind.PLAY


@dataclass(frozen=True, slots=True)
class Fold:
    kind = DecisionKind.FOLD


@dataclass(frozen=True, slots=True)
class Exchange:
    """Discard 1 to 5 of the box's cards (by card code) for as many new ones, for one ante."""

    cards: tuple[int, ...]
    kind = DecisionKind.EXCHANGE


@dataclass(frozen=True, slots=True)
class BuySixthCard:
    kind = DecisionKind.BUY_SIXTH_CARD


@dataclass(frozen=True, slots=True)
class TakeAnte:
    kind = DecisionKind.TAKE_ANTE


@dataclass(frozen=True, slots=True)
class BuyGame:
    kind = DecisionKind.BUY_GAME


RussianDecision = Play | Fold | Exchange | BuySixthCard | TakeAnte | BuyGame


@dataclass(frozen=True, slots=True)
class DealerReplacement:
    """One replacement of a bought game: the dealer's highest card out, the next deck card in."""

    removed: int
    added: int
    free: bool


@dataclass(frozen=True, slots=True)
class RussianDecisionTaken:
    """Event record of one decision: the cards it dealt to the box and the chips it committed.

    ``phase_after`` tells whether this decision made the dealer show (DECISIONS -> NO_GAME_CHOICES or
    COMPLETE); ``dealer_replacements`` lists the replacements of a bought game that it triggered.
    """

    box: int
    decision: RussianDecision
    cards_dealt: tuple[int, ...] = ()
    bet: int = 0
    fee: int = 0
    insurance: int = 0
    phase_after: RussianPhase = RussianPhase.DECISIONS
    dealer_replacements: tuple[DealerReplacement, ...] = ()


class _Box:
    """Mutable per-box state inside a round (never handed out)."""

    def __init__(self, wager: BoxWager, cards: tuple[int, ...]) -> None:
        self.wager = wager
        self.first_five = cards
        self.cards = list(cards)
        self.played = wager.dark  # a dark box's bet is placed before the deal
        self.folded = False
        self.card_fee: Item | None = None
        self.insurance = 0
        self.no_game_choice: DecisionKind | None = None

    @property
    def decided(self) -> bool:
        return self.played or self.folded


class RussianPokerRound:
    """One round of Russian Poker at one table.

    ``jackpot`` is the jackpot balance before the round; bonus bets are settled at the deal (see
    ``bonus_results``) and their lines are part of ``settle()``.
    """

    def __init__(
        self,
        deck: Sequence[int],
        wagers: Sequence[BoxWager],
        settings: RussianPokerSettings | None = None,
        jackpot: int = 0,
    ) -> None:
        self.settings = settings or RussianPokerSettings()
        if type(jackpot) is not int or jackpot < 0:
            raise InvalidSettingsError("jackpot balance must be a non-negative integer", "INVALID_JACKPOT")
        self.jackpot_before = jackpot
        ordered = check_russian_wagers(wagers, self.settings)
        self._deck = DeckCursor(deck)
        self._boxes = {wager.box: _Box(wager, self._deck.deal(5)) for wager in ordered}
        self._order = tuple(wager.box for wager in ordered)
        self._dealer_first = self._deck.deal(5)
        self._dealer = list(self._dealer_first)
        self._replacements: list[DealerReplacement] = []
        owners = [wager.player for wager in ordered]
        self._multi_box_players = frozenset(player for player in owners if owners.count(player) > 1)
        # "Бонус оплачивается до начала обмена и покупки карт игроками", in dealing order.
        results: list[BonusResult] = []
        balance = jackpot
        for box_id in self._order:
            box = self._boxes[box_id]
            if box.wager.bonus:
                result = settle_bonus(
                    box_id,
                    box.wager.bonus,
                    box.first_five,
                    self.settings.bonus_pay_table,
                    balance,
                    self.settings.jackpot_contribution_percent,
                    self.settings.jackpot_award_stakes,
                )
                balance -= sum(line.amount for line in result.lines if line.item is Item.JACKPOT)
                results.append(result)
        self.bonus_results: tuple[BonusResult, ...] = tuple(results)
        self._phase = RussianPhase.DECISIONS
        self._advance()

    # Views -----------------------------------------------------------------------------------------

    @property
    def phase(self) -> RussianPhase:
        return self._phase

    @property
    def boxes(self) -> tuple[int, ...]:
        """Box positions in dealing order."""
        return self._order

    def cards(self, box: int) -> tuple[int, ...]:
        return tuple(self._box(box).cards)

    def hand(self, box: int) -> RussianHand:
        return assess_hand(self._box(box).cards)

    def is_multi_box(self, box: int) -> bool:
        return self._box(box).wager.player in self._multi_box_players

    @property
    def dealer_upcard(self) -> int | None:
        return self._dealer_first[0] if self.settings.dealer_upcard else None

    @property
    def dealer_cards(self) -> tuple[int, ...]:
        """The dealer's current five cards; shown once every box has decided."""
        self._require_dealer_shown()
        return tuple(self._dealer)

    def dealer_hand(self) -> RussianHand:
        self._require_dealer_shown()
        return assess_hand(self._dealer)

    @property
    def dealer_replacements(self) -> tuple[DealerReplacement, ...]:
        return tuple(self._replacements)

    @property
    def current_box(self) -> int | None:
        """The box whose decision is due, in dealing order; None when nothing is due."""
        if self._phase is RussianPhase.DECISIONS:
            return next((b for b in self._order if not self._boxes[b].decided), None)
        if self._phase is RussianPhase.NO_GAME_CHOICES:
            return next((b for b in self._order if self._awaits_no_game_choice(b)), None)
        return None

    # Decisions: check raises, can answers, decide applies ------------------------------------------

    def legal_decisions(self, box: int) -> frozenset[DecisionKind]:
        """Decision kinds ``box`` may take now (EXCHANGE with some 1..5 cards, PLAY with no insurance)."""
        candidates: list[RussianDecision] = [
            Play(),
            Fold(),
            Exchange(tuple(self._box(box).cards[:1])),
            BuySixthCard(),
            TakeAnte(),
            BuyGame(),
        ]
        return frozenset(decision.kind for decision in candidates if self.can_decide(box, decision))

    def insurance_range(self, box: int) -> tuple[int, int] | None:
        """Smallest and largest insurance stake ``box`` may add to PLAY now, None if it cannot insure."""
        if not self.can_decide(box, Play()):
            return None
        try:
            return self._check_insurable(box)
        except IllegalDecisionError:
            return None

    def can_decide(self, box: int, decision: RussianDecision) -> bool:
        try:
            self.check_decision(box, decision)
        except IllegalDecisionError:
            return False
        return True

    def check_decision(self, box: int, decision: RussianDecision) -> None:
        """Raise IllegalDecisionError (with a stable reason) unless ``decision`` is legal for ``box`` now."""
        state = self._box(box)
        if isinstance(decision, TakeAnte | BuyGame):
            self._check_no_game_choice(box, decision)
            return
        if self._phase is not RussianPhase.DECISIONS:
            raise IllegalDecisionError("the decisions are over", reason="WRONG_PHASE")
        if state.wager.dark:
            # A dark box played blind before the deal: it has nothing to decide before the showdown.
            raise IllegalDecisionError(f"box {box} is a dark box", reason="DARK_BOX")
        if state.decided:
            raise IllegalDecisionError(f"box {box} has already decided", reason="ALREADY_DECIDED")
        if box != self.current_box:
            # "Обмен и покупку карт дилер производит в порядке раздачи"; no going back to a box.
            raise IllegalDecisionError(f"it is box {self.current_box}'s turn", reason="NOT_THIS_BOX_TURN")
        if isinstance(decision, Exchange | BuySixthCard):
            self._check_card_change(box, decision)
        elif isinstance(decision, Play) and decision.insurance:
            low, high = self._check_insurable(box)
            if not low <= decision.insurance <= high:
                raise IllegalDecisionError(
                    f"insurance must be between {low} and {high}", reason="INSURANCE_OUT_OF_RANGE"
                )

    def decide(self, box: int, decision: RussianDecision) -> RussianDecisionTaken:
        self.check_decision(box, decision)
        state = self._box(box)
        ante = state.wager.ante
        taken: RussianDecisionTaken
        if isinstance(decision, Play):
            state.played = True
            state.insurance = decision.insurance
            taken = RussianDecisionTaken(box, decision, bet=2 * ante, insurance=decision.insurance)
        elif isinstance(decision, Fold):
            state.folded = True
            taken = RussianDecisionTaken(box, decision)
        elif isinstance(decision, Exchange):
            new = self._deck.deal(len(decision.cards))
            replacements = iter(new)
            state.cards = [next(replacements) if card in decision.cards else card for card in state.cards]
            state.card_fee = Item.EXCHANGE_FEE
            taken = RussianDecisionTaken(box, decision, cards_dealt=new, fee=ante)
        elif isinstance(decision, BuySixthCard):
            new = self._deck.deal(1)
            state.cards.extend(new)
            state.card_fee = Item.SIXTH_CARD_FEE
            taken = RussianDecisionTaken(box, decision, cards_dealt=new, fee=ante)
        else:
            state.no_game_choice = decision.kind
            fee = ante if isinstance(decision, BuyGame) else 0
            taken = RussianDecisionTaken(box, decision, fee=fee)
        replaced_before = len(self._replacements)
        self._advance()
        return replace(
            taken,
            phase_after=self._phase,
            dealer_replacements=tuple(self._replacements[replaced_before:]),
        )

    def play(self, box: int, insurance: int = 0) -> RussianDecisionTaken:
        return self.decide(box, Play(insurance))

    def fold(self, box: int) -> RussianDecisionTaken:
        return self.decide(box, Fold())

    def exchange(self, box: int, cards: Sequence[int]) -> RussianDecisionTaken:
        return self.decide(box, Exchange(tuple(cards)))

    def buy_sixth_card(self, box: int) -> RussianDecisionTaken:
        return self.decide(box, BuySixthCard())

    def take_ante(self, box: int) -> RussianDecisionTaken:
        return self.decide(box, TakeAnte())

    def buy_game(self, box: int) -> RussianDecisionTaken:
        return self.decide(box, BuyGame())

    # Settlement ------------------------------------------------------------------------------------

    def settle(self) -> RoundSettlement:
        if self._phase is not RussianPhase.COMPLETE:
            raise IllegalDecisionError("the round still awaits decisions", reason="DECISIONS_PENDING")
        first_dealer = assess_hand(self._dealer_first)
        final_dealer = assess_hand(self._dealer)
        bonus_lines = {result.box: result.lines for result in self.bonus_results}
        settlements = []
        for box_id in self._order:
            state = self._boxes[box_id]
            final = FinalBox(
                wager=state.wager,
                hand=assess_hand(state.cards),
                folded=state.folded,
                card_fee=state.card_fee,
                insurance=state.insurance,
                bought_game=state.no_game_choice is DecisionKind.BUY_GAME,
            )
            lines = settle_russian_box(final, first_dealer, final_dealer, self.settings)
            lines += bonus_lines.get(box_id, ())
            settlements.append(BoxSettlement(box_id, state.wager.player, lines))
        return RoundSettlement(tuple(settlements), jackpot_before=self.jackpot_before)

    # Rules behind the checks -----------------------------------------------------------------------

    def _check_card_change(self, box: int, decision: Exchange | BuySixthCard) -> None:
        state = self._boxes[box]
        if state.card_fee is not None:
            # "Поменять карты либо докупить шестую карту можно только один раз."
            raise IllegalDecisionError("cards can be changed only once per box", reason="SECOND_EXCHANGE")
        if self.is_multi_box(box):
            # "Обмен карт при такой игре совершать нельзя" (several boxes of one player).
            raise IllegalDecisionError(
                "no exchange when playing several boxes", reason="EXCHANGE_ON_MULTI_BOX"
            )
        needed = 1
        if isinstance(decision, Exchange):
            cards = decision.cards
            if (
                not 1 <= len(cards) <= 5
                or len(set(cards)) != len(cards)
                or not set(cards) <= set(state.cards)
            ):
                raise IllegalDecisionError(
                    "exchange 1 to 5 of the box's own cards", reason="BAD_EXCHANGE_CARDS"
                )
            needed = len(cards)
        if self._deck.remaining - needed < _BUY_GAME_RESERVE:
            # Not in the operator's text: a physical shoe would run out too; the round refuses instead.
            raise IllegalDecisionError("not enough cards left in the deck", reason="DECK_EXHAUSTED")

    def _check_insurable(self, box: int) -> tuple[int, int]:
        state = self._box(box)
        if state.wager.dark:
            raise IllegalDecisionError("a dark box takes no insurance", reason="INSURANCE_ON_DARK_BOX")
        if self.is_multi_box(box):
            raise IllegalDecisionError(
                "no insurance when playing several boxes", reason="INSURANCE_ON_MULTI_BOX"
            )
        hand = assess_hand(state.cards)
        if hand.main.kind < RussianCombination.THREE_OF_A_KIND:
            # "При наличии на руках комбинации «Три одного типа» и выше".
            raise IllegalDecisionError(
                "insurance needs three of a kind or better", reason="INSURANCE_WITHOUT_THREE_OF_A_KIND"
            )
        # From one ante up to the hand's expected payout, within the table maximum. Insurance wins only
        # when the dealer has no game, and then the box takes the ante paid 1:1 (or buys a game): the
        # ante's win counts toward the cap too, so a larger stake could not be paid in full.
        low = state.wager.ante
        high = min(expected_payout(hand, 2 * low, self.settings), self.settings.table_maximum - low)
        if high < low:
            raise IllegalDecisionError("the table maximum leaves no room", reason="INSURANCE_OUT_OF_RANGE")
        return low, high

    def _check_no_game_choice(self, box: int, decision: TakeAnte | BuyGame) -> None:
        state = self._boxes[box]
        if self._phase is not RussianPhase.NO_GAME_CHOICES:
            raise IllegalDecisionError("the dealer has not shown a no-game", reason="WRONG_PHASE")
        if not state.played:
            raise IllegalDecisionError(f"box {box} is not in play", reason="BOX_NOT_IN_PLAY")
        if isinstance(decision, BuyGame) and self.is_multi_box(box):
            # "Также отсутствует возможность ... купить игру дилеру."
            raise IllegalDecisionError("no buying a game with several boxes", reason="BUY_GAME_ON_MULTI_BOX")
        if state.no_game_choice is not None:
            raise IllegalDecisionError(f"box {box} has already chosen", reason="ALREADY_DECIDED")
        if box != self.current_box:
            raise IllegalDecisionError(f"it is box {self.current_box}'s turn", reason="NOT_THIS_BOX_TURN")

    def _awaits_no_game_choice(self, box: int) -> bool:
        state = self._boxes[box]
        return state.played and state.no_game_choice is None

    def _advance(self) -> None:
        """Move to the next phase once nothing is due in the current one."""
        if self._phase is RussianPhase.DECISIONS and self.current_box is None:
            if any(self._boxes[b].played for b in self._order) and not assess_hand(self._dealer).has_game:
                self._phase = RussianPhase.NO_GAME_CHOICES
                # Several boxes of one player cannot buy a game, so they take the ante at once.
                for box_id in self._order:
                    if self._boxes[box_id].played and self.is_multi_box(box_id):
                        self._boxes[box_id].no_game_choice = DecisionKind.TAKE_ANTE
            else:
                self._phase = RussianPhase.COMPLETE
        if self._phase is RussianPhase.NO_GAME_CHOICES and self.current_box is None:
            if any(self._boxes[b].no_game_choice is DecisionKind.BUY_GAME for b in self._order):
                self._buy_game()
            self._phase = RussianPhase.COMPLETE

    def _buy_game(self) -> None:
        """Replace the dealer's highest card; once more, free, if the same rank came and still no game."""
        removed, added = self._replace_highest()
        self._replacements.append(DealerReplacement(removed, added, free=False))
        if rank_of(added) == rank_of(removed) and not assess_hand(self._dealer).has_game:
            removed, added = self._replace_highest()
            self._replacements.append(DealerReplacement(removed, added, free=True))

    def _replace_highest(self) -> tuple[int, int]:
        # With no game the dealer holds five different ranks, so the highest card is unique.
        index = max(range(5), key=lambda i: rank_of(self._dealer[i]))
        removed = self._dealer[index]
        (added,) = self._deck.deal(1)
        self._dealer[index] = added
        return removed, added

    def _box(self, box: int) -> _Box:
        state = self._boxes.get(box)
        if state is None:
            raise IllegalDecisionError(f"no box {box} in this round", reason="UNKNOWN_BOX")
        return state

    def _require_dealer_shown(self) -> None:
        if self._phase is RussianPhase.DECISIONS:
            raise IllegalDecisionError(
                "the dealer shows after every box has decided", reason="DECISIONS_PENDING"
            )
