"""A database that is away is a dependency that is down: UNAVAILABLE with the reason
DATABASE_UNAVAILABLE, which clients retry, never INTERNAL (issue 30).

Found in the fault run: while PostgreSQL was stopped the cashier answered every call (GetBalances,
ListOpenSeatSessions) with INTERNAL "internal error", which no client retries and which the
contract calls a bug. Every service with a database is checked here, against a PostgreSQL server of
the test's own that it stops as a crash would (`pg_ctl -m immediate stop`) and starts again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.testing import auth_metadata, reason_of, throwaway_postgres_database
from tests.own_servers import OwnPostgres, have_postgres_binaries
from tests.table.conftest import ServiceProcess

# A fault run (a PostgreSQL server of its own stopped and started under every service with a
# database): the whole-cluster tier, `make test-cluster` (issue 39: `make test` within 10 minutes).
pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(not have_postgres_binaries(), reason="no PostgreSQL binaries"),
]

ADMIN = auth_metadata("operator", *STAFF_ROLES)
PAYMENTS = auth_metadata("payments", Role.SERVICE)


@pytest.fixture
def own_postgres() -> Iterator[OwnPostgres]:
    server = OwnPostgres()
    try:
        server.start()
        yield server
    finally:
        server.stop()
        server.remove()


Outcome = tuple[str, str]


async def outcome(call: Awaitable[object]) -> Outcome:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error.code().name, reason_of(error)
    return "OK", ""


async def test_every_service_with_a_database_is_unavailable_while_postgres_is_down_and_recovers(
    own_postgres: OwnPostgres, tmp_path: Path
) -> None:
    base = {**os.environ, "POKER_LOG_FORMAT": "json", "POKER_DATA_DIR": str(tmp_path)}
    with contextlib.ExitStack() as stack:
        urls = {
            name: stack.enter_context(throwaway_postgres_database(own_postgres.url, prefix=f"outage_{name}"))
            for name in ("cashier", "fairness", "history", "lobby")
        }
        services: dict[str, ServiceProcess] = {}
        try:
            for name in ("cashier", "fairness", "lobby"):
                services[name] = ServiceProcess(
                    name, {**base, f"POKER_{name.upper()}_DATABASE_URL": urls[name]}
                )
                services[name].start()
            services["history"] = ServiceProcess(
                "history",
                {
                    **base,
                    "POKER_HISTORY_DATABASE_URL": urls["history"],
                    "POKER_HISTORY_CASHIER_ADDRESS": services["cashier"].address,
                },
            )
            services["history"].start()
            channels = {name: grpc.aio.insecure_channel(s.address) for name, s in services.items()}
            cashier = cashier_pb2_grpc.CashierServiceStub(channels["cashier"])
            fairness = fairness_pb2_grpc.FairnessServiceStub(channels["fairness"])
            history = history_pb2_grpc.HistoryServiceStub(channels["history"])
            lobby = lobby_pb2_grpc.LobbyServiceStub(channels["lobby"])
            calls: dict[str, Callable[[], Awaitable[object]]] = {
                "cashier GetBalances": lambda: cashier.GetBalances(
                    cashier_pb2.GetBalancesRequest(player_id="ann"), metadata=ADMIN, timeout=20
                ),
                "cashier ListOpenSeatSessions": lambda: cashier.ListOpenSeatSessions(
                    cashier_pb2.ListOpenSeatSessionsRequest(table_id="room.1"), metadata=ADMIN, timeout=20
                ),
                "cashier Purchase": lambda: cashier.Purchase(
                    cashier_pb2.PurchaseRequest(
                        payment_reference=f"outage-{uuid.uuid4().hex}",
                        player_id="ann",
                        source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                        amount_minor=10**6,
                    ),
                    metadata=PAYMENTS,
                    timeout=20,
                ),
                "fairness GetCommitment": lambda: fairness.GetCommitment(
                    fairness_pb2.GetCommitmentRequest(hand_id=str(uuid.uuid4())), metadata=ADMIN, timeout=20
                ),
                "history ListTableHands": lambda: history.ListTableHands(
                    history_pb2.ListTableHandsRequest(table_id="room.1"), metadata=ADMIN, timeout=20
                ),
                "lobby ListRooms": lambda: lobby.ListRooms(
                    lobby_pb2.ListRoomsRequest(), metadata=ADMIN, timeout=20
                ),
            }
            healthy = {name: await outcome(call()) for name, call in calls.items()}
            assert all(code != "UNAVAILABLE" and code != "INTERNAL" for code, _ in healthy.values()), healthy

            own_postgres.stop()
            down = {name: await outcome(call()) for name, call in calls.items()}
            assert down == dict.fromkeys(calls, ("UNAVAILABLE", "DATABASE_UNAVAILABLE")), down

            own_postgres.start()
            back: dict[str, Outcome] = {}
            for _ in range(100):
                back = {name: await outcome(call()) for name, call in calls.items()}
                if all(code != "UNAVAILABLE" for code, _ in back.values()):
                    break
                await asyncio.sleep(0.2)
            # A purchase has a new reference each time: OK again, as the reads are what they were.
            assert back == healthy, back
            for channel in channels.values():
                await channel.close()
            errors = {name: s.errors for name, s in services.items() if s.errors}
            assert not any("Traceback" in line for lines in errors.values() for line in lines), errors
        finally:
            for service in services.values():
                service.stop()
