"""The pure rules behind presence, spectators and chat (no server): invariants with hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service_runtime.errors import DomainError
from services.table.cash.presence import Expiry, PresenceRules, SeatPresence
from services.table.cash.time_banks import KeptTimeBanks
from services.table.streams.chat import (
    EVERYWHERE,
    MAX_TEXT_LENGTH,
    STICKERS,
    ChatGuard,
    check_sticker,
    check_text,
)
from services.table.streams.spectators import DelayLine

RULES = PresenceRules(reserve_seconds=90.0, sit_out_seconds=600.0, timeout_hands=3)


def _reason(call: object) -> str:
    with pytest.raises(DomainError) as refused:
        call()  # type: ignore[operator]
    return refused.value.reason


# ---------------------------------------------------------------- presence


@given(st.lists(st.tuples(st.booleans(), st.floats(0.0, 5.0)), max_size=60))
def test_presence_is_away_exactly_when_every_stream_ended_and_the_reserve_runs_from_the_last_drop(
    steps: list[tuple[bool, float]],
) -> None:
    # The table tells presence when a stream opens and when the player's last open stream ended.
    presence = SeatPresence()
    now, open_streams, dropped_at = 0.0, 1, None
    for opens, wait in steps:
        now += wait
        if opens:
            assert presence.came_back() == (open_streams == 0)
            open_streams += 1
            dropped_at = None
        elif open_streams:
            open_streams -= 1
            if open_streams == 0:
                assert presence.went_away(now)
                dropped_at = now
        assert presence.disconnected == (open_streams == 0)
        assert presence.disconnected_at == dropped_at
        expected = None if dropped_at is None else dropped_at + RULES.reserve_seconds
        assert presence.due(RULES) == expected


def test_the_reserve_expires_at_its_end_and_not_before() -> None:
    presence = SeatPresence()
    assert presence.went_away(10.0)
    assert not presence.went_away(50.0)  # already away: the reserve still runs from the first drop
    assert presence.expiry(99.9, RULES) is None
    assert presence.expiry(100.0, RULES) is Expiry.RESERVE
    assert presence.came_back()  # a reconnect
    assert presence.expiry(1000.0, RULES) is None


def test_the_sit_out_limit_runs_from_the_first_sit_out_and_sitting_in_clears_it() -> None:
    presence = SeatPresence()
    assert presence.sit_out(5.0)
    assert not presence.sit_out(50.0)  # a second SitOut does not restart the clock
    assert presence.expiry(604.9, RULES) is None
    assert presence.expiry(605.0, RULES) is Expiry.SIT_OUT
    presence.sit_in()
    assert presence.due(RULES) is None


@given(st.lists(st.sampled_from(["timeout", "acted", "timeout_then_acted", "idle"]), max_size=40))
def test_three_hands_in_a_row_lost_to_timeouts_and_no_fewer_put_a_player_out(hands: list[str]) -> None:
    # docs/table.md: a hand in which the player decided for themselves resets the count, even when
    # they also timed out in it (issue 25 item 2).
    presence = SeatPresence()
    streak = 0
    for hand in hands:
        out = presence.hand_played(
            timed_out=hand.startswith("timeout"), acted=hand.endswith("acted"), rules=RULES
        )
        streak = streak + 1 if hand == "timeout" else (0 if hand.endswith("acted") else streak)
        assert out == (streak >= 3)


def test_a_hand_with_a_timeout_and_a_decision_of_the_player_resets_the_count() -> None:
    # Timed out twice, then: timed out on the turn, all-in on the river and won. Not sat out.
    presence = SeatPresence()
    assert not presence.hand_played(timed_out=True, acted=False, rules=RULES)
    assert not presence.hand_played(timed_out=True, acted=False, rules=RULES)
    assert not presence.hand_played(timed_out=True, acted=True, rules=RULES)
    assert presence.timeout_streak == 0


# ---------------------------------------------------------------- the spectators' delay line


@settings(max_examples=200)
@given(
    st.floats(0.0, 30.0),
    st.lists(st.tuples(st.floats(0.0, 3.0), st.booleans()), min_size=1, max_size=80),
)
def test_the_delay_line_releases_every_update_in_order_never_before_the_delay(
    delay: float, steps: list[tuple[float, bool]]
) -> None:
    line: DelayLine[int] = DelayLine(delay)
    now, pushed, released = 0.0, 0, []
    for wait, push in steps:
        now += wait
        if push:
            line.push(now, pushed)
            pushed += 1
        for stamped in line.release(now):
            assert now - stamped.at >= delay
            released.append(stamped.item)
        base = line.base
        if base is not None:
            assert now - base.at >= delay
            assert base.item == released[-1]
        due = line.next_due()
        assert due is None or due >= now - 1e-6  # (float rounding of `at + delay`)
    for stamped in line.release(now + delay + 1.0):
        released.append(stamped.item)
    assert released == list(range(pushed))


def test_the_delay_line_comes_due_a_batch_window_after_its_oldest_so_updates_close_together_leave_together() -> (
    None
):
    # Issue 28: the spectators' feed releases every update due in one message; the window after the
    # oldest one's delay lets the updates of a burst (a hand's steps, a chat flurry) go together.
    line: DelayLine[int] = DelayLine(10.0, batch_seconds=0.25)
    for n, at in enumerate((0.0, 0.05, 0.2, 0.4)):
        line.push(at, n)
    due = line.next_due()
    assert due == pytest.approx(10.25)
    assert [s.item for s in line.release(due)] == [0, 1, 2]  # each at least the delay old
    assert line.next_due() == pytest.approx(10.65)


def test_the_delay_line_drops_the_oldest_beyond_its_bound_and_never_releases_early() -> None:
    line: DelayLine[int] = DelayLine(10.0, max_pending=3)
    for n in range(5):
        line.push(float(n), n)
    assert line.dropped == 2
    assert line.release(11.9) == []
    assert [s.item for s in line.release(14.0)] == [2, 3, 4]


# ---------------------------------------------------------------- chat


def test_each_content_refusal_has_its_own_reason() -> None:
    assert _reason(lambda: check_text("")) == "CHAT_EMPTY"
    assert _reason(lambda: check_text("x" * (MAX_TEXT_LENGTH + 1))) == "CHAT_TOO_LONG"
    for control in ("\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\x85", "\u2028"):
        assert _reason(lambda c=control: check_text(f"a{c}b")) == "CHAT_CONTROL_CHARACTERS"
    assert _reason(lambda: check_sticker("not-a-sticker")) == "STICKER_UNKNOWN"
    assert check_text("x" * MAX_TEXT_LENGTH) == "x" * MAX_TEXT_LENGTH
    assert all(check_sticker(s) == s for s in STICKERS)


@given(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=100))
def test_the_rate_limit_never_admits_more_than_the_burst_plus_the_sustained_rate(gaps: list[float]) -> None:
    guard = ChatGuard(burst=3, per_minute=12.0)
    now, admitted = 0.0, 0
    for gap in gaps:
        now += gap
        reason = ""
        try:
            guard.admit("ann", "t.1", now)
            admitted += 1
        except DomainError as refused:
            reason = refused.reason
        assert reason in ("", "CHAT_RATE_LIMITED")
        assert admitted <= 3 + now * 12.0 / 60.0 + 1e-9


def test_a_burst_is_admitted_then_refused_then_refilled() -> None:
    guard = ChatGuard(burst=2, per_minute=6.0)  # one token every 10 s
    guard.admit("ann", "t.1", 0.0)
    guard.admit("ann", "t.1", 0.0)
    assert _reason(lambda: guard.admit("ann", "t.1", 1.0)) == "CHAT_RATE_LIMITED"
    guard.admit("bob", "t.1", 1.0)  # per player
    guard.admit("ann", "t.1", 10.0)


def test_mutes_at_a_table_and_everywhere_end_on_time() -> None:
    guard = ChatGuard()
    guard.mute("ann", "t.1", 100.0)
    assert _reason(lambda: guard.admit("ann", "t.1", 50.0)) == "CHAT_MUTED"
    guard.admit("ann", "t.2", 50.0)
    guard.mute("ann", EVERYWHERE, 80.0)
    assert _reason(lambda: guard.admit("ann", "t.2", 79.0)) == "CHAT_MUTED"
    guard.admit("ann", "t.2", 80.0)
    guard.admit("ann", "t.1", 100.0)


def test_a_mute_is_idempotent_by_request_id() -> None:
    guard = ChatGuard()
    first = guard.mute_once(("op", "r1"), "ann", EVERYWHERE, 60.0, 0.0)
    assert first == 60.0
    assert guard.mute_once(("op", "r1"), "ann", EVERYWHERE, 60.0, 30.0) == first
    assert (
        _reason(lambda: guard.mute_once(("op", "r1"), "ann", EVERYWHERE, 10.0, 30.0))
        == "IDEMPOTENCY_CONFLICT"
    )
    assert guard.mute_once(("op", "r2"), "ann", EVERYWHERE, 0.0, 30.0) is None
    guard.admit("ann", "t.1", 31.0)


# ---------------------------------------------------------------- time banks of players who left


def test_a_returning_player_gets_back_what_was_left_of_their_bank_within_the_keep_time_only() -> None:
    banks = KeptTimeBanks(keep_seconds=1800.0)
    banks.keep("ann", 0.0, now=100.0)
    banks.keep("bob", 9.5, now=100.0)
    assert banks.bank_for("ann", 15.0, now=1899.0) == 0.0  # within the keep time: no refill
    assert banks.bank_for("ann", 15.0, now=1899.5) == 15.0  # taken back once; a later seat is new
    assert banks.bank_for("bob", 5.0, now=200.0) == 5.0  # never more than a full bank
    banks.keep("cat", 3.0, now=0.0)
    assert banks.bank_for("cat", 15.0, now=1800.0) == 15.0  # kept too long ago: a full bank
    banks.keep("dan", 1.0, now=0.0)
    banks.keep("eve", 1.0, now=5000.0)  # keeping prunes what is past the keep time
    assert "dan" not in banks._kept
