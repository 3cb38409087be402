"""Who may do what in a betting round: the legality and sizing rules behind verify / can / do.

``BettingRules`` is a mixin of ``hand.Hand``: it reads the hand's state and never changes it, so every
refusal (a typed IllegalActionError with a stable reason) leaves the hand exactly as it was, and
``legal_actions`` is computed from the same checks the actions use.
"""

from __future__ import annotations

from poker_engine.actions import LegalActions
from poker_engine.config import HandConfig, Variant
from poker_engine.errors import IllegalActionError
from poker_engine.events import ActionKind, Street

# Fixed limit: one bet and three raises per round; before the flop the big blind counts as the bet.
FIXED_LIMIT_BET_CAP = 4


class BettingRules:
    """Read-only rule checks over the state a Hand keeps (hand indexes 0..n-1, clockwise)."""

    config: HandConfig
    _n: int
    _seat_numbers: list[int]
    _index_of: dict[int, int]
    _stacks: list[int]
    _bets: list[int]
    _folded: list[bool]
    _acted: list[bool]
    _reopen_at: list[int]
    _street: Street
    _actor: int | None
    _current_bet: int
    _full_raise: int
    _bets_this_round: int

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
        all_in_to = self._bets[i] + self._stacks[i]
        if all_in_to <= self._current_bet:
            return None  # an all-in call
        if not self._may_raise(i):
            return IllegalActionError(
                "an all-in here would be a raise, and raising is closed", "RAISE_NOT_ALLOWED"
            )
        if all_in_to > self._raise_range(i)[1]:
            # Fixed limit: bets and raises are of a fixed size, so a bigger stack cannot all go in.
            return IllegalActionError("an all-in here is more than the fixed bet", "AMOUNT_TOO_LARGE")
        return None

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
        min_to, max_to = self._raise_range(i)
        if to == self._bets[i] + self._stacks[i] and to <= max_to:
            return None  # all-in for the exact rest: allowed off the step and below the minimum
        if to > max_to:
            return IllegalActionError(f"at most {max_to}", "AMOUNT_TOO_LARGE")
        if to < min_to:
            return IllegalActionError(f"at least {min_to}", f"{kind.value}_TOO_SMALL")
        if to % self._step:
            return IllegalActionError(f"amounts move in steps of {self._step}", "AMOUNT_NOT_ON_STEP")
        return None

    def _others_can_act(self, i: int) -> bool:
        """Whether anyone else still in could put in more than the current bet (else a raise is idle)."""
        stacks, bets, folded, current = self._stacks, self._bets, self._folded, self._current_bet
        return any(
            j != i and not folded[j] and stacks[j] > 0 and stacks[j] + bets[j] > current
            for j in range(self._n)
        )

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
