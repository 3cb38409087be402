"""One hand of Hold'em (no-limit or fixed-limit), driven by actions and producing events.

Dealing order (re-derivable from the deck alone): ``deck[0]`` is the top card. Hole cards go one at a
time clockwise starting with the first dealt-in seat left of the button, two rounds; then one burn card
before the flop (three cards), one before the turn and one before the river. Seat numbers ascend
clockwise. See docs/engine.md for the full rules this module implements.

Every action has a verify / can / do trio (``verify_call`` raises IllegalActionError with a stable
reason and changes nothing, ``can_call`` answers True or False, ``call`` performs it and returns the new
events); ``legal_actions`` comes from the same checks.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence

from poker_engine.actions import Action
from poker_engine.betting import BettingRules
from poker_engine.config import ForcedPost, HandConfig, PostKind, Variant, standard_blind_seats
from poker_engine.errors import IllegalActionError
from poker_engine.evaluator import describe_strength, strength7
from poker_engine.events import (
    ActionCause,
    ActionKind,
    BlindPosted,
    BoardDealt,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    PlayerActed,
    SeatInfo,
    Street,
    UncalledBetReturned,
)
from poker_engine.pots import Pot, live_pots
from poker_engine.showdown import settle_hand

_NEXT_STREET = {Street.PREFLOP: Street.FLOP, Street.FLOP: Street.TURN, Street.TURN: Street.RIVER}
_BOARD_CARDS = {Street.FLOP: 3, Street.TURN: 1, Street.RIVER: 1}


class Hand(BettingRules):
    """A running hand. Build it from a HandConfig; read ``events`` for the record."""

    def __init__(self, config: HandConfig) -> None:
        config.validate()
        self.config = config
        ordered = sorted(config.seats, key=lambda seat: seat.seat)
        self._seat_numbers = [seat.seat for seat in ordered]
        self._index_of = {seat: index for index, seat in enumerate(self._seat_numbers)}
        self._player_ids = [seat.player_id for seat in ordered]
        self._starting = [seat.stack for seat in ordered]
        n = len(ordered)
        self._n = n
        self._stacks = list(self._starting)
        self._bets = [0] * n
        self._contributed = [0] * n
        self._dead = [0] * n  # dead money in ``_contributed`` (a dead small blind): in the main pot
        self._folded = [False] * n
        self._acted = [False] * n
        self._reopen_at = [0] * n
        self._hole: list[tuple[int, ...]] = [()] * n
        self._board: list[int] = []
        self._deck_position = 0
        self._street = Street.PREFLOP
        self._actor: int | None = None
        self._current_bet = 0
        self._full_raise = config.big_blind
        self._bets_this_round = 0
        self._flop_dealt = False
        self._uncalled: list[UncalledBetReturned] = []
        self._events: list[Event] = []
        self._result: HandEnded | None = None
        # Clockwise order starting left of the button: dealing, odd chips and showing all use it.
        button = config.button
        self._from_button_left = sorted(range(n), key=lambda i: (self._seat_numbers[i] - button - 1) % 10)
        self._start()

    def fork(self) -> Hand:
        """An independent copy to play on (a table plays a decision on one until its log has it):
        every list and dict of the hand's state is copied; what they hold (numbers, cards, events)
        and the config are immutable and shared. A deep copy gives the same, many times slower."""
        twin = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, list | dict):
                setattr(twin, name, copy.copy(value))
        return twin

    # ----------------------------------------------------------------- queries

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def street(self) -> Street:
        return self._street

    @property
    def is_over(self) -> bool:
        return self._street is Street.COMPLETE

    @property
    def actor_seat(self) -> int | None:
        """The seat whose turn it is, or None when the hand is over."""
        return None if self._actor is None else self._seat_numbers[self._actor]

    @property
    def board(self) -> tuple[int, ...]:
        return tuple(self._board)

    @property
    def seats(self) -> tuple[int, ...]:
        return tuple(self._seat_numbers)

    @property
    def stacks(self) -> dict[int, int]:
        return dict(zip(self._seat_numbers, self._stacks, strict=True))

    @property
    def total_contributed(self) -> dict[int, int]:
        return dict(zip(self._seat_numbers, self._contributed, strict=True))

    @property
    def result(self) -> HandEnded | None:
        """The settlement once the hand is over."""
        return self._result

    def hole_cards(self, seat: int) -> tuple[int, ...]:
        return self._hole[self._index(seat)]

    def in_hand(self, seat: int) -> bool:
        return not self._folded[self._index(seat)]

    @property
    def bets(self) -> dict[int, int]:
        """Each seat's bet in the current betting round (not yet in a pot)."""
        return dict(zip(self._seat_numbers, self._bets, strict=True))

    @property
    def pot_total(self) -> int:
        """All chips put in so far, bets of the current round included."""
        return sum(self._contributed)

    def pots(self) -> tuple[Pot, ...]:
        """The pots as they stand, bets of the current round included (eligible as seat numbers): split
        where a player still in is all-in, each contested by who can still win it. Once the hand is over,
        the pots it settled (before rake)."""
        # What a player has behind is what they started with less what they put in (winnings aside).
        all_in = [
            not out and start == put_in
            for out, start, put_in in zip(self._folded, self._starting, self._contributed, strict=True)
        ]
        pots = live_pots(self._contributed, self._folded, all_in, self._dead)
        return tuple(Pot(pot.amount, tuple(self._seat_numbers[i] for i in pot.eligible)) for pot in pots)

    # ------------------------------------------------------- check / can / do

    def verify_fold(self, seat: int) -> None:
        self._verify_turn(seat)

    def can_fold(self, seat: int) -> bool:
        return self._refusal_turn(seat) is None

    def fold(self, seat: int) -> tuple[Event, ...]:
        self.verify_fold(seat)
        return self._apply(self._index_of[seat], ActionKind.FOLD, 0, ActionCause.PLAYER)

    def verify_check(self, seat: int) -> None:
        self._raise_if(self._refusal_check(seat))

    def can_check(self, seat: int) -> bool:
        return self._refusal_check(seat) is None

    def check(self, seat: int) -> tuple[Event, ...]:
        self.verify_check(seat)
        return self._apply(self._index_of[seat], ActionKind.CHECK, 0, ActionCause.PLAYER)

    def verify_call(self, seat: int) -> None:
        self._raise_if(self._refusal_call(seat))

    def can_call(self, seat: int) -> bool:
        return self._refusal_call(seat) is None

    def call(self, seat: int) -> tuple[Event, ...]:
        self.verify_call(seat)
        i = self._index_of[seat]
        to = min(self._current_bet, self._bets[i] + self._stacks[i])
        return self._apply(i, ActionKind.CALL, to, ActionCause.PLAYER)

    def verify_bet(self, seat: int, to: int) -> None:
        self._raise_if(self._refusal_wager(seat, to, ActionKind.BET))

    def can_bet(self, seat: int, to: int) -> bool:
        return self._refusal_wager(seat, to, ActionKind.BET) is None

    def bet(self, seat: int, to: int) -> tuple[Event, ...]:
        self.verify_bet(seat, to)
        return self._apply(self._index_of[seat], ActionKind.BET, to, ActionCause.PLAYER)

    def verify_raise_to(self, seat: int, to: int) -> None:
        self._raise_if(self._refusal_wager(seat, to, ActionKind.RAISE))

    def can_raise_to(self, seat: int, to: int) -> bool:
        return self._refusal_wager(seat, to, ActionKind.RAISE) is None

    def raise_to(self, seat: int, to: int) -> tuple[Event, ...]:
        self.verify_raise_to(seat, to)
        return self._apply(self._index_of[seat], ActionKind.RAISE, to, ActionCause.PLAYER)

    def verify_all_in(self, seat: int) -> None:
        self._raise_if(self._refusal_all_in(seat))

    def can_all_in(self, seat: int) -> bool:
        return self._refusal_all_in(seat) is None

    def all_in(self, seat: int) -> tuple[Event, ...]:
        """Put in the whole stack: a call, a bet or a raise depending on the amount owed."""
        self.verify_all_in(seat)
        i = self._index_of[seat]
        to = self._bets[i] + self._stacks[i]
        if to <= self._current_bet:
            return self._apply(i, ActionKind.CALL, to, ActionCause.PLAYER)
        kind = ActionKind.BET if self._current_bet == 0 else ActionKind.RAISE
        return self._apply(i, kind, to, ActionCause.PLAYER)

    def verify_timeout(self, seat: int) -> None:
        self._verify_turn(seat)

    def can_timeout(self, seat: int) -> bool:
        return self._refusal_turn(seat) is None

    def timeout(self, seat: int) -> tuple[Event, ...]:
        """Rules 9: the server checks when a check is allowed, otherwise folds; never an automatic call."""
        self.verify_timeout(seat)
        i = self._index_of[seat]
        kind = ActionKind.CHECK if self._bets[i] >= self._current_bet else ActionKind.FOLD
        return self._apply(i, kind, 0, ActionCause.TIMEOUT)

    def verify_leave(self, seat: int) -> None:
        self._raise_if(self._refusal_leave(seat))

    def can_leave(self, seat: int) -> bool:
        return self._refusal_leave(seat) is None

    def leave(self, seat: int) -> tuple[Event, ...]:
        """Rules 12: leaving during a hand folds at once, in turn or not; chips already in stay in."""
        self.verify_leave(seat)
        i = self._index_of[seat]
        if i == self._actor:
            return self._apply(i, ActionKind.FOLD, 0, ActionCause.LEFT_TABLE)
        mark = len(self._events)
        self._folded[i] = True
        self._emit(PlayerActed(seat, ActionKind.FOLD, 0, self._bets[i], False, ActionCause.LEFT_TABLE))
        if sum(1 for out in self._folded if not out) == 1:
            self._finish_street()
        else:
            # The player to act may no longer need to (they may be the only one left with chips).
            assert self._actor is not None
            actor = self._find_actor(self._actor)
            if actor is None:
                self._finish_street()
            else:
                self._actor = actor
        return tuple(self._events[mark:])

    def verify_show(self, seat: int) -> None:
        self._raise_if(self._refusal_show(seat))

    def can_show(self, seat: int) -> bool:
        return self._refusal_show(seat) is None

    def show(self, seat: int) -> tuple[Event, ...]:
        """After the hand, a player may turn up cards that were mucked, folded or won without a showdown."""
        self.verify_show(seat)
        i = self._index_of[seat]
        cards = self._hole[i]
        words = describe_strength(strength7(*cards, *self._board)) if len(self._board) == 5 else ""
        event = CardsShown(seat, cards, words)
        self._emit(event)
        return (event,)

    def _refusal_show(self, seat: int) -> IllegalActionError | None:
        index = self._index_of.get(seat)
        if index is None:
            return IllegalActionError(f"seat {seat} is not in this hand", "UNKNOWN_SEAT")
        if self._street is not Street.COMPLETE:
            return IllegalActionError("cards are shown by choice only after the hand", "HAND_NOT_OVER")
        if any(isinstance(e, CardsShown) and e.seat == seat for e in self._events):
            return IllegalActionError("these cards are already shown", "ALREADY_SHOWN")
        return None

    def act(self, action: Action) -> tuple[Event, ...]:
        """Dispatch an Action value (what the table service and the replay tool receive)."""
        kind = action.kind
        if kind is ActionKind.FOLD:
            return self.fold(action.seat)
        if kind is ActionKind.CHECK:
            return self.check(action.seat)
        if kind is ActionKind.CALL:
            return self.call(action.seat)
        if action.to is None:
            if self.config.variant is Variant.FIXED_LIMIT:
                return self._fixed_limit_wager(action.seat, kind)
            raise IllegalActionError(f"{kind.value} needs an amount", "AMOUNT_REQUIRED")
        if kind is ActionKind.BET:
            return self.bet(action.seat, action.to)
        return self.raise_to(action.seat, action.to)

    def _fixed_limit_wager(self, seat: int, kind: ActionKind) -> tuple[Event, ...]:
        i = self._index(seat)
        to = min(self._current_bet + self._limit_size(), self._bets[i] + self._stacks[i])
        return self.bet(seat, to) if kind is ActionKind.BET else self.raise_to(seat, to)

    # ---------------------------------------------------------------- changes

    def _emit(self, event: Event) -> None:
        self._events.append(event)

    def _start(self) -> None:
        config = self.config
        small_blind_seat, big_blind_seat = config.small_blind_seat, config.big_blind_seat
        if big_blind_seat is None:
            small_blind_seat, big_blind_seat = standard_blind_seats(self._seat_numbers, config.button)
        self._emit(
            HandStarted(
                hand_id=config.hand_id,
                variant=config.variant,
                button=config.button,
                small_blind=config.small_blind,
                big_blind=config.big_blind,
                small_bet=config.limit_small_bet if config.variant is Variant.FIXED_LIMIT else 0,
                big_bet=config.limit_big_bet if config.variant is Variant.FIXED_LIMIT else 0,
                step=self._step,
                rake_basis_points=config.rake.basis_points,
                rake_cap=config.rake.cap,
                seats=tuple(
                    SeatInfo(seat, player, stack)
                    for seat, player, stack in zip(
                        self._seat_numbers, self._player_ids, self._starting, strict=True
                    )
                ),
            )
        )
        posts: list[ForcedPost] = []
        if small_blind_seat is not None:
            posts.append(ForcedPost(small_blind_seat, PostKind.SMALL_BLIND))
        posts.append(ForcedPost(big_blind_seat, PostKind.BIG_BLIND))
        posts.extend(config.extra_posts)
        for post in posts:
            i = self._index_of[post.seat]
            dead = post.kind is PostKind.DEAD_SMALL_BLIND
            wanted = (
                config.small_blind
                if post.kind in (PostKind.SMALL_BLIND, PostKind.DEAD_SMALL_BLIND)
                else (config.big_blind)
            )
            amount = min(wanted, self._stacks[i])
            self._stacks[i] -= amount
            self._contributed[i] += amount
            if dead:
                self._dead[i] += amount
            else:
                self._bets[i] += amount
            self._emit(BlindPosted(post.seat, post.kind, amount, self._stacks[i] == 0))
        deck = config.deck
        order = self._from_button_left
        hole: list[list[int]] = [[] for _ in range(self._n)]
        for _round in range(2):
            for i in order:
                hole[i].append(deck[self._deck_position])
                self._deck_position += 1
        for i in order:
            self._hole[i] = tuple(hole[i])
            self._emit(HoleCardsDealt(self._seat_numbers[i], self._hole[i]))
        # Players must match the full big blind even when the big blind is posted all-in for less.
        self._current_bet = max(max(self._bets), config.big_blind)
        self._full_raise = config.big_blind if config.variant is Variant.NO_LIMIT else self._limit_size()
        self._bets_this_round = 1
        first = self._find_actor((self._index_of[big_blind_seat] + 1) % self._n)
        if first is None:
            self._finish_street()
        else:
            self._actor = first

    def _apply(self, i: int, kind: ActionKind, to: int, cause: ActionCause) -> tuple[Event, ...]:
        mark = len(self._events)
        if kind is ActionKind.FOLD:
            self._folded[i] = True
            self._emit(PlayerActed(self._seat_numbers[i], kind, 0, self._bets[i], False, cause))
        else:
            added = to - self._bets[i] if kind is not ActionKind.CHECK else 0
            if added:
                self._stacks[i] -= added
                self._contributed[i] += added
                self._bets[i] = to
                current = self._current_bet
                if to > current:
                    if to - current >= self._full_raise:
                        if self.config.variant is Variant.NO_LIMIT:
                            self._full_raise = to - current
                        self._bets_this_round += 1
                    self._current_bet = to
            self._acted[i] = True
            self._reopen_at[i] = self._current_bet + self._full_raise
            self._emit(
                PlayerActed(self._seat_numbers[i], kind, added, self._bets[i], self._stacks[i] == 0, cause)
            )
        if self._n - sum(self._folded) == 1:
            self._finish_street()
        else:
            actor = self._find_actor((i + 1) % self._n)
            if actor is None:
                self._finish_street()
            else:
                self._actor = actor
        return tuple(self._events[mark:])

    def _find_actor(self, start: int) -> int | None:
        """The next player (from ``start`` clockwise) who still owes an action this round, if any."""
        n, folded, stacks, bets, acted = self._n, self._folded, self._stacks, self._bets, self._acted
        able = [j for j in range(n) if not folded[j] and stacks[j] > 0]
        if not able:
            return None
        if len(able) == 1:
            # Nobody left to bet against: act only to answer a bet of a player still in (a bet left by
            # a player who left the table needs no answer; its chips stay in the pot).
            j = able[0]
            facing = max((bets[k] for k in range(n) if k != j and not folded[k]), default=0)
            if bets[j] >= facing:
                return None
        current = self._current_bet
        for offset in range(n):
            j = (start + offset) % n
            if not folded[j] and stacks[j] > 0 and (not acted[j] or bets[j] < current):
                return j
        return None

    def _return_uncalled(self) -> None:
        """Rules 10: the uncalled part of the last bet returns to its owner and is not in the pot."""
        bets = self._bets
        top = max(bets)
        owner = bets.index(top)
        second = max((bet for j, bet in enumerate(bets) if j != owner), default=0)
        # A player who left keeps nothing back: chips already put in stay in the pot (rules 12).
        if top > second and not self._folded[owner]:
            amount = top - second
            bets[owner] -= amount
            self._stacks[owner] += amount
            self._contributed[owner] -= amount
            event = UncalledBetReturned(self._seat_numbers[owner], amount)
            self._uncalled.append(event)
            self._emit(event)

    def _finish_street(self) -> None:
        """Close the betting round, then deal on, or settle the hand."""
        self._actor = None
        self._return_uncalled()
        self._bets = [0] * self._n
        live = self._n - sum(self._folded)
        while live > 1 and self._street is not Street.RIVER:
            self._deal_next_street()
            if sum(1 for j in range(self._n) if not self._folded[j] and self._stacks[j] > 0) >= 2:
                first = self._find_actor(self._from_button_left[0])
                if first is not None:
                    self._actor = first
                    return
        self._settle(showdown=live > 1)

    def _deal_next_street(self) -> None:
        street = _NEXT_STREET[self._street]
        self._deck_position += 1  # burn card
        count = _BOARD_CARDS[street]
        cards = self.config.deck[self._deck_position : self._deck_position + count]
        self._deck_position += count
        self._board.extend(cards)
        self._street = street
        self._flop_dealt = True
        self._emit(BoardDealt(street, tuple(cards)))
        self._acted = [False] * self._n
        self._current_bet = 0
        self._bets_this_round = 0
        self._full_raise = (
            self.config.big_blind if self.config.variant is Variant.NO_LIMIT else self._limit_size()
        )

    def _settle(self, showdown: bool) -> None:
        if showdown:
            self._street = Street.SHOWDOWN
        closing = settle_hand(
            seat_numbers=self._seat_numbers,
            player_ids=self._player_ids,
            starting=self._starting,
            stacks=self._stacks,
            contributed=self._contributed,
            dead=self._dead,
            folded=self._folded,
            hole=self._hole,
            board=self._board,
            from_button_left=self._from_button_left,
            rake_rule=self.config.rake,
            flop_dealt=self._flop_dealt,
            uncalled=self._uncalled,
            showdown=showdown,
        )
        self._events.extend(closing)
        result = closing[-1]
        assert isinstance(result, HandEnded)
        self._result = result
        self._street = Street.COMPLETE


def play_actions(config: HandConfig, actions: Sequence[Action]) -> Hand:
    """Build a hand and apply ``actions`` in order (raises on the first illegal one)."""
    hand = Hand(config)
    for action in actions:
        hand.act(action)
    return hand


def rebuild_hand(config: HandConfig, record: Iterable[Event]) -> Hand:
    """Rebuild a hand from its config and its recorded events (e.g. a per-hand event log).

    Only the decisions are replayed: each PlayerActed (by cause: player action, timeout or leaving) and
    each CardsShown by choice after the hand; every other event follows from the config and the deck.
    A shard taking a table over uses this to continue a hand exactly where it stood. Raises
    IllegalActionError if the record does not fit the config.
    """
    hand = Hand(config)
    for event in record:
        if isinstance(event, PlayerActed) and event.cause is not ActionCause.PLAYER:
            if event.cause is ActionCause.TIMEOUT:
                hand.timeout(event.seat)
            else:
                hand.leave(event.seat)
        elif isinstance(event, PlayerActed):
            to = event.to if event.action in (ActionKind.BET, ActionKind.RAISE) else None
            hand.act(Action(event.seat, event.action, to))
        elif isinstance(event, CardsShown) and hand.is_over and hand.can_show(event.seat):
            hand.show(event.seat)
    return hand
