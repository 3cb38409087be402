"""Limits a player sets on themself (responsible gaming), enforced by the cashier, on PostgreSQL and
the embedded SQLite default, with time moved by the test's clock: purchase and loss limits over
rolling windows, a loosening that waits 24 hours, breaks that refuse purchases and seats and cannot
be shortened, bad input refused with catalogue reasons and nothing changed, the caller's own id
only, idempotent retries, and the pool conserved throughout. Then the same over gRPC."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import ServiceName
from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition, InvalidArgument
from service_runtime.testing import auth_metadata, reason_of, running_server, service_metadata
from services.cashier.application import Cashier, audit_balanced
from services.cashier.assembly import ACCESS, cashier_service
from services.cashier.ledger import Pool
from services.cashier.payments import PaymentSource
from services.cashier.self_limits import BreakKind, LimitKind

from .conftest import FakeClock, migrated_cashier

GRAM = Pool.GRAM
DAY = timedelta(days=1)


async def buy(
    cashier: Cashier, player: str, reference: str, chips: int, source: PaymentSource = PaymentSource.GRAM
) -> bool:
    per_chip = 10**6 if source is PaymentSource.GRAM else 10**8
    result = await cashier.purchase(
        payment_reference=reference, player_id=player, source=source, amount_minor=chips * per_chip
    )
    return result.existing


async def seat(cashier: Cashier, player: str, session_id: str, buy_in: int) -> None:
    await cashier.open_seat_session(
        session_id=session_id,
        player_id=player,
        table_id="t1",
        seat_index=0,
        pool=GRAM,
        buy_in_amount=buy_in,
        min_buy_in=1,
        max_buy_in=10_000,
    )


async def limit(
    cashier: Cashier, player: str, request_id: str, kind: LimitKind, amount: int, pool: Pool = GRAM
):  # type: ignore[no-untyped-def]
    change, existing = await cashier.set_self_limit(
        player_id=player, request_id=request_id, pool=pool, kind=kind, amount=amount
    )
    return change, existing


async def refused(call: object, reason: str) -> DomainError:
    with pytest.raises(DomainError) as error:
        await call  # type: ignore[misc]
    assert error.value.reason == reason, error.value
    return error.value


async def balance(cashier: Cashier, player: str) -> int:
    wallets, _ = await cashier.balances(player)
    return next(w.balance for w in wallets if w.pool is GRAM)


async def balanced(cashier: Cashier) -> None:
    figures, _ = await cashier.audit()
    assert all(audit_balanced(f) for f in figures)


async def test_a_purchase_over_the_daily_limit_is_refused_until_the_window_passes(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    cashier = any_cashier
    await limit(cashier, "ann", "l1", LimitKind.PURCHASE_DAILY, 1000)
    await buy(cashier, "ann", "p1", 600)
    clock.advance(timedelta(hours=20))
    error = await refused(buy(cashier, "ann", "p2", 500), "SELF_LIMIT_REACHED")
    assert isinstance(error, FailedPrecondition)
    assert error.metadata == {"kind": "PURCHASE_DAILY", "limit": "1000", "remaining": "400"}
    assert await balance(cashier, "ann") == 600
    await buy(cashier, "ann", "p3", 400)  # exactly to the limit
    # MPX is another pool with no limit of its own.
    await buy(cashier, "ann", "p4", 5000, PaymentSource.MPX)
    await balanced(cashier)
    # p1 leaves the rolling 24 hours: p2 (refused, so not recorded) now goes through.
    clock.advance(timedelta(hours=4, seconds=1))
    assert await buy(cashier, "ann", "p2", 500) is False
    assert await buy(cashier, "ann", "p2", 500) is True  # a retry answers as recorded
    view = await cashier.self_limits("ann")
    [daily] = view.limits
    assert (daily.state.amount, daily.used, daily.remaining) == (1000, 900, 100)
    await balanced(cashier)


async def test_weekly_and_monthly_windows_count_further_back(any_cashier: Cashier, clock: FakeClock) -> None:
    cashier = any_cashier
    await limit(cashier, "bo", "l1", LimitKind.PURCHASE_WEEKLY, 1000)
    await limit(cashier, "bo", "l2", LimitKind.PURCHASE_MONTHLY, 1500)
    await buy(cashier, "bo", "p1", 900)
    clock.advance(6 * DAY)
    error = await refused(buy(cashier, "bo", "p2", 200), "SELF_LIMIT_REACHED")
    assert error.metadata["kind"] == "PURCHASE_WEEKLY"
    clock.advance(DAY)
    error = await refused(buy(cashier, "bo", "p2", 700), "SELF_LIMIT_REACHED")
    assert error.metadata == {"kind": "PURCHASE_MONTHLY", "limit": "1500", "remaining": "600"}
    await buy(cashier, "bo", "p2", 600)
    await balanced(cashier)


async def test_a_loss_limit_stops_a_buy_in_and_cash_outs_give_room_back(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    cashier = any_cashier
    await buy(cashier, "cy", "p1", 5000)
    await limit(cashier, "cy", "l1", LimitKind.LOSS_DAILY, 1000)
    await seat(cashier, "cy", "t1/cy-1", 800)
    await cashier.cash_out("t1/cy-1")  # 800 back: nothing lost
    await seat(cashier, "cy", "t1/cy-2", 900)
    clock.advance(timedelta(hours=1))
    await cashier.cash_out("t1/cy-2")
    # Cashed out in full: 0 lost; a buy-in of 1000 fits, one of 1001 does not.
    error = await refused(seat(cashier, "cy", "t1/cy-3", 1001), "SELF_LIMIT_REACHED")
    assert error.metadata == {"kind": "LOSS_DAILY", "limit": "1000", "remaining": "1000"}
    await seat(cashier, "cy", "t1/cy-3", 1000)
    await cashier.cash_out("t1/cy-3")
    await balanced(cashier)


async def test_a_seat_with_its_buy_in_still_out_counts_as_lost(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    cashier = any_cashier
    await buy(cashier, "di", "p1", 5000)
    await limit(cashier, "di", "l1", LimitKind.LOSS_WEEKLY, 1000)
    await seat(cashier, "di", "t1/di-1", 700)
    wallet_before = await balance(cashier, "di")
    await cashier.cash_out("t1/di-1")
    # A hand lost 300 of the next seat's chips: settle it as the table would.
    await seat(cashier, "di", "t1/di-2", 500)
    from services.cashier.settlement import SeatResult, normalise_hand_result

    await buy(cashier, "ed", "p2", 5000)
    await cashier.open_seat_session(
        session_id="t1/ed-1", player_id="ed", table_id="t1", seat_index=1, pool=GRAM,
        buy_in_amount=500, min_buy_in=1, max_buy_in=10_000,
    )  # fmt: skip
    hand = normalise_hand_result(
        "h1", "t1", GRAM, [SeatResult("t1/di-2", -300), SeatResult("t1/ed-1", 300)], 0, 0
    )
    await cashier.settle_hand(hand)
    await cashier.cash_out("t1/di-2")  # 200 back: 300 lost this week
    assert await balance(cashier, "di") == wallet_before + 700 - 300
    error = await refused(seat(cashier, "di", "t1/di-3", 701), "SELF_LIMIT_REACHED")
    assert error.metadata["remaining"] == "700"
    clock.advance(7 * DAY)
    await seat(cashier, "di", "t1/di-3", 701)
    await balanced(cashier)


async def test_a_raise_waits_a_day_and_a_lowering_applies_at_once(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    cashier = any_cashier
    change, _ = await limit(cashier, "fa", "l1", LimitKind.PURCHASE_DAILY, 500)
    assert change.effective_at == clock.now
    raised, _ = await limit(cashier, "fa", "l2", LimitKind.PURCHASE_DAILY, 2000)
    assert raised.effective_at == clock.now + DAY
    assert raised.old_value == "500"
    await refused(buy(cashier, "fa", "p1", 501), "SELF_LIMIT_REACHED")
    view = await cashier.self_limits("fa")
    assert (view.limits[0].state.amount, view.limits[0].state.pending_amount) == (500, 2000)
    assert view.limits[0].state.pending_at == clock.now + DAY
    clock.advance(DAY)
    await buy(cashier, "fa", "p1", 1500)
    # Lower it below what was bought today: applies at once.
    lowered, _ = await limit(cashier, "fa", "l3", LimitKind.PURCHASE_DAILY, 1600)
    assert lowered.effective_at == clock.now
    await refused(buy(cashier, "fa", "p2", 101), "SELF_LIMIT_REACHED")
    # A removal waits too, and a lowering cancels it.
    await limit(cashier, "fa", "l4", LimitKind.PURCHASE_DAILY, 0)
    await limit(cashier, "fa", "l5", LimitKind.PURCHASE_DAILY, 1600)
    clock.advance(DAY + timedelta(hours=1))
    await buy(cashier, "fa", "p3", 1600)
    await refused(buy(cashier, "fa", "p4", 1), "SELF_LIMIT_REACHED")
    history = await cashier.self_limit_history("fa")
    assert [(c.request_id, c.old_value, c.new_value) for c in history] == [
        ("l1", "0", "500"),
        ("l2", "500", "2000"),
        ("l3", "2000", "1600"),
        ("l4", "1600", "0"),
        ("l5", "1600", "1600"),
    ]
    await balanced(cashier)


async def test_a_break_refuses_purchases_and_seats_and_cannot_be_shortened(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    cashier = any_cashier
    await buy(cashier, "gil", "p0", 3000)
    await limit(cashier, "gil", "l1", LimitKind.LOSS_DAILY, 1000)
    change, _ = await cashier.start_break(
        player_id="gil", request_id="b1", kind=BreakKind.COOLING_OFF, days=7
    )
    assert change.ends_at == clock.now + 7 * DAY
    error = await refused(buy(cashier, "gil", "p1", 10), "COOLING_OFF")
    assert error.metadata["until"] == (clock.now + 7 * DAY).isoformat()
    await refused(seat(cashier, "gil", "t1/gil-1", 10), "COOLING_OFF")
    # A retry of a purchase recorded before the break still answers as recorded.
    assert await buy(cashier, "gil", "p0", 3000) is True
    # Not shortened, not ended early, no limit raised or removed; tightening is fine.
    clock.advance(DAY)
    await refused(
        cashier.start_break(player_id="gil", request_id="b2", kind=BreakKind.COOLING_OFF, days=1),
        "BREAK_IN_FORCE",
    )
    await refused(limit(cashier, "gil", "l2", LimitKind.LOSS_DAILY, 5000), "BREAK_IN_FORCE")
    await refused(limit(cashier, "gil", "l3", LimitKind.LOSS_DAILY, 0), "BREAK_IN_FORCE")
    await limit(cashier, "gil", "l4", LimitKind.LOSS_DAILY, 900)
    # A self-exclusion extends it.
    longer, _ = await cashier.start_break(
        player_id="gil", request_id="b3", kind=BreakKind.SELF_EXCLUSION, days=183
    )
    assert longer.ends_at == clock.now + 183 * DAY
    clock.advance(182 * DAY)
    await refused(buy(cashier, "gil", "p1", 10), "SELF_EXCLUDED")
    await refused(seat(cashier, "gil", "t1/gil-1", 10), "SELF_EXCLUDED")
    view = await cashier.self_limits("gil")
    assert view.brk is not None
    assert view.brk.kind is BreakKind.SELF_EXCLUSION
    clock.advance(DAY)
    assert (await cashier.self_limits("gil")).brk is None
    await buy(cashier, "gil", "p1", 10)
    await seat(cashier, "gil", "t1/gil-1", 900)
    assert [c.action for c in await cashier.self_limit_history("gil")] == ["LIMIT", "BREAK", "LIMIT", "BREAK"]
    await balanced(cashier)


async def test_bad_input_is_refused_with_catalogue_reasons_and_changes_nothing(any_cashier: Cashier) -> None:
    cashier = any_cashier
    await limit(cashier, "hal", "l1", LimitKind.PURCHASE_DAILY, 100)
    before = (await cashier.self_limits("hal"), await cashier.self_limit_history("hal"))
    for call, reason in (
        (limit(cashier, "hal", "x1", LimitKind.PURCHASE_DAILY, -1), "FIELD_INVALID"),
        (limit(cashier, "hal", "x2", LimitKind.PURCHASE_DAILY, 10**12 + 1), "FIELD_INVALID"),
        (limit(cashier, "hal", "x3", LimitKind.PURCHASE_DAILY, 2**63 - 1), "FIELD_INVALID"),
        (
            cashier.set_self_limit(
                player_id="hal", request_id="x4", pool=None, kind=LimitKind.LOSS_DAILY, amount=1
            ),
            "POOL_INVALID",
        ),
        (
            cashier.set_self_limit(player_id="hal", request_id="x5", pool=GRAM, kind=None, amount=1),
            "FIELD_REQUIRED",
        ),
        (limit(cashier, "hal", "", LimitKind.PURCHASE_DAILY, 1), "FIELD_REQUIRED"),
        (limit(cashier, "hal", "x\x00", LimitKind.PURCHASE_DAILY, 1), "FIELD_INVALID"),
        (limit(cashier, "house", "x6", LimitKind.PURCHASE_DAILY, 1), "FIELD_INVALID"),
        (cashier.set_session_reminder(player_id="hal", request_id="x7", minutes=14), "FIELD_INVALID"),
        (cashier.set_session_reminder(player_id="hal", request_id="x8", minutes=-15), "FIELD_INVALID"),
        (
            cashier.start_break(player_id="hal", request_id="x9", kind=BreakKind.COOLING_OFF, days=43),
            "FIELD_INVALID",
        ),
        (
            cashier.start_break(player_id="hal", request_id="xa", kind=BreakKind.COOLING_OFF, days=0),
            "FIELD_INVALID",
        ),
        (
            cashier.start_break(player_id="hal", request_id="xb", kind=BreakKind.SELF_EXCLUSION, days=182),
            "FIELD_INVALID",
        ),
        (
            cashier.start_break(player_id="hal", request_id="xc", kind=BreakKind.SELF_EXCLUSION, days=3651),
            "FIELD_INVALID",
        ),
        (cashier.start_break(player_id="hal", request_id="xd", kind=None, days=3), "FIELD_REQUIRED"),
    ):
        error = await refused(call, reason)
        assert isinstance(error, InvalidArgument)
    assert (await cashier.self_limits("hal"), await cashier.self_limit_history("hal")) == before


async def test_a_request_id_binds_every_field_and_a_retry_answers_the_first_change(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    cashier = any_cashier
    first, existing = await limit(cashier, "ida", "r1", LimitKind.LOSS_WEEKLY, 300)
    assert existing is False
    clock.advance(timedelta(hours=2))
    again, existing = await limit(cashier, "ida", "r1", LimitKind.LOSS_WEEKLY, 300)
    assert (again, existing) == (first, True)
    for changed, field in (
        ({"amount": 301}, "amount"),
        ({"kind": LimitKind.LOSS_DAILY}, "kind"),
        ({"pool": Pool.MPX}, "pool"),
    ):
        fields = {
            "player_id": "ida",
            "request_id": "r1",
            "pool": GRAM,
            "kind": LimitKind.LOSS_WEEKLY,
            "amount": 300,
        }
        fields.update(changed)
        with pytest.raises(AlreadyExists) as error:
            await cashier.set_self_limit(**fields)  # type: ignore[arg-type]
        assert (error.value.reason, error.value.metadata["field"]) == ("IDEMPOTENCY_CONFLICT", field)
    with pytest.raises(AlreadyExists) as other:
        await cashier.set_session_reminder(player_id="ida", request_id="r1", minutes=30)
    assert other.value.metadata["field"] == "request_id"
    # Request ids are the player's own: another player's r1 is their own change.
    _, existing = await limit(cashier, "jo", "r1", LimitKind.LOSS_WEEKLY, 999)
    assert existing is False
    reminder, _ = await cashier.set_session_reminder(player_id="ida", request_id="m1", minutes=60)
    assert (await cashier.set_session_reminder(player_id="ida", request_id="m1", minutes=60)) == (
        reminder,
        True,
    )
    with pytest.raises(AlreadyExists) as minutes:
        await cashier.set_session_reminder(player_id="ida", request_id="m1", minutes=90)
    assert minutes.value.metadata["field"] == "minutes"
    brk, _ = await cashier.start_break(player_id="ida", request_id="b1", kind=BreakKind.COOLING_OFF, days=2)
    clock.advance(DAY)
    assert await cashier.start_break(
        player_id="ida", request_id="b1", kind=BreakKind.COOLING_OFF, days=2
    ) == (brk, True)
    for kind, days, field in ((BreakKind.COOLING_OFF, 3, "days"), (BreakKind.SELF_EXCLUSION, 200, "kind")):
        with pytest.raises(AlreadyExists) as error:
            await cashier.start_break(player_id="ida", request_id="b1", kind=kind, days=days)
        assert error.value.metadata["field"] == field
    view = await cashier.self_limits("ida")
    assert view.reminder_minutes == 60
    assert [(v.state.kind, v.state.amount) for v in view.limits] == [(LimitKind.LOSS_WEEKLY, 300)]
    assert len(await cashier.self_limit_history("ida")) == 3


PLAYER_ANN = auth_metadata("ann")
PLAYER_BOB = auth_metadata("bob")
PAYMENTS = service_metadata(ServiceName.PAYMENTS)


async def test_over_grpc_a_player_sets_and_reads_only_their_own_limits_and_staff_only_read(
    sqlite_url: str, clock: FakeClock
) -> None:
    cashier = await migrated_cashier(sqlite_url, clock)
    try:
        async with running_server([cashier_service(cashier)], ACCESS) as (_, channel):
            stub = cashier_pb2_grpc.CashierServiceStub(channel)
            request = cashier_pb2.SetSelfLimitRequest(
                request_id="g1",
                pool=common_pb2.CHIP_POOL_GRAM,
                kind=cashier_pb2.SELF_LIMIT_KIND_PURCHASE_DAILY,
                amount=1000,
            )
            answer = await stub.SetSelfLimit(request, metadata=PLAYER_ANN)
            assert (answer.amount, answer.previous_amount, answer.existing) == (1000, 0, False)
            assert answer.effective_time == answer.change_time
            again = await stub.SetSelfLimit(request, metadata=PLAYER_ANN)
            assert (again.existing, again.change_time) == (True, answer.change_time)
            reminder = await stub.SetSessionReminder(
                cashier_pb2.SetSessionReminderRequest(request_id="g2", minutes=45), metadata=PLAYER_ANN
            )
            assert reminder.minutes == 45
            purchase = cashier_pb2.PurchaseRequest(
                payment_reference="pay-1", player_id="ann", source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                amount_minor=1001 * 10**6,
            )  # fmt: skip
            with pytest.raises(grpc.aio.AioRpcError) as limited:
                await stub.Purchase(purchase, metadata=PAYMENTS)
            assert (limited.value.code(), reason_of(limited.value)) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "SELF_LIMIT_REACHED",
            )
            own = await stub.GetSelfLimits(cashier_pb2.GetSelfLimitsRequest(), metadata=PLAYER_ANN)
            assert (own.player_id, own.session_reminder_minutes, own.HasField("active_break")) == (
                "ann",
                45,
                False,
            )
            assert [(lim.kind, lim.amount, lim.remaining) for lim in own.limits] == [
                (cashier_pb2.SELF_LIMIT_KIND_PURCHASE_DAILY, 1000, 1000)
            ]
            # Staff who read players read anyone's; a player never reads another's.
            support = await stub.GetSelfLimits(
                cashier_pb2.GetSelfLimitsRequest(player_id="ann"), metadata=auth_metadata("sue", "support")
            )
            assert support.limits == own.limits
            for call, code, reason in (
                (stub.GetSelfLimits(cashier_pb2.GetSelfLimitsRequest(player_id="ann"), metadata=PLAYER_BOB),
                 grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_RESOURCE"),
                (stub.SetSelfLimit(request, metadata=auth_metadata("sue", "support")),
                 grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
                (stub.StartBreak(cashier_pb2.StartBreakRequest(request_id="g3", kind=cashier_pb2.BREAK_KIND_COOLING_OFF, days=1),
                                 metadata=auth_metadata("ops", "admin", "risk", "support", "finance")),
                 grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
                (stub.SetSelfLimit(cashier_pb2.SetSelfLimitRequest(request_id="g4", pool=1, kind=9, amount=1), metadata=PLAYER_ANN),
                 grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
                (stub.SetSelfLimit(cashier_pb2.SetSelfLimitRequest(request_id="g5", pool=1, kind=1, amount=-5), metadata=PLAYER_ANN),
                 grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
                (stub.StartBreak(cashier_pb2.StartBreakRequest(request_id="g6", kind=7, days=1), metadata=PLAYER_ANN),
                 grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
                (stub.SetSelfLimit(cashier_pb2.SetSelfLimitRequest(request_id="g1", pool=1, kind=1, amount=999), metadata=PLAYER_ANN),
                 grpc.StatusCode.ALREADY_EXISTS, "IDEMPOTENCY_CONFLICT"),
            ):  # fmt: skip
                with pytest.raises(grpc.aio.AioRpcError) as error:
                    await call
                assert (error.value.code(), reason_of(error.value)) == (code, reason)
            # Bob's g1 is his own: his limit, not ann's.
            bob = await stub.SetSelfLimit(request, metadata=PLAYER_BOB)
            assert bob.existing is False
            started = await stub.StartBreak(
                cashier_pb2.StartBreakRequest(
                    request_id="g7", kind=cashier_pb2.BREAK_KIND_COOLING_OFF, days=2
                ),
                metadata=PLAYER_ANN,
            )
            assert started.end_time.ToSeconds() - started.start_time.ToSeconds() == 2 * 86400
            read = await stub.GetSelfLimits(
                cashier_pb2.GetSelfLimitsRequest(player_id="ann"), metadata=PLAYER_ANN
            )
            assert read.active_break.kind == cashier_pb2.BREAK_KIND_COOLING_OFF
            seat_request = cashier_pb2.OpenSeatSessionRequest(
                session_id="t/ann", player_id="ann", table_id="t", seat_index=0, pool=common_pb2.CHIP_POOL_GRAM,
                buy_in_amount=1, min_buy_in=1, max_buy_in=10,
            )  # fmt: skip
            with pytest.raises(grpc.aio.AioRpcError) as seated:
                await stub.OpenSeatSession(seat_request, metadata=service_metadata(ServiceName.TABLE))
            assert reason_of(seated.value) == "COOLING_OFF"
            figures, _ = await cashier.audit()
            assert all(audit_balanced(f) for f in figures)
    finally:
        await cashier.engine.dispose()


@pytest.mark.postgres
async def test_a_players_first_purchases_from_two_sources_at_once_pass_a_limit_together_only_once(
    cashier: Cashier,
) -> None:
    """An outside reviewer's case: the check locked the purchase's mint and wallet, but a player's
    first purchase creates the wallet later, so two first purchases from two sources (two mints) had
    no row in common to wait on and both passed the limit on PostgreSQL (READ COMMITTED)."""

    await limit(cashier, "ann", "l1", LimitKind.PURCHASE_DAILY, 1000)

    async def gram() -> None:
        await cashier.purchase(
            payment_reference="g1", player_id="ann", source=PaymentSource.GRAM, amount_minor=1000 * 10**6
        )

    async def stars() -> None:
        await cashier.purchase(
            payment_reference="s1", player_id="ann", source=PaymentSource.TELEGRAM_STARS, amount_minor=100
        )

    outcomes = await asyncio.gather(gram(), stars(), return_exceptions=True)
    refusals = [o for o in outcomes if isinstance(o, DomainError)]
    assert len(refusals) == 1, outcomes
    assert refusals[0].reason == "SELF_LIMIT_REACHED"
    assert await balance(cashier, "ann") == 1000
    await balanced(cashier)
