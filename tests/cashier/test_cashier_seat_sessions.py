"""Seat sessions: buy-in within the room's limits, settlement with derived ids, cash-out, listing."""

from __future__ import annotations

import pytest

from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition
from services.cashier.application import Cashier, audit_balanced
from services.cashier.ledger import Pool, TransferKind
from services.cashier.settlement import SeatResult, normalise_hand_result

pytestmark = pytest.mark.postgres


async def seat(cashier: Cashier, player: str, table: str, index: int, amount: int = 1000) -> str:
    session_id = f"{table}/{player}"
    await cashier.open_seat_session(
        session_id=session_id,
        player_id=player,
        table_id=table,
        seat_index=index,
        pool=Pool.GRAM,
        buy_in_amount=amount,
        min_buy_in=500,
        max_buy_in=2000,
    )
    return session_id


@pytest.fixture
async def table(cashier: Cashier, fund) -> list[str]:  # type: ignore[no-untyped-def]
    sessions = []
    for index, player in enumerate(("ana", "ben", "cat")):
        await fund(cashier, player, gram_chips=5000)
        sessions.append(await seat(cashier, player, "t1", index))
    return sessions


async def test_buy_in_outside_the_room_limits_is_refused(cashier: Cashier, fund) -> None:  # type: ignore[no-untyped-def]
    await fund(cashier, "dee", gram_chips=5000)
    for amount in (499, 2001):
        with pytest.raises(FailedPrecondition) as error:
            await seat(cashier, "dee", "t9", 0, amount)
        assert error.value.reason == "BUY_IN_OUT_OF_RANGE"


async def test_buy_in_needs_the_chips_in_the_wallet_and_may_be_retried_after_a_top_up(
    cashier: Cashier,
    fund,  # type: ignore[no-untyped-def]
) -> None:
    with pytest.raises(FailedPrecondition) as error:
        await seat(cashier, "eli", "t9", 0)
    assert error.value.reason == "INSUFFICIENT_FUNDS"
    await fund(cashier, "eli", gram_chips=1000)
    await seat(cashier, "eli", "t9", 0)
    wallets, session = await cashier.balances("eli")
    assert wallets[0].balance == 0
    assert session is not None
    assert session.stack == 1000


async def test_open_is_idempotent_by_session_id_and_conflicts_on_other_fields(
    cashier: Cashier, table: list[str]
) -> None:
    view, existing = await cashier.open_seat_session(
        session_id=table[0], player_id="ana", table_id="t1", seat_index=0, pool=Pool.GRAM,
        buy_in_amount=1000, min_buy_in=500, max_buy_in=2000,
    )  # fmt: skip
    assert existing
    assert view.stack == 1000
    with pytest.raises(AlreadyExists) as error:
        await cashier.open_seat_session(
            session_id=table[0], player_id="ana", table_id="t1", seat_index=0, pool=Pool.GRAM,
            buy_in_amount=1500, min_buy_in=500, max_buy_in=2000,
        )  # fmt: skip
    assert error.value.metadata["field"] == "buy_in_amount"


async def test_a_second_seat_for_the_same_player_is_refused(cashier: Cashier, table: list[str]) -> None:
    with pytest.raises(FailedPrecondition) as error:
        await seat(cashier, "ana", "t2", 0)
    assert error.value.reason == "SEAT_SESSION_ALREADY_OPEN"


async def test_settlement_moves_chips_with_ids_derived_from_the_hand_id(
    cashier: Cashier, table: list[str]
) -> None:
    hand = normalise_hand_result(
        "h-1",
        "t1",
        Pool.GRAM,
        [SeatResult(table[0], 590), SeatResult(table[1], -300), SeatResult(table[2], -300)],
        10,
        0,
    )
    view, existing = await cashier.settle_hand(hand)
    assert not existing
    assert [t.request.transfer_id for t in view.transfers] == ["hand:h-1:0", "hand:h-1:1", "hand:h-1:2"]
    assert [t.request.kind for t in view.transfers][-1] is TransferKind.RAKE
    # The rake goes to the table's own house account, opened with its first seat.
    assert view.transfers[-1].request.credit_account_id == "house:rake:GRAM:t1"
    assert view.transfers[-1].credit_balance_after == 10
    assert dict(view.stacks_after) == {table[0]: 1590, table[1]: 700, table[2]: 700}
    again, existing = await cashier.settle_hand(hand)
    assert existing
    assert dict(again.stacks_after) == dict(view.stacks_after)
    listed = await cashier.open_seat_sessions("t1")
    assert [(s.session.seat_index, s.stack) for s in listed] == [(0, 1590), (1, 700), (2, 700)]


async def test_a_different_result_for_a_settled_hand_is_a_conflict(
    cashier: Cashier, table: list[str]
) -> None:
    await cashier.settle_hand(
        normalise_hand_result(
            "h-2", "t1", Pool.GRAM, [SeatResult(table[0], 5), SeatResult(table[1], -5)], 0, 0
        )
    )
    with pytest.raises(AlreadyExists) as error:
        await cashier.settle_hand(
            normalise_hand_result(
                "h-2", "t1", Pool.GRAM, [SeatResult(table[0], 6), SeatResult(table[1], -6)], 0, 0
            )
        )
    assert error.value.metadata["field"] == "seat_results"


async def test_a_settlement_that_would_overdraw_a_seat_is_refused_whole_and_stays_refused(
    cashier: Cashier, table: list[str]
) -> None:
    hand = normalise_hand_result(
        "h-3", "t1", Pool.GRAM, [SeatResult(table[0], 1100), SeatResult(table[1], -1100)], 0, 0
    )
    for _ in range(2):
        with pytest.raises(FailedPrecondition) as error:
            await cashier.settle_hand(hand)
        assert (error.value.reason, error.value.metadata["session_id"]) == ("INSUFFICIENT_FUNDS", table[1])
    assert [s.stack for s in await cashier.open_seat_sessions("t1")] == [1000, 1000, 1000]


async def test_an_unbalanced_settlement_is_refused_before_anything_is_recorded() -> None:
    with pytest.raises(FailedPrecondition) as error:
        normalise_hand_result("h-4", "t1", Pool.GRAM, [SeatResult("a", 10), SeatResult("b", -5)], 0, 0)
    assert error.value.reason == "SETTLEMENT_UNBALANCED"


async def test_settling_a_session_of_another_table_is_refused(
    cashier: Cashier, table: list[str], fund
) -> None:  # type: ignore[no-untyped-def]
    await fund(cashier, "fox", gram_chips=1000)
    other = await seat(cashier, "fox", "t2", 0)
    with pytest.raises(DomainError) as error:
        await cashier.settle_hand(
            normalise_hand_result(
                "h-5", "t1", Pool.GRAM, [SeatResult(table[0], 5), SeatResult(other, -5)], 0, 0
            )
        )
    assert error.value.reason == "SEAT_SESSION_TABLE_MISMATCH"


async def test_cash_out_returns_the_stack_closes_the_session_and_is_harmless_to_retry(
    cashier: Cashier, table: list[str]
) -> None:
    await cashier.settle_hand(
        normalise_hand_result(
            "h-6", "t1", Pool.GRAM, [SeatResult(table[0], 250), SeatResult(table[1], -250)], 0, 0
        )
    )
    view, existing = await cashier.cash_out(table[0])
    assert (view.session.open, view.session.cash_out_amount, existing) == (False, 1250, False)
    again, existing = await cashier.cash_out(table[0])
    assert (again.session.cash_out_amount, existing) == (1250, True)
    wallets, session = await cashier.balances("ana")
    assert (wallets[0].balance, session) == (5250, None)
    with pytest.raises(FailedPrecondition) as error:
        await cashier.settle_hand(
            normalise_hand_result(
                "h-7", "t1", Pool.GRAM, [SeatResult(table[0], 5), SeatResult(table[1], -5)], 0, 0
            )
        )
    assert error.value.reason == "SEAT_SESSION_CLOSED"
    await seat(cashier, "ana", "t2", 0)  # a closed session frees the player to sit elsewhere
    figures, _ = await cashier.audit()
    assert all(audit_balanced(f) for f in figures)


async def test_statement_lists_every_change_newest_first_across_pages(
    cashier: Cashier, table: list[str]
) -> None:
    await cashier.settle_hand(
        normalise_hand_result(
            "h-8", "t1", Pool.GRAM, [SeatResult(table[0], 40), SeatResult(table[1], -40)], 0, 0
        )
    )
    await cashier.cash_out(table[0])
    lines, token, seen = [], "", 0
    while True:
        page, token = await cashier.statement("ana", pool=None, page_size=2, page_token=token)
        lines += page
        seen += 1
        if not token:
            break
    kinds = [(line.record.request.kind, line.amount) for line in lines]
    assert kinds == [
        (TransferKind.CASH_OUT, 1040),
        (TransferKind.CASH_OUT, -1040),
        (TransferKind.HAND_RESULT, 40),
        (TransferKind.BUY_IN, 1000),
        (TransferKind.BUY_IN, -1000),
        (TransferKind.PURCHASE, 5000),
    ]
    assert seen == 3
    assert lines[2].record.request.reference == "h-8"


async def test_the_whole_seat_flow_runs_on_sqlite_for_make_run(sqlite_cashier: Cashier, fund) -> None:  # type: ignore[no-untyped-def]
    for player in ("ana", "ben"):
        await fund(sqlite_cashier, player, gram_chips=2000)
    first = await seat(sqlite_cashier, "ana", "t1", 0)
    second = await seat(sqlite_cashier, "ben", "t1", 1)
    with pytest.raises(FailedPrecondition):
        await seat(sqlite_cashier, "ana", "t2", 0)
    hand = normalise_hand_result(
        "h-1", "t1", Pool.GRAM, [SeatResult(first, 100), SeatResult(second, -100)], 0, 0
    )
    await sqlite_cashier.settle_hand(hand)
    await sqlite_cashier.cash_out(first)
    wallets, _ = await sqlite_cashier.balances("ana")
    assert wallets[0].balance == 2100
    figures, _ = await sqlite_cashier.audit()
    assert all(audit_balanced(f) for f in figures)


async def test_a_house_game_hand_pays_from_and_to_the_house_bank(cashier: Cashier, table: list[str]) -> None:
    from services.cashier.ledger import TransferRequest, TransferStatus

    (funding,) = await cashier.create_transfers(
        [
            TransferRequest(
                "bank-seed", "wallet:GRAM:ana", "house:bank:GRAM", Pool.GRAM, 500, TransferKind.ADJUSTMENT
            )
        ],
        linked=False,
    )
    assert funding.status is TransferStatus.CREATED
    won, _ = await cashier.settle_hand(
        normalise_hand_result("casino-1", "t1", Pool.GRAM, [SeatResult(table[1], 300)], 0, -300)
    )
    assert [t.request.kind for t in won.transfers] == [TransferKind.HOUSE_GAME_RESULT]
    assert dict(won.stacks_after) == {table[1]: 1300}
    with pytest.raises(FailedPrecondition) as error:
        await cashier.settle_hand(
            normalise_hand_result("casino-2", "t1", Pool.GRAM, [SeatResult(table[2], 300)], 0, -300)
        )
    assert (error.value.reason, error.value.metadata["account_id"]) == (
        "INSUFFICIENT_FUNDS",
        "house:bank:GRAM",
    )
    lost, _ = await cashier.settle_hand(
        normalise_hand_result("casino-3", "t1", Pool.GRAM, [SeatResult(table[2], -100)], 0, 100)
    )
    assert dict(lost.stacks_after) == {table[2]: 900}
    figures, _ = await cashier.audit()
    assert all(audit_balanced(f) for f in figures)
