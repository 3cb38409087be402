"""ListBalanceChanges against a real cashier server on port 0: the history server reads the caller's
statement with its own service token (subject `history`, CashierService/GetStatement), pages it
with its own signed tokens, shows only the caller's accounts, and says UNAVAILABLE when the cashier
is down. The chips come from a real hand played through the engine and settled by the cashier."""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand
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
from services.history.cashier_statements import CashierStatements
from services.history.page_tokens import PageTokens
from tests.history.engine_hands import play_randomly

CASHIER_TABLE_SERVICE = auth_metadata("table", "service")
CASHIER_PAYMENTS_SERVICE = auth_metadata("payments", "service")


async def expect_error(call: Awaitable[object], code: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    assert (error.value.code(), reason_of(error.value)) == (code, reason)


async def play_and_settle(
    cashier: cashier_pb2_grpc.CashierServiceStub, players: list[str], table: str
) -> None:
    """Fund, buy in, play one raked hand through the engine, settle it, cash out."""
    for player in players:
        await cashier.Purchase(
            cashier_pb2.PurchaseRequest(
                payment_reference=f"pay-{player}",
                player_id=player,
                source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                amount_minor=5_000 * 10**6,
            ),
            metadata=CASHIER_PAYMENTS_SERVICE,
        )
        await cashier.OpenSeatSession(
            cashier_pb2.OpenSeatSessionRequest(
                session_id=f"{table}/{player}",
                player_id=player,
                table_id=table,
                seat_index=players.index(player),
                pool=common_pb2.CHIP_POOL_GRAM,
                buy_in_amount=1000,
                min_buy_in=100,
                max_buy_in=5000,
            ),
            metadata=CASHIER_TABLE_SERVICE,
        )
    rng = random.Random(8)
    while True:
        deck = list(range(52))
        rng.shuffle(deck)
        hand = Hand(
            HandConfig(
                variant=Variant.NO_LIMIT,
                seats=tuple(SeatConfig(i, p, 1000) for i, p in enumerate(players)),
                button=0,
                small_blind=5,
                big_blind=10,
                deck=tuple(deck),
                rake=RakeRule(500, 30),
            )
        )
        play_randomly(hand, rng)
        result = hand.result
        assert result is not None
        if result.rake:
            break
    await cashier.SettleHand(
        cashier_pb2.SettleHandRequest(
            hand_id=f"hand-{uuid.uuid4().hex}",
            table_id=table,
            pool=common_pb2.CHIP_POOL_GRAM,
            seat_results=[
                cashier_pb2.SeatResult(session_id=f"{table}/{r.player_id}", net_amount=r.net)
                for r in result.results
            ],
            rake=result.rake,
        ),
        metadata=CASHIER_TABLE_SERVICE,
    )
    for player in players:
        await cashier.CashOutSeatSession(
            cashier_pb2.CashOutSeatSessionRequest(session_id=f"{table}/{player}"),
            metadata=CASHIER_TABLE_SERVICE,
        )


async def test_balance_changes_come_from_the_cashier_statement_paged_and_scoped_to_the_caller(
    history_database_url: str, tmp_path: Path
) -> None:
    cashier_url = f"sqlite+aiosqlite:///{(tmp_path / 'cashier.db').as_posix()}"
    migrate_cashier(cashier_url)
    cashier_engine = create_engine(cashier_url)
    history_engine = create_engine(history_database_url, pool_size=5)
    prefix = f"bal{uuid.uuid4().hex[:6]}"
    alice, bob = f"{prefix}-alice", f"{prefix}-bob"
    try:
        async with running_server([cashier_service(Cashier(cashier_engine))], CASHIER_ACCESS) as (
            cashier_server,
            cashier_channel,
        ):
            await play_and_settle(
                cashier_pb2_grpc.CashierServiceStub(cashier_channel), [alice, bob], f"{prefix}-t"
            )
            to_cashier = create_channel(
                f"127.0.0.1:{cashier_server.port}",
                timeout_seconds=2,
                token=ServiceTokenSource(DEV_KEYS, "history"),
            )
            application = HistoryApplication(
                create_session_factory(history_engine), PageTokens(b"k" * 32), CashierStatements(to_cashier)
            )
            async with running_server([history_service(application)], ACCESS) as (_, channel):
                stub = history_pb2_grpc.HistoryServiceStub(channel)
                as_alice = auth_metadata(alice, "player")
                whole = await stub.ListBalanceChanges(
                    history_pb2.ListBalanceChangesRequest(
                        pool=common_pb2.CHIP_POOL_GRAM, page=common_pb2.PageRequest(page_size=500)
                    ),
                    metadata=as_alice,
                )
                changes = list(whole.changes)
                assert {c.reason for c in changes} >= {"PURCHASE", "BUY_IN", "HAND_RESULT", "CASH_OUT"}
                assert all(
                    c.account_id in (f"wallet:GRAM:{alice}", f"seat:{prefix}-t/{alice}") for c in changes
                )
                wallet = [c for c in changes if c.account_id.startswith("wallet:")]
                assert wallet[0].balance_after == sum(c.change.amount for c in wallet)  # newest first
                seat = [c for c in changes if c.account_id.startswith("seat:")]
                assert sum(c.change.amount for c in seat) == 0  # bought in, played, cashed out
                assert [c.time.ToMicroseconds() for c in changes] == sorted(
                    (c.time.ToMicroseconds() for c in changes), reverse=True
                )

                paged: list[str] = []
                token = ""
                while True:
                    page = await stub.ListBalanceChanges(
                        history_pb2.ListBalanceChangesRequest(
                            pool=common_pb2.CHIP_POOL_GRAM,
                            page=common_pb2.PageRequest(page_size=2, page_token=token),
                        ),
                        metadata=as_alice,
                    )
                    paged += [f"{c.transfer_id}/{c.account_id}" for c in page.changes]
                    token = page.page.next_page_token
                    if not token:
                        break
                    last_token = token
                assert paged == [f"{c.transfer_id}/{c.account_id}" for c in changes]

                bobs = await stub.ListBalanceChanges(
                    history_pb2.ListBalanceChangesRequest(), metadata=auth_metadata(bob, "player")
                )
                assert bobs.changes
                assert all(bob in c.account_id for c in bobs.changes)
                # Alice's page token is no good for Bob, nor for another pool; a made-up pool is refused.
                for metadata, pool in (
                    (auth_metadata(bob, "player"), common_pb2.CHIP_POOL_GRAM),
                    (as_alice, common_pb2.CHIP_POOL_MPX),
                ):
                    await expect_error(
                        stub.ListBalanceChanges(
                            history_pb2.ListBalanceChangesRequest(
                                pool=pool, page=common_pb2.PageRequest(page_token=last_token)
                            ),
                            metadata=metadata,
                        ),
                        grpc.StatusCode.INVALID_ARGUMENT,
                        "PAGE_TOKEN_INVALID",
                    )
                await expect_error(
                    stub.ListBalanceChanges(history_pb2.ListBalanceChangesRequest(pool=7), metadata=as_alice),  # type: ignore[arg-type]
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "POOL_INVALID",
                )
                await cashier_server.stop(grace_seconds=0)
                await expect_error(
                    stub.ListBalanceChanges(history_pb2.ListBalanceChangesRequest(), metadata=as_alice),
                    grpc.StatusCode.UNAVAILABLE,
                    "UNAVAILABLE",
                )
            await to_cashier.close()
    finally:
        await cashier_engine.dispose()
        await history_engine.dispose()
