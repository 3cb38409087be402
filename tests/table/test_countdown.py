"""The countdown between hands as a pure state machine (services/table/cash/countdown.py; issue 30).

Seeded runs with no clock: a countdown begun at a random time, ticks that jump forward by random
amounts, and hashes and seeds sent by random seats (their own, another player's, too early, too
late). Checked against the rules of docs/fairness.md ("The seed flow at a table"): a version 3 hand
takes hashes until the countdown's last `seed_seconds` and then the seeds of exactly the seats in the
closed set until the seal; a version 2 hand takes seeds in one step until the seal; nothing is due
before its time and everything is due at it, whatever the jumps.
"""

from __future__ import annotations

import random

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import DomainError
from services.table.cash.countdown import Countdown, Due, seed_seconds
from services.table.ports.dependencies import Commitment

COUNTDOWN = 6.0
SEEDS = seed_seconds(COUNTDOWN, 2.0)


def step(countdown: Countdown, seat: int, player: str, *, is_hash: bool) -> str:
    """Send a hash or seed as the table does (check, then take); the refusal's reason, or ""."""
    try:
        countdown.check(seat, player, is_hash=is_hash)
    except DomainError as error:
        return error.reason
    countdown.take(seat, player, seed=b"s" * 32, seed_hash="" if not is_hash else f"h{seat}{player}")
    return ""


@pytest.mark.parametrize("seed", range(200))
def test_the_seed_phases_follow_the_clock_whatever_it_jumps(seed: int) -> None:
    rng = random.Random(seed)
    version = rng.choice([2, 3])
    countdown = Countdown(Commitment(f"h{seed}", "c" * 64, version))
    assert countdown.due(0.0) is Due.NOTHING  # not begun
    start = rng.uniform(0, 1e9)
    countdown.start(start, COUNTDOWN, SEEDS)
    hash_end = start + COUNTDOWN - SEEDS
    closed_at: float | None = None
    now = start
    players = {seat: f"p{seat}" for seat in range(6)}
    while True:
        now += rng.choice([0.0, 0.1, 0.7, 2.5, 9.0])
        due = countdown.due(now)
        if version == 2:
            assert due is (Due.SEAL if now >= start + COUNTDOWN else Due.NOTHING)
        elif closed_at is None:
            assert due is (Due.CLOSE_HASHES if now >= hash_end else Due.NOTHING)
            if due is Due.CLOSE_HASHES:
                closed_at = now
                countdown.close_hashes(now, SEEDS)
                assert countdown.seed_phase() == table_pb2.SEED_PHASE_SEEDS
                continue
        else:
            assert due is (Due.SEAL if now >= closed_at + SEEDS else Due.NOTHING)
        if due is Due.SEAL:
            break
        seat = rng.randrange(6)
        player = players[seat] if rng.random() < 0.85 else "someone-else"
        is_hash = rng.random() < 0.5
        hashes_before = dict(countdown.hashes)
        reason = step(countdown, seat, player, is_hash=is_hash)
        if version == 2:
            assert reason == ("FIELD_INVALID" if is_hash else "")
            assert countdown.seed_phase() == table_pb2.SEED_PHASE_ONE_STEP
        elif is_hash:
            assert reason == ("SEED_HASHES_CLOSED" if closed_at is not None else "")
        elif hashes_before.get(seat, ("",))[0] != player:
            assert reason == "SEED_HASH_REQUIRED"
        else:
            assert reason == ("SEED_REVEAL_NOT_OPEN" if closed_at is None else "")
        if closed_at is not None:
            assert countdown.hashes == hashes_before, "the closed set changed"
    # Every seed taken in version 3 is of a seat in the closed set.
    if version == 3:
        assert set(countdown.seeds) <= set(countdown.hashes)


def test_a_countdown_begun_again_after_its_hashes_closed_takes_seeds_throughout() -> None:
    countdown = Countdown(Commitment("h", "c" * 64, 3))
    countdown.start(100.0, COUNTDOWN, SEEDS)
    assert step(countdown, 1, "p1", is_hash=True) == ""
    assert countdown.due(100.0 + COUNTDOWN - SEEDS) is Due.CLOSE_HASHES
    countdown.close_hashes(105.0, SEEDS)
    # The plan fell short at the seal; the countdown begins again for the same commitment.
    countdown.start(200.0, COUNTDOWN, SEEDS)
    assert countdown.due(200.0 + COUNTDOWN - SEEDS) is Due.NOTHING
    assert countdown.due(200.0 + COUNTDOWN) is Due.SEAL
    assert step(countdown, 1, "p1", is_hash=False) == ""
    assert step(countdown, 2, "p2", is_hash=True) == "SEED_HASHES_CLOSED"
