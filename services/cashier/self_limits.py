"""Limits a player sets on themself (responsible gaming), pure: no I/O and no clock (times are inputs).

Six limits per player and chip pool: chips bought and chips lost (cash tables and house games), each
over a rolling day (the last 24 hours), week (7 days) and month (30 days). Rolling windows because
they say the same thing at every moment ("no more than X in any 24 hours"), with no midnight or time
zone to explain.
A stricter limit (lower, or one where there was none) applies at once; a looser one (higher, or a
removal) only `RAISE_DELAY` later, so a player cannot lift a limit in the heat of a session. Two
breaks: a cooling-off (1 to 42 days) and a self-exclusion (183 to 3650 days); neither can be ended or
shortened, and while one runs no purchase, no seat, no new house-game round and no loosening of a
limit.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from service_runtime.errors import FailedPrecondition, InvalidArgument

# Chips: 10^12 GRAM-pool chips are 10^9 GRAM. Far above any real player's figure, far below MAX_AMOUNT,
# so every window sum stays exact.
MAX_SELF_LIMIT = 10**12
RAISE_DELAY = timedelta(hours=24)
COOLING_OFF_DAYS = (1, 42)
SELF_EXCLUSION_DAYS = (183, 3650)
REMINDER_MINUTES = (15, 720)


class Measure(enum.StrEnum):
    PURCHASE = "PURCHASE"
    LOSS = "LOSS"


class LimitKind(enum.StrEnum):
    """What a limit counts and over which rolling window; stored by value."""

    PURCHASE_DAILY = "PURCHASE_DAILY"
    PURCHASE_WEEKLY = "PURCHASE_WEEKLY"
    PURCHASE_MONTHLY = "PURCHASE_MONTHLY"
    LOSS_DAILY = "LOSS_DAILY"
    LOSS_WEEKLY = "LOSS_WEEKLY"
    LOSS_MONTHLY = "LOSS_MONTHLY"

    @property
    def measure(self) -> Measure:
        return Measure(self.value.split("_", 1)[0])

    @property
    def window(self) -> timedelta:
        return WINDOWS[self.value.split("_", 1)[1]]


WINDOWS = {"DAILY": timedelta(days=1), "WEEKLY": timedelta(days=7), "MONTHLY": timedelta(days=30)}
# The longest window: how far back enforcement reads.
LONGEST_WINDOW = max(WINDOWS.values())


class BreakKind(enum.StrEnum):
    COOLING_OFF = "COOLING_OFF"
    SELF_EXCLUSION = "SELF_EXCLUSION"


# The refusal a running break gives a purchase or a seat.
BREAK_REFUSALS = {BreakKind.COOLING_OFF: "COOLING_OFF", BreakKind.SELF_EXCLUSION: "SELF_EXCLUDED"}


@dataclass(frozen=True)
class LimitState:
    """One limit as stored: the amount in force (0: none) and a pending loosening, if any."""

    kind: LimitKind
    amount: int = 0
    pending_amount: int | None = None
    pending_at: datetime | None = None

    def at(self, now: datetime) -> LimitState:
        """The limit as it stands at `now`: a pending loosening whose time came is in force."""
        if self.pending_at is not None and self.pending_at <= now:
            return LimitState(self.kind, self.pending_amount or 0)
        return self


@dataclass(frozen=True)
class BreakState:
    kind: BreakKind
    started_at: datetime
    until: datetime

    def running(self, now: datetime) -> bool:
        return now < self.until


@dataclass(frozen=True)
class LimitChange:
    """What SetSelfLimit does: the stored state after it, the amount in force before, and when the
    asked amount takes effect."""

    state: LimitState
    previous: int
    effective_at: datetime


def check_limit_amount(amount: int) -> None:
    if not 0 <= amount <= MAX_SELF_LIMIT:
        raise InvalidArgument(
            "FIELD_INVALID", f"a limit is 0 (none) to {MAX_SELF_LIMIT} chips", {"field": "amount"}
        )


def looser(new: int, current: int) -> bool:
    """Whether `new` loosens `current` (0 is no limit, the loosest)."""
    if current == 0:
        return False
    return new == 0 or new > current


def running_break(state: BreakState | None, now: datetime) -> BreakState | None:
    return state if state is not None and state.running(now) else None


def _break_in_force(state: BreakState, what: str) -> FailedPrecondition:
    return FailedPrecondition(
        "BREAK_IN_FORCE",
        f"a {state.kind.value.lower().replace('_', '-')} break is running until {state.until.isoformat()}: {what}",
        {"kind": state.kind.value, "until": state.until.isoformat()},
    )


def change_limit(
    current: LimitState | None, kind: LimitKind, amount: int, now: datetime, brk: BreakState | None
) -> LimitChange:
    """Set a limit to `amount` at `now`: stricter at once (a pending loosening cancelled), looser after
    `RAISE_DELAY` (replacing a pending one); no loosening while a break runs."""
    check_limit_amount(amount)
    state = (current or LimitState(kind)).at(now)
    if looser(amount, state.amount):
        running = running_break(brk, now)
        if running is not None:
            raise _break_in_force(running, "no limit can be raised or removed until it ends")
        effective = now + RAISE_DELAY
        return LimitChange(
            replace(state, pending_amount=amount, pending_at=effective), state.amount, effective
        )
    return LimitChange(LimitState(kind, amount), state.amount, now)


def check_break_days(kind: BreakKind, days: int) -> None:
    low, high = COOLING_OFF_DAYS if kind is BreakKind.COOLING_OFF else SELF_EXCLUSION_DAYS
    if not low <= days <= high:
        raise InvalidArgument(
            "FIELD_INVALID", f"a {kind.value.lower()} lasts {low} to {high} days", {"field": "days"}
        )


def start_break(current: BreakState | None, kind: BreakKind, days: int, now: datetime) -> BreakState:
    """A break of `days` from `now`; a running break is never shortened, only extended."""
    check_break_days(kind, days)
    until = now + timedelta(days=days)
    running = running_break(current, now)
    if running is not None and until < running.until:
        raise _break_in_force(running, "a break cannot be shortened or ended early")
    return BreakState(kind, now, until)


def refuse_during_break(state: BreakState | None, now: datetime, action: str) -> None:
    """FAILED_PRECONDITION COOLING_OFF / SELF_EXCLUDED while a break runs."""
    running = running_break(state, now)
    if running is not None:
        raise FailedPrecondition(
            BREAK_REFUSALS[running.kind],
            f"the player took a break until {running.until.isoformat()}: {action}",
            {"kind": running.kind.value, "until": running.until.isoformat()},
        )


def check_reminder(minutes: int) -> None:
    low, high = REMINDER_MINUTES
    if minutes != 0 and not low <= minutes <= high:
        raise InvalidArgument(
            "FIELD_INVALID", f"the reminder is 0 (off) or {low} to {high} minutes", {"field": "minutes"}
        )


def used_in_window(events: Iterable[tuple[datetime, int]], now: datetime, window: timedelta) -> int:
    """What events (time, chips) since `now - window` add up to, never below 0. An event dated after
    `now` counts too: recorded by a cashier replica whose clock runs ahead of this one's, it is
    already bought or lost (an upper bound of `now` let it pass a limit for that moment)."""
    start = now - window
    return max(0, sum(chips for at, chips in events if start < at))


def remaining(limit: int, used: int) -> int:
    return max(0, limit - used) if limit else 0


def check_limits(
    limits: Iterable[LimitState],
    measure: Measure,
    events: Iterable[tuple[datetime, int]],
    amount: int,
    now: datetime,
) -> None:
    """FAILED_PRECONDITION SELF_LIMIT_REACHED when `amount` more of `measure` now would pass a limit
    in force. `events` are the measure's (time, chips) of at least the longest window."""
    found = list(events)
    for stored in limits:
        state = stored.at(now)
        if state.kind.measure is not measure or state.amount == 0:
            continue
        used = used_in_window(found, now, state.kind.window)
        if used + amount > state.amount:
            raise FailedPrecondition(
                "SELF_LIMIT_REACHED",
                f"the player's {state.kind.value.lower()} limit of {state.amount} chips would be passed",
                {
                    "kind": state.kind.value,
                    "limit": str(state.amount),
                    "remaining": str(remaining(state.amount, used)),
                },
            )


def usage(
    limits: Iterable[LimitState], events: Mapping[Measure, list[tuple[datetime, int]]], now: datetime
) -> list[tuple[LimitState, int]]:
    """Each limit as it stands at `now` with what its window counts now."""
    return [
        (state.at(now), used_in_window(events.get(state.kind.measure, []), now, state.kind.window))
        for state in limits
    ]
