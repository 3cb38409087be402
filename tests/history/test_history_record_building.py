"""How the table builds records (`service_runtime.history_records`) and calls the cashier as itself
(`service_runtime.service_tokens`): every cause of an action survives into the record, and the
service token names the service and is renewed before it expires."""

from __future__ import annotations

import random

from poker.history.v1 import history_pb2
from poker_engine.config import HandConfig, SeatConfig, Variant
from poker_engine.hand import Hand
from service_runtime.auth import Role, verify_token
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.testing import DEV_KEYS
from services.history.records import check_hand_record
from tests.history.engine_hands import record_of


def test_timeouts_and_leaving_are_recorded_with_their_cause_and_the_record_is_valid() -> None:
    deck = list(range(52))
    random.Random(6).shuffle(deck)
    hand = Hand(
        HandConfig(
            variant=Variant.NO_LIMIT,
            seats=(SeatConfig(0, "ann", 500), SeatConfig(1, "bob", 500), SeatConfig(2, "cyd", 500)),
            button=0,
            small_blind=5,
            big_blind=10,
            deck=tuple(deck),
        )
    )
    first = hand.legal_actions()
    assert first is not None
    hand.timeout(first.seat)  # facing the big blind: the table folds for them (rules 9)
    leaver = next(
        seat for seat in hand.seats if seat != first.seat and hand.in_hand(seat) and seat != hand.actor_seat
    )
    hand.leave(leaver)  # out of turn: folds at once (rules 12)
    assert hand.is_over
    record = record_of(hand, table_id="t-causes")
    check_hand_record(record)
    causes = {(a.seat, a.cause) for a in record.actions if a.kind == "FOLD"}
    assert causes == {
        (first.seat, history_pb2.ACTION_CAUSE_TIMEOUT),
        (leaver, history_pb2.ACTION_CAUSE_LEFT_TABLE),
    }
    assert {s.seat for s in record.seats if s.folded} == {first.seat, leaver}
    assert sum(s.net_result for s in record.seats) + record.rake == 0


def test_the_service_token_names_the_service_and_is_renewed_at_half_life() -> None:
    now = [1_000_000.0]
    source = ServiceTokenSource(DEV_KEYS, "history", ttl_seconds=600, clock=lambda: now[0])
    first = source()
    caller = verify_token(DEV_KEYS, first, now=int(now[0]))
    assert (caller.subject, caller.roles) == ("history", frozenset({Role.SERVICE}))
    now[0] += 299
    assert source() == first
    now[0] += 2
    renewed = source()
    assert renewed != first
    assert verify_token(DEV_KEYS, renewed, now=int(now[0]) + 500).subject == "history"
