"""Transfer semantics on PostgreSQL: the idempotency matrix, linked batches, malformed batches."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from prometheus_client import REGISTRY

from service_runtime.errors import InvalidArgument, NotFound
from services.cashier.application import Cashier
from services.cashier.ledger import Pool, TransferKind, TransferRequest, TransferStatus

pytestmark = pytest.mark.postgres

ALICE, BOB, CAROL = "wallet:GRAM:alice", "wallet:GRAM:bob", "wallet:GRAM:carol"


def transfer(transfer_id: str, debit: str = ALICE, credit: str = BOB, amount: int = 10) -> TransferRequest:
    return TransferRequest(
        transfer_id, debit, credit, Pool.GRAM, amount, TransferKind.ADJUSTMENT, "ref", "t1"
    )


async def balances(cashier: Cashier, *players: str) -> list[int]:
    result = []
    for player in players:
        wallets, _ = await cashier.balances(player)
        result.append(next(w.balance for w in wallets if w.pool is Pool.GRAM))
    return result


@pytest.fixture
async def funded(cashier: Cashier, fund) -> Cashier:  # type: ignore[no-untyped-def]
    for player in ("alice", "bob", "carol"):
        await fund(cashier, player, gram_chips=100)
    await fund(cashier, "bob", mpx_chips=100)
    return cashier


async def test_same_id_same_fields_returns_the_original_with_its_time(funded: Cashier, clock) -> None:  # type: ignore[no-untyped-def]
    (first,) = await funded.create_transfers([transfer("t-1")], linked=False)
    original_time = first.record.created_at if first.record else None
    clock.advance(timedelta(minutes=5))
    (again,) = await funded.create_transfers([transfer("t-1")], linked=False)
    assert first.status is TransferStatus.CREATED
    assert again.status is TransferStatus.EXISTS
    assert again.record is not None
    assert again.record.created_at == original_time
    assert await balances(funded, "alice", "bob") == [90, 110]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("debit_account_id", CAROL),
        ("credit_account_id", CAROL),
        ("amount", 11),
        ("kind", TransferKind.HAND_RESULT),
        ("reference", "other"),
        ("table_id", "t2"),
    ],
)
async def test_same_id_with_one_field_different_is_a_conflict_naming_it(
    funded: Cashier, field: str, value: object
) -> None:
    await funded.create_transfers([transfer("t-1")], linked=False)
    changed = dataclasses.replace(transfer("t-1"), **{field: value})
    (outcome,) = await funded.create_transfers([changed], linked=False)
    assert outcome.status is TransferStatus.EXISTS_WITH_DIFFERENT_FIELD
    assert outcome.field == field
    assert await balances(funded, "alice", "bob", "carol") == [90, 110, 100]


async def test_same_id_with_other_pool_is_a_conflict_naming_the_pool(funded: Cashier) -> None:
    await funded.create_transfers([transfer("t-1")], linked=False)
    changed = dataclasses.replace(transfer("t-1"), pool=Pool.MPX)
    (outcome,) = await funded.create_transfers([changed], linked=False)
    assert (outcome.status, outcome.field) == (TransferStatus.EXISTS_WITH_DIFFERENT_FIELD, "pool")


async def test_an_id_that_failed_on_funds_keeps_failing_after_a_top_up(funded: Cashier, fund) -> None:  # type: ignore[no-untyped-def]
    (failed,) = await funded.create_transfers([transfer("t-big", amount=150)], linked=False)
    assert (failed.status, failed.reason) == (TransferStatus.FAILED, "INSUFFICIENT_FUNDS")
    await fund(funded, "alice", gram_chips=500)
    (again,) = await funded.create_transfers([transfer("t-big", amount=150)], linked=False)
    assert (again.status, again.reason) == (TransferStatus.FAILED, "INSUFFICIENT_FUNDS")
    (fresh,) = await funded.create_transfers([transfer("t-big-2", amount=150)], linked=False)
    assert fresh.status is TransferStatus.CREATED
    assert await balances(funded, "alice", "bob") == [450, 250]


async def test_a_malformed_request_is_not_recorded_and_the_id_works_once_corrected(funded: Cashier) -> None:
    with pytest.raises(InvalidArgument) as zero:
        await funded.create_transfers([transfer("t-fix", amount=0)], linked=False)
    assert zero.value.reason == "AMOUNT_INVALID"
    with pytest.raises(NotFound) as unknown:
        await funded.create_transfers([transfer("t-fix", credit="wallet:GRAM:nobody")], linked=False)
    assert unknown.value.reason == "ACCOUNT_NOT_FOUND"
    assert await funded.lookup_transfers(["t-fix"]) == []
    (fixed,) = await funded.create_transfers([transfer("t-fix")], linked=False)
    assert fixed.status is TransferStatus.CREATED


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (transfer("", amount=1), "FIELD_REQUIRED"),
        (transfer("x", amount=-5), "AMOUNT_INVALID"),
        (transfer("x", amount=2**63), "AMOUNT_INVALID"),
        (transfer("x", credit=ALICE), "SAME_ACCOUNT"),
        (dataclasses.replace(transfer("x"), pool=None), "POOL_INVALID"),
        (dataclasses.replace(transfer("x"), kind=None), "FIELD_REQUIRED"),
        (transfer("hand:h1:0"), "FIELD_INVALID"),
        (transfer("x", credit="wallet:MPX:bob"), "POOL_MISMATCH"),
    ],
)
async def test_malformed_transfers_are_refused_whole_and_change_nothing(
    funded: Cashier, bad: TransferRequest, reason: str
) -> None:
    with pytest.raises((InvalidArgument, NotFound)) as error:
        await funded.create_transfers([transfer("ok-1"), bad], linked=False)
    assert error.value.reason == reason
    assert await funded.lookup_transfers(["ok-1"]) == []
    assert await balances(funded, "alice", "bob") == [100, 100]


async def test_a_linked_batch_applies_all_or_nothing(funded: Cashier) -> None:
    batch = [
        transfer("l-1", amount=50),
        transfer("l-2", BOB, CAROL, amount=500),
        transfer("l-3", CAROL, ALICE),
    ]
    outcomes = await funded.create_transfers(batch, linked=True)
    assert [(o.status, o.reason) for o in outcomes] == [
        (TransferStatus.FAILED, "LINKED_TRANSFER_FAILED"),
        (TransferStatus.FAILED, "INSUFFICIENT_FUNDS"),
        (TransferStatus.FAILED, "LINKED_TRANSFER_FAILED"),
    ]
    assert await balances(funded, "alice", "bob", "carol") == [100, 100, 100]
    retried = await funded.create_transfers(batch, linked=True)
    assert [o.reason for o in retried] == [o.reason for o in outcomes]


async def test_a_linked_batch_may_spend_what_an_earlier_transfer_of_it_credited(funded: Cashier) -> None:
    batch = [transfer("c-1", ALICE, BOB, 100), transfer("c-2", BOB, CAROL, 200)]
    outcomes = await funded.create_transfers(batch, linked=True)
    assert [o.status for o in outcomes] == [TransferStatus.CREATED] * 2
    assert await balances(funded, "alice", "bob", "carol") == [0, 0, 300]
    again = await funded.create_transfers(batch, linked=True)
    assert [o.status for o in again] == [TransferStatus.EXISTS] * 2


async def test_a_linked_batch_mixing_recorded_and_new_ids_applies_nothing_new(funded: Cashier) -> None:
    await funded.create_transfers([transfer("m-1")], linked=False)
    outcomes = await funded.create_transfers([transfer("m-1"), transfer("m-2")], linked=True)
    assert [(o.status, o.reason) for o in outcomes] == [
        (TransferStatus.EXISTS, ""),
        (TransferStatus.FAILED, "LINKED_TRANSFER_FAILED"),
    ]
    assert await funded.lookup_transfers(["m-2"]) == []
    assert await balances(funded, "alice", "bob") == [90, 110]


async def test_an_unlinked_batch_applies_each_transfer_on_its_own(funded: Cashier) -> None:
    batch = [transfer("u-1", amount=60), transfer("u-2", amount=60), transfer("u-3", amount=40)]
    outcomes = await funded.create_transfers(batch, linked=False)
    assert [o.status for o in outcomes] == [
        TransferStatus.CREATED,
        TransferStatus.FAILED,
        TransferStatus.CREATED,
    ]
    assert await balances(funded, "alice", "bob") == [0, 200]


async def test_transfers_are_append_only_in_the_database(funded: Cashier) -> None:
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    await funded.create_transfers([transfer("a-1")], linked=False)
    for statement in ("UPDATE transfers SET amount = 1", "DELETE FROM transfers"):
        with pytest.raises(DBAPIError):
            async with funded.engine.begin() as conn:
                await conn.execute(text(statement))


async def test_check_constraints_refuse_a_negative_wallet_even_behind_the_code(funded: Cashier) -> None:
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError):
        async with funded.engine.begin() as conn:
            await conn.execute(
                text(
                    "UPDATE accounts SET debits_posted = debits_posted + 1000, balance = balance - 1000 "
                    "WHERE account_id = 'wallet:GRAM:alice'"
                )
            )


def pipelines_timed() -> float:
    return (
        REGISTRY.get_sample_value(
            "poker_sql_statement_seconds_count", {"backend": "postgresql", "statement": "PIPELINE"}
        )
        or 0.0
    )


async def test_the_ledger_s_round_trips_on_the_driver_are_in_the_sql_latency_figure(funded: Cashier) -> None:
    """The hot units of work skip SQLAlchemy, whose cursor events time every other statement: their
    pipelines on the driver are timed too, or the SQL latency dashboard misses the ledger's hot path."""
    before = pipelines_timed()
    (created,) = await funded.create_transfers([transfer("t-timed")], linked=False)
    assert created.status is TransferStatus.CREATED
    # The accounts locked and what the decision needs read in one round trip, the writes in another.
    assert pipelines_timed() - before >= 2
