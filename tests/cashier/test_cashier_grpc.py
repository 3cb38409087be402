"""The cashier through a real gRPC server on port 0: roles, ownership, bad input (code + reason, and
nothing changed), and the seat-session flow the table service drives."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.testing import auth_metadata, reason_of, running_server
from services.cashier.application import Cashier
from services.cashier.assembly import ACCESS, cashier_service
from tests.cashier.conftest import FakeClock

pytestmark = pytest.mark.postgres

GRAM, MPX = common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX
SERVICE = auth_metadata("table", Role.SERVICE)
PAYMENTS = auth_metadata("payments", Role.SERVICE)
ADMIN = auth_metadata("operator", *STAFF_ROLES)
ALICE = auth_metadata("alice", Role.PLAYER)


@dataclass
class Client:
    stub: cashier_pb2_grpc.CashierServiceAsyncStub
    channel: grpc.aio.Channel


@pytest.fixture
async def client(cashier: Cashier) -> AsyncIterator[Client]:
    async with running_server([cashier_service(cashier)], ACCESS) as (_, channel):
        stub = cashier_pb2_grpc.CashierServiceStub(channel)
        for player, source, minor in (("alice", 1, 10**9), ("bob", 1, 10**9), ("bob", 2, 10**10)):
            await stub.Purchase(
                cashier_pb2.PurchaseRequest(
                    payment_reference=f"seed-{player}-{source}",
                    player_id=player,
                    source=source,
                    amount_minor=minor,
                ),
                metadata=PAYMENTS,
            )
        yield Client(stub, channel)


def transfer(**overrides: object) -> cashier_pb2.Transfer:
    fields: dict[str, object] = {
        "transfer_id": "t-1",
        "debit_account_id": "wallet:GRAM:alice",
        "credit_account_id": "wallet:GRAM:bob",
        "pool": GRAM,
        "amount": 10,
        "kind": cashier_pb2.TRANSFER_KIND_ADJUSTMENT,
    }
    fields.update(overrides)
    return cashier_pb2.Transfer(**fields)  # type: ignore[arg-type]


async def snapshot(client: Client) -> tuple[object, ...]:
    """Everything a bad request could have changed: both wallets and the audit figures."""
    audit = await client.stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    wallets = []
    for player in ("alice", "bob"):
        reply = await client.stub.GetBalances(
            cashier_pb2.GetBalancesRequest(player_id=player), metadata=SERVICE
        )
        wallets.append(tuple((w.pool, w.balance) for w in reply.wallets))
    figures = tuple((p.pool, p.minted, p.burned, p.accounts_total, p.journal_total) for p in audit.pools)
    return (*wallets, figures, audit.balanced)


BAD_REQUESTS = [
    ("zero amount", "CreateTransfers", cashier_pb2.CreateTransfersRequest(transfers=[transfer(amount=0)]), SERVICE,
     grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_INVALID"),
    ("negative amount", "CreateTransfers", cashier_pb2.CreateTransfersRequest(transfers=[transfer(amount=-5)]),
     SERVICE, grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_INVALID"),
    ("purchase worth over int64 chips", "Purchase",
     cashier_pb2.PurchaseRequest(payment_reference="p", player_id="alice", source=3, amount_minor=2**62), PAYMENTS,
     grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_INVALID"),
    ("negative purchase", "Purchase",
     cashier_pb2.PurchaseRequest(payment_reference="p", player_id="alice", source=1, amount_minor=-(2**63)), PAYMENTS,
     grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_INVALID"),
    ("not whole chips", "Purchase",
     cashier_pb2.PurchaseRequest(payment_reference="p", player_id="alice", source=1, amount_minor=1500), PAYMENTS,
     grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_NOT_WHOLE_CHIPS"),
    ("unknown account", "CreateTransfers",
     cashier_pb2.CreateTransfersRequest(transfers=[transfer(credit_account_id="wallet:GRAM:nobody")]), SERVICE,
     grpc.StatusCode.NOT_FOUND, "ACCOUNT_NOT_FOUND"),
    ("cross-pool transfer", "CreateTransfers",
     cashier_pb2.CreateTransfersRequest(transfers=[transfer(credit_account_id="wallet:MPX:bob")]), SERVICE,
     grpc.StatusCode.INVALID_ARGUMENT, "POOL_MISMATCH"),
    ("missing transfer id", "CreateTransfers", cashier_pb2.CreateTransfersRequest(transfers=[transfer(transfer_id="")]),
     SERVICE, grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED"),
    ("missing pool", "CreateTransfers", cashier_pb2.CreateTransfersRequest(transfers=[transfer(pool=0)]), SERVICE,
     grpc.StatusCode.INVALID_ARGUMENT, "POOL_INVALID"),
    ("missing payment reference", "Purchase",
     cashier_pb2.PurchaseRequest(player_id="alice", source=1, amount_minor=10**9), PAYMENTS,
     grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED"),
    ("player recording their own withdrawal", "Withdraw",
     cashier_pb2.WithdrawRequest(payment_reference="w", player_id="alice", source=1, amount_minor=10**9), ALICE,
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("table service recording a purchase", "Purchase",
     cashier_pb2.PurchaseRequest(payment_reference="p", player_id="alice", source=1, amount_minor=10**9), SERVICE,
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("admin recording a purchase", "Purchase",
     cashier_pb2.PurchaseRequest(payment_reference="p", player_id="alice", source=1, amount_minor=10**9), ADMIN,
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("payments service settling a hand", "SettleHand",
     cashier_pb2.SettleHandRequest(hand_id="h", table_id="t", pool=GRAM), PAYMENTS,
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("payments service moving chips between accounts", "CreateTransfers",
     cashier_pb2.CreateTransfersRequest(transfers=[transfer()]), PAYMENTS,
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("a service token naming no known service", "GetBalances",
     cashier_pb2.GetBalancesRequest(player_id="alice"), auth_metadata("table-shard-1", Role.SERVICE),
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("player reading another player's statement", "GetStatement", cashier_pb2.GetStatementRequest(player_id="bob"),
     ALICE, grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_RESOURCE"),
    ("player moving chips with a service RPC", "CreateTransfers",
     cashier_pb2.CreateTransfersRequest(transfers=[transfer(debit_account_id="wallet:GRAM:bob",
                                                            credit_account_id="wallet:GRAM:alice")]),
     ALICE, grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("player settling a hand", "SettleHand", cashier_pb2.SettleHandRequest(hand_id="h", table_id="t", pool=GRAM),
     ALICE, grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("player crediting themselves", "Purchase",
     cashier_pb2.PurchaseRequest(payment_reference="p", player_id="alice", source=1, amount_minor=10**9), ALICE,
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("player running the audit", "AuditConservation", cashier_pb2.AuditConservationRequest(), ALICE,
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("service running the audit", "AuditConservation", cashier_pb2.AuditConservationRequest(), SERVICE,
     grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"),
    ("no token", "GetBalances", cashier_pb2.GetBalancesRequest(), (), grpc.StatusCode.UNAUTHENTICATED,
     "TOKEN_MISSING"),
    ("unbalanced settlement", "SettleHand",
     cashier_pb2.SettleHandRequest(hand_id="h", table_id="t", pool=GRAM,
                                   seat_results=[cashier_pb2.SeatResult(session_id="s", net_amount=5)]),
     SERVICE, grpc.StatusCode.FAILED_PRECONDITION, "SETTLEMENT_UNBALANCED"),
    ("unknown seat session", "CashOutSeatSession", cashier_pb2.CashOutSeatSessionRequest(session_id="nope"), SERVICE,
     grpc.StatusCode.NOT_FOUND, "SEAT_SESSION_NOT_FOUND"),
    ("forged page token", "GetStatement", cashier_pb2.GetStatementRequest(page=common_pb2.PageRequest(page_token="x")),
     ALICE, grpc.StatusCode.INVALID_ARGUMENT, "PAGE_TOKEN_INVALID"),
    ("withdrawal beyond the balance", "Withdraw",
     cashier_pb2.WithdrawRequest(payment_reference="w-big", player_id="alice", source=1, amount_minor=5 * 10**9),
     PAYMENTS,
     grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "request_message", "metadata", "code", "reason"),
    [case[1:] for case in BAD_REQUESTS],
    ids=[case[0] for case in BAD_REQUESTS],
)
async def test_bad_requests_get_their_code_and_reason_and_change_nothing(
    client: Client,
    method: str,
    request_message: object,
    metadata: tuple[tuple[str, str], ...],
    code: grpc.StatusCode,
    reason: str,
) -> None:
    before = await snapshot(client)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await getattr(client.stub, method)(request_message, metadata=metadata)
    assert caught.value.code() == code
    assert reason_of(caught.value) == reason
    assert await snapshot(client) == before


async def test_an_amount_beyond_int64_on_the_wire_arrives_negative_and_is_refused(client: Client) -> None:
    # A varint of 2^64 - 1 in the int64 `amount` field decodes as -1: it cannot sneak past as a large amount.
    raw = transfer(amount=1).SerializeToString()
    assert raw.count(b"\x28\x01") == 1  # field 5 (amount), varint 1
    raw = raw.replace(b"\x28\x01", b"\x28" + b"\xff" * 9 + b"\x01")
    request = b"\x0a" + bytes([len(raw)]) + raw
    before = await snapshot(client)
    call = client.channel.unary_unary(
        "/poker.cashier.v1.CashierService/CreateTransfers",
        request_serializer=lambda payload: payload,
        response_deserializer=cashier_pb2.CreateTransfersResponse.FromString,
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(request, metadata=SERVICE)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason_of(caught.value) == "AMOUNT_INVALID"
    assert await snapshot(client) == before


async def test_a_player_sees_their_chips_and_the_payments_gateway_withdraws_them(client: Client) -> None:
    reply = await client.stub.GetBalances(cashier_pb2.GetBalancesRequest(), metadata=ALICE)
    assert reply.player_id == "alice"
    assert [(w.pool, w.balance) for w in reply.wallets] == [(GRAM, 1000), (MPX, 0)]
    out = await client.stub.Withdraw(
        cashier_pb2.WithdrawRequest(
            payment_reference="w-1", player_id="alice", source=1, amount_minor=10**8 * 10
        ),
        metadata=PAYMENTS,
    )
    assert (out.transfer.amount, out.transfer.debit_account_id) == (1000, "wallet:GRAM:alice")


async def test_batch_results_report_created_exists_different_field_and_failed(client: Client) -> None:
    batch = [transfer(transfer_id="b-1"), transfer(transfer_id="b-2", amount=5000)]
    first = await client.stub.CreateTransfers(
        cashier_pb2.CreateTransfersRequest(transfers=batch), metadata=SERVICE
    )
    assert [(r.status, r.reason) for r in first.results] == [
        (cashier_pb2.TRANSFER_STATUS_CREATED, ""),
        (cashier_pb2.TRANSFER_STATUS_FAILED, "INSUFFICIENT_FUNDS"),
    ]
    again = await client.stub.CreateTransfers(
        cashier_pb2.CreateTransfersRequest(transfers=batch),
        metadata=SERVICE,
    )
    assert [r.status for r in again.results] == [
        cashier_pb2.TRANSFER_STATUS_EXISTS,
        cashier_pb2.TRANSFER_STATUS_FAILED,
    ]
    assert again.results[0].transfer.create_time == first.results[0].transfer.create_time
    conflict = await client.stub.CreateTransfers(
        cashier_pb2.CreateTransfersRequest(transfers=[transfer(transfer_id="b-1", amount=11)]),
        metadata=SERVICE,
    )
    assert (conflict.results[0].status, conflict.results[0].field) == (
        cashier_pb2.TRANSFER_STATUS_EXISTS_WITH_DIFFERENT_FIELD,
        "amount",
    )
    looked_up = await client.stub.LookupTransfers(
        cashier_pb2.LookupTransfersRequest(transfer_ids=["b-1", "b-2", "b-3"]), metadata=SERVICE
    )
    assert [(r.transfer_id, r.status) for r in looked_up.results] == [
        ("b-1", cashier_pb2.TRANSFER_STATUS_EXISTS),
        ("b-2", cashier_pb2.TRANSFER_STATUS_FAILED),
    ]


async def test_the_table_flow_buy_in_settle_list_and_cash_out(client: Client) -> None:
    stub = client.stub
    sessions = []
    for seat, player in enumerate(("alice", "bob")):
        opened = await stub.OpenSeatSession(
            cashier_pb2.OpenSeatSessionRequest(
                session_id=f"table-7/sit-{player}", player_id=player, table_id="table-7", seat_index=seat,
                pool=GRAM, buy_in_amount=1000, min_buy_in=1000, max_buy_in=1000,
            ),
            metadata=SERVICE,
        )  # fmt: skip
        sessions.append(opened.seat_session.session_id)
    settle = cashier_pb2.SettleHandRequest(
        hand_id="table-7:hand-1", table_id="table-7", pool=GRAM, rake=10,
        seat_results=[cashier_pb2.SeatResult(session_id=sessions[0], net_amount=-300),
                      cashier_pb2.SeatResult(session_id=sessions[1], net_amount=290)],
    )  # fmt: skip
    settled = await stub.SettleHand(settle, metadata=SERVICE)
    retried = await stub.SettleHand(settle, metadata=SERVICE)
    assert (settled.existing, retried.existing) == (False, True)
    assert [t.transfer_id for t in settled.settlement.transfers] == [
        "hand:table-7:hand-1:0",
        "hand:table-7:hand-1:1",
    ]
    listed = await stub.ListOpenSeatSessions(
        cashier_pb2.ListOpenSeatSessionsRequest(table_id="table-7"), metadata=SERVICE
    )
    assert [(s.player_id, s.stack) for s in listed.seat_sessions] == [("alice", 700), ("bob", 1290)]
    closed = await stub.CashOutSeatSession(
        cashier_pb2.CashOutSeatSessionRequest(session_id=sessions[0]), metadata=SERVICE
    )
    assert (closed.seat_session.state, closed.seat_session.cash_out_amount) == (
        cashier_pb2.SEAT_SESSION_STATE_CLOSED,
        700,
    )
    statement = await stub.GetStatement(cashier_pb2.GetStatementRequest(), metadata=ALICE)
    assert [(e.kind, e.amount, e.reference) for e in statement.entries][:4] == [
        (cashier_pb2.TRANSFER_KIND_CASH_OUT, 700, sessions[0]),
        (cashier_pb2.TRANSFER_KIND_CASH_OUT, -700, sessions[0]),
        (cashier_pb2.TRANSFER_KIND_RAKE, -10, "table-7:hand-1"),
        (cashier_pb2.TRANSFER_KIND_HAND_RESULT, -290, "table-7:hand-1"),
    ]
    audit = await stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    assert audit.balanced
    assert [(p.minted, p.accounts_total) for p in audit.pools] == [(2000, 2000), (100, 100)]


async def test_play_figures_count_the_hands_settled_and_the_rake_per_pool_in_a_window(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    """Issue 38's dashboard: the last hour's hands and the day's rake, per pool, aggregates only, on
    both backends."""
    async with running_server([cashier_service(any_cashier)], ACCESS) as (_, channel):
        await _play_figures(cashier_pb2_grpc.CashierServiceStub(channel), clock)


async def test_the_payouts_list_shows_each_withdrawal_applied_newest_first_by_pool_and_window(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    """Issue 38's payouts screen (finance): every withdrawal applied, player by player, newest first,
    of one pool or both and since a moment, in pages whose tokens belong to their filter; refusals
    are not payouts; only finance reads it; on both backends."""
    from datetime import timedelta

    from google.protobuf.timestamp_pb2 import Timestamp

    async with running_server([cashier_service(any_cashier)], ACCESS) as (_, channel):
        stub = cashier_pb2_grpc.CashierServiceStub(channel)
        payments = auth_metadata("payments", Role.SERVICE)
        finance = auth_metadata("fiona", "finance")
        gram, mpx = 1, 2  # PaymentSource
        for player in ("ann", "ben"):
            for source, minor in ((gram, 10**9), (mpx, 10**11)):  # 1,000 chips each
                await stub.Purchase(
                    cashier_pb2.PurchaseRequest(
                        payment_reference=f"in-{player}-{source}",
                        player_id=player,
                        source=source,
                        amount_minor=minor,
                    ),
                    metadata=payments,
                )
        start = clock.now
        made = []
        for n, (player, source, chips) in enumerate(
            [("ann", gram, 10), ("ben", mpx, 20), ("ann", mpx, 30), ("ben", gram, 40), ("ann", gram, 50)]
        ):
            clock.advance(timedelta(minutes=10))
            per_chip = 10**6 if source == gram else 10**8
            await stub.Withdraw(
                cashier_pb2.WithdrawRequest(
                    payment_reference=f"out-{n}",
                    player_id=player,
                    source=source,
                    amount_minor=chips * per_chip,
                ),
                metadata=payments,
            )
            made.append((f"out-{n}", player, GRAM if source == gram else MPX, chips))
        with pytest.raises(grpc.aio.AioRpcError):  # refused on funds: recorded, not a payout
            await stub.Withdraw(
                cashier_pb2.WithdrawRequest(
                    payment_reference="out-no", player_id="ann", source=gram, amount_minor=10**15
                ),
                metadata=payments,
            )

        async def listed(**fields: object) -> list[tuple[str, str, int, int]]:
            rows, token = [], ""
            while True:
                reply = await stub.ListWithdrawals(
                    cashier_pb2.ListWithdrawalsRequest(
                        page=common_pb2.PageRequest(page_size=2, page_token=token), **fields
                    ),  # type: ignore[arg-type]
                    metadata=finance,
                )
                rows += [(w.payment_reference, w.player_id, w.pool, w.amount) for w in reply.withdrawals]
                token = reply.page.next_page_token
                if not token:
                    return rows

        newest_first = list(reversed(made))
        assert await listed() == newest_first
        assert await listed(pool=GRAM) == [m for m in newest_first if m[2] == GRAM]
        since = Timestamp()
        since.FromDatetime(start + timedelta(minutes=25))
        assert await listed(since=since) == newest_first[:3]
        one = (
            await stub.ListWithdrawals(cashier_pb2.ListWithdrawalsRequest(), metadata=finance)
        ).withdrawals[0]
        assert (one.transfer_id, one.source, one.create_time.ToDatetime()) == (
            "withdrawal:GRAM:out-4",
            gram,
            (start + timedelta(minutes=50)).replace(tzinfo=None),
        )
        # A token is its filter's: continuing another list with it is refused, as is a made-up one.
        first = await stub.ListWithdrawals(
            cashier_pb2.ListWithdrawalsRequest(page=common_pb2.PageRequest(page_size=2)), metadata=finance
        )
        future = Timestamp()
        future.FromDatetime(clock.now + timedelta(minutes=1))
        for bad in (
            cashier_pb2.ListWithdrawalsRequest(
                pool=GRAM, page=common_pb2.PageRequest(page_token=first.page.next_page_token)
            ),
            cashier_pb2.ListWithdrawalsRequest(page=common_pb2.PageRequest(page_token="ALL-ever.abc")),
            cashier_pb2.ListWithdrawalsRequest(page=common_pb2.PageRequest(page_size=101)),
            cashier_pb2.ListWithdrawalsRequest(pool=7),  # type: ignore[arg-type]
            cashier_pb2.ListWithdrawalsRequest(since=future),
            cashier_pb2.ListWithdrawalsRequest(since=Timestamp(seconds=2**40)),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.ListWithdrawals(bad, metadata=finance)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, bad
            assert reason_of(refused.value) in ("FIELD_INVALID", "PAGE_TOKEN_INVALID", "POOL_INVALID"), bad
        for metadata in (auth_metadata("sofia", "support"), auth_metadata("ann", "player"), SERVICE):
            with pytest.raises(grpc.aio.AioRpcError) as denied:
                await stub.ListWithdrawals(cashier_pb2.ListWithdrawalsRequest(), metadata=metadata)
            assert reason_of(denied.value) == "ROLE_REQUIRED"


async def _play_figures(stub: cashier_pb2_grpc.CashierServiceStub, clock: FakeClock) -> None:
    from datetime import timedelta

    from google.protobuf.timestamp_pb2 import Timestamp

    for player in ("alice", "bob"):
        await stub.Purchase(
            cashier_pb2.PurchaseRequest(
                payment_reference=f"fig-{player}", player_id=player, source=1, amount_minor=10**9
            ),
            metadata=auth_metadata("payments", Role.SERVICE),
        )
    sessions = []
    for seat, player in enumerate(("alice", "bob")):
        opened = await stub.OpenSeatSession(
            cashier_pb2.OpenSeatSessionRequest(
                session_id=f"fig/sit-{player}", player_id=player, table_id="fig", seat_index=seat,
                pool=GRAM, buy_in_amount=1000, min_buy_in=1000, max_buy_in=1000,
            ),
            metadata=SERVICE,
        )  # fmt: skip
        sessions.append(opened.seat_session.session_id)

    async def settle(number: int, rake: int) -> None:
        await stub.SettleHand(
            cashier_pb2.SettleHandRequest(
                hand_id=f"fig:{number}", table_id="fig", pool=GRAM, rake=rake,
                seat_results=[cashier_pb2.SeatResult(session_id=sessions[0], net_amount=-20 - rake),
                              cashier_pb2.SeatResult(session_id=sessions[1], net_amount=20)],
            ),
            metadata=SERVICE,
        )  # fmt: skip

    def since(hours: float) -> cashier_pb2.GetPlayFiguresRequest:
        moment = Timestamp()
        moment.FromDatetime(clock.now - timedelta(hours=hours))
        return cashier_pb2.GetPlayFiguresRequest(since=moment)

    await settle(1, 10)
    await settle(2, 5)
    clock.advance(timedelta(hours=2))
    await settle(3, 7)
    await stub.SettleHand(
        cashier_pb2.SettleHandRequest(
            hand_id="fig:3",
            table_id="fig",
            pool=GRAM,
            rake=7,
            seat_results=[
                cashier_pb2.SeatResult(session_id=sessions[0], net_amount=-27),
                cashier_pb2.SeatResult(session_id=sessions[1], net_amount=20),
            ],
        ),
        metadata=SERVICE,
    )  # fmt: skip  (a retry counts once)
    # A payout now, and a refused one (more than the wallet holds: recorded, no payout).
    payments = auth_metadata("payments", Role.SERVICE)
    await stub.Purchase(
        cashier_pb2.PurchaseRequest(
            payment_reference="fig-cyd", player_id="cyd", source=1, amount_minor=10**9
        ),
        metadata=payments,
    )
    await stub.Withdraw(
        cashier_pb2.WithdrawRequest(
            payment_reference="fig-out", player_id="cyd", source=1, amount_minor=100 * 10**6
        ),
        metadata=payments,
    )
    with pytest.raises(grpc.aio.AioRpcError):
        await stub.Withdraw(
            cashier_pb2.WithdrawRequest(
                payment_reference="fig-no", player_id="bob", source=1, amount_minor=10**15
            ),
            metadata=payments,
        )
    support = auth_metadata("sofia", "support")

    def seen(reply: cashier_pb2.GetPlayFiguresResponse) -> set[tuple[int, ...]]:
        return {
            (
                p.pool,
                p.hands_settled,
                p.rake,
                p.purchases,
                p.chips_purchased,
                p.withdrawals,
                p.chips_withdrawn,
            )
            for p in reply.pools
        }

    hour = await stub.GetPlayFigures(since(1), metadata=support)
    assert seen(hour) == {(GRAM, 1, 7, 1, 1000, 1, 100), (MPX, 0, 0, 0, 0, 0, 0)}
    day = await stub.GetPlayFigures(since(24), metadata=support)
    assert seen(day) == {(GRAM, 3, 22, 3, 3000, 1, 100), (MPX, 0, 0, 0, 0, 0, 0)}
    for request in (cashier_pb2.GetPlayFiguresRequest(), since(-1), since(24 * 32)):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.GetPlayFigures(request, metadata=support)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert reason_of(refused.value) in ("FIELD_REQUIRED", "FIELD_INVALID")
    for metadata in (auth_metadata("alice", "player"), SERVICE):
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await stub.GetPlayFigures(since(1), metadata=metadata)
        assert reason_of(denied.value) == "ROLE_REQUIRED"
