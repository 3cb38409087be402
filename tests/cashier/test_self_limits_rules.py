"""The pure rules of self-set limits (`services/cashier/self_limits.py`), as properties: rolling
windows, the 24-hour delay of a loosening and breaks that never end early."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service_runtime.errors import FailedPrecondition, InvalidArgument
from services.cashier.self_limits import (
    MAX_SELF_LIMIT,
    RAISE_DELAY,
    BreakKind,
    BreakState,
    LimitKind,
    LimitState,
    Measure,
    change_limit,
    check_limits,
    check_reminder,
    refuse_during_break,
    start_break,
    used_in_window,
)

T0 = datetime(2026, 3, 1, tzinfo=UTC)
amounts = st.integers(min_value=0, max_value=MAX_SELF_LIMIT)
offsets = st.integers(min_value=0, max_value=60 * 24 * 60)  # minutes, up to 60 days
kinds = st.sampled_from(list(LimitKind))
SEEDED = settings(max_examples=200, derandomize=True, deadline=None)


@SEEDED
@given(
    events=st.lists(st.tuples(offsets, st.integers(min_value=1, max_value=10**6)), max_size=30),
    now=offsets,
    kind=kinds,
)
def test_a_window_counts_exactly_the_events_of_its_last_stretch_of_time(
    events: list[tuple[int, int]], now: int, kind: LimitKind
) -> None:
    timed = [(T0 + timedelta(minutes=m), chips) for m, chips in events]
    at = T0 + timedelta(minutes=now)
    # Events dated after `at` count too (a replica whose clock runs ahead recorded them).
    expected = sum(chips for when, chips in timed if at - kind.window < when)
    assert used_in_window(timed, at, kind.window) == expected
    # Once the window has passed the last event, nothing counts any more.
    assert used_in_window(timed, at + kind.window + timedelta(days=61), kind.window) == 0


@SEEDED
@given(
    limit=st.integers(min_value=1, max_value=10**6), used=st.integers(0, 10**6), more=st.integers(1, 10**6)
)
def test_a_purchase_passes_exactly_when_the_window_keeps_within_the_limit(
    limit: int, used: int, more: int
) -> None:
    state = LimitState(LimitKind.PURCHASE_DAILY, limit)
    events = [(T0 - timedelta(hours=1), used)] if used else []
    if used + more <= limit:
        check_limits([state], Measure.PURCHASE, events, more, T0)
    else:
        with pytest.raises(FailedPrecondition) as error:
            check_limits([state], Measure.PURCHASE, events, more, T0)
        assert error.value.reason == "SELF_LIMIT_REACHED"
        assert error.value.metadata["remaining"] == str(max(0, limit - used))
    # A loss limit never stops a purchase.
    check_limits([LimitState(LimitKind.LOSS_DAILY, 1)], Measure.PURCHASE, events, more, T0)


@SEEDED
@given(current=amounts, new=amounts, kind=kinds, later=offsets)
def test_a_stricter_limit_applies_at_once_and_a_looser_one_only_a_day_later(
    current: int, new: int, kind: LimitKind, later: int
) -> None:
    change = change_limit(LimitState(kind, current), kind, new, T0, None)
    loosening = current != 0 and (new == 0 or new > current)
    assert change.previous == current
    if loosening:
        assert change.effective_at == T0 + RAISE_DELAY
        at = T0 + timedelta(minutes=later)
        assert change.state.at(at).amount == (new if at >= T0 + RAISE_DELAY else current)
    else:
        assert change.effective_at == T0
        assert change.state == LimitState(kind, new)


@SEEDED
@given(
    first=st.integers(2, 10**6), raise_to=st.integers(2, 10**6), lower_to=st.integers(1, 10**6), kind=kinds
)
def test_a_lowering_cancels_a_pending_raise_and_a_second_raise_replaces_it(
    first: int, raise_to: int, lower_to: int, kind: LimitKind
) -> None:
    raised = change_limit(LimitState(kind, first), kind, first + raise_to, T0, None).state
    again = change_limit(raised, kind, first + 2 * raise_to, T0 + timedelta(hours=12), None)
    assert again.state.pending_amount == first + 2 * raise_to
    assert again.effective_at == T0 + timedelta(hours=36)
    assert again.state.at(T0 + timedelta(hours=30)).amount == first
    lowered = change_limit(raised, kind, min(lower_to, first), T0 + timedelta(hours=1), None).state
    assert lowered == LimitState(kind, min(lower_to, first))
    assert lowered.at(T0 + timedelta(days=2)).amount == min(lower_to, first)


@SEEDED
@given(
    kind=st.sampled_from(list(BreakKind)),
    days=st.integers(1, 3650),
    second=st.integers(1, 3650),
    second_kind=st.sampled_from(list(BreakKind)),
    after=st.integers(0, 3650 * 24),
)
def test_a_break_is_never_shortened_and_refuses_play_and_loosening_while_it_runs(
    kind: BreakKind, days: int, second: int, second_kind: BreakKind, after: int
) -> None:
    def valid(k: BreakKind, d: int) -> bool:
        return 1 <= d <= 42 if k is BreakKind.COOLING_OFF else 183 <= d <= 3650

    if not valid(kind, days):
        with pytest.raises(InvalidArgument):
            start_break(None, kind, days, T0)
        return
    brk = start_break(None, kind, days, T0)
    assert brk.until == T0 + timedelta(days=days)
    now = T0 + timedelta(hours=after)
    if not valid(second_kind, second):
        return
    new_until = now + timedelta(days=second)
    if now < brk.until and new_until < brk.until:
        with pytest.raises(FailedPrecondition) as error:
            start_break(brk, second_kind, second, now)
        assert error.value.reason == "BREAK_IN_FORCE"
    else:
        extended = start_break(brk, second_kind, second, now)
        assert extended.until == new_until >= min(brk.until, new_until)
    if now < brk.until:
        with pytest.raises(FailedPrecondition) as refusal:
            refuse_during_break(brk, now, "no play")
        assert refusal.value.reason == {"COOLING_OFF": "COOLING_OFF", "SELF_EXCLUSION": "SELF_EXCLUDED"}[kind]
        with pytest.raises(FailedPrecondition) as loosening:
            change_limit(LimitState(LimitKind.LOSS_DAILY, 10), LimitKind.LOSS_DAILY, 20, now, brk)
        assert loosening.value.reason == "BREAK_IN_FORCE"
        # Tightening stays allowed.
        assert (
            change_limit(LimitState(LimitKind.LOSS_DAILY, 10), LimitKind.LOSS_DAILY, 5, now, brk).effective_at
            == now
        )
    else:
        refuse_during_break(brk, now, "no play")


@pytest.mark.parametrize("amount", [-1, MAX_SELF_LIMIT + 1, 2**63 - 1])
def test_absurd_limits_are_refused(amount: int) -> None:
    with pytest.raises(InvalidArgument) as error:
        change_limit(None, LimitKind.PURCHASE_DAILY, amount, T0, None)
    assert (error.value.reason, error.value.metadata["field"]) == ("FIELD_INVALID", "amount")


@pytest.mark.parametrize("minutes", [-1, 1, 14, 721, 2**31 - 1])
def test_reminders_outside_fifteen_minutes_to_twelve_hours_are_refused(minutes: int) -> None:
    with pytest.raises(InvalidArgument):
        check_reminder(minutes)
    for good in (0, 15, 720):
        check_reminder(good)


def test_a_break_that_ended_no_longer_refuses() -> None:
    brk = BreakState(BreakKind.COOLING_OFF, T0, T0 + timedelta(days=1))
    refuse_during_break(brk, T0 + timedelta(days=1), "x")
