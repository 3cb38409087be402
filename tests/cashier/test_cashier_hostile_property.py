"""Whatever mix of valid, careless and hostile requests reaches the cashier, every pool stays conserved
and no call answers INTERNAL or UNKNOWN (issue 10), on PostgreSQL and on SQLite.

Hypothesis draws calls of every RPC with field values from the edges (empty, over-long, control
characters, system owner names, zero, negative, over the caps, int64 extremes, unknown enum numbers)
and from the ordinary (known players, accounts, sessions), under every kind of caller; after each
example the conservation audit must balance. Seeded and bounded, so it runs in CI.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.house_funding_client import fund_by_two
from service_runtime.testing import reason_of, running_server
from services.cashier.application import Cashier
from services.cashier.assembly import ACCESS, cashier_service
from services.cashier.ledger import MAX_AMOUNT
from tests.cashier.conftest import FreshToken

INT64_MAX = 2**63 - 1
CALLERS = {
    "table": FreshToken("table", Role.SERVICE),
    "payments": FreshToken("payments", Role.SERVICE),
    "history": FreshToken("history", Role.SERVICE),
    "admin": FreshToken("operator", *STAFF_ROLES),
    "finance-a": FreshToken("finance-a", Role.FINANCE),
    "finance-b": FreshToken("finance-b", Role.FINANCE),
    "alice": FreshToken("alice", Role.PLAYER),
    "house": FreshToken("house", Role.PLAYER),
    "none": (),
}

EDGE_TEXTS = st.one_of(
    st.sampled_from(
        ["", "house", "GRAM", "MPX", "TELEGRAM_STARS", "system/house", "a\x00b", "tab\t", "\u00e9t\u00e9",
         "x" * 129, "y" * 201, "z" * 3000, "hand:h1:0", "purchase:GRAM:ref-1", "funding:f1", "r" * 128, "s" * 100]
    ),
    st.text(max_size=12),
)  # fmt: skip


def field(*good: str) -> st.SearchStrategy[str]:
    """Mostly values that mean something to the cashier, otherwise an edge."""
    return st.one_of(st.sampled_from(good), st.sampled_from(good), EDGE_TEXTS)


texts = EDGE_TEXTS
players = field("alice", "bob", "carol")
references = field("ref-1", "ref-2", "ref-3", "r" * 128)
sessions = field("t1/alice", "t1/bob", "t2/carol")
tables = field("t1", "t2")
hands = field("h1", "h2", "h3")
transfer_ids = field("x1", "x2", "x3", "x4")
accounts = field(
    "wallet:GRAM:alice", "wallet:GRAM:bob", "wallet:MPX:alice", "house:bank:GRAM", "house:jackpot:MPX",
    "house:rake:GRAM:t1", "seat:t1/alice", "mint:GRAM:GRAM", "mint:TELEGRAM_STARS:GRAM",
    "mint:HOUSE_FUNDING:GRAM", "mint:MPX:MPX",
)  # fmt: skip
EDGE_AMOUNTS = st.one_of(
    st.sampled_from([0, MAX_AMOUNT, MAX_AMOUNT + 1, 2**62, INT64_MAX, -1, -(2**63)]),
    st.integers(-(2**63), INT64_MAX),
)
amounts = st.one_of(st.integers(1, 3000), st.integers(-3000, 3000), EDGE_AMOUNTS)
FORGED_TOKENS = st.sampled_from(["c3RhdGVtZW50Ojk5OTk5OTk5OTk5OTk5OTk5OTk5OjA=", "c3RhdGVtZW50Oi01OjA=",
                                 "c3RhdGVtZW50OjU6OTk5OTk5OTk5OTk5OTk5OTk5OTk5", "A" * 5000])  # fmt: skip
enums = st.one_of(
    st.integers(1, 2), st.integers(1, 3), st.integers(0, 3), st.sampled_from([7, 99, 2**31 - 1])
)
seat_indexes = st.one_of(st.integers(0, 9), st.sampled_from([-1, 99, 100, 2**31 - 1, -(2**31)]))
# Who normally calls each RPC; any other caller is drawn about half the time.
USUAL_CALLER = {
    "GetBalances": "alice", "Purchase": "payments", "Withdraw": "alice", "CreateTransfers": "table",
    "LookupTransfers": "admin", "OpenSeatSession": "table", "SettleHand": "table", "CashOutSeatSession": "table",
    "GetSeatSession": "table", "ListOpenSeatSessions": "table", "GetStatement": "alice",
    "AuditConservation": "admin", "RequestHouseFunding": "finance-a", "DecideHouseFunding": "finance-b",
    "ListHouseFunding": "finance-a", "GetHouseBalances": "table",
    "SetPlayerHold": "history", "GetPlayFigures": "admin", "ListWithdrawals": "finance-a",
    "SetSelfLimit": "alice", "SetSessionReminder": "alice", "StartBreak": "alice", "GetSelfLimits": "alice",
}  # fmt: skip


def _transfer(draw: st.DrawFn) -> cashier_pb2.Transfer:
    return cashier_pb2.Transfer(
        transfer_id=draw(transfer_ids), debit_account_id=draw(accounts), credit_account_id=draw(accounts),
        pool=draw(enums), amount=draw(amounts), kind=draw(st.one_of(st.integers(1, 9), st.integers(0, 99))),
        reference=draw(references), table_id=draw(tables),
    )  # fmt: skip


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, Any, str]:
    method = draw(st.sampled_from(sorted(USUAL_CALLER)))
    caller = draw(st.one_of(st.just(USUAL_CALLER[method]), st.sampled_from(list(CALLERS))))
    money = st.one_of(st.integers(1, 5000).map(lambda n: n * 10**6), st.integers(1, 5000), EDGE_AMOUNTS)
    request: Any
    if method == "GetBalances":
        request = cashier_pb2.GetBalancesRequest(player_id=draw(players))
    elif method in ("Purchase", "Withdraw"):
        message = cashier_pb2.PurchaseRequest if method == "Purchase" else cashier_pb2.WithdrawRequest
        request = message(
            payment_reference=draw(references),
            player_id=draw(players),
            source=draw(enums),
            amount_minor=draw(money),
        )
    elif method == "CreateTransfers":
        transfers = [_transfer(draw) for _ in range(draw(st.one_of(st.integers(1, 3), st.integers(0, 5))))]
        request = cashier_pb2.CreateTransfersRequest(transfers=transfers, linked=draw(st.booleans()))
    elif method == "LookupTransfers":
        request = cashier_pb2.LookupTransfersRequest(transfer_ids=draw(st.lists(transfer_ids, max_size=4)))
    elif method == "OpenSeatSession":
        request = cashier_pb2.OpenSeatSessionRequest(
            session_id=draw(sessions), player_id=draw(players), table_id=draw(tables), seat_index=draw(seat_indexes),
            pool=draw(enums), buy_in_amount=draw(amounts),
            min_buy_in=draw(st.one_of(amounts, st.just(100))), max_buy_in=draw(st.one_of(amounts, st.just(1000))),
        )  # fmt: skip
    elif method == "SettleHand":
        results = [
            cashier_pb2.SeatResult(session_id=draw(sessions), net_amount=draw(amounts))
            for _ in range(draw(st.integers(0, 3)))
        ]
        request = cashier_pb2.SettleHandRequest(
            hand_id=draw(hands), table_id=draw(tables), pool=draw(enums), seat_results=results,
            rake=draw(st.one_of(st.just(0), amounts)), house_bank_amount=draw(st.one_of(st.just(0), amounts)),
        )  # fmt: skip
    elif method in ("CashOutSeatSession", "GetSeatSession"):
        message = getattr(cashier_pb2, f"{method}Request")
        request = message(session_id=draw(sessions))
    elif method == "ListOpenSeatSessions":
        request = cashier_pb2.ListOpenSeatSessionsRequest(table_id=draw(tables))
    elif method == "GetStatement":
        token = draw(
            st.one_of(st.just(""), texts, FORGED_TOKENS, st.binary(max_size=40).map(lambda b: b.hex()))
        )
        request = cashier_pb2.GetStatementRequest(
            player_id=draw(players), pool=draw(enums),
            page=common_pb2.PageRequest(page_size=draw(st.one_of(st.integers(0, 3), st.integers(-(2**31), 2**31 - 1))),
                                        page_token=token),
        )  # fmt: skip
    elif method == "AuditConservation":
        request = cashier_pb2.AuditConservationRequest()
    elif method == "RequestHouseFunding":
        request = cashier_pb2.RequestHouseFundingRequest(
            request_id=draw(st.one_of(transfer_ids, st.just("seed-pending"))), pool=draw(enums),
            account=draw(enums), amount=draw(amounts), reason=draw(references),
        )  # fmt: skip
    elif method == "DecideHouseFunding":
        # Mostly the seeded pending request (its approval moves chips once), else anything.
        request = cashier_pb2.DecideHouseFundingRequest(
            decision_id=draw(transfer_ids), request_id=draw(st.one_of(st.just("seed-pending"), transfer_ids)),
            approve=draw(st.booleans()), reason=draw(references),
        )  # fmt: skip
    elif method == "ListHouseFunding":
        request = cashier_pb2.ListHouseFundingRequest(
            state=draw(enums),
            page=common_pb2.PageRequest(page_size=draw(st.integers(-5, 200)), page_token=draw(texts)),
        )
    elif method == "GetHouseBalances":
        request = cashier_pb2.GetHouseBalancesRequest(pool=draw(enums))
    elif method == "GetPlayFigures":
        # Seconds around the last 31 days (and beyond either end), or no time at all.
        request = cashier_pb2.GetPlayFiguresRequest()
        if draw(st.booleans()):
            request.since.seconds = draw(st.integers(-(2**40), 2**40))
            request.since.nanos = draw(st.integers(0, 999_999_999))
    elif method == "ListWithdrawals":
        request = cashier_pb2.ListWithdrawalsRequest(
            pool=draw(enums),
            page=common_pb2.PageRequest(page_size=draw(st.integers(-5, 200)), page_token=draw(texts)),
        )
        if draw(st.booleans()):
            request.since.seconds = draw(st.integers(-(2**40), 2**40))
            request.since.nanos = draw(st.integers(0, 999_999_999))
    elif method == "SetPlayerHold":
        # A hold changes which later calls are refused (seats, withdrawals), never a balance.
        request = cashier_pb2.SetPlayerHoldRequest(
            request_id=draw(transfer_ids), player_id=draw(players), held=draw(st.booleans()),
            reason=draw(references), scope=draw(enums),
        )  # fmt: skip
    elif method == "SetSelfLimit":
        # A self-set limit or break changes which later purchases and seats are refused, never a balance.
        request = cashier_pb2.SetSelfLimitRequest(
            request_id=draw(transfer_ids), pool=draw(enums), kind=draw(st.one_of(st.integers(0, 6), enums)),
            amount=draw(amounts),
        )  # fmt: skip
    elif method == "SetSessionReminder":
        minutes = st.one_of(st.sampled_from([0, 14, 15, 720, 721]), st.integers(-(2**31), 2**31 - 1))
        request = cashier_pb2.SetSessionReminderRequest(request_id=draw(transfer_ids), minutes=draw(minutes))
    elif method == "StartBreak":
        days = st.one_of(
            st.sampled_from([0, 1, 42, 43, 182, 183, 3650, 3651]), st.integers(-(2**31), 2**31 - 1)
        )
        request = cashier_pb2.StartBreakRequest(
            request_id=draw(transfer_ids), kind=draw(enums), days=draw(days)
        )
    elif method == "GetSelfLimits":
        request = cashier_pb2.GetSelfLimitsRequest(player_id=draw(st.one_of(st.just(""), players)))
    else:
        raise AssertionError(f"no request strategy for {method}")
    return method, request, caller


def test_the_property_covers_every_rpc_of_the_service() -> None:
    described = {m.name for m in cashier_pb2.DESCRIPTOR.services_by_name["CashierService"].methods}
    assert set(USUAL_CALLER) == described


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def test_no_mix_of_requests_breaks_conservation_or_answers_internal(
    backend: str,
    request: pytest.FixtureRequest,
    loop: asyncio.AbstractEventLoop,
    migrated_cashier: Callable[..., Any],
    clock: Any,
) -> None:
    url = request.getfixturevalue("postgres_url" if backend == "postgres" else "sqlite_url")
    cashier: Cashier = loop.run_until_complete(migrated_cashier(url, clock))
    server: AbstractAsyncContextManager[Any] = running_server([cashier_service(cashier)], ACCESS)
    _, channel = loop.run_until_complete(server.__aenter__())
    stub = cashier_pb2_grpc.CashierServiceStub(channel)
    admin = CALLERS["admin"]

    async def seed_state() -> None:
        for player in ("alice", "bob"):
            for source, minor in ((1, 10**10), (2, 10**10)):
                await stub.Purchase(
                    cashier_pb2.PurchaseRequest(
                        payment_reference=f"seed-{player}-{source}", player_id=player, source=source,
                        amount_minor=minor,
                    ),
                    metadata=CALLERS["payments"],
                )  # fmt: skip
        await fund_by_two(
            stub, stub, request_id="seed-bank", pool=common_pb2.CHIP_POOL_GRAM, amount=100_000,
            reason="float for the property test", asker_metadata=CALLERS["finance-a"],
            approver_metadata=CALLERS["finance-b"],
        )  # fmt: skip
        await stub.RequestHouseFunding(
            cashier_pb2.RequestHouseFundingRequest(
                request_id="seed-pending", pool=common_pb2.CHIP_POOL_GRAM, account=cashier_pb2.HOUSE_ACCOUNT_BANK,
                amount=5_000, reason="waits for a second pair of eyes",
            ),
            metadata=CALLERS["finance-a"],
        )  # fmt: skip
        for index, player in enumerate(("alice", "bob")):
            await stub.OpenSeatSession(
                cashier_pb2.OpenSeatSessionRequest(
                    session_id=f"t1/{player}", player_id=player, table_id="t1", seat_index=index,
                    pool=common_pb2.CHIP_POOL_GRAM, buy_in_amount=1000, min_buy_in=100, max_buy_in=1000,
                ),
                metadata=CALLERS["table"],
            )  # fmt: skip

    async def run(batch: list[tuple[str, Any, str]]) -> None:
        for method, message, caller in batch:
            failure: grpc.aio.AioRpcError | None = None
            try:
                await asyncio.wait_for(getattr(stub, method)(message, metadata=CALLERS[caller]), timeout=10)
            except grpc.aio.AioRpcError as error:
                failure = error
            if failure is not None:
                code = failure.code()
                assert code not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), (method, message)
                assert reason_of(failure), (method, code)
        audit = await stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=admin)
        assert audit.balanced, audit

    @seed(20261130)
    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(batch=st.lists(calls(), min_size=1, max_size=8))
    def property_holds(batch: list[tuple[str, Any, str]]) -> None:
        loop.run_until_complete(run(batch))

    try:
        loop.run_until_complete(seed_state())
        property_holds()
    finally:
        loop.run_until_complete(server.__aexit__(None, None, None))
        loop.run_until_complete(cashier.engine.dispose())
