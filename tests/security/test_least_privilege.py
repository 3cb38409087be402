"""Least privilege between identities (issue 10, item 8): a stolen token of one service cannot do
another's job, and no identity mints chips outside a recorded purchase.

The services run as real processes; each check is a real call with the identity's token.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.history.v1 import history_pb2
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc, shard_directory_pb2
from poker.table.v1 import table_pb2
from service_runtime.auth import STAFF_ROLES, Role, ServiceName
from service_runtime.testing import auth_metadata, reason_of, service_metadata
from services.cashier.ledger import Pool, mint_account_id
from services.cashier.payments import PaymentSource

from .service_processes import ServiceProcess, running_services

PEOPLE = {"player": auth_metadata("alice"), "admin": auth_metadata("ops", *STAFF_ROLES)}
SERVICES = {f"service {s.value}": service_metadata(s) for s in ServiceName}
EVERYONE = {**PEOPLE, **SERVICES}

TABLE_ONLY = [
    ("cashier", "OpenSeatSession", cashier_pb2.OpenSeatSessionRequest()),
    ("cashier", "SettleHand", cashier_pb2.SettleHandRequest()),
    ("cashier", "CashOutSeatSession", cashier_pb2.CashOutSeatSessionRequest()),
    ("cashier", "CreateTransfers", cashier_pb2.CreateTransfersRequest()),
    ("fairness", "CommitHand", fairness_pb2.CommitHandRequest()),
    ("fairness", "AddPlayerEntropy", fairness_pb2.AddPlayerEntropyRequest()),
    ("fairness", "SealHand", fairness_pb2.SealHandRequest()),
    ("fairness", "RevealHand", fairness_pb2.RevealHandRequest()),
]
# Fair play (issue 29): only operators read cases and hold players; only history sets the cashier's holds.
ADMINS_ONLY = [
    ("history", "ListCases", history_pb2.ListCasesRequest()),
    ("history", "GetCase", history_pb2.GetCaseRequest()),
    ("history", "HoldPlayer", history_pb2.HoldPlayerRequest()),
    ("history", "ReleasePlayer", history_pb2.ReleasePlayerRequest()),
    ("history", "ResolveCase", history_pb2.ResolveCaseRequest()),
]
HISTORY_ONLY = [("cashier", "SetPlayerHold", cashier_pb2.SetPlayerHoldRequest())]
PAYMENTS_ONLY = [
    ("cashier", "Purchase", cashier_pb2.PurchaseRequest()),
    ("cashier", "Withdraw", cashier_pb2.WithdrawRequest()),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ServiceProcess]]:
    data_dir: Path = tmp_path_factory.mktemp("least-privilege")
    with running_services(data_dir) as services:
        yield services


async def _outcome(address: str, path: str, request: object, metadata: tuple[tuple[str, str], ...]) -> str:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_unary(path, request_serializer=lambda m: m.SerializeToString())
        try:
            await call(request, metadata=metadata, timeout=5)
            return "OK"
        except grpc.aio.AioRpcError as error:
            return f"{error.code().name} {reason_of(error)}"


def _path(service: str, method: str) -> str:
    return f"/poker.{service}.v1.{service.capitalize()}Service/{method}"


@pytest.mark.parametrize(
    ("service", "method", "request_message"), TABLE_ONLY, ids=[f"{s}.{m}" for s, m, _ in TABLE_ONLY]
)
def test_only_table_shards_move_seat_chips_and_drive_decks(
    cluster: dict[str, ServiceProcess], service: str, method: str, request_message: object
) -> None:
    address = cluster[service].address
    for who, metadata in EVERYONE.items():
        outcome = asyncio.run(_outcome(address, _path(service, method), request_message, metadata))
        if who == "service table":
            assert not outcome.startswith("PERMISSION_DENIED"), outcome
        else:
            assert outcome == "PERMISSION_DENIED ROLE_REQUIRED", (who, outcome)


@pytest.mark.parametrize(
    ("service", "method", "request_message"), PAYMENTS_ONLY, ids=[f"{s}.{m}" for s, m, _ in PAYMENTS_ONLY]
)
def test_only_the_payments_gateway_records_purchases_and_withdrawals(
    cluster: dict[str, ServiceProcess], service: str, method: str, request_message: object
) -> None:
    address = cluster[service].address
    for who, metadata in EVERYONE.items():
        outcome = asyncio.run(_outcome(address, _path(service, method), request_message, metadata))
        if who == "service payments":
            assert not outcome.startswith("PERMISSION_DENIED"), outcome
        else:
            assert outcome == "PERMISSION_DENIED ROLE_REQUIRED", (who, outcome)


@pytest.mark.parametrize(
    ("service", "method", "request_message", "allowed"),
    [(*call, "admin") for call in ADMINS_ONLY] + [(*call, "service history") for call in HISTORY_ONLY],
    ids=[f"{s}.{m}" for s, m, _ in ADMINS_ONLY + HISTORY_ONLY],
)
def test_only_operators_see_cases_and_hold_players_and_only_history_sets_holds(
    cluster: dict[str, ServiceProcess], service: str, method: str, request_message: object, allowed: str
) -> None:
    address = cluster[service].address
    for who, metadata in EVERYONE.items():
        outcome = asyncio.run(_outcome(address, _path(service, method), request_message, metadata))
        if who == allowed:
            assert not outcome.startswith("PERMISSION_DENIED"), outcome
        else:
            assert outcome == "PERMISSION_DENIED ROLE_REQUIRED", (who, outcome)


def test_a_table_token_cannot_mint_chips_through_create_transfers(cluster: dict[str, ServiceProcess]) -> None:
    async def attempt() -> tuple[str, list[int], list[int]]:
        async with grpc.aio.insecure_channel(cluster["cashier"].address) as channel:
            stub = cashier_pb2_grpc.CashierServiceStub(channel)
            admin = PEOPLE["admin"]
            await stub.Purchase(
                cashier_pb2.PurchaseRequest(
                    payment_reference="lp-1", player_id="mallory", source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                    amount_minor=10**10,
                ),
                metadata=SERVICES["service payments"], timeout=5,
            )  # fmt: skip
            before = await stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=admin)
            mint = cashier_pb2.Transfer(
                transfer_id="steal-1",
                debit_account_id=mint_account_id(PaymentSource.GRAM.value, Pool.GRAM),
                credit_account_id="wallet:GRAM:mallory",
                pool=common_pb2.CHIP_POOL_GRAM,
                amount=10**6,
                kind=cashier_pb2.TRANSFER_KIND_ADJUSTMENT,
            )
            try:
                reply = await stub.CreateTransfers(
                    cashier_pb2.CreateTransfersRequest(transfers=[mint]), metadata=SERVICES["service table"]
                )
                outcome = f"OK {[r.status for r in reply.results]}"
            except grpc.aio.AioRpcError as error:
                outcome = f"{error.code().name} {reason_of(error)}"
            after = await stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=admin)
            return outcome, [p.minted for p in before.pools], [p.minted for p in after.pools]

    outcome, minted_before, minted_after = asyncio.run(attempt())
    assert outcome == "PERMISSION_DENIED MINT_ACCOUNT_FORBIDDEN", outcome
    assert minted_after == minted_before


# ---------------------------------------------------------------- reads of others' data, streams (issue 23)

LOBBY_PATH = "/poker.lobby.v1.LobbyService"
DIRECTORY_PATH = "/poker.lobby.v1.ShardDirectoryService"
TABLE_PATH = "/poker.table.v1.TableService"


async def _first_answer(
    address: str, path: str, request: object, metadata: tuple[tuple[str, str], ...]
) -> str:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_stream(path, request_serializer=lambda m: m.SerializeToString())(
            request, metadata=metadata, timeout=10
        )
        try:
            await call.read()
            return "OK"
        except grpc.aio.AioRpcError as error:
            return f"{error.code().name} {reason_of(error)}"
        finally:
            call.cancel()


def test_a_player_reads_no_other_players_data_and_no_room_they_may_not_see(
    cluster: dict[str, ServiceProcess],
) -> None:
    alice = PEOPLE["player"]
    private = f"private-{uuid.uuid4().hex[:8]}"

    async def run() -> dict[str, str]:
        async with grpc.aio.insecure_channel(cluster["lobby"].address) as channel:
            await lobby_pb2_grpc.LobbyServiceStub(channel).CreateRoom(
                lobby_pb2.CreateRoomRequest(
                    request_id=private,
                    room=lobby_pb2.Room(
                        room_id=private, display_name="private", variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
                        pool=common_pb2.CHIP_POOL_GRAM, seats_per_table=6, private=True,
                        blinds=lobby_pb2.BlindStakes(small_blind=5, big_blind=10, step=5),
                        min_buy_in=200, max_buy_in=2000,
                    ),
                    table_count=1,
                ),
                metadata=PEOPLE["admin"], timeout=5,
            )  # fmt: skip
        cashier, lobby, table = cluster["cashier"].address, cluster["lobby"].address, cluster["table"].address
        outcomes = {
            "GetBalances(bob)": await _outcome(
                cashier,
                _path("cashier", "GetBalances"),
                cashier_pb2.GetBalancesRequest(player_id="bob"),
                alice,
            ),
            "GetStatement(bob)": await _outcome(
                cashier,
                _path("cashier", "GetStatement"),
                cashier_pb2.GetStatementRequest(player_id="bob"),
                alice,
            ),
            "GetSelfLimits(bob)": await _outcome(
                cashier,
                _path("cashier", "GetSelfLimits"),
                cashier_pb2.GetSelfLimitsRequest(player_id="bob"),
                alice,
            ),
            "AuthorizeView": await _outcome(
                lobby,
                f"{LOBBY_PATH}/AuthorizeView",
                lobby_pb2.AuthorizeViewRequest(player_id="alice", room_id=private),
                alice,
            ),
            "OpenTable": await _outcome(
                table,
                f"{DIRECTORY_PATH}/OpenTable",
                shard_directory_pb2.OpenTableRequest(table_id=f"{private}.1"),
                alice,
            ),
            "ListShardTables": await _outcome(
                table,
                f"{DIRECTORY_PATH}/ListShardTables",
                shard_directory_pb2.ListShardTablesRequest(),
                alice,
            ),
            "GetTableSnapshot": await _outcome(
                table,
                f"{TABLE_PATH}/GetTableSnapshot",
                table_pb2.GetTableSnapshotRequest(table_id=f"{private}.1"),
                alice,
            ),
            "WatchTable": await _first_answer(
                table, f"{TABLE_PATH}/WatchTable", table_pb2.WatchTableRequest(table_id=f"{private}.1"), alice
            ),
            "SpectateTable": await _first_answer(
                table,
                f"{TABLE_PATH}/SpectateTable",
                table_pb2.SpectateTableRequest(table_id=f"{private}.1"),
                alice,
            ),
            "GetTableSnapshot as admin": await _outcome(
                table,
                f"{TABLE_PATH}/GetTableSnapshot",
                table_pb2.GetTableSnapshotRequest(table_id=f"{private}.1"),
                PEOPLE["admin"],
            ),
        }
        return outcomes

    outcomes = asyncio.run(run())
    assert outcomes == {
        "GetBalances(bob)": "PERMISSION_DENIED NOT_YOUR_RESOURCE",
        "GetStatement(bob)": "PERMISSION_DENIED NOT_YOUR_RESOURCE",
        "GetSelfLimits(bob)": "PERMISSION_DENIED NOT_YOUR_RESOURCE",
        "AuthorizeView": "PERMISSION_DENIED ROLE_REQUIRED",
        "OpenTable": "PERMISSION_DENIED ROLE_REQUIRED",
        "ListShardTables": "PERMISSION_DENIED ROLE_REQUIRED",
        "GetTableSnapshot": "NOT_FOUND TABLE_NOT_FOUND",
        "WatchTable": "NOT_FOUND TABLE_NOT_FOUND",
        "SpectateTable": "NOT_FOUND TABLE_NOT_FOUND",
        "GetTableSnapshot as admin": "OK",
    }, outcomes


def test_one_player_holds_at_most_their_share_of_streams(cluster: dict[str, ServiceProcess]) -> None:
    """POKER_TABLE_PLAYER_CONCURRENT_STREAMS (16) per player, 2 streams without a seat per table."""
    hog = auth_metadata(f"hog-{uuid.uuid4().hex[:8]}")

    async def run() -> tuple[list[str], str, str]:
        async with grpc.aio.insecure_channel(cluster["lobby"].address) as channel:
            rooms = await lobby_pb2_grpc.LobbyServiceStub(channel).ListRooms(
                lobby_pb2.ListRoomsRequest(), metadata=hog, timeout=5
            )
        cash = [r.room_id for r in rooms.rooms if r.WhichOneof("stakes") in ("blinds", "limits")]
        assert len(cash) >= 9, cash
        async with grpc.aio.insecure_channel(cluster["table"].address) as channel:
            watch = channel.unary_stream(
                f"{TABLE_PATH}/WatchTable", request_serializer=lambda m: m.SerializeToString()
            )
            calls = []

            async def first(table_id: str, metadata: tuple[tuple[str, str], ...]) -> str:
                call = watch(table_pb2.WatchTableRequest(table_id=table_id), metadata=metadata, timeout=30)
                calls.append(call)
                try:
                    await call.read()
                    return "OK"
                except grpc.aio.AioRpcError as error:
                    return f"{error.code().name} {reason_of(error)}"

            try:
                answers = [await first(f"{room}.1", hog) for room in cash[:8] for _ in range(2)]
                answers.append(await first(f"{cash[8]}.1", hog))
                at_one_table = await first(f"{cash[0]}.1", auth_metadata(f"fair-{uuid.uuid4().hex[:8]}"))
                for call in calls:
                    call.cancel()
                await asyncio.sleep(0.5)
                # Closed streams give the share back.
                again = await first(f"{cash[8]}.1", hog)
            finally:
                for call in calls:
                    call.cancel()
            return [*answers, again], at_one_table, again

    answers, other_player, again = asyncio.run(run())
    assert answers[:16] == ["OK"] * 16
    assert answers[16] == "RESOURCE_EXHAUSTED CALLER_QUOTA_EXCEEDED"
    assert other_player == "OK"
    assert again == "OK"


def test_the_gateway_forwards_nothing_beyond_a_players_rights_whoever_calls_it(
    cluster: dict[str, ServiceProcess],
) -> None:
    """Through the gateway, no token (player, admin or any service's) reaches a table-only or
    payments-only RPC, nor any admin RPC: refused on the headers, never sent on, nothing changed."""
    from services.gateway.access import ACCESS
    from tests.gateway.connect_http import call as connect_call
    from tests.gateway.gateway_process import running_gateway

    async def audit() -> object:
        async with grpc.aio.insecure_channel(cluster["cashier"].address) as channel:
            reply = await cashier_pb2_grpc.CashierServiceStub(channel).AuditConservation(
                cashier_pb2.AuditConservationRequest(), metadata=PEOPLE["admin"], timeout=5
            )
        return [(p.pool, p.minted, p.burned, p.accounts_total) for p in reply.pools]

    before = asyncio.run(audit())
    not_for_players = sorted(m for m, who in ACCESS.roles.items() if Role.PLAYER not in who)
    assert {_path(s, m) for s, m, _ in TABLE_ONLY + PAYMENTS_ONLY} <= set(not_for_players)
    many = {
        "POKER_GATEWAY_CALL_BURST_PER_ADDRESS": "100000",
        "POKER_GATEWAY_CALLS_PER_SECOND_PER_ADDRESS": "1000",
    }
    with running_gateway(cluster, many) as gateway:
        for method in not_for_players:
            request = b"\x0a\x05alice"
            for who, metadata in EVERYONE.items():
                token = dict(metadata)["authorization"].removeprefix("Bearer ")
                outcome = connect_call(gateway.address, method, request, token=token)
                assert outcome.label == "permission_denied ROLE_REQUIRED", (method, who, outcome)
    assert asyncio.run(audit()) == before
