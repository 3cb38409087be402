"""The audit trail is append-only and unforgeable (history.proto, RecordAuditEvent; docs/history.md,
"Audit trail"). Found by a tester: a service token (`service:table`, `service:lobby`) or an admin
could write any audit event, so `RecordAuditEvent({event_id: "hold:R1", kind: PLAYER_RELEASED, actor:
"another-admin", subject: P})` answered OK; the admin's later `HoldPlayer(request_id: "R1", player_id:
P)` then answered IDEMPOTENCY_CONFLICT, yet P was held (the cashier's hold came before the audit), and
the log held only the forged "released by another-admin".

Now each writer records only its own kinds, the actor is the caller's verified identity, a writer's
ids live in its own namespace, and a hold is claimed under its request id before the cashier is asked,
so the hold and its PLAYER_HELD event go together (a retry after a failure in between completes both).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import STAFF_ROLES
from service_runtime.clients import create_channel, error_metadata_of
from service_runtime.database import create_engine, create_session_factory
from service_runtime.errors import Unavailable
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.testing import DEV_KEYS, auth_metadata, reason_of, running_server
from services.cashier.application import Cashier
from services.cashier.assembly import ACCESS as CASHIER_ACCESS
from services.cashier.assembly import cashier_service
from services.cashier.assembly import migrate as migrate_cashier
from services.history import storage
from services.history.application import HistoryApplication
from services.history.assembly import ACCESS, history_service
from services.history.cashier_holds import CashierHolds
from services.history.cashier_statements import CashierStatements
from services.history.holds import Hold
from services.history.page_tokens import PageTokens
from tests.history.test_history_holds import seat_request

TABLE = auth_metadata("table", "service")
LOBBY = auth_metadata("lobby", "service")
ADMIN = auth_metadata("ops", *STAFF_ROLES)
OTHER_ADMIN = auth_metadata("another-admin", *STAFF_ROLES)
PAYMENTS = auth_metadata("payments", "service")
CHIP = 10**6
Stub = history_pb2_grpc.HistoryServiceStub


def record(event: history_pb2.AuditEvent) -> history_pb2.RecordAuditEventRequest:
    return history_pb2.RecordAuditEventRequest(event=event)


async def expect_error(call: object, code: grpc.StatusCode, reason: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call  # type: ignore[misc]
    assert (error.value.code(), reason_of(error.value)) == (code, reason)
    return error.value


async def events_about(stub: Stub, subject: str) -> list[history_pb2.AuditEvent]:
    listed = await stub.ListAuditEvents(
        history_pb2.ListAuditEventsRequest(page=common_pb2.PageRequest(page_size=500)), metadata=ADMIN
    )
    return [e for e in listed.events if e.subject == subject]


# --- RecordAuditEvent: own kinds, own name, own ids. ---


@pytest.mark.parametrize("writer", [TABLE, LOBBY, OTHER_ADMIN], ids=["table", "lobby", "admin"])
@pytest.mark.parametrize(
    "kind", ["PLAYER_RELEASED", "PLAYER_HELD", "FAIR_PLAY_CASE_OPENED", "FAIR_PLAY_CASE_RESOLVED"]
)
async def test_nobody_records_the_events_history_writes_itself(
    stub: Stub, writer: tuple[tuple[str, str], ...], kind: str
) -> None:
    player = f"p-{uuid.uuid4().hex[:8]}"
    forged = history_pb2.AuditEvent(event_id="hold:R1", kind=kind, actor="another-admin", subject=player)
    error = await expect_error(
        stub.RecordAuditEvent(record(forged), metadata=writer),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    assert error_metadata_of(error)["field"] == "event.kind"
    assert await events_about(stub, player) == []


async def test_each_writer_records_only_its_own_kinds(stub: Stub) -> None:
    subject = f"s-{uuid.uuid4().hex[:8]}"
    allowed = [
        (TABLE, "HAND_VOIDED"),
        (TABLE, "SETTLEMENT_FAILED"),
        (TABLE, "SUSPICIOUS_PLAY"),
        (LOBBY, "MAINTENANCE_SET"),
        (ADMIN, "OPERATOR_NOTE"),
        (ADMIN, "OPERATOR_REFUND_DECIDED"),
    ]
    for number, (writer, kind) in enumerate(allowed):
        event = history_pb2.AuditEvent(event_id=f"e{number}", kind=kind, subject=subject)
        assert not (await stub.RecordAuditEvent(record(event), metadata=writer)).already_recorded
    refused = [
        (TABLE, "MAINTENANCE_SET"),
        (TABLE, "OPERATOR_NOTE"),
        (LOBBY, "HAND_VOIDED"),
        (ADMIN, "HAND_VOIDED"),
        (ADMIN, "MAINTENANCE_SET"),
        (ADMIN, "ANYTHING_ELSE"),
    ]
    for writer, kind in refused:
        await expect_error(
            stub.RecordAuditEvent(
                record(history_pb2.AuditEvent(event_id="x1", kind=kind, subject=subject)), metadata=writer
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_REQUIRED",
        )
    assert sorted(e.kind for e in await events_about(stub, subject)) == sorted(k for _, k in allowed)


async def test_a_staff_members_record_is_dated_by_the_server_never_by_the_caller(stub: Stub) -> None:
    """Found by an outside tester: support could pin a note at year 9999 (first in the trail for
    good) or date an OPERATOR_ record in 2020. A staff member's (admin's) record takes the server's
    time; a time in the request is INVALID_ARGUMENT `FIELD_INVALID` (`event.time`) and records
    nothing. A service still dates its own events (the table's voids are sent late, after an outage)."""
    subject = f"s-{uuid.uuid4().hex[:8]}"
    for when in ("9999-01-01T00:00:00Z", "2020-01-01T00:00:00Z"):
        event = history_pb2.AuditEvent(event_id=f"pin-{when[:4]}", kind="OPERATOR_NOTE", subject=subject)
        event.time.FromJsonString(when)
        error = await expect_error(
            stub.RecordAuditEvent(record(event), metadata=ADMIN),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
        )
        assert error_metadata_of(error)["field"] == "event.time"
    assert await events_about(stub, subject) == []
    note = history_pb2.AuditEvent(event_id="note-1", kind="OPERATOR_NOTE", subject=subject)
    assert not (await stub.RecordAuditEvent(record(note), metadata=ADMIN)).already_recorded
    assert (await stub.RecordAuditEvent(record(note), metadata=ADMIN)).already_recorded
    voided = history_pb2.AuditEvent(event_id="void-1", kind="HAND_VOIDED", subject=subject)
    voided.time.FromJsonString("2026-01-01T00:00:00Z")
    assert not (await stub.RecordAuditEvent(record(voided), metadata=TABLE)).already_recorded
    stored = {e.kind: e.time.ToJsonString() for e in await events_about(stub, subject)}
    assert stored["HAND_VOIDED"] == "2026-01-01T00:00:00Z"
    assert not stored["OPERATOR_NOTE"].startswith(("9999", "2020"))


async def test_the_actor_is_the_callers_verified_identity(stub: Stub) -> None:
    subject = f"s-{uuid.uuid4().hex[:8]}"
    for writer, actor, kind in (
        (TABLE, "", "HAND_VOIDED"),
        (TABLE, "service:table", "SETTLEMENT_FAILED"),
        (ADMIN, "", "OPERATOR_NOTE"),
        (ADMIN, "ops", "OPERATOR_CHECKED"),
    ):
        event = history_pb2.AuditEvent(event_id=f"a-{kind}", kind=kind, actor=actor, subject=subject)
        await stub.RecordAuditEvent(record(event), metadata=writer)
    # Naming anyone else is refused: the request may only repeat who the token says the caller is.
    for writer, actor, kind in (
        (TABLE, "lobby", "HAND_VOIDED"),
        (TABLE, "ops", "HAND_VOIDED"),
        (OTHER_ADMIN, "ops", "OPERATOR_NOTE"),
        (ADMIN, "history-detectors", "OPERATOR_NOTE"),
    ):
        event = history_pb2.AuditEvent(event_id="a-forged", kind=kind, actor=actor, subject=subject)
        await expect_error(
            stub.RecordAuditEvent(record(event), metadata=writer),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_RESOURCE",
        )
    recorded = {e.kind: e.actor for e in await events_about(stub, subject)}
    assert recorded == {
        "HAND_VOIDED": "service:table",
        "SETTLEMENT_FAILED": "service:table",
        "OPERATOR_NOTE": "ops",
        "OPERATOR_CHECKED": "ops",
    }


GATEWAY = auth_metadata("gateway", "service")


def staff_action(**fields: object) -> history_pb2.StaffAction:
    base: dict[str, object] = {
        "roles": ["risk"],
        "method": "poker.history.v1.HistoryService/HoldPlayer",
        "why": "dumping pattern, case c-1",
        "code": "OK",
        "mutating": True,
    }
    return history_pb2.StaffAction(**{**base, **fields})  # type: ignore[arg-type]


async def test_only_the_staff_door_records_staff_actions_as_the_staff_member_it_names(stub: Stub) -> None:
    """Issue 38: every staff call through the gateway's staff door is recorded as STAFF_ACTION by the
    gateway's own identity, with the staff member it verified as the actor; nobody else writes one."""
    player = f"p-{uuid.uuid4().hex[:8]}"
    event = history_pb2.AuditEvent(
        event_id="sa-1", kind="STAFF_ACTION", actor="rita", subject=player, player_ids=[player],
        staff_action=staff_action(),
    )  # fmt: skip
    assert not (await stub.RecordAuditEvent(record(event), metadata=GATEWAY)).already_recorded
    assert (await stub.RecordAuditEvent(record(event), metadata=GATEWAY)).already_recorded
    (stored,) = await events_about(stub, player)
    assert (stored.actor, stored.event_id, stored.staff_action.why) == (
        "rita",
        "service:gateway/sa-1",
        "dumping pattern, case c-1",
    )
    # Searchable by the staff member, as any actor.
    by_rita = await stub.ListAuditEvents(
        history_pb2.ListAuditEventsRequest(actor="rita", player_id=player), metadata=ADMIN
    )
    assert [e.event_id for e in by_rita.events] == ["service:gateway/sa-1"]
    # Nobody else records one: not a staff member (as themselves or anyone), not another service.
    for writer in (TABLE, LOBBY, ADMIN, auth_metadata("rita", "risk")):
        forged = history_pb2.AuditEvent(
            event_id="sa-2", kind="STAFF_ACTION", subject=player, staff_action=staff_action()
        )
        await expect_error(
            stub.RecordAuditEvent(record(forged), metadata=writer),
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_REQUIRED",
        )
    # The door names a staff member, never a service or the history's own writers; it writes nothing else.
    for actor in ("", "service:table", "history-detectors", "a b", "admin:x", "gateway", "table"):
        bad = history_pb2.AuditEvent(
            event_id="sa-3", kind="STAFF_ACTION", actor=actor, subject=player, staff_action=staff_action()
        )
        await expect_error(
            stub.RecordAuditEvent(record(bad), metadata=GATEWAY),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
        )
    for fields in (
        {"roles": []},
        {"roles": ["player"]},
        {"method": "no method"},
        {"code": "ok"},
        {"why": "a\x00b"},
    ):
        bad = history_pb2.AuditEvent(
            event_id="sa-4",
            kind="STAFF_ACTION",
            actor="rita",
            subject=player,
            staff_action=staff_action(**fields),
        )
        await expect_error(
            stub.RecordAuditEvent(record(bad), metadata=GATEWAY),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
        )
    without = history_pb2.AuditEvent(event_id="sa-5", kind="STAFF_ACTION", actor="rita", subject=player)
    await expect_error(
        stub.RecordAuditEvent(record(without), metadata=GATEWAY),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )
    other_kind = history_pb2.AuditEvent(event_id="sa-6", kind="HAND_VOIDED", actor="rita", subject=player)
    await expect_error(
        stub.RecordAuditEvent(record(other_kind), metadata=GATEWAY),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    smuggled = history_pb2.AuditEvent(
        event_id="sa-7", kind="OPERATOR_NOTE", subject=player, staff_action=staff_action()
    )
    await expect_error(
        stub.RecordAuditEvent(record(smuggled), metadata=ADMIN),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )
    assert [e.event_id for e in await events_about(stub, player)] == ["service:gateway/sa-1"]


async def test_each_writer_has_its_own_event_ids_and_retries_are_idempotent_within_them(stub: Stub) -> None:
    subject = f"s-{uuid.uuid4().hex[:8]}"
    writers = [
        (TABLE, "HAND_VOIDED"),
        (LOBBY, "MAINTENANCE_SET"),
        (ADMIN, "OPERATOR_NOTE"),
        (OTHER_ADMIN, "OPERATOR_NOTE"),
    ]
    for writer, kind in writers:
        event = history_pb2.AuditEvent(event_id="hold:R1", kind=kind, subject=subject, details="first")
        assert not (await stub.RecordAuditEvent(record(event), metadata=writer)).already_recorded
        assert (await stub.RecordAuditEvent(record(event), metadata=writer)).already_recorded
        changed = history_pb2.AuditEvent(event_id="hold:R1", kind=kind, subject=subject, details="second")
        await expect_error(
            stub.RecordAuditEvent(record(changed), metadata=writer),
            grpc.StatusCode.ALREADY_EXISTS,
            "IDEMPOTENCY_CONFLICT",
        )
    stored = sorted(e.event_id for e in await events_about(stub, subject))
    assert stored == sorted(
        [
            "service:table/hold:R1",
            "service:lobby/hold:R1",
            "admin:ops/hold:R1",
            "admin:another-admin/hold:R1",
        ]
    )
    # A writer's id is 1 to 64 characters (its namespace makes the rest of the stored id).
    await expect_error(
        stub.RecordAuditEvent(
            record(history_pb2.AuditEvent(event_id="x" * 65, kind="HAND_VOIDED", subject=subject)),
            metadata=TABLE,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )


# --- Holds: the hold and its audit event together. ---


class FlakyHolds:
    """The cashier's holds with faults: `away` refuses before the cashier is asked (the cashier down);
    `lose_answer` asks the cashier, then fails as if its answer was lost. Counts the calls."""

    def __init__(self, inner: CashierHolds) -> None:
        self.inner = inner
        self.calls = 0
        self.away = False
        self.lose_answer = False

    async def set_hold(
        self, request_id: str, player_id: str, held: bool, reason: str, *, withdrawals_only: bool = False
    ) -> Hold:
        self.calls += 1
        if self.away:
            raise Unavailable("UNAVAILABLE", "the cashier cannot be reached; retry later")
        hold = await self.inner.set_hold(
            request_id, player_id, held, reason, withdrawals_only=withdrawals_only
        )
        if self.lose_answer:
            raise Unavailable("UNAVAILABLE", "the cashier cannot be reached; retry later")
        return hold


@dataclass
class Cluster:
    history: Stub
    cashier: cashier_pb2_grpc.CashierServiceStub
    holds: FlakyHolds
    sessions: async_sessionmaker[AsyncSession]


@pytest.fixture
async def cluster(history_database_url: str, tmp_path: Path) -> AsyncIterator[Cluster]:
    cashier_url = f"sqlite+aiosqlite:///{(tmp_path / 'cashier.db').as_posix()}"
    migrate_cashier(cashier_url)
    cashier_engine = create_engine(cashier_url)
    history_engine = create_engine(history_database_url, pool_size=5)
    try:
        async with running_server([cashier_service(Cashier(cashier_engine))], CASHIER_ACCESS) as (
            cashier_server,
            cashier_channel,
        ):
            to_cashier = create_channel(
                f"127.0.0.1:{cashier_server.port}",
                timeout_seconds=5,
                token=ServiceTokenSource(DEV_KEYS, "history"),
            )
            holds = FlakyHolds(CashierHolds(to_cashier))
            sessions = create_session_factory(history_engine)
            application = HistoryApplication(
                sessions,
                PageTokens(b"k" * 32),
                CashierStatements(to_cashier),
                holds=holds,
            )
            try:
                async with running_server([history_service(application)], ACCESS) as (_, channel):
                    yield Cluster(
                        history_pb2_grpc.HistoryServiceStub(channel),
                        cashier_pb2_grpc.CashierServiceStub(cashier_channel),
                        holds,
                        sessions,
                    )
            finally:
                await to_cashier.close()
    finally:
        await cashier_engine.dispose()
        await history_engine.dispose()


async def funded_player(cluster: Cluster) -> str:
    player = f"p-{uuid.uuid4().hex[:8]}"
    await cluster.cashier.Purchase(
        cashier_pb2.PurchaseRequest(
            payment_reference=f"pay-{player}",
            player_id=player,
            source=cashier_pb2.PAYMENT_SOURCE_GRAM,
            amount_minor=5_000 * CHIP,
        ),
        metadata=PAYMENTS,
    )
    return player


async def is_held(cluster: Cluster, player: str) -> bool:
    try:
        await cluster.cashier.OpenSeatSession(
            seat_request(f"t-{uuid.uuid4().hex[:6]}/{player}", player, f"t-{uuid.uuid4().hex[:6]}", 1),
            metadata=TABLE,
        )
    except grpc.aio.AioRpcError as error:
        refusal = (error.code(), reason_of(error))
    else:
        return False
    assert refusal == (grpc.StatusCode.FAILED_PRECONDITION, "PLAYER_ON_HOLD")
    return True


def held_by(events: list[history_pb2.AuditEvent]) -> list[tuple[str, str, str]]:
    return [(e.event_id, e.kind, e.actor) for e in events]


async def test_a_forged_release_is_refused_and_the_admins_hold_then_works_and_names_the_admin(
    cluster: Cluster,
) -> None:
    player = await funded_player(cluster)
    request_id = f"R1-{uuid.uuid4().hex[:8]}"
    forged = history_pb2.AuditEvent(
        event_id=f"hold:{request_id}", kind="PLAYER_RELEASED", actor="another-admin", subject=player
    )
    for writer in (TABLE, LOBBY, OTHER_ADMIN):
        await expect_error(
            cluster.history.RecordAuditEvent(record(forged), metadata=writer),
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_REQUIRED",
        )
    # Even a kind the writer may record cannot take history's id: it lands in the writer's namespace.
    note = history_pb2.AuditEvent(event_id=f"hold:{request_id}", kind="OPERATOR_NOTE", subject=player)
    await cluster.history.RecordAuditEvent(record(note), metadata=OTHER_ADMIN)

    held = await cluster.history.HoldPlayer(
        history_pb2.HoldPlayerRequest(request_id=request_id, player_id=player, reason="case review"),
        metadata=ADMIN,
    )
    assert (held.hold.held, held.existing) == (True, False)
    assert await is_held(cluster, player)
    events = await events_about(cluster.history, player)
    assert sorted(held_by(events)) == [
        (f"admin:another-admin/hold:{request_id}", "OPERATOR_NOTE", "another-admin"),
        (f"hold:{request_id}", "PLAYER_HELD", "ops"),
    ]
    (hold_event,) = [e for e in events if e.kind == "PLAYER_HELD"]
    assert "held by ops: case review" in hold_event.details


async def test_a_hold_whose_cashier_answer_was_lost_completes_hold_and_audit_on_retry(
    cluster: Cluster,
) -> None:
    player = await funded_player(cluster)
    request = history_pb2.HoldPlayerRequest(
        request_id=f"R2-{uuid.uuid4().hex[:8]}", player_id=player, reason="case review"
    )
    # The cashier is away: nothing held, nothing audited.
    cluster.holds.away = True
    await expect_error(
        cluster.history.HoldPlayer(request, metadata=ADMIN), grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE"
    )
    assert not await is_held(cluster, player)
    assert await events_about(cluster.history, player) == []
    # The cashier holds the player, but its answer is lost on the way back: history has no answer.
    cluster.holds.away, cluster.holds.lose_answer = False, True
    await expect_error(
        cluster.history.HoldPlayer(request, metadata=ADMIN), grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE"
    )
    assert await is_held(cluster, player)
    # The retry completes both: the hold (the cashier's earlier change) and its one audit event.
    cluster.holds.lose_answer = False
    again = await cluster.history.HoldPlayer(request, metadata=ADMIN)
    assert (again.hold.held, again.existing) == (True, True)
    once_more = await cluster.history.HoldPlayer(request, metadata=ADMIN)
    assert (once_more.hold, once_more.existing) == (again.hold, True)
    assert held_by(await events_about(cluster.history, player)) == [
        (f"hold:{request.request_id}", "PLAYER_HELD", "ops")
    ]


async def test_a_request_id_reused_for_another_change_is_refused_before_the_cashier_is_asked(
    cluster: Cluster,
) -> None:
    first, second = await funded_player(cluster), await funded_player(cluster)
    request_id = f"R3-{uuid.uuid4().hex[:8]}"
    await cluster.history.HoldPlayer(
        history_pb2.HoldPlayerRequest(request_id=request_id, player_id=first, reason="case review"),
        metadata=ADMIN,
    )
    calls = cluster.holds.calls
    for conflicting in (
        history_pb2.HoldPlayerRequest(request_id=request_id, player_id=second, reason="case review"),
        history_pb2.HoldPlayerRequest(request_id=request_id, player_id=first, reason="another reason"),
    ):
        await expect_error(
            cluster.history.HoldPlayer(conflicting, metadata=ADMIN),
            grpc.StatusCode.ALREADY_EXISTS,
            "IDEMPOTENCY_CONFLICT",
        )
    await expect_error(
        cluster.history.ReleasePlayer(
            history_pb2.ReleasePlayerRequest(request_id=request_id, player_id=first, reason="case review"),
            metadata=ADMIN,
        ),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    assert cluster.holds.calls == calls
    assert not await is_held(cluster, second)


async def test_a_hold_id_taken_by_an_event_written_before_this_fix_is_a_conflict_before_the_cashier(
    cluster: Cluster,
) -> None:
    # A forged event stored by an earlier version (RecordAuditEvent once took any id), written here
    # straight into the database as that version did.
    player = await funded_player(cluster)
    request_id = f"R4-{uuid.uuid4().hex[:8]}"
    forged = history_pb2.AuditEvent(
        event_id=f"hold:{request_id}", kind="PLAYER_RELEASED", actor="another-admin", subject=player
    )
    forged.time.GetCurrentTime()
    async with cluster.sessions.begin() as session:
        await storage.insert_audit_event(session, forged, storage.serialise(forged))
    calls = cluster.holds.calls
    await expect_error(
        cluster.history.HoldPlayer(
            history_pb2.HoldPlayerRequest(request_id=request_id, player_id=player, reason="case review"),
            metadata=ADMIN,
        ),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    assert cluster.holds.calls == calls
    assert not await is_held(cluster, player)


async def test_the_database_refuses_to_change_or_delete_the_trail(
    stub: Stub, history_database_url: str
) -> None:
    """Issue 38: a staff member cannot edit or delete the trail, even with the database's credentials."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import DBAPIError

    from service_runtime.database import sync_url

    player = f"p-{uuid.uuid4().hex[:8]}"
    event = history_pb2.AuditEvent(
        event_id="sa-db", kind="STAFF_ACTION", actor="rita", subject=player, player_ids=[player],
        staff_action=staff_action(),
    )  # fmt: skip
    await stub.RecordAuditEvent(record(event), metadata=GATEWAY)
    engine = create_engine(sync_url(history_database_url))
    try:
        for statement in (
            "UPDATE history_audit_events SET actor = 'someone' WHERE event_id = 'service:gateway/sa-db'",
            "DELETE FROM history_audit_events WHERE event_id = 'service:gateway/sa-db'",
            f"DELETE FROM history_audit_event_players WHERE player_id = '{player}'",
            f"UPDATE history_audit_event_players SET player_id = 'x' WHERE player_id = '{player}'",
        ):
            with engine.connect() as connection, pytest.raises(DBAPIError, match="append-only"):
                connection.execute(text(statement))
    finally:
        engine.dispose()
    (kept,) = await events_about(stub, player)
    assert kept.actor == "rita"
