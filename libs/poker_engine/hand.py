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

from collections.abc import Sequence

from poker_engine.actions import Action, LegalActions
from poker_engine.config import ForcedPost, HandConfig, PostKind, Variant, standard_blind_seats
from poker_engine.errors import IllegalActionError
from poker_engine.evaluator import describe_strength, strength7
from poker_engine.events import (
    ActionCause,
    ActionKind,
    BlindPosted,
    BoardDealt,
    CardsMucked,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    PlayerActed,
    PotAwarded,
    SeatInfo,
    SeatResult,
    Street,
    UncalledBetReturned,
)
from poker_engine.pots import build_pots, rake_for, split_pot, take_rake

# Fixed limit: one bet and three raises per round; before the flop the big blind counts as the bet.
FIXED_LIMIT_BET_CAP = 4
_NEXT_STREET = {Street.PREFLOP: Street.FLOP, Street.FLOP: Street.TURN, Street.TURN: Street.RIVER}
_BOARD_CARDS = {Street.FLOP: 3, Street.TURN: 1, Street.RIVER: 1}


class Hand:
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

    def legal_actions(self) -> LegalActions | None:
        """What the player to act may do, or None when the hand is over."""
        i = self._actor
        if i is None:
            return None
        stack, bet, current = self._stacks[i], self._bets[i], self._current_bet
        all_in_to = bet + stack
        can_bet = can_raise = False
        min_to = max_to = 0
        if self._may_raise(i):
            min_to, max_to = self._raise_range(i)
            can_bet, can_raise = current == 0, current > 0
        return LegalActions(
            seat=self._seat_numbers[i],
            can_fold=True,
            can_check=bet >= current,
            can_call=bet < current,
            call_amount=min(current - bet, stack) if bet < current else 0,
            can_bet=can_bet,
            can_raise=can_raise,
            min_to=min_to,
            max_to=max_to,
            step=self._step,
            all_in_to=all_in_to,
        )

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
            if self.config.variant is Variant.FIXED_LIMIT and self._actor is not None:
                return self._fixed_limit_wager(action.seat, kind)
            raise IllegalActionError(f"{kind.value} needs an amount", "AMOUNT_REQUIRED")
        if kind is ActionKind.BET:
            return self.bet(action.seat, action.to)
        return self.raise_to(action.seat, action.to)

    # ------------------------------------------------------------- validation

    @property
    def _step(self) -> int:
        return self.config.step if self.config.variant is Variant.NO_LIMIT else 1

    def _index(self, seat: int) -> int:
        index = self._index_of.get(seat)
        if index is None:
            raise IllegalActionError(f"seat {seat} is not in this hand", "UNKNOWN_SEAT")
        return index

    @staticmethod
    def _raise_if(error: IllegalActionError | None) -> None:
        if error is not None:
            raise error

    def _verify_turn(self, seat: int) -> None:
        self._raise_if(self._refusal_turn(seat))

    def _refusal_turn(self, seat: int) -> IllegalActionError | None:
        if self._street is Street.COMPLETE:
            return IllegalActionError("the hand is over", "HAND_IS_OVER")
        index = self._index_of.get(seat)
        if index is None:
            return IllegalActionError(f"seat {seat} is not in this hand", "UNKNOWN_SEAT")
        if self._folded[index]:
            return IllegalActionError(f"seat {seat} has folded", "NOT_IN_HAND")
        if index != self._actor:
            return IllegalActionError(f"it is not seat {seat}'s turn", "NOT_YOUR_TURN")
        return None

    def _refusal_check(self, seat: int) -> IllegalActionError | None:
        refusal = self._refusal_turn(seat)
        if refusal is None and self._bets[self._index_of[seat]] < self._current_bet:
            # Rules 3: a check only when nobody this round has put in more than you.
            return IllegalActionError("there is a bet to call", "CHECK_NOT_ALLOWED")
        return refusal

    def _refusal_call(self, seat: int) -> IllegalActionError | None:
        refusal = self._refusal_turn(seat)
        if refusal is None and self._bets[self._index_of[seat]] >= self._current_bet:
            return IllegalActionError("nothing to call", "NOTHING_TO_CALL")
        return refusal

    def _refusal_leave(self, seat: int) -> IllegalActionError | None:
        if self._street is Street.COMPLETE:
            return IllegalActionError("the hand is over", "HAND_IS_OVER")
        index = self._index_of.get(seat)
        if index is None:
            return IllegalActionError(f"seat {seat} is not in this hand", "UNKNOWN_SEAT")
        if self._folded[index]:
            return IllegalActionError(f"seat {seat} has folded", "NOT_IN_HAND")
        return None

    def _refusal_all_in(self, seat: int) -> IllegalActionError | None:
        refusal = self._refusal_turn(seat)
        if refusal is not None:
            return refusal
        i = self._index_of[seat]
        if self._bets[i] + self._stacks[i] <= self._current_bet or self._may_raise(i):
            return None
        return IllegalActionError(
            "an all-in here would be a raise, and raising is closed", "RAISE_NOT_ALLOWED"
        )

    def _refusal_wager(self, seat: int, to: int, kind: ActionKind) -> IllegalActionError | None:
        refusal = self._refusal_turn(seat)
        if refusal is not None:
            return refusal
        i = self._index_of[seat]
        current = self._current_bet
        if kind is ActionKind.BET and current > 0:
            return IllegalActionError("there is already a bet: raise instead", "BET_NOT_ALLOWED")
        if kind is ActionKind.RAISE and current == 0:
            return IllegalActionError("there is no bet to raise: bet instead", "RAISE_NOT_ALLOWED")
        if type(to) is not int:
            return IllegalActionError("amount must be an int", "INVALID_AMOUNT")
        if (
            self.config.variant is Variant.FIXED_LIMIT
            and self._bets_this_round >= FIXED_LIMIT_BET_CAP
            and self._others_can_act(i)
        ):
            return IllegalActionError("the betting is capped this round", "BETTING_CAPPED")
        if not self._may_raise(i):
            # An all-in short of a full raise does not reopen the betting for who already acted.
            return IllegalActionError("raising is not open to this player", f"{kind.value}_NOT_ALLOWED")
        all_in_to = self._bets[i] + self._stacks[i]
        if to == all_in_to:
            return None
        min_to, max_to = self._raise_range(i)
        if to > max_to:
            return IllegalActionError(f"at most {max_to}", "AMOUNT_TOO_LARGE")
        if to < min_to:
            return IllegalActionError(f"at least {min_to}", f"{kind.value}_TOO_SMALL")
        if to % self._step:
            return IllegalActionError(f"amounts move in steps of {self._step}", "AMOUNT_NOT_ON_STEP")
        return None

    def _others_can_act(self, i: int) -> bool:
        stacks, folded = self._stacks, self._folded
        return any(j != i and not folded[j] and stacks[j] > 0 for j in range(self._n))

    def _may_raise(self, i: int) -> bool:
        """Whether player ``i`` (to act) may bet or raise at all, whatever the amount."""
        if self._bets[i] + self._stacks[i] <= self._current_bet or not self._others_can_act(i):
            return False
        if self.config.variant is Variant.FIXED_LIMIT and self._bets_this_round >= FIXED_LIMIT_BET_CAP:
            return False
        # A full raise since this player last acted reopens the betting for them; short all-ins only
        # count together (two short all-ins that add up to a full raise do reopen it).
        return not self._acted[i] or self._current_bet >= self._reopen_at[i]

    def _raise_range(self, i: int) -> tuple[int, int]:
        all_in_to = self._bets[i] + self._stacks[i]
        if self.config.variant is Variant.FIXED_LIMIT:
            fixed = self._current_bet + self._limit_size()
            return min(fixed, all_in_to), min(fixed, all_in_to)
        step = self.config.step
        # Minimum bet is the big blind; a raise must be at least the last full raise (rules 10).
        minimum = self._current_bet + self._full_raise if self._current_bet else self.config.big_blind
        minimum = -(-minimum // step) * step
        return min(minimum, all_in_to), all_in_to

    def _limit_size(self) -> int:
        if self._street in (Street.PREFLOP, Street.FLOP):
            return self.config.limit_small_bet
        return self.config.limit_big_bet

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
            if not dead:
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
            # Nobody left to bet against: act only to answer a bet still owed.
            j = able[0]
            facing = max(bets[k] for k in range(n) if k != j)
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
        if top > second:
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
        config = self.config
        pots = build_pots(self._contributed, self._folded)
        rake = rake_for(sum(self._contributed), config.rake.basis_points, config.rake.cap, self._flop_dealt)
        raked = take_rake(pots, rake)
        order = self._from_button_left
        strengths: dict[int, int] = {}
        all_in_showdown = sum(1 for i in range(self._n) if not self._folded[i] and self._stacks[i] > 0) < 2
        if showdown:
            self._street = Street.SHOWDOWN
            board = self._board
            for i in order:
                if not self._folded[i]:
                    strengths[i] = strength7(*self._hole[i], *board)
        awards: list[PotAwarded] = []
        winners_any: set[int] = set()
        for number, (pot, pot_rake) in enumerate(zip(pots, raked, strict=True)):
            contenders = [i for i in order if i in pot.eligible]
            if showdown:
                best = max(strengths[i] for i in contenders)
                winners = [i for i in contenders if strengths[i] == best]
            else:
                winners = contenders
            shares = split_pot(pot.amount - pot_rake, winners)
            winners_any.update(winners)
            for i, amount in shares:
                self._stacks[i] += amount
            awards.append(
                PotAwarded(
                    index=number,
                    amount=pot.amount - pot_rake,
                    rake=pot_rake,
                    eligible=tuple(self._seat_numbers[i] for i in contenders),
                    winners=tuple((self._seat_numbers[i], amount) for i, amount in shares),
                )
            )
        if showdown:
            # Hands are turned up when an all-in closed the betting (nobody left to bet against);
            # otherwise every hand that wins a share is shown and the others are mucked (recorded in the
            # full record, hidden in player and spectator views).
            for i in order:
                if self._folded[i]:
                    continue
                seat = self._seat_numbers[i]
                if i in winners_any or all_in_showdown:
                    self._emit(CardsShown(seat, self._hole[i], describe_strength(strengths[i])))
                else:
                    self._emit(CardsMucked(seat, self._hole[i]))
        for award in awards:
            self._emit(award)
        results = tuple(
            SeatResult(seat, player, start, stack)
            for seat, player, start, stack in zip(
                self._seat_numbers, self._player_ids, self._starting, self._stacks, strict=True
            )
        )
        self._result = HandEnded(results, rake, tuple(awards), tuple(self._uncalled))
        self._street = Street.COMPLETE
        self._emit(self._result)


def play_actions(config: HandConfig, actions: Sequence[Action]) -> Hand:
    """Build a hand and apply ``actions`` in order (raises on the first illegal one)."""
    hand = Hand(config)
    for action in actions:
        hand.act(action)
    return hand
