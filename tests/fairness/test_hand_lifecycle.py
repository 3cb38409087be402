"""The lifecycle rules of a hand, state by state: entropy only while committed, the seed only after
the end, finished only after the deal, and an ended hand stays ended (another outcome for it is a
RevealHand retry with a field changed: a conflict)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from service_runtime.errors import DomainError, FailedPrecondition
from services.fairness.hands import HandOutcome, HandRecord, HandState
from services.fairness.shuffle import GENESIS_COMMITMENT


def _hand(state: HandState) -> HandRecord:
    return HandRecord(
        hand_id="h",
        request_id="r",
        table_id="t",
        sequence=1,
        commitment="a" * 64,
        previous_commitment=GENESIS_COMMITMENT,
        nonce=bytes(16),
        shuffle_version=1,
        deal_now=False,
        state=state,
        client_seeds=(),
        created_at=datetime.now(UTC),
    )


def _reason(check: Callable[[], None]) -> str | None:
    try:
        check()
    except FailedPrecondition as error:
        return error.reason
    return None


@pytest.mark.parametrize(
    ("state", "entropy", "seal", "reveal"),
    [
        (HandState.COMMITTED, None, None, "HAND_NOT_FINISHED"),
        (HandState.SEALED, "ENTROPY_CLOSED", None, "HAND_NOT_FINISHED"),
        (HandState.FINISHED, "ENTROPY_CLOSED", "HAND_ALREADY_REVEALED", None),
        (HandState.VOIDED, "ENTROPY_CLOSED", "HAND_ALREADY_REVEALED", None),
    ],
)
def test_what_each_state_allows(
    state: HandState, entropy: str | None, seal: str | None, reveal: str | None
) -> None:
    hand = _hand(state)
    assert _reason(hand.check_accepts_entropy) == entropy
    assert _reason(hand.check_can_seal) == seal
    assert _reason(hand.check_revealed) == reveal


@pytest.mark.parametrize(
    ("state", "outcome", "expected"),
    [
        (HandState.COMMITTED, HandOutcome.FINISHED, "HAND_NOT_DEALT"),
        (HandState.COMMITTED, HandOutcome.VOIDED, True),
        (HandState.SEALED, HandOutcome.FINISHED, True),
        (HandState.SEALED, HandOutcome.VOIDED, True),
        (HandState.FINISHED, HandOutcome.FINISHED, False),
        (HandState.FINISHED, HandOutcome.VOIDED, "IDEMPOTENCY_CONFLICT"),
        (HandState.VOIDED, HandOutcome.VOIDED, False),
        (HandState.VOIDED, HandOutcome.FINISHED, "IDEMPOTENCY_CONFLICT"),
    ],
)
def test_ending_a_hand(state: HandState, outcome: HandOutcome, expected: str | bool) -> None:
    hand = _hand(state)
    if isinstance(expected, str):
        # RevealHand is keyed by the hand id: another outcome for an ended hand is that request
        # with a field changed (ALREADY_EXISTS), not a state the hand is in (FAILED_PRECONDITION).
        with pytest.raises(DomainError) as error:
            hand.check_can_end(outcome)
        assert (error.value.kind.name, error.value.reason) == (
            "ALREADY_EXISTS" if expected == "IDEMPOTENCY_CONFLICT" else "FAILED_PRECONDITION",
            expected,
        )
    else:
        # True: the hand moves to the outcome; False: it already did, so the call is an idempotent retry.
        assert hand.check_can_end(outcome) is expected
