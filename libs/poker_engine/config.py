"""What a hand is played with: variant, seats and stacks, button, blinds or limits, step, rake, deck order.

A HandConfig is a frozen value the table service builds (usually from ``seating.TableState.next_hand``)
and hands to ``Hand``; ``HandConfig.validate`` lists every problem in one InvalidConfigError.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from poker_engine.errors import InvalidConfigError

MIN_SEATS = 2
MAX_SEATS = 10
# Rules 11: rake is "up to 5%" with "no more than 30 chips per hand" by default.
MAX_RAKE_BASIS_POINTS = 500
DEFAULT_RAKE_CAP = 30


class Variant(StrEnum):
    NO_LIMIT = "NO_LIMIT"
    FIXED_LIMIT = "FIXED_LIMIT"


class PostKind(StrEnum):
    SMALL_BLIND = "SMALL_BLIND"
    BIG_BLIND = "BIG_BLIND"
    # A live big blind posted out of position: a new player entering, or one paying a missed big blind.
    EXTRA_BIG_BLIND = "EXTRA_BIG_BLIND"
    # A missed small blind paid back: dead money, it goes to the pot and does not count as a bet.
    DEAD_SMALL_BLIND = "DEAD_SMALL_BLIND"


@dataclass(frozen=True, slots=True)
class SeatConfig:
    """One player dealt into the hand. ``seat`` is the table seat number, clockwise ascending."""

    seat: int
    player_id: str
    stack: int


@dataclass(frozen=True, slots=True)
class ForcedPost:
    """An extra forced post beyond the two blinds (see PostKind)."""

    seat: int
    kind: PostKind


@dataclass(frozen=True, slots=True)
class RakeRule:
    """Rake in basis points of the pot (500 = 5%) with a cap in chips; fixed when the hand starts."""

    basis_points: int = 0
    cap: int = DEFAULT_RAKE_CAP


@dataclass(frozen=True, slots=True)
class HandConfig:
    """Everything a hand needs. With ``big_blind_seat`` None the blinds take the standard positions for
    ``button``; with it given, ``small_blind_seat`` None means no small blind this hand (the seating
    model's dead small blind). For FIXED_LIMIT, ``small_bet`` defaults to the big blind and
    ``big_bet`` to twice the small bet; the rules make the blinds half a small bet and a small bet.
    """

    variant: Variant
    seats: tuple[SeatConfig, ...]
    button: int
    small_blind: int
    big_blind: int
    deck: tuple[int, ...]
    step: int = 1
    rake: RakeRule = field(default_factory=RakeRule)
    small_blind_seat: int | None = None
    big_blind_seat: int | None = None
    extra_posts: tuple[ForcedPost, ...] = ()
    small_bet: int | None = None
    big_bet: int | None = None
    hand_id: str = ""

    def validate(self) -> None:
        problems = list(_problems(self))
        if problems:
            raise InvalidConfigError("invalid hand config: " + "; ".join(problems))

    @property
    def limit_small_bet(self) -> int:
        return self.small_bet if self.small_bet is not None else self.big_blind

    @property
    def limit_big_bet(self) -> int:
        return self.big_bet if self.big_bet is not None else 2 * self.limit_small_bet


def next_seat_after(seat: int, seats: Iterable[int]) -> int:
    """The first of ``seats`` clockwise after ``seat`` (seat numbers ascend clockwise and wrap)."""
    ordered = sorted(seats)
    for candidate in ordered:
        if candidate > seat:
            return candidate
    return ordered[0]


def standard_blind_seats(seat_numbers: Iterable[int], button: int) -> tuple[int, int]:
    """(small blind seat, big blind seat). Heads-up the button posts the small blind (rules 2)."""
    seats = sorted(seat_numbers)
    if len(seats) == 2:
        small = button if button in seats else next_seat_after(button, seats)
        return small, next_seat_after(small, seats)
    small = next_seat_after(button, seats)
    return small, next_seat_after(small, seats)


def _problems(config: HandConfig) -> Iterable[str]:
    seats = [seat.seat for seat in config.seats]
    if not MIN_SEATS <= len(seats) <= MAX_SEATS:
        yield f"need {MIN_SEATS} to {MAX_SEATS} players, got {len(seats)}"
    if len(set(seats)) != len(seats):
        yield "duplicate seat number"
    if any(not 0 <= seat < MAX_SEATS for seat in seats):
        yield f"seat numbers must be 0..{MAX_SEATS - 1}"
    if len({seat.player_id for seat in config.seats}) != len(seats):
        yield "duplicate player id"
    if any(type(seat.stack) is not int or seat.stack <= 0 for seat in config.seats):
        yield "every stack must be a positive int (a player with no chips is not dealt in)"
    if not 0 <= config.button < MAX_SEATS:
        yield "button must be a seat number"
    if config.small_blind < 0 or config.big_blind <= 0 or config.small_blind > config.big_blind:
        yield "need 0 <= small blind <= big blind and big blind > 0"
    if config.step <= 0:
        yield "step must be positive"
    if config.variant is Variant.FIXED_LIMIT and (config.limit_small_bet <= 0 or config.limit_big_bet <= 0):
        yield "fixed limit needs positive small and big bets"
    if not 0 <= config.rake.basis_points <= MAX_RAKE_BASIS_POINTS:
        yield f"rake must be 0..{MAX_RAKE_BASIS_POINTS} basis points"
    if config.rake.cap < 0:
        yield "rake cap must not be negative"
    if sorted(config.deck) != list(range(52)):
        yield "deck must be an order of all 52 cards (ints 0..51, each once)"
    blind_seats = [s for s in (config.small_blind_seat, config.big_blind_seat) if s is not None]
    if any(seat not in seats for seat in blind_seats):
        yield "blind seats must be seats in the hand"
    if config.small_blind_seat is not None and config.big_blind_seat is None:
        yield "a small blind seat without a big blind seat"
    for post in config.extra_posts:
        if post.seat not in seats:
            yield f"extra post for seat {post.seat} which is not in the hand"
        if post.kind not in (PostKind.EXTRA_BIG_BLIND, PostKind.DEAD_SMALL_BLIND):
            yield "extra posts are EXTRA_BIG_BLIND or DEAD_SMALL_BLIND"
