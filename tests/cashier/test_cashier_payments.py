"""Purchases and withdrawals: rates in minor units, payment-reference idempotency, the Stars lock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition, InvalidArgument
from services.cashier.application import Cashier
from services.cashier.ledger import Pool
from services.cashier.payments import PaymentSource, StarsLot, chips_for, locked_amount

GRAM, MPX, STARS = PaymentSource.GRAM, PaymentSource.MPX, PaymentSource.TELEGRAM_STARS


@pytest.mark.parametrize(
    ("source", "minor", "chips"),
    [
        (GRAM, 10**9, 1000),
        (GRAM, 10**6, 1),
        (MPX, 10**9, 10),
        (MPX, 10**8, 1),
        (STARS, 1, 10),
        (STARS, 25, 250),
    ],
)
def test_rates_of_rule_seven_in_minor_units(source: PaymentSource, minor: int, chips: int) -> None:
    assert chips_for(source, minor) == chips


@pytest.mark.parametrize(("source", "minor"), [(GRAM, 10**6 + 1), (GRAM, 999_999), (MPX, 5 * 10**7)])
def test_amounts_that_are_not_whole_chips_are_refused(source: PaymentSource, minor: int) -> None:
    with pytest.raises(InvalidArgument) as error:
        chips_for(source, minor)
    assert error.value.reason == "AMOUNT_NOT_WHOLE_CHIPS"


@pytest.mark.parametrize("minor", [0, -1, 2**63])
def test_zero_negative_and_over_int64_amounts_are_refused(minor: int) -> None:
    with pytest.raises(InvalidArgument) as error:
        chips_for(GRAM, minor)
    assert error.value.reason == "AMOUNT_INVALID"


def test_stars_chips_count_as_spent_last() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 1, 1, tzinfo=UTC)
    lots = [StarsLot(100, now + timedelta(days=3))]
    assert locked_amount(300, lots, now) == 100
    assert locked_amount(50, lots, now) == 50
    assert locked_amount(300, lots, now + timedelta(days=3)) == 0


pytestmark = pytest.mark.postgres


async def wallet(cashier: Cashier, player: str, pool: Pool = Pool.GRAM) -> tuple[int, int]:
    wallets, _ = await cashier.balances(player)
    found = next(w for w in wallets if w.pool is pool)
    return found.balance, found.locked_amount


async def test_a_payment_reference_applies_once_and_conflicts_on_other_fields(cashier: Cashier) -> None:
    first = await cashier.purchase(
        payment_reference="ref-1", player_id="ann", source=GRAM, amount_minor=2 * 10**9
    )
    again = await cashier.purchase(
        payment_reference="ref-1", player_id="ann", source=GRAM, amount_minor=2 * 10**9
    )
    assert (first.existing, again.existing) == (False, True)
    assert again.record.created_at == first.record.created_at
    for player, amount, field in (("bea", 2 * 10**9, "player_id"), ("ann", 3 * 10**9, "amount_minor")):
        with pytest.raises(AlreadyExists) as error:
            await cashier.purchase(
                payment_reference="ref-1", player_id=player, source=GRAM, amount_minor=amount
            )
        assert (error.value.reason, error.value.metadata["field"]) == ("IDEMPOTENCY_CONFLICT", field)
    assert await wallet(cashier, "ann") == (2000, 0)
    assert await wallet(cashier, "bea") == (0, 0)


async def minted(cashier: Cashier) -> dict[Pool, tuple[int, int]]:
    figures, _ = await cashier.audit()
    return {f.pool: (f.minted, f.burned) for f in figures}


async def test_a_payment_reference_is_one_purchase_whatever_its_source(any_cashier: Cashier) -> None:
    """Issue 41: the gateway's request id R bought 100 GRAM chips, then R again with the MPX pool
    bought 100 MPX chips, because the reference was keyed together with its source."""
    cashier = any_cashier
    await cashier.purchase(payment_reference="gw-dev:ann:R", player_id="ann", source=GRAM, amount_minor=10**8)
    before = await minted(cashier)
    for player, source, amount in (
        ("ann", MPX, 100 * 10**8),  # the gateway's retry with another pool: 100 MPX chips
        ("ann", MPX, 10**8),  # the same minor units in the other currency
        ("ann", STARS, 10),
        ("bea", MPX, 100 * 10**8),  # another source and another player
    ):
        with pytest.raises(AlreadyExists) as error:
            await cashier.purchase(
                payment_reference="gw-dev:ann:R", player_id=player, source=source, amount_minor=amount
            )
        assert (error.value.reason, error.value.metadata["field"]) == ("IDEMPOTENCY_CONFLICT", "source")
    assert await minted(cashier) == before
    assert await wallet(cashier, "ann", Pool.MPX) == (0, 0)
    assert await wallet(cashier, "ann") == (100, 0)
    again = await cashier.purchase(
        payment_reference="gw-dev:ann:R", player_id="ann", source=GRAM, amount_minor=10**8
    )
    assert again.existing
    assert again.record.request.amount == 100


async def test_a_payment_reference_is_one_withdrawal_whatever_its_source(any_cashier: Cashier) -> None:
    cashier = any_cashier
    await cashier.purchase(payment_reference="in-g", player_id="cal", source=GRAM, amount_minor=10**9)
    await cashier.purchase(payment_reference="in-m", player_id="cal", source=MPX, amount_minor=10**9)
    await cashier.withdraw(payment_reference="out-R", player_id="cal", source=GRAM, amount_minor=10**8)
    before = await minted(cashier)
    for source, amount in ((MPX, 10**8), (MPX, 10**9)):
        with pytest.raises(AlreadyExists) as error:
            await cashier.withdraw(
                payment_reference="out-R", player_id="cal", source=source, amount_minor=amount
            )
        assert (error.value.reason, error.value.metadata["field"]) == ("IDEMPOTENCY_CONFLICT", "source")
    assert await minted(cashier) == before
    assert await wallet(cashier, "cal", Pool.MPX) == (10, 0)
    assert await wallet(cashier, "cal") == (900, 0)
    # A purchase and a payout are different things of the outside system: each has its own references.
    bought = await cashier.purchase(
        payment_reference="out-R", player_id="cal", source=MPX, amount_minor=10**9
    )
    assert not bought.existing


async def test_a_refused_payment_holds_its_reference_for_every_source(any_cashier: Cashier) -> None:
    """A refusal the ledger records (funds) keeps the reference: another source is still a conflict,
    and a refusal that records nothing (a lock, a hold) leaves it free."""
    cashier = any_cashier
    with pytest.raises(FailedPrecondition):
        await cashier.withdraw(payment_reference="out-9", player_id="dov", source=GRAM, amount_minor=10**9)
    await cashier.purchase(payment_reference="in-9", player_id="dov", source=MPX, amount_minor=10**9)
    with pytest.raises(AlreadyExists) as error:
        await cashier.withdraw(payment_reference="out-9", player_id="dov", source=MPX, amount_minor=10**8)
    assert error.value.metadata["field"] == "source"
    with pytest.raises(InvalidArgument):
        await cashier.purchase(payment_reference="in-10", player_id="dov", source=GRAM, amount_minor=1)
    await cashier.purchase(payment_reference="in-10", player_id="dov", source=MPX, amount_minor=10**8)
    assert await wallet(cashier, "dov", Pool.MPX) == (11, 0)


async def test_withdrawal_is_idempotent_and_burns_chips(cashier: Cashier) -> None:
    await cashier.purchase(payment_reference="in-1", player_id="cid", source=MPX, amount_minor=10 * 10**9)
    out = await cashier.withdraw(
        payment_reference="out-1", player_id="cid", source=MPX, amount_minor=4 * 10**9
    )
    again = await cashier.withdraw(
        payment_reference="out-1", player_id="cid", source=MPX, amount_minor=4 * 10**9
    )
    assert (out.existing, again.existing) == (False, True)
    assert await wallet(cashier, "cid", Pool.MPX) == (60, 0)
    figures, _ = await cashier.audit()
    mpx = next(f for f in figures if f.pool is Pool.MPX)
    assert (mpx.minted, mpx.burned, mpx.accounts_total) == (100, 40, 60)


async def test_a_withdrawal_that_failed_on_funds_keeps_failing(cashier: Cashier) -> None:
    await cashier.purchase(payment_reference="in-2", player_id="dan", source=GRAM, amount_minor=10**9)
    for _ in range(2):
        with pytest.raises(FailedPrecondition) as error:
            await cashier.withdraw(
                payment_reference="out-2", player_id="dan", source=GRAM, amount_minor=2 * 10**9
            )
        assert error.value.reason == "INSUFFICIENT_FUNDS"
        await cashier.purchase(payment_reference="in-3", player_id="dan", source=GRAM, amount_minor=5 * 10**9)
    assert await wallet(cashier, "dan") == (6000, 0)


async def test_stars_are_off_unless_enabled(postgres_url: str, clock, migrated_cashier) -> None:  # type: ignore[no-untyped-def]
    cashier = await migrated_cashier(postgres_url, clock, stars=False)
    try:
        with pytest.raises(FailedPrecondition) as error:
            await cashier.purchase(payment_reference="s-1", player_id="eva", source=STARS, amount_minor=5)
        assert error.value.reason == "PAYMENT_SOURCE_DISABLED"
    finally:
        await cashier.engine.dispose()


async def test_stars_chips_cannot_be_withdrawn_for_21_days_and_the_error_says_when(
    cashier: Cashier, clock
) -> None:  # type: ignore[no-untyped-def]
    await cashier.purchase(payment_reference="g-1", player_id="fay", source=GRAM, amount_minor=10**9)
    bought = await cashier.purchase(payment_reference="s-1", player_id="fay", source=STARS, amount_minor=100)
    assert bought.record.request.pool is Pool.GRAM
    assert bought.unlock_time == clock.now + timedelta(days=21)
    assert await wallet(cashier, "fay") == (2000, 1000)
    await cashier.withdraw(payment_reference="w-1", player_id="fay", source=GRAM, amount_minor=10**9)
    with pytest.raises(FailedPrecondition) as error:
        await cashier.withdraw(payment_reference="w-2", player_id="fay", source=GRAM, amount_minor=10**6)
    assert error.value.reason == "FUNDS_LOCKED"
    assert error.value.metadata["unlocks_at"] == (clock.now + timedelta(days=21)).isoformat()
    clock.advance(timedelta(days=21))
    await cashier.withdraw(payment_reference="w-2", player_id="fay", source=GRAM, amount_minor=10**6)
    assert await wallet(cashier, "fay") == (999, 0)


async def test_stars_never_apply_to_mpx_and_cannot_be_withdrawn(cashier: Cashier) -> None:
    with pytest.raises(DomainError) as error:
        await cashier.withdraw(payment_reference="x", player_id="gus", source=STARS, amount_minor=10)
    assert error.value.reason == "POOL_INVALID"
    await cashier.purchase(payment_reference="s-9", player_id="gus", source=STARS, amount_minor=3)
    assert await wallet(cashier, "gus", Pool.MPX) == (0, 0)
