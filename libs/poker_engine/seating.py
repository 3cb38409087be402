"""A table between hands: who is dealt into the next hand, where the button goes, who posts which blind.

Pure and immutable: every change returns a new TableState. The rule implemented (docs/engine.md,
"Seating, missed blinds and the dead button"):

* The big blind moves forward every hand to the next seat clockwise whose player can play (seated, not
  sitting out, chips left), including a player who waits for the big blind. The small blind is the seat
  that was the big blind last hand; if that player is not dealt in, there is no small blind that hand
  (dead small blind). The button is the seat that was the small-blind position last hand, even when that
  seat is now empty or out (dead button). So nobody skips a big blind by moving or leaving seats.
* Heads-up (two players dealt in) the button posts the small blind and the other player the big blind;
  the big blind still moves forward, so nobody posts it twice running when players come and go.
* A player who sits down owes a big blind: they enter either by posting it at once (live, out of
  position) or by waiting until the big blind reaches them (rules 8). A player sitting out when the big
  blind passes their seat owes a big blind; one whose seat is the small-blind position while sitting out
  owes a small blind too. On return they post what they owe (the big blind live, the small blind dead)
  or wait for the big blind, which clears it. A player who owes is never dealt in on the small-blind
  position (they wait one hand).
* A player with no chips is not dealt in (treated as sitting out). A hand needs two players; when fewer
  than two could play without owing (a table starting or restarting), debts are forgiven and the hand
  starts with the standard blinds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from poker_engine.config import (
    MAX_SEATS,
    MIN_SEATS,
    ForcedPost,
    HandConfig,
    PostKind,
    RakeRule,
    SeatConfig,
    Variant,
    next_seat_after,
    standard_blind_seats,
)
from poker_engine.errors import SeatingError
from poker_engine.events import HandEnded


class Entry(StrEnum):
    """How a player who owes blinds wants to enter."""

    POST_NOW = "POST_NOW"
    WAIT_FOR_BIG_BLIND = "WAIT_FOR_BIG_BLIND"


@dataclass(frozen=True, slots=True)
class SeatedPlayer:
    seat: int
    player_id: str
    stack: int
    sitting_out: bool = False
    owes_big_blind: bool = False
    owes_small_blind: bool = False
    entry: Entry = Entry.WAIT_FOR_BIG_BLIND

    @property
    def can_play(self) -> bool:
        return not self.sitting_out and self.stack > 0


@dataclass(frozen=True, slots=True)
class HandPlan:
    """Who plays the next hand and who posts what; ``table_after`` is the table once it starts."""

    button: int
    small_blind_seat: int | None
    big_blind_seat: int
    seats: tuple[SeatConfig, ...]
    extra_posts: tuple[ForcedPost, ...]
    table_after: TableState

    def hand_config(
        self,
        deck: tuple[int, ...],
        *,
        variant: Variant = Variant.NO_LIMIT,
        step: int = 1,
        rake: RakeRule | None = None,
        hand_id: str = "",
        small_bet: int | None = None,
        big_bet: int | None = None,
    ) -> HandConfig:
        table = self.table_after
        return HandConfig(
            variant=variant,
            seats=self.seats,
            button=self.button,
            small_blind=table.small_blind,
            big_blind=table.big_blind,
            deck=deck,
            step=step,
            rake=rake or RakeRule(),
            small_blind_seat=self.small_blind_seat,
            big_blind_seat=self.big_blind_seat,
            extra_posts=self.extra_posts,
            small_bet=small_bet,
            big_bet=big_bet,
            hand_id=hand_id,
        )


@dataclass(frozen=True, slots=True)
class TableState:
    max_seats: int
    small_blind: int
    big_blind: int
    players: tuple[SeatedPlayer, ...] = ()
    button: int | None = None
    small_blind_position: int | None = None
    big_blind_seat: int | None = None

    @classmethod
    def empty(cls, max_seats: int, small_blind: int, big_blind: int) -> TableState:
        if not MIN_SEATS <= max_seats <= MAX_SEATS:
            raise SeatingError(f"a table has {MIN_SEATS} to {MAX_SEATS} seats", "INVALID_TABLE")
        return cls(max_seats, small_blind, big_blind)

    # ------------------------------------------------------------------ queries

    def player_at(self, seat: int) -> SeatedPlayer | None:
        return next((p for p in self.players if p.seat == seat), None)

    def _require(self, seat: int) -> SeatedPlayer:
        player = self.player_at(seat)
        if player is None:
            raise SeatingError(f"seat {seat} is empty", "SEAT_EMPTY")
        return player

    def _with(self, player: SeatedPlayer) -> TableState:
        others = tuple(p for p in self.players if p.seat != player.seat)
        return replace(self, players=tuple(sorted((*others, player), key=lambda p: p.seat)))

    # ------------------------------------------------------------------ changes

    def sit_down(
        self, seat: int, player_id: str, stack: int, entry: Entry = Entry.WAIT_FOR_BIG_BLIND
    ) -> TableState:
        """A new player takes a seat; they owe a big blind unless the table is (re)starting."""
        if not 0 <= seat < self.max_seats:
            raise SeatingError(f"no seat {seat} at this table", "INVALID_SEAT")
        if self.player_at(seat) is not None:
            raise SeatingError(f"seat {seat} is taken", "SEAT_TAKEN")
        if any(p.player_id == player_id for p in self.players):
            raise SeatingError("one seat per player per table (rules 8)", "ALREADY_SEATED")
        if stack <= 0:
            raise SeatingError("a buy-in must be positive", "INVALID_STACK")
        return self._with(SeatedPlayer(seat, player_id, stack, owes_big_blind=True, entry=entry))

    def stand_up(self, seat: int) -> TableState:
        self._require(seat)
        return replace(self, players=tuple(p for p in self.players if p.seat != seat))

    def sit_out(self, seat: int) -> TableState:
        return self._with(replace(self._require(seat), sitting_out=True))

    def sit_in(self, seat: int, entry: Entry = Entry.WAIT_FOR_BIG_BLIND) -> TableState:
        return self._with(replace(self._require(seat), sitting_out=False, entry=entry))

    def set_stack(self, seat: int, stack: int) -> TableState:
        if stack < 0:
            raise SeatingError("a stack cannot be negative", "INVALID_STACK")
        return self._with(replace(self._require(seat), stack=stack))

    def apply_result(self, result: HandEnded) -> TableState:
        """Take the final stacks of a settled hand."""
        table = self
        for seat_result in result.results:
            if table.player_at(seat_result.seat) is not None:
                table = table.set_stack(seat_result.seat, seat_result.final_stack)
        return table

    # ------------------------------------------------------------- next hand

    def plan_next_hand(self, first_button: int | None = None) -> HandPlan | None:
        """Plan the next hand, or None if fewer than two players can be dealt in.

        ``first_button`` chooses the button when the table starts (default: first playable seat).
        """
        playable = [p.seat for p in self.players if p.can_play]
        if len(playable) < MIN_SEATS:
            return None
        debt_free = [
            p.seat for p in self.players if p.can_play and not (p.owes_big_blind or p.owes_small_blind)
        ]
        if self.big_blind_seat is None or len(debt_free) < MIN_SEATS:
            return self._plan_restart(playable, first_button)
        previous_big = self.big_blind_seat
        big = next_seat_after(previous_big, playable)
        small_position = previous_big
        button = self.small_blind_position if self.small_blind_position is not None else self.button
        assert button is not None
        players = {p.seat: p for p in self.players}
        dealt: list[int] = []
        posts: list[ForcedPost] = []
        for seat in playable:
            player = players[seat]
            owes = player.owes_big_blind or player.owes_small_blind
            if seat == big or not owes:
                dealt.append(seat)
            elif player.entry is Entry.POST_NOW and seat != small_position:
                dealt.append(seat)
                if player.owes_big_blind:
                    posts.append(ForcedPost(seat, PostKind.EXTRA_BIG_BLIND))
                if player.owes_small_blind:
                    posts.append(ForcedPost(seat, PostKind.DEAD_SMALL_BLIND))
        if len(dealt) < MIN_SEATS:
            return None
        small: int | None = small_position if small_position in dealt else None
        if len(dealt) > 2 and button in (small_position, big):
            # Coming from heads-up (where the button was also the small blind): the button goes to the
            # seat before the small-blind position.
            button = max((s for s in dealt if s < small_position), default=max(dealt))
        if len(dealt) == 2:
            # Heads-up: the button posts the small blind, the other player the big blind.
            # Both are debt-free here (two debt-free players are always dealt in), so nobody posts extra.
            other = next(seat for seat in dealt if seat != big)
            button = small = small_position = other
            posts = []
        # Record debts: sitting-out (or broke) players the big blind passed, and the small-blind position.
        updated: list[SeatedPlayer] = []
        passed = _seats_between(previous_big, big, self.max_seats)
        for player in self.players:
            if player.seat in dealt:
                player = replace(player, owes_big_blind=False, owes_small_blind=False)
            elif not player.can_play:
                owes_big = player.owes_big_blind or player.seat in passed or player.seat == big
                owes_small = player.owes_small_blind or player.seat == small_position
                player = replace(player, owes_big_blind=owes_big, owes_small_blind=owes_small)
            updated.append(player)
        after = replace(
            self,
            players=tuple(updated),
            button=button,
            small_blind_position=small_position,
            big_blind_seat=big,
        )
        return HandPlan(button, small, big, _seat_configs(updated, dealt), tuple(posts), after)

    def _plan_restart(self, playable: list[int], first_button: int | None) -> HandPlan:
        """Start or restart the table: everyone who can play is dealt in, owing nothing."""
        if self.big_blind_seat is not None and first_button is None:
            # Restarting: the big blind still moves forward, so nobody posts it twice running.
            big = next_seat_after(self.big_blind_seat, playable)
            small = _seat_before(big, playable)
            button = small if len(playable) == 2 else _seat_before(small, playable)
        else:
            button = first_button if first_button in playable else playable[0]
            small, big = standard_blind_seats(playable, button)
        updated = [
            replace(p, owes_big_blind=False, owes_small_blind=False) if p.can_play else p
            for p in self.players
        ]
        after = replace(
            self, players=tuple(updated), button=button, small_blind_position=small, big_blind_seat=big
        )
        return HandPlan(button, small, big, _seat_configs(updated, playable), (), after)


def _seat_before(seat: int, seats: list[int]) -> int:
    """The first of ``seats`` counter-clockwise before ``seat``."""
    return max((s for s in seats if s < seat), default=max(seats))


def _seats_between(start: int, end: int, max_seats: int) -> set[int]:
    """Seats strictly between ``start`` and ``end`` clockwise."""
    seats: set[int] = set()
    seat = (start + 1) % max_seats
    while seat != end and seat != start:
        seats.add(seat)
        seat = (seat + 1) % max_seats
    return seats


def _seat_configs(players: list[SeatedPlayer], dealt: list[int]) -> tuple[SeatConfig, ...]:
    return tuple(SeatConfig(p.seat, p.player_id, p.stack) for p in players if p.seat in dealt)
