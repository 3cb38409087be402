"""ListBalanceChanges says what the cashier said (docs/history.md, "Balance changes"). Found by a
tester: with 1,500 concurrent ListBalanceChanges some answered UNAVAILABLE "the cashier cannot be
reached" after 5-7.5 s while the cashier was up: history's own deadline had cancelled its
GetStatement, and every cashier error but INVALID_ARGUMENT was reported as an unreachable cashier.

A stand-in cashier on port 0 (the real server runtime, so the cashier's own shedding and errors are
the runtime's) answers GetStatement as the player id asks: with a typed error, slower than history's
deadline, or from a server at its bound of concurrent calls."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.clients import create_channel, error_metadata_of
from service_runtime.database import create_engine, create_session_factory
from service_runtime.errors import (
    AlreadyExists,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from service_runtime.interceptors import Limits
from service_runtime.server import GrpcService
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.testing import DEV_KEYS, auth_metadata, reason_of, running_server
from services.cashier.assembly import ACCESS as CASHIER_ACCESS
from services.cashier.grpc_adapter import SERVICE_NAME as CASHIER_SERVICE
from services.history.application import HistoryApplication
from services.history.assembly import ACCESS, history_service
from services.history.cashier_statements import CashierStatements
from services.history.page_tokens import PageTokens

# History's deadline on its calls to the cashier in the tests of a cashier slower than it (production:
# the request timeout, 5 s). The others answer at once and get a deadline no loaded machine reaches:
# at 1.5 s a whole-suite run under load once took an INTERNAL answer for a slow one
# (RESOURCE_EXHAUSTED SERVER_OVERLOADED where UNAVAILABLE was due).
DEADLINE_SECONDS = 1.5
ANSWERING_DEADLINE_SECONDS = 60.0
# The stand-in serves this many calls at once and sheds the rest, as a cashier at its bound does.
CASHIER_SLOTS = 2
KINDS: dict[str, type[DomainError]] = {
    "INVALID_ARGUMENT": InvalidArgument,
    "NOT_FOUND": NotFound,
    "FAILED_PRECONDITION": FailedPrecondition,
    "ALREADY_EXISTS": AlreadyExists,
    "PERMISSION_DENIED": PermissionDenied,
    "UNAUTHENTICATED": Unauthenticated,
    "UNAVAILABLE": Unavailable,
    "RESOURCE_EXHAUSTED": ResourceExhausted,
}


class StandInCashier(cashier_pb2_grpc.CashierServiceServicer):
    """GetStatement by player id: `answer:<CODE>:<REASON>` raises that typed error; `broken` fails
    with an untyped exception (INTERNAL); `hold:<n>` waits, holding one of the server's call slots,
    until `release` is set; anything else answers an empty statement."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.holding = 0
        self.all_held = asyncio.Event()

    async def GetStatement(  # noqa: N802
        self, request: cashier_pb2.GetStatementRequest, context: Any
    ) -> cashier_pb2.GetStatementResponse:
        what, _, rest = request.player_id.partition(":")
        if what == "answer":
            code, _, reason = rest.partition(":")
            raise KINDS[code](reason, f"the stand-in cashier answers {code} {reason}")
        if what == "broken":
            raise RuntimeError("a bug in the cashier")
        if what == "hold":
            self.holding += 1
            if self.holding == CASHIER_SLOTS:
                self.all_held.set()
            await self.release.wait()
        return cashier_pb2.GetStatementResponse()


@dataclass
class Cluster:
    cashier: StandInCashier
    history: history_pb2_grpc.HistoryServiceStub


@pytest.fixture
def deadline_seconds() -> float:
    """History's deadline on its cashier calls; the tests of a slow cashier parametrize it."""
    return ANSWERING_DEADLINE_SECONDS


@pytest.fixture
async def cluster(tmp_path: Path, deadline_seconds: float) -> AsyncIterator[Cluster]:
    stand_in = StandInCashier()
    service = GrpcService(
        CASHIER_SERVICE,
        lambda server: cashier_pb2_grpc.add_CashierServiceServicer_to_server(stand_in, server),
    )
    # ListBalanceChanges reads nothing of history's own database.
    engine = create_engine(f"sqlite+aiosqlite:///{(tmp_path / 'history.db').as_posix()}")
    try:
        async with running_server(
            [service], CASHIER_ACCESS, limits=Limits(max_concurrent_rpcs=CASHIER_SLOTS)
        ) as (cashier_server, _):
            to_cashier = create_channel(
                f"127.0.0.1:{cashier_server.port}",
                timeout_seconds=deadline_seconds,
                token=ServiceTokenSource(DEV_KEYS, "history"),
            )
            application = HistoryApplication(
                create_session_factory(engine), PageTokens(b"k" * 32), CashierStatements(to_cashier)
            )
            try:
                async with running_server([history_service(application)], ACCESS) as (_, channel):
                    yield Cluster(stand_in, history_pb2_grpc.HistoryServiceStub(channel))
            finally:
                stand_in.release.set()
                await to_cashier.close()
    finally:
        await engine.dispose()


async def balance_error(cluster: Cluster, player: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await cluster.history.ListBalanceChanges(
            history_pb2.ListBalanceChangesRequest(), metadata=auth_metadata(player, "player")
        )
    return error.value


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        # The cashier's refusals keep their code and reason: not an unreachable cashier.
        ("NOT_FOUND", "ACCOUNT_NOT_FOUND"),
        ("FAILED_PRECONDITION", "ACCOUNT_CLOSED"),
        ("INVALID_ARGUMENT", "FIELD_INVALID"),
        # A page token the cashier no longer takes is the caller's to restart paging.
        ("INVALID_ARGUMENT", "PAGE_TOKEN_INVALID"),
        # A cashier that says it is down (after the channel's retries) is down.
        ("UNAVAILABLE", "UNAVAILABLE"),
        # A cashier shedding load (after the channel's retries) is overloaded, not away.
        ("RESOURCE_EXHAUSTED", "SERVER_OVERLOADED"),
    ],
)
async def test_the_cashiers_answer_keeps_its_code_and_reason(
    cluster: Cluster, code: str, reason: str
) -> None:
    error = await balance_error(cluster, f"answer:{code}:{reason}")
    assert (error.code(), reason_of(error)) == (grpc.StatusCode[code], reason)
    assert error_metadata_of(error).get("dependency") == "cashier"
    assert "cannot be reached" not in (error.details() or "") or code == "UNAVAILABLE"


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("PERMISSION_DENIED", "ROLE_REQUIRED"),
        ("PERMISSION_DENIED", "NOT_YOUR_RESOURCE"),
        ("UNAUTHENTICATED", "TOKEN_INVALID_SIGNATURE"),
        ("UNAUTHENTICATED", "TOKEN_EXPIRED"),
    ],
)
async def test_the_cashier_refusing_historys_own_token_is_unavailable_never_the_callers_credential(
    cluster: Cluster, code: str, reason: str
) -> None:
    """A refusal of history's own service token is the platform's configuration, not the player's
    token: passed on as UNAUTHENTICATED TOKEN_EXPIRED, a page would sign its player out. UNAVAILABLE,
    as the table service does with its own refused credentials, naming the cashier's answer."""
    error = await balance_error(cluster, f"answer:{code}:{reason}")
    assert (error.code(), reason_of(error)) == (grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE")
    metadata = error_metadata_of(error)
    assert (metadata.get("dependency"), metadata.get("cashier_status")) == ("cashier", code)


@pytest.mark.parametrize("deadline_seconds", [DEADLINE_SECONDS])
async def test_a_cashier_slower_than_historys_deadline_is_overloaded_not_unreachable(
    cluster: Cluster,
) -> None:
    # The tester's case: history's own deadline cancelled GetStatement while the cashier was up.
    error = await balance_error(cluster, "hold:slow")
    assert (error.code(), reason_of(error)) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SERVER_OVERLOADED")
    assert error_metadata_of(error).get("dependency") == "cashier"


@pytest.mark.parametrize("deadline_seconds", [DEADLINE_SECONDS])
async def test_a_cashier_at_its_bound_of_calls_is_overloaded_and_serves_again_after(cluster: Cluster) -> None:
    held = [
        asyncio.ensure_future(
            cluster.history.ListBalanceChanges(
                history_pb2.ListBalanceChangesRequest(), metadata=auth_metadata(f"hold:{n}", "player")
            )
        )
        for n in range(CASHIER_SLOTS)
    ]
    await cluster.cashier.all_held.wait()
    # Every further call is shed by the cashier's runtime (RESOURCE_EXHAUSTED SERVER_OVERLOADED),
    # retried by history's channel, shed again: overloaded, and said so.
    error = await balance_error(cluster, "alice")
    assert (error.code(), reason_of(error)) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SERVER_OVERLOADED")
    cluster.cashier.release.set()
    # The calls that held the slots are answered once released, or, had history's deadline passed
    # first, are overloaded too.
    for outcome in await asyncio.gather(*held, return_exceptions=True):
        if isinstance(outcome, grpc.aio.AioRpcError):
            assert (outcome.code(), reason_of(outcome)) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "SERVER_OVERLOADED",
            )
        else:
            assert isinstance(outcome, history_pb2.ListBalanceChangesResponse)
    answer = await cluster.history.ListBalanceChanges(
        history_pb2.ListBalanceChangesRequest(), metadata=auth_metadata("alice", "player")
    )
    assert list(answer.changes) == []


async def test_a_cashier_failing_without_a_reason_is_unavailable_and_says_what_it_answered(
    cluster: Cluster,
) -> None:
    error = await balance_error(cluster, "broken")
    assert (error.code(), reason_of(error)) == (grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE")
    assert error_metadata_of(error) == {"dependency": "cashier", "cashier_status": "INTERNAL"}
