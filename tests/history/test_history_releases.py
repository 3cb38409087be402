"""Four-eyes on releasing held chips (issue 38): ReleasePlayer and ResolveCase RELEASE only ask;
DecideRelease by another member of finance decides, once, by its own id; the approval queue pages.
(The approvals that reach the cashier are in test_history_holds.py and test_history_auto_holds.py.)"""

from __future__ import annotations

import uuid

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.testing import auth_metadata, reason_of
from services.history import hold_storage
from services.history.application import HistoryApplication
from services.history.hold_storage import HoldRequest

Stub = history_pb2_grpc.HistoryServiceStub
RISK = auth_metadata("rita", "risk")
FINANCE = auth_metadata("fiona", "finance")
PENDING = history_pb2.RELEASE_REQUEST_STATE_PENDING
REJECTED = history_pb2.RELEASE_REQUEST_STATE_REJECTED


async def expect(call: object, code: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call  # type: ignore[misc]
    assert (error.value.code(), reason_of(error.value)) == (code, reason)


def ask(request_id: str, player: str, reason: str = "cleared") -> history_pb2.ReleasePlayerRequest:
    return history_pb2.ReleasePlayerRequest(request_id=request_id, player_id=player, reason=reason)


def decide(
    decision_id: str, request_id: str, approve: bool, reason: str = "reviewed"
) -> history_pb2.DecideReleaseRequest:
    return history_pb2.DecideReleaseRequest(
        decision_id=decision_id, request_id=request_id, approve=approve, reason=reason
    )


async def held(application: HistoryApplication, player: str) -> None:
    """The player as HoldPlayer leaves them (its claim, done): this fixture's history has no cashier."""
    async with application._writing() as session:
        await hold_storage.insert_hold_request(
            session, HoldRequest(f"h-{player}", player, True, "review", "", "ops", 1, done=True)
        )


async def test_a_release_is_asked_once_decided_once_and_never_by_the_asker(
    stub: Stub, application: HistoryApplication
) -> None:
    tag = uuid.uuid4().hex[:8]
    await expect(
        stub.ReleasePlayer(ask(f"r-{tag}", f"p-{tag}"), metadata=RISK),
        grpc.StatusCode.FAILED_PRECONDITION,
        "PLAYER_NOT_ON_HOLD",
    )
    await held(application, f"p-{tag}")
    first = await stub.ReleasePlayer(ask(f"r-{tag}", f"p-{tag}"), metadata=RISK)
    assert (first.release.state, first.release.asked_by, first.existing) == (PENDING, "rita", False)
    again = await stub.ReleasePlayer(ask(f"r-{tag}", f"p-{tag}"), metadata=RISK)
    assert again.existing
    assert again.release == first.release
    await expect(
        stub.ReleasePlayer(ask(f"r-{tag}", f"p-{tag}", "other words"), metadata=RISK),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    # The asker cannot decide, whatever roles their token holds and however their name is spelt.
    for same in (auth_metadata("rita", "finance", "risk"), auth_metadata("RITA", "finance")):
        await expect(
            stub.DecideRelease(decide(f"d-{tag}", f"r-{tag}", True), metadata=same),
            grpc.StatusCode.PERMISSION_DENIED,
            "FOUR_EYES_REQUIRED",
        )
    await expect(
        stub.DecideRelease(decide(f"d-{tag}", f"r-{tag}", True), metadata=auth_metadata("rita ", "finance")),
        grpc.StatusCode.PERMISSION_DENIED,
        "FOUR_EYES_REQUIRED",
    )
    await expect(
        stub.DecideRelease(decide(f"d-{tag}", f"r-{tag}", True), metadata=RISK),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    await expect(
        stub.DecideRelease(decide(f"d-{tag}", "no-such-request", True), metadata=FINANCE),
        grpc.StatusCode.NOT_FOUND,
        "RELEASE_REQUEST_NOT_FOUND",
    )
    rejected = await stub.DecideRelease(decide(f"d-{tag}", f"r-{tag}", False), metadata=FINANCE)
    assert (rejected.release.state, rejected.release.decided_by, rejected.existing) == (
        REJECTED,
        "fiona",
        False,
    )
    replay = await stub.DecideRelease(decide(f"d-{tag}", f"r-{tag}", False), metadata=FINANCE)
    assert replay.existing
    assert replay.release == rejected.release
    await expect(
        stub.DecideRelease(decide(f"d-{tag}", f"r-{tag}", True), metadata=FINANCE),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    await expect(
        stub.DecideRelease(decide(f"d2-{tag}", f"r-{tag}", True), metadata=auth_metadata("fedor", "finance")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "RELEASE_ALREADY_DECIDED",
    )
    events = await stub.ListAuditEvents(
        history_pb2.ListAuditEventsRequest(kind="RELEASE_DECIDED", player_id=f"p-{tag}"), metadata=FINANCE
    )
    assert [(e.actor, e.details.split(" ")[0]) for e in events.events] == [("fiona", "REJECTED")]


async def test_bad_input_is_refused_and_the_queue_pages_by_state(
    stub: Stub, application: HistoryApplication
) -> None:
    tag = uuid.uuid4().hex[:8]
    await held(application, f"q-{tag}")
    for request, reason in (
        (ask("", f"p-{tag}"), "FIELD_REQUIRED"),
        (ask(f"x-{tag}", ""), "FIELD_REQUIRED"),
        (ask(f"x-{tag}", f"p-{tag}", ""), "FIELD_REQUIRED"),
        (ask(f"x-{tag}", f"p-{tag}", "причина"), "FIELD_INVALID"),
    ):
        await expect(stub.ReleasePlayer(request, metadata=RISK), grpc.StatusCode.INVALID_ARGUMENT, reason)
    for request, reason in (
        (decide("", "r", True), "FIELD_REQUIRED"),
        (decide("d", "", True), "FIELD_REQUIRED"),
        (decide("d", "r", True, ""), "FIELD_REQUIRED"),
        (decide("d" * 65, "r", True), "FIELD_INVALID"),
    ):
        await expect(stub.DecideRelease(request, metadata=FINANCE), grpc.StatusCode.INVALID_ARGUMENT, reason)
    for number in range(3):
        await stub.ReleasePlayer(ask(f"q{number}-{tag}", f"q-{tag}"), metadata=RISK)
    seen: list[str] = []
    token = ""
    while True:
        page = await stub.ListReleaseRequests(
            history_pb2.ListReleaseRequestsRequest(
                state=PENDING, page=common_pb2.PageRequest(page_size=2, page_token=token)
            ),
            metadata=FINANCE,
        )
        seen += [r.request_id for r in page.releases if r.player_id == f"q-{tag}"]
        assert all(r.state == PENDING for r in page.releases)
        token = page.page.next_page_token
        if not token:
            break
    assert sorted(seen) == sorted(f"q{n}-{tag}" for n in range(3))
    await expect(
        stub.ListReleaseRequests(history_pb2.ListReleaseRequestsRequest(state=9), metadata=FINANCE),  # type: ignore[arg-type]
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )
    await expect(
        stub.ListReleaseRequests(
            history_pb2.ListReleaseRequestsRequest(page=common_pb2.PageRequest(page_token=token or "forged")),
            metadata=FINANCE,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "PAGE_TOKEN_INVALID",
    )
