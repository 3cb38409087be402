"""Hold scopes (rules 17, issue 43) on both backends: a withdrawals hold stops payouts and nothing
else, a full hold stops seats and payouts, the two are independent, and every change is idempotent
by its request id, the scope included; over gRPC an unknown scope is FIELD_INVALID and an old
caller that sends none gets the full hold."""

from __future__ import annotations

import asyncio
import contextlib
import random

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from service_runtime.clients import error_metadata_of
from service_runtime.errors import AlreadyExists, FailedPrecondition
from service_runtime.testing import auth_metadata, reason_of, running_server
from services.cashier.application import Cashier, audit_balanced
from services.cashier.assembly import ACCESS, cashier_service
from services.cashier.holds import HoldScope
from services.cashier.ledger import Pool
from services.cashier.payments import PaymentSource

from .conftest import FakeClock, fund, migrated_cashier

HISTORY = auth_metadata("history", "service")
WITHDRAWALS = HoldScope.WITHDRAWALS
FULL = HoldScope.FULL


async def withdraw(cashier: Cashier, player: str, reference: str, chips: int = 100) -> int:
    result = await cashier.withdraw(
        payment_reference=reference, player_id=player, source=PaymentSource.GRAM, amount_minor=chips * 10**6
    )
    return result.record.request.amount


async def seat(cashier: Cashier, player: str, session_id: str) -> None:
    await cashier.open_seat_session(
        session_id=session_id,
        player_id=player,
        table_id="t1",
        seat_index=0,
        pool=Pool.GRAM,
        buy_in_amount=500,
        min_buy_in=100,
        max_buy_in=1000,
    )


async def refused(call: object, reason: str) -> FailedPrecondition:
    with pytest.raises(FailedPrecondition) as error:
        await call  # type: ignore[misc]
    assert error.value.reason == reason
    return error.value


async def hold(cashier: Cashier, request_id: str, player: str, held: bool, scope: HoldScope) -> bool:
    change, existing = await cashier.set_player_hold(
        request_id=request_id, player_id=player, held=held, reason="review", scope=scope
    )
    assert (change.player_id, change.held, change.scope) == (player, held, scope.value)
    return existing


async def test_a_withdrawals_hold_stops_payouts_only_and_the_same_payout_goes_through_after_release(
    any_cashier: Cashier,
) -> None:
    cashier = any_cashier
    await fund(cashier, "wen", gram_chips=5000)
    assert await hold(cashier, "w1", "wen", True, WITHDRAWALS) is False
    await refused(withdraw(cashier, "wen", "pay-1"), "WITHDRAWAL_HELD_FOR_REVIEW")
    # Seats go on, and so does the rest of the player's money.
    await seat(cashier, "wen", "t1/wen")
    await cashier.cash_out("t1/wen")
    wallets, _ = await cashier.balances("wen")
    assert wallets[0].balance == 5000
    assert await hold(cashier, "w2", "wen", False, WITHDRAWALS) is False
    assert await withdraw(cashier, "wen", "pay-1") == 100
    figures, _ = await cashier.audit()
    assert all(audit_balanced(f) for f in figures)


async def test_full_and_withdrawals_holds_are_independent(any_cashier: Cashier) -> None:
    cashier = any_cashier
    await fund(cashier, "ivy", gram_chips=5000)
    await hold(cashier, "f1", "ivy", True, FULL)
    await hold(cashier, "w1", "ivy", True, WITHDRAWALS)
    error = await refused(
        cashier.set_player_hold(
            request_id="w2", player_id="ivy", held=True, reason="again", scope=WITHDRAWALS
        ),
        "PLAYER_ALREADY_ON_HOLD",
    )
    assert error.metadata["request_id"] == "w1"
    await refused(seat(cashier, "ivy", "t1/ivy-1"), "PLAYER_ON_HOLD")
    # Releasing the full hold leaves the withdrawals hold: seats again, still no payout.
    await hold(cashier, "f2", "ivy", False, FULL)
    await seat(cashier, "ivy", "t1/ivy-2")
    await refused(withdraw(cashier, "ivy", "pay-1"), "WITHDRAWAL_HELD_FOR_REVIEW")
    await refused(
        cashier.set_player_hold(request_id="f3", player_id="ivy", held=False, reason="x", scope=FULL),
        "PLAYER_NOT_ON_HOLD",
    )
    # A full hold on top, then the withdrawals hold released: the full hold still stops payouts.
    await hold(cashier, "f4", "ivy", True, FULL)
    await hold(cashier, "w3", "ivy", False, WITHDRAWALS)
    await refused(withdraw(cashier, "ivy", "pay-1"), "WITHDRAWAL_HELD_FOR_REVIEW")
    await hold(cashier, "f5", "ivy", False, FULL)
    assert await withdraw(cashier, "ivy", "pay-1") == 100
    await refused(
        cashier.set_player_hold(request_id="w4", player_id="ivy", held=False, reason="x", scope=WITHDRAWALS),
        "PLAYER_NOT_ON_HOLD",
    )


async def test_a_request_id_binds_the_whole_change_scope_included(any_cashier: Cashier) -> None:
    cashier = any_cashier
    assert await hold(cashier, "h1", "kim", True, WITHDRAWALS) is False
    assert await hold(cashier, "h1", "kim", True, WITHDRAWALS) is True
    for changed in (
        {"scope": FULL},
        {"held": False},
        {"reason": "other"},
        {"player_id": "lou"},
    ):
        fields = {
            "request_id": "h1",
            "player_id": "kim",
            "held": True,
            "reason": "review",
            "scope": WITHDRAWALS,
        }
        fields.update(changed)
        with pytest.raises(AlreadyExists) as error:
            await cashier.set_player_hold(**fields)  # type: ignore[arg-type]
        assert (error.value.reason, error.value.metadata["field"]) == (
            "IDEMPOTENCY_CONFLICT",
            next(iter(changed)),
        )
    # The default scope is the full hold, as before scopes existed.
    change, _ = await cashier.set_player_hold(request_id="h2", player_id="kim", held=True, reason="review")
    assert change.scope == "FULL"


async def test_over_grpc_the_scope_is_answered_an_unknown_one_refused_and_none_is_the_full_hold(
    sqlite_url: str, clock: FakeClock
) -> None:
    cashier = await migrated_cashier(sqlite_url, clock)
    try:
        async with running_server([cashier_service(cashier)], ACCESS) as (_, channel):
            stub = cashier_pb2_grpc.CashierServiceStub(channel)
            request = cashier_pb2.SetPlayerHoldRequest(
                request_id="g1",
                player_id="max",
                held=True,
                reason="review",
                scope=cashier_pb2.HOLD_SCOPE_WITHDRAWALS,
            )
            answer = await stub.SetPlayerHold(request, metadata=HISTORY)
            assert (answer.held, answer.scope, answer.existing) == (
                True,
                cashier_pb2.HOLD_SCOPE_WITHDRAWALS,
                False,
            )
            again = await stub.SetPlayerHold(request, metadata=HISTORY)
            assert (again.scope, again.existing) == (cashier_pb2.HOLD_SCOPE_WITHDRAWALS, True)
            full = await stub.SetPlayerHold(
                cashier_pb2.SetPlayerHoldRequest(
                    request_id="g2", player_id="max", held=True, reason="review"
                ),
                metadata=HISTORY,
            )
            assert (full.held, full.scope) == (True, cashier_pb2.HOLD_SCOPE_UNSPECIFIED)
            for call, code, reason, field in (
                (
                    cashier_pb2.SetPlayerHoldRequest(
                        request_id="g3",
                        player_id="max",
                        held=True,
                        reason="r",
                        scope=7,  # type: ignore[arg-type]
                    ),
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "FIELD_INVALID",
                    "scope",
                ),
                (
                    cashier_pb2.SetPlayerHoldRequest(
                        request_id="g1", player_id="max", held=True, reason="review"
                    ),
                    grpc.StatusCode.ALREADY_EXISTS,
                    "IDEMPOTENCY_CONFLICT",
                    "scope",
                ),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as error:
                    await stub.SetPlayerHold(call, metadata=HISTORY)
                assert (error.value.code(), reason_of(error.value)) == (code, reason)
                assert error_metadata_of(error.value)["field"] == field
    finally:
        await cashier.engine.dispose()


async def test_two_tries_of_one_change_at_the_same_moment_both_get_its_answer(any_cashier: Cashier) -> None:
    """A retry that arrives while the first try is still in its transaction (the first try's client
    gave up; its handler runs on): both answer the change, one of them as existing. On PostgreSQL
    the second waited for the player's hold row, then found the player already released and answered
    PLAYER_NOT_ON_HOLD (the CI run of 2026-12-06)."""
    for n in range(20):
        player = f"twice-{n}"
        for held in (True, False):
            answers = await asyncio.gather(
                *(
                    any_cashier.set_player_hold(
                        request_id=f"{held}-{player}",
                        player_id=player,
                        held=held,
                        reason="r",
                        scope=WITHDRAWALS,
                    )
                    for _ in range(2)
                )
            )
            assert [change.held for change, _ in answers] == [held, held]
            assert sorted(existing for _, existing in answers) == [False, True]


async def test_holds_whose_first_tries_are_cut_by_the_callers_deadline_still_answer_their_retries(
    any_cashier: Cashier,
) -> None:
    """Each hold and release is first sent with a deadline of a few milliseconds (the client gives
    up while the cashier is inside its transaction), then retried as history does. Before handlers
    ran to their end, a cut transaction could keep SQLite's one pooled connection and every later
    call waited for it past its deadline (4 of 10 runs of this loop hung)."""
    rng = random.Random(7)
    players = [f"cut-{n}" for n in range(30)]
    for player in players:
        await fund(any_cashier, player, gram_chips=500)
    async with running_server([cashier_service(any_cashier)], ACCESS) as (_, channel):
        stub = cashier_pb2_grpc.CashierServiceStub(channel)
        for player in players:
            for held in (True, False):
                request = cashier_pb2.SetPlayerHoldRequest(
                    request_id=f"{'hold' if held else 'release'}-{player}",
                    player_id=player,
                    held=held,
                    reason="review",
                    scope=cashier_pb2.HOLD_SCOPE_WITHDRAWALS,
                )
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await stub.SetPlayerHold(request, metadata=HISTORY, timeout=rng.uniform(0.001, 0.02))
                answer = await stub.SetPlayerHold(request, metadata=HISTORY, timeout=15)
                assert answer.held is held
    for player in players:
        assert await withdraw(any_cashier, player, f"w-{player}") == 100
    figures, _ = await any_cashier.audit()
    assert all(audit_balanced(f) for f in figures)
