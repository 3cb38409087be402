"""Operator holds (rules 17) end to end against a real cashier server on port 0: an admin holds a
player through history's HoldPlayer; the cashier then opens no seat for them and pays out nothing,
while the seat they already had plays and cashes out as usual; ReleasePlayer lifts it and the same
withdrawal goes through. Every change is idempotent by request id, audited, admin-only, and moves
no chip (the cashier's conservation audit balances throughout)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import STAFF_ROLES
from service_runtime.clients import create_channel
from service_runtime.database import create_engine, create_session_factory
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.testing import DEV_KEYS, auth_metadata, reason_of, running_server
from services.cashier.application import Cashier
from services.cashier.assembly import ACCESS as CASHIER_ACCESS
from services.cashier.assembly import cashier_service
from services.cashier.assembly import migrate as migrate_cashier
from services.history.application import HistoryApplication
from services.history.assembly import ACCESS, history_service
from services.history.cashier_holds import CashierHolds
from services.history.cashier_statements import CashierStatements
from services.history.page_tokens import PageTokens
from tests.history.test_history_balance_changes import expect_error

TABLE = auth_metadata("table", "service")
PAYMENTS = auth_metadata("payments", "service")
ADMIN = auth_metadata("ops", *STAFF_ROLES)
HISTORY = auth_metadata("history", "service")
FINANCE = auth_metadata("fiona", "finance")
CHIP = 10**6  # nanoGRAM per GRAM-pool chip


def seat_request(session_id: str, player: str, table: str, seat: int) -> cashier_pb2.OpenSeatSessionRequest:
    return cashier_pb2.OpenSeatSessionRequest(
        session_id=session_id,
        player_id=player,
        table_id=table,
        seat_index=seat,
        pool=common_pb2.CHIP_POOL_GRAM,
        buy_in_amount=1000,
        min_buy_in=100,
        max_buy_in=5000,
    )


def withdrawal(reference: str, player: str, chips: int) -> cashier_pb2.WithdrawRequest:
    return cashier_pb2.WithdrawRequest(
        payment_reference=reference,
        player_id=player,
        source=cashier_pb2.PAYMENT_SOURCE_GRAM,
        amount_minor=chips * CHIP,
    )


async def balanced(cashier: cashier_pb2_grpc.CashierServiceStub) -> bool:
    audit = await cashier.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    return all(pool.balanced for pool in audit.pools)


async def test_a_held_player_gets_no_new_seat_and_no_payout_until_released(
    history_database_url: str, tmp_path: Path
) -> None:
    cashier_url = f"sqlite+aiosqlite:///{(tmp_path / 'cashier.db').as_posix()}"
    migrate_cashier(cashier_url)
    cashier_engine = create_engine(cashier_url)
    history_engine = create_engine(history_database_url, pool_size=5)
    name = f"hold{uuid.uuid4().hex[:6]}"
    dumper, receiver, table = f"{name}-dumper", f"{name}-receiver", f"{name}-table"
    try:
        async with running_server([cashier_service(Cashier(cashier_engine))], CASHIER_ACCESS) as (
            cashier_server,
            cashier_channel,
        ):
            cashier = cashier_pb2_grpc.CashierServiceStub(cashier_channel)
            for player in (dumper, receiver):
                await cashier.Purchase(
                    cashier_pb2.PurchaseRequest(
                        payment_reference=f"pay-{player}",
                        player_id=player,
                        source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                        amount_minor=5_000 * CHIP,
                    ),
                    metadata=PAYMENTS,
                )
            # The receiver is seated already when the hold comes.
            await cashier.OpenSeatSession(seat_request(f"{table}/r1", receiver, table, 1), metadata=TABLE)
            to_cashier = create_channel(
                f"127.0.0.1:{cashier_server.port}",
                timeout_seconds=2,
                token=ServiceTokenSource(DEV_KEYS, "history"),
            )
            application = HistoryApplication(
                create_session_factory(history_engine),
                PageTokens(b"k" * 32),
                CashierStatements(to_cashier),
                holds=CashierHolds(to_cashier),
            )
            async with running_server([history_service(application)], ACCESS) as (_, channel):
                history = history_pb2_grpc.HistoryServiceStub(channel)
                hold = history_pb2.HoldPlayerRequest(
                    request_id=f"{name}-h1", player_id=receiver, reason="case review"
                )
                held = await history.HoldPlayer(hold, metadata=ADMIN)
                assert (held.hold.held, held.existing) == (True, False)
                again = await history.HoldPlayer(hold, metadata=ADMIN)
                assert (again.hold, again.existing) == (held.hold, True)

                # No new seat; no payout, and nothing was debited.
                await expect_error(
                    cashier.OpenSeatSession(seat_request(f"{table}/r2", receiver, table, 2), metadata=TABLE),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "PLAYER_ON_HOLD",
                )
                await expect_error(
                    cashier.Withdraw(withdrawal(f"{name}-w1", receiver, 1000), metadata=PAYMENTS),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "WITHDRAWAL_HELD_FOR_REVIEW",
                )
                # The open seat plays on and cashes out as usual.
                closed = await cashier.CashOutSeatSession(
                    cashier_pb2.CashOutSeatSessionRequest(session_id=f"{table}/r1"), metadata=TABLE
                )
                assert closed.seat_session.cash_out_amount == 1000
                await expect_error(
                    cashier.OpenSeatSession(seat_request(f"{table}/r3", receiver, table, 1), metadata=TABLE),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "PLAYER_ON_HOLD",
                )
                # Others are not affected.
                await cashier.OpenSeatSession(seat_request(f"{table}/d1", dumper, table, 3), metadata=TABLE)
                balances = await cashier.GetBalances(
                    cashier_pb2.GetBalancesRequest(player_id=receiver), metadata=ADMIN
                )
                assert [w.balance for w in balances.wallets if w.pool == common_pb2.CHIP_POOL_GRAM] == [5000]
                assert await balanced(cashier)

                # Holding a held player again, or reusing an id for something else, changes nothing.
                await expect_error(
                    history.HoldPlayer(
                        history_pb2.HoldPlayerRequest(
                            request_id=f"{name}-h2", player_id=receiver, reason="again"
                        ),
                        metadata=ADMIN,
                    ),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "PLAYER_ALREADY_ON_HOLD",
                )
                await expect_error(
                    history.ReleasePlayer(
                        history_pb2.ReleasePlayerRequest(
                            request_id=f"{name}-h1", player_id=receiver, reason="x"
                        ),
                        metadata=ADMIN,
                    ),
                    grpc.StatusCode.ALREADY_EXISTS,
                    "IDEMPOTENCY_CONFLICT",
                )
                await expect_error(
                    history.ReleasePlayer(
                        history_pb2.ReleasePlayerRequest(
                            request_id=f"{name}-r0", player_id=dumper, reason="x"
                        ),
                        metadata=ADMIN,
                    ),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "PLAYER_NOT_ON_HOLD",
                )
                await expect_error(
                    history.HoldPlayer(
                        history_pb2.HoldPlayerRequest(
                            request_id=f"{name}-h3", player_id=dumper, reason="x", case_id="no-such-case"
                        ),
                        metadata=ADMIN,
                    ),
                    grpc.StatusCode.NOT_FOUND,
                    "CASE_NOT_FOUND",
                )
                await expect_error(
                    history.HoldPlayer(
                        history_pb2.HoldPlayerRequest(request_id=f"{name}-h4", player_id=dumper),
                        metadata=ADMIN,
                    ),
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "FIELD_REQUIRED",
                )

                # Least privilege: players and services cannot hold anyone; only history sets holds.
                for metadata in (auth_metadata(dumper, "player"), TABLE):
                    await expect_error(
                        history.HoldPlayer(
                            history_pb2.HoldPlayerRequest(
                                request_id=f"{name}-h5", player_id=dumper, reason="x"
                            ),
                            metadata=metadata,
                        ),
                        grpc.StatusCode.PERMISSION_DENIED,
                        "ROLE_REQUIRED",
                    )
                for metadata in (TABLE, ADMIN, PAYMENTS):
                    await expect_error(
                        cashier.SetPlayerHold(
                            cashier_pb2.SetPlayerHoldRequest(
                                request_id=f"{name}-h6", player_id=dumper, held=True, reason="x"
                            ),
                            metadata=metadata,
                        ),
                        grpc.StatusCode.PERMISSION_DENIED,
                        "ROLE_REQUIRED",
                    )

                # Four-eyes (issue 38): the release waits for another member of finance.
                asked = await history.ReleasePlayer(
                    history_pb2.ReleasePlayerRequest(
                        request_id=f"{name}-r1", player_id=receiver, reason="cleared"
                    ),
                    metadata=ADMIN,
                )
                assert (asked.release.state, asked.release.asked_by, asked.existing) == (
                    history_pb2.RELEASE_REQUEST_STATE_PENDING,
                    "ops",
                    False,
                )
                await expect_error(
                    cashier.Withdraw(withdrawal(f"{name}-w1", receiver, 1000), metadata=PAYMENTS),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "WITHDRAWAL_HELD_FOR_REVIEW",
                )
                own = history_pb2.DecideReleaseRequest(
                    decision_id=f"{name}-d1", request_id=f"{name}-r1", approve=True, reason="mine"
                )
                for same in (ADMIN, auth_metadata("OPS", "finance")):
                    await expect_error(
                        history.DecideRelease(own, metadata=same),
                        grpc.StatusCode.PERMISSION_DENIED,
                        "FOUR_EYES_REQUIRED",
                    )
                await expect_error(
                    history.DecideRelease(own, metadata=auth_metadata("rita", "risk")),
                    grpc.StatusCode.PERMISSION_DENIED,
                    "ROLE_REQUIRED",
                )
                approve = history_pb2.DecideReleaseRequest(
                    decision_id=f"{name}-d2", request_id=f"{name}-r1", approve=True, reason="checked"
                )
                released = await history.DecideRelease(approve, metadata=FINANCE)
                assert (released.release.state, released.release.decided_by) == (
                    history_pb2.RELEASE_REQUEST_STATE_APPROVED,
                    "fiona",
                )
                again = await history.DecideRelease(approve, metadata=FINANCE)
                assert again.existing
                assert again.release.state == history_pb2.RELEASE_REQUEST_STATE_APPROVED
                await expect_error(
                    history.DecideRelease(
                        history_pb2.DecideReleaseRequest(
                            decision_id=f"{name}-d3", request_id=f"{name}-r1", approve=False, reason="late"
                        ),
                        metadata=FINANCE,
                    ),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "RELEASE_ALREADY_DECIDED",
                )
                # The same payout goes through now, and a new seat opens.
                paid = await cashier.Withdraw(withdrawal(f"{name}-w1", receiver, 1000), metadata=PAYMENTS)
                assert paid.transfer.amount == 1000
                await cashier.OpenSeatSession(seat_request(f"{table}/r4", receiver, table, 1), metadata=TABLE)
                assert await balanced(cashier)

                events = await history.ListAuditEvents(history_pb2.ListAuditEventsRequest(), metadata=ADMIN)
                mine = [
                    (e.kind, e.actor, e.subject)
                    for e in events.events
                    if e.event_id.startswith(f"hold:{name}")
                ]
                assert sorted(mine) == [
                    ("PLAYER_HELD", "ops", receiver),
                    ("PLAYER_RELEASED", "ops", receiver),
                ]

                # A release is bound to the hold it was asked about (found by a tester: an old
                # request, approved after the player was held again, lifted the new hold).
                async def hold(request_id: str) -> None:
                    await history.HoldPlayer(
                        history_pb2.HoldPlayerRequest(
                            request_id=request_id, player_id=receiver, reason="again"
                        ),
                        metadata=ADMIN,
                    )

                async def ask(request_id: str) -> None:
                    await history.ReleasePlayer(
                        history_pb2.ReleasePlayerRequest(
                            request_id=request_id, player_id=receiver, reason="ok"
                        ),
                        metadata=ADMIN,
                    )

                def decide(decision_id: str, request_id: str) -> history_pb2.DecideReleaseRequest:
                    return history_pb2.DecideReleaseRequest(
                        decision_id=decision_id, request_id=request_id, approve=True, reason="ok"
                    )

                await hold(f"{name}-h7")
                await ask(f"{name}-ra")
                await ask(f"{name}-rb")
                await history.DecideRelease(decide(f"{name}-da", f"{name}-ra"), metadata=FINANCE)
                await hold(f"{name}-h8")
                for request_id in (f"{name}-rb", f"{name}-ra"):
                    refused = history.DecideRelease(
                        decide(f"{name}-db-{request_id}", request_id), metadata=FINANCE
                    )
                    reason = "RELEASE_OUTDATED" if request_id.endswith("rb") else "RELEASE_ALREADY_DECIDED"
                    await expect_error(refused, grpc.StatusCode.FAILED_PRECONDITION, reason)
                await expect_error(
                    cashier.Withdraw(withdrawal(f"{name}-w9", receiver, 10), metadata=PAYMENTS),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "WITHDRAWAL_HELD_FOR_REVIEW",
                )
                # Two requests about one hold approved at the same moment: one releases it, the other
                # is outdated (never both, and never one stuck approved with nothing to lift).
                await ask(f"{name}-rc")
                await ask(f"{name}-rd")
                answers = await asyncio.gather(
                    history.DecideRelease(decide(f"{name}-dc", f"{name}-rc"), metadata=FINANCE),
                    history.DecideRelease(
                        decide(f"{name}-dd", f"{name}-rd"), metadata=auth_metadata("fedor", "finance")
                    ),
                    return_exceptions=True,
                )
                outcomes = sorted(
                    reason_of(a) if isinstance(a, grpc.aio.AioRpcError) else "OK" for a in answers
                )
                assert outcomes == ["OK", "RELEASE_OUTDATED"], answers
                paid = await cashier.Withdraw(withdrawal(f"{name}-w10", receiver, 10), metadata=PAYMENTS)
                assert paid.transfer.amount == 10
                await hold(f"{name}-h9")
                # A decision id is its decider's: another member of finance cannot take it over.
                await expect_error(
                    history.DecideRelease(
                        decide(f"{name}-da", f"{name}-ra"), metadata=auth_metadata("fedor", "finance")
                    ),
                    grpc.StatusCode.ALREADY_EXISTS,
                    "IDEMPOTENCY_CONFLICT",
                )
                assert await balanced(cashier)
            await to_cashier.close()
    finally:
        await cashier_engine.dispose()
        await history_engine.dispose()
