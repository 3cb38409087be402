"""Four-eyes on funding the house (issue 38): one member of finance asks, another approves or rejects,
nobody funds alone; each step idempotent by its own id; conservation holds across approvals; on both
backends, through a real gRPC server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import Role
from service_runtime.clients import error_metadata_of
from service_runtime.testing import auth_metadata, reason_of, running_server
from services.cashier.application import Cashier
from services.cashier.assembly import ACCESS, cashier_service

GRAM, MPX = common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX
BANK, JACKPOT = cashier_pb2.HOUSE_ACCOUNT_BANK, cashier_pb2.HOUSE_ACCOUNT_JACKPOT
ANNA = auth_metadata("anna", Role.FINANCE)
BORIS = auth_metadata("boris", Role.FINANCE)
CARL = auth_metadata("carl", Role.FINANCE)
PENDING = cashier_pb2.HOUSE_FUNDING_STATE_PENDING
APPROVED = cashier_pb2.HOUSE_FUNDING_STATE_APPROVED
REJECTED = cashier_pb2.HOUSE_FUNDING_STATE_REJECTED


@dataclass
class Client:
    stub: cashier_pb2_grpc.CashierServiceAsyncStub
    cashier: Cashier


@pytest.fixture
async def client(any_cashier: Cashier) -> AsyncIterator[Client]:
    async with running_server([cashier_service(any_cashier)], ACCESS) as (_, channel):
        yield Client(cashier_pb2_grpc.CashierServiceStub(channel), any_cashier)


def ask(
    request_id: str, amount: int, *, pool: int = GRAM, account: int = BANK, reason: str = "season float"
) -> object:
    return cashier_pb2.RequestHouseFundingRequest(
        request_id=request_id,
        pool=pool,  # type: ignore[arg-type]
        account=account,  # type: ignore[arg-type]
        amount=amount,
        reason=reason,
    )


def decide(decision_id: str, request_id: str, *, approve: bool = True, reason: str = "checked") -> object:
    return cashier_pb2.DecideHouseFundingRequest(
        decision_id=decision_id, request_id=request_id, approve=approve, reason=reason
    )


async def bank(client: Client, pool: int = GRAM) -> tuple[int, int]:
    reply = await client.stub.GetHouseBalances(cashier_pb2.GetHouseBalancesRequest(pool=pool), metadata=ANNA)  # type: ignore[arg-type]
    return reply.bank_balance, reply.jackpot_balance


async def balanced(client: Client) -> bool:
    audit = await client.stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ANNA)
    return bool(audit.balanced)


async def refused_with(call: object) -> tuple[grpc.StatusCode, str, str]:
    """The refusal's code, reason and metadata `field` (empty when none)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    error = caught.value
    return error.code(), reason_of(error), error_metadata_of(error).get("field", "")


async def refused(call: object) -> tuple[grpc.StatusCode, str]:
    code, reason, _ = await refused_with(call)
    return code, reason


async def test_one_asks_another_approves_and_the_chips_move_once_with_both_named(client: Client) -> None:
    asked = await client.stub.RequestHouseFunding(ask("r1", 5_000), metadata=ANNA)
    assert asked.funding.state == PENDING
    assert not asked.existing
    assert asked.funding.requested_by == "anna"
    assert await bank(client) == (0, 0)  # asking moves nothing
    approved = await client.stub.DecideHouseFunding(decide("d1", "r1"), metadata=BORIS)
    assert approved.funding.state == APPROVED
    assert approved.funding.decided_by == "boris"
    assert approved.funding.requested_by == "anna"
    assert approved.funding.decision_reason == "checked"
    assert approved.transfer.transfer_id == "funding:r1"
    assert approved.transfer.reference == "season float"
    assert approved.transfer.kind == cashier_pb2.TRANSFER_KIND_HOUSE_FUNDING
    assert approved.balance_after == 5_000
    assert not approved.existing
    assert await bank(client) == (5_000, 0)
    # The approval replayed (a lost answer): the first answer again, nothing moved twice.
    again = await client.stub.DecideHouseFunding(decide("d1", "r1"), metadata=BORIS)
    assert again.existing
    assert again.transfer == approved.transfer
    assert again.balance_after == 5_000
    assert await bank(client) == (5_000, 0)
    assert await balanced(client)


async def test_the_asker_can_never_decide_their_own_request(client: Client) -> None:
    await client.stub.RequestHouseFunding(ask("r1", 5_000), metadata=ANNA)
    for approve in (True, False):
        assert await refused(
            client.stub.DecideHouseFunding(decide(f"d-{approve}", "r1", approve=approve), metadata=ANNA)
        ) == (grpc.StatusCode.PERMISSION_DENIED, "FOUR_EYES_REQUIRED")
    assert await bank(client) == (0, 0)
    listed = await client.stub.ListHouseFunding(
        cashier_pb2.ListHouseFundingRequest(state=PENDING), metadata=CARL
    )
    assert [f.request_id for f in listed.fundings] == ["r1"]
    # The database refuses it too, behind the code's own check.
    with pytest.raises(Exception, match=r"house_funding_four_eyes|CHECK constraint"):
        async with client.cashier.engine.begin() as conn:
            await conn.execute(
                text(
                    "UPDATE house_funding SET state = 'APPROVED', decision_id = 'x', decided_by = 'anna' "
                    "WHERE request_id = 'r1'"
                )
            )


@pytest.mark.parametrize("lookalike", ["ANNA", "Anna", " anna", "anna ", "anna\t", "\u0430nna"])
async def test_the_asker_cannot_decide_under_a_lookalike_name(client: Client, lookalike: str) -> None:
    """Found by a tester: `ANNA`, `anna ` or `anna<TAB>` decided anna's request. A staff member is
    one person however their name is cased or padded; a name with a tab or another script's letter
    that looks the same is no staff name at all."""
    await client.stub.RequestHouseFunding(ask("r1", 5_000), metadata=ANNA)
    # Nor ask under one: the record would name a person nobody can tell apart.
    assert await refused(
        client.stub.RequestHouseFunding(ask("r2", 5_000), metadata=auth_metadata("anna\t", Role.FINANCE))
    ) == (grpc.StatusCode.PERMISSION_DENIED, "FOUR_EYES_REQUIRED")
    refused_as = await refused(
        client.stub.DecideHouseFunding(decide("d1", "r1"), metadata=auth_metadata(lookalike, Role.FINANCE))
    )
    assert refused_as == (grpc.StatusCode.PERMISSION_DENIED, "FOUR_EYES_REQUIRED")
    assert await bank(client) == (0, 0)


async def test_a_decision_id_binds_its_request_its_verdict_its_reason_and_its_decider(client: Client) -> None:
    await client.stub.RequestHouseFunding(ask("r1", 100), metadata=ANNA)
    await client.stub.RequestHouseFunding(ask("r2", 200), metadata=ANNA)
    await client.stub.DecideHouseFunding(decide("d1", "r1"), metadata=BORIS)
    for request, who, field in (
        (decide("d1", "r2"), BORIS, "request_id"),
        (decide("d1", "r1", approve=False), BORIS, "approve"),
        (decide("d1", "r1", reason="other"), BORIS, "reason"),
        (decide("d1", "r1"), CARL, "decision_id"),
    ):
        assert await refused_with(client.stub.DecideHouseFunding(request, metadata=who)) == (
            grpc.StatusCode.ALREADY_EXISTS,
            "IDEMPOTENCY_CONFLICT",
            field,
        )
    assert await bank(client) == (100, 0)  # r2 still pending, nothing of it moved


async def test_a_request_id_binds_every_field_and_its_asker(client: Client) -> None:
    first = await client.stub.RequestHouseFunding(ask("r1", 100), metadata=ANNA)
    retry = await client.stub.RequestHouseFunding(ask("r1", 100), metadata=ANNA)
    assert retry.existing
    assert retry.funding == first.funding
    for request, who in (
        (ask("r1", 101), ANNA),
        (ask("r1", 100, pool=MPX), ANNA),
        (ask("r1", 100, account=JACKPOT), ANNA),
        (ask("r1", 100, reason="other"), ANNA),
        (ask("r1", 100), BORIS),
    ):
        assert await refused(client.stub.RequestHouseFunding(request, metadata=who)) == (
            grpc.StatusCode.ALREADY_EXISTS,
            "IDEMPOTENCY_CONFLICT",
        )
    listed = await client.stub.ListHouseFunding(cashier_pb2.ListHouseFundingRequest(), metadata=ANNA)
    assert len(listed.fundings) == 1


async def test_a_decided_request_is_decided_for_good_and_a_rejection_moves_nothing(client: Client) -> None:
    await client.stub.RequestHouseFunding(ask("r1", 700, account=JACKPOT), metadata=ANNA)
    rejected = await client.stub.DecideHouseFunding(
        decide("d1", "r1", approve=False, reason="no"), metadata=BORIS
    )
    assert rejected.funding.state == REJECTED
    assert not rejected.HasField("transfer")
    assert rejected.balance_after == 0
    assert await refused(client.stub.DecideHouseFunding(decide("d2", "r1"), metadata=CARL)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "FUNDING_ALREADY_DECIDED",
    )
    assert await bank(client) == (0, 0)
    assert await refused(client.stub.DecideHouseFunding(decide("d3", "nope"), metadata=CARL)) == (
        grpc.StatusCode.NOT_FOUND,
        "FUNDING_REQUEST_NOT_FOUND",
    )


async def test_defunding_beyond_the_balance_is_refused_and_the_request_stays_pending(client: Client) -> None:
    await client.stub.RequestHouseFunding(ask("fund", 1_000), metadata=ANNA)
    await client.stub.DecideHouseFunding(decide("ok", "fund"), metadata=BORIS)
    await client.stub.RequestHouseFunding(ask("take", -5_000), metadata=BORIS)
    for _ in range(2):
        assert await refused(client.stub.DecideHouseFunding(decide("d-take", "take"), metadata=ANNA)) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "INSUFFICIENT_FUNDS",
        )
    queue = await client.stub.ListHouseFunding(
        cashier_pb2.ListHouseFundingRequest(state=PENDING), metadata=CARL
    )
    assert [f.request_id for f in queue.fundings] == ["take"]
    await client.stub.RequestHouseFunding(ask("take-less", -400), metadata=BORIS)
    taken = await client.stub.DecideHouseFunding(decide("d-less", "take-less"), metadata=CARL)
    assert taken.balance_after == 600
    assert await bank(client) == (600, 0)
    assert await balanced(client)


@pytest.mark.parametrize(
    ("request_message", "code", "reason"),
    [
        (ask("", 10), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED"),
        (ask("r", 0), grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_INVALID"),
        (ask("r", 10, pool=0), grpc.StatusCode.INVALID_ARGUMENT, "POOL_INVALID"),
        (ask("r", 10, account=0), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED"),
        (ask("r", 10, account=9), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
        (ask("r", 10, reason=""), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED"),
        (ask("r\x00", 10), grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
        (ask("r", 10**18), grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_INVALID"),
    ],
)
async def test_bad_requests_are_refused_and_change_nothing(
    client: Client, request_message: object, code: grpc.StatusCode, reason: str
) -> None:
    assert await refused(client.stub.RequestHouseFunding(request_message, metadata=ANNA)) == (code, reason)
    listed = await client.stub.ListHouseFunding(cashier_pb2.ListHouseFundingRequest(), metadata=ANNA)
    assert list(listed.fundings) == []


async def test_the_queue_pages_newest_first(client: Client) -> None:
    for index in range(5):
        await client.stub.RequestHouseFunding(ask(f"r{index}", 10 + index), metadata=ANNA)
    seen: list[str] = []
    token = ""
    while True:
        page = await client.stub.ListHouseFunding(
            cashier_pb2.ListHouseFundingRequest(page=common_pb2.PageRequest(page_size=2, page_token=token)),
            metadata=BORIS,
        )
        seen += [f.request_id for f in page.fundings]
        token = page.page.next_page_token
        if not token:
            break
    assert seen == ["r4", "r3", "r2", "r1", "r0"]
    first = await client.stub.ListHouseFunding(
        cashier_pb2.ListHouseFundingRequest(page=common_pb2.PageRequest(page_size=2)), metadata=BORIS
    )
    # Made-up tokens, and a token of the whole list offered to the pending queue, are refused.
    for token, state in (("x", 0), ("61", 0), ("0", 0), ("ALL.0", 0), (first.page.next_page_token, PENDING)):
        assert await refused(
            client.stub.ListHouseFunding(
                cashier_pb2.ListHouseFundingRequest(
                    state=state, page=common_pb2.PageRequest(page_token=token)
                ),  # type: ignore[arg-type]
                metadata=BORIS,
            )
        ) == (grpc.StatusCode.INVALID_ARGUMENT, "PAGE_TOKEN_INVALID"), token


PEOPLE = {"anna": ANNA, "boris": BORIS, "carl": CARL}
STEPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("ask"), st.sampled_from(list(PEOPLE)), st.integers(0, 5), st.integers(-3_000, 3_000)
        ),
        st.tuples(st.just("decide"), st.sampled_from(list(PEOPLE)), st.integers(0, 5), st.booleans()),
    ),
    max_size=14,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
async def test_any_interleaving_moves_each_approved_request_once_and_keeps_the_pools_whole(
    client: Client, steps: list[tuple[str, str, int, object]]
) -> None:
    """Random asks and decisions by three people (retries, conflicts, own decisions, overdrafts among
    them): the bank moves by exactly the approved requests' sum, nobody decided their own, and the
    conservation audit balances. Ids are fresh per example (the database is shared across them)."""
    prefix = f"x{uuid.uuid4().hex[:8]}-"
    before = (await bank(client))[0]
    refusals: list[grpc.StatusCode] = []
    for kind, who, index, value in steps:
        request_id = f"{prefix}{index}"
        try:
            if kind == "ask":
                amount = int(value) or 1  # type: ignore[call-overload]
                await client.stub.RequestHouseFunding(ask(request_id, amount), metadata=PEOPLE[who])
            else:
                approve = bool(value)
                await client.stub.DecideHouseFunding(
                    decide(f"{who}-{request_id}-{approve}", request_id, approve=approve), metadata=PEOPLE[who]
                )
        except grpc.aio.AioRpcError as error:
            refusals.append(error.code())
    everything = [
        f
        for f in (
            await client.stub.ListHouseFunding(
                cashier_pb2.ListHouseFundingRequest(page=common_pb2.PageRequest(page_size=100)), metadata=ANNA
            )
        ).fundings
        if f.request_id.startswith(prefix)
    ]
    assert set(refusals) <= {
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.NOT_FOUND,
    }
    approved = [f for f in everything if f.state == APPROVED]
    assert all(f.decided_by != f.requested_by for f in everything if f.state != PENDING)
    assert (await bank(client))[0] - before == sum(f.amount for f in approved)
    assert await balanced(client)
