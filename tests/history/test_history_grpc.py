"""The history API through a real gRPC server on port 0 (SQLite and PostgreSQL): roles, idempotency,
bad input, unknown ids and page tokens, each asserted by status code and ErrorInfo reason."""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import Awaitable

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import STAFF_ROLES
from service_runtime.testing import auth_metadata, reason_of, token_for
from tests.history.engine_hands import varied_records

SERVICE = auth_metadata("table", "service")
ADMIN = auth_metadata("ops", *STAFF_ROLES)
Stub = history_pb2_grpc.HistoryServiceStub


def player(subject: str) -> tuple[tuple[str, str], ...]:
    return auth_metadata(subject, "player")


async def expect_error(call: Awaitable[object], code: grpc.StatusCode, reason: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    assert (error.value.code(), reason_of(error.value)) == (code, reason)
    return error.value


async def record_all(stub: Stub, records: list[history_pb2.HandRecord]) -> None:
    for record in records:
        response = await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)
        assert not response.already_recorded


def unique_prefix() -> str:
    return f"u{uuid.uuid4().hex[:6]}-"


async def test_record_hand_is_idempotent_and_a_different_record_is_a_conflict_that_changes_nothing(
    stub: Stub,
) -> None:
    record = varied_records(1, prefix=unique_prefix(), table_id=f"t-{uuid.uuid4().hex[:8]}")[0]
    await record_all(stub, [record])
    again = await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)
    assert again.already_recorded
    altered = history_pb2.HandRecord()
    altered.CopyFrom(record)
    altered.seats[0].display_name = "Someone else"
    await expect_error(
        stub.RecordHand(history_pb2.RecordHandRequest(hand=altered), metadata=SERVICE),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    stored = await stub.GetHand(history_pb2.GetHandRequest(hand_id=record.hand_id), metadata=ADMIN)
    assert stored.hand == record


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda r: r.ClearField("hand_id"), "FIELD_REQUIRED"),
        (lambda r: setattr(r, "table_id", "bad id with spaces"), "FIELD_INVALID"),
        (lambda r: setattr(r, "pool", common_pb2.CHIP_POOL_UNSPECIFIED), "POOL_INVALID"),
        (lambda r: setattr(r.seats[0], "display_name", "bad\x00name"), "FIELD_INVALID"),
        (lambda r: setattr(r.seats[0], "net_result", r.seats[0].net_result + 1), "FIELD_INVALID"),
        (lambda r: setattr(r.seats[0], "final_stack", r.seats[0].final_stack + 1), "FIELD_INVALID"),
        (lambda r: setattr(r.seats[0].hole_cards[0], "index", 77), "INVALID_CARD"),
        (lambda r: r.seats[1].hole_cards[0].CopyFrom(r.seats[0].hole_cards[0]), "INVALID_CARD"),
        (lambda r: setattr(r, "rake", r.rake + 1), "FIELD_INVALID"),
        (lambda r: setattr(r.actions[0], "kind", "TELEPORT"), "FIELD_INVALID"),
        (lambda r: setattr(r.actions[3], "sequence", 99), "FIELD_INVALID"),
        (lambda r: setattr(r, "seed_commitment", "not-hex"), "FIELD_INVALID"),
        (lambda r: r.ClearField("end_time"), "FIELD_REQUIRED"),
        (lambda r: setattr(r.seats[0], "client_fingerprint", "x" * 129), "FIELD_INVALID"),
        (lambda r: setattr(r.seats[0], "network_fingerprint", "has space"), "FIELD_INVALID"),
        # Only a player's own decision has a time (a post or a board card has none), of at most a day.
        (lambda r: setattr(r.actions[0], "decision_ms", 5), "FIELD_INVALID"),
        (
            lambda r: setattr(
                next(a for a in r.actions if a.cause == history_pb2.ACTION_CAUSE_PLAYER),
                "decision_ms",
                86_400_001,
            ),
            "FIELD_INVALID",
        ),
        (lambda r: setattr(r.end_time, "seconds", 2**62), "FIELD_INVALID"),
        (
            lambda r: r.actions.add(sequence=len(r.actions), street="SHOWDOWN", kind="DEAL_BOARD"),
            "FIELD_INVALID",
        ),
        (lambda r: setattr(r.start_time, "nanos", -1), "FIELD_INVALID"),
        (lambda r: setattr(r.seats[0], "starting_stack", -5), "AMOUNT_INVALID"),
    ],
)
async def test_a_malformed_record_is_refused_with_its_reason_and_stores_nothing(
    stub: Stub, change: object, reason: str
) -> None:
    record = varied_records(1, prefix=unique_prefix(), table_id=f"t-{uuid.uuid4().hex[:8]}", seed=3)[0]
    hand_id = record.hand_id
    change(record)  # type: ignore[operator]
    await expect_error(
        stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE),
        grpc.StatusCode.INVALID_ARGUMENT,
        reason,
    )
    if hand_id:
        await expect_error(
            stub.GetHand(history_pb2.GetHandRequest(hand_id=hand_id), metadata=ADMIN),
            grpc.StatusCode.NOT_FOUND,
            "HAND_NOT_FOUND",
        )


async def test_tokens_and_roles_are_enforced(stub: Stub) -> None:
    record = varied_records(1, prefix=unique_prefix(), table_id=f"t-{uuid.uuid4().hex[:8]}")[0]
    request = history_pb2.RecordHandRequest(hand=record)
    await expect_error(stub.RecordHand(request), grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
    forged = token_for("table", "service")[:-4] + "AAAA"
    await expect_error(
        stub.RecordHand(request, metadata=(("authorization", f"Bearer {forged}"),)),
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_INVALID_SIGNATURE",
    )
    expired = token_for("table", "service", ttl_seconds=-10)
    await expect_error(
        stub.RecordHand(request, metadata=(("authorization", f"Bearer {expired}"),)),
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_EXPIRED",
    )
    await expect_error(
        stub.RecordHand(request, metadata=player(record.seats[0].player_id)),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    await expect_error(
        stub.RecordHand(request, metadata=ADMIN), grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED"
    )
    await expect_error(
        stub.ListAuditEvents(history_pb2.ListAuditEventsRequest(), metadata=player("alice")),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    await expect_error(
        stub.RecordAuditEvent(
            history_pb2.RecordAuditEventRequest(
                event=history_pb2.AuditEvent(event_id="e1", actor="alice", kind="X")
            ),
            metadata=player("alice"),
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )


async def test_unknown_and_other_players_hands_are_not_found_alike(stub: Stub) -> None:
    prefix = unique_prefix()
    table = f"t-{uuid.uuid4().hex[:8]}"
    record = varied_records(1, prefix=prefix, table_id=table)[0]
    await record_all(stub, [record])
    outsider = player(f"{prefix}outsider")
    for hand_id in (record.hand_id, "no-such-hand"):
        await expect_error(
            stub.GetHand(history_pb2.GetHandRequest(hand_id=hand_id), metadata=outsider),
            grpc.StatusCode.NOT_FOUND,
            "HAND_NOT_FOUND",
        )
        await expect_error(
            stub.ExportHands(
                history_pb2.ExportHandsRequest(
                    hand_ids=[hand_id], format=history_pb2.EXPORT_FORMAT_POKERSTARS_TEXT
                ),
                metadata=outsider,
            ),
            grpc.StatusCode.NOT_FOUND,
            "HAND_NOT_FOUND",
        )
    for table_id in (table, "no-such-table"):
        await expect_error(
            stub.ListTableHands(history_pb2.ListTableHandsRequest(table_id=table_id), metadata=outsider),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )
    mine = await stub.ListMyHands(history_pb2.ListMyHandsRequest(), metadata=outsider)
    assert list(mine.hands) == []
    # A participant asking for the same hand twice, or for no format, is refused as bad input.
    participant = player(record.seats[0].player_id)
    await expect_error(
        stub.ExportHands(
            history_pb2.ExportHandsRequest(
                hand_ids=[record.hand_id] * 2, format=history_pb2.EXPORT_FORMAT_POKERSTARS_TEXT
            ),
            metadata=participant,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )
    await expect_error(
        stub.ExportHands(history_pb2.ExportHandsRequest(hand_ids=[record.hand_id]), metadata=participant),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_REQUIRED",
    )


async def test_lists_page_newest_first_with_opaque_tamper_evident_tokens(stub: Stub) -> None:
    prefix = unique_prefix()
    table = f"t-{uuid.uuid4().hex[:8]}"
    records = varied_records(30, prefix=prefix, table_id=table, seed=11)
    await record_all(stub, records)
    counts: dict[str, int] = {}
    for record in records:
        for seat in record.seats:
            counts[seat.player_id] = counts.get(seat.player_id, 0) + 1
    hero = max(counts, key=lambda p: counts[p])
    expected = [
        r.hand_id
        for r in sorted(records, key=lambda r: r.end_time.ToMicroseconds(), reverse=True)
        if any(s.player_id == hero for s in r.seats)
    ]
    seen: list[str] = []
    token = ""
    tokens = []
    while True:
        page = await stub.ListMyHands(
            history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_size=4, page_token=token)),
            metadata=player(hero),
        )
        seen += [h.hand_id for h in page.hands]
        token = page.page.next_page_token
        if not token:
            break
        tokens.append(token)
    assert seen == expected
    table_page = await stub.ListTableHands(
        history_pb2.ListTableHandsRequest(table_id=table, page=common_pb2.PageRequest(page_size=500)),
        metadata=player(hero),
    )
    assert [h.hand_id for h in table_page.hands] == expected
    everything = await stub.ListTableHands(
        history_pb2.ListTableHandsRequest(table_id=table, page=common_pb2.PageRequest(page_size=500)),
        metadata=ADMIN,
    )
    assert len(everything.hands) == len(records)

    first = tokens[0]
    payload, _, mac = first.partition(".")
    tampered_payload = (
        base64.urlsafe_b64encode(
            base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).replace(b'"p":[', b'"p":[9')
        )
        .rstrip(b"=")
        .decode()
    )
    for bad, problem in (("garbage", "malformed"), (f"{tampered_payload}.{mac}", "signature")):
        error = await expect_error(
            stub.ListMyHands(
                history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_token=bad)),
                metadata=player(hero),
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "PAGE_TOKEN_INVALID",
        )
        assert problem in str(error.trailing_metadata())  # metadata names the problem
    # Another player's token, or the same token on another list, is refused too.
    await expect_error(
        stub.ListMyHands(
            history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_token=first)),
            metadata=player("intruder"),
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "PAGE_TOKEN_INVALID",
    )
    await expect_error(
        stub.ListTableHands(
            history_pb2.ListTableHandsRequest(table_id=table, page=common_pb2.PageRequest(page_token=first)),
            metadata=player(hero),
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "PAGE_TOKEN_INVALID",
    )
    await expect_error(
        stub.ListMyHands(
            history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_size=-1)), metadata=player(hero)
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )


async def test_audit_events_are_idempotent_admin_only_and_paged(stub: Stub) -> None:
    # Admins record their own `OPERATOR_*` kinds by hand (tests/history/test_history_audit_trail.py
    # has each writer's kinds); a kind of its own per run keeps this test's list apart.
    kind = f"OPERATOR_TEST_{uuid.uuid4().hex[:8].upper()}"
    ids = [f"ev-{uuid.uuid4().hex[:16]}" for _ in range(5)]
    for event_id in ids:
        event = history_pb2.AuditEvent(
            event_id=event_id,
            kind=kind,
            subject="room-1",
            details="maintenance on",
            player_ids=["alice"],
            table_id="t1",
        )
        first = await stub.RecordAuditEvent(history_pb2.RecordAuditEventRequest(event=event), metadata=ADMIN)
        again = await stub.RecordAuditEvent(history_pb2.RecordAuditEventRequest(event=event), metadata=ADMIN)
        assert (first.already_recorded, again.already_recorded) == (False, True)
    changed = history_pb2.AuditEvent(event_id=ids[0], kind=kind, details="something else")
    await expect_error(
        stub.RecordAuditEvent(history_pb2.RecordAuditEventRequest(event=changed), metadata=ADMIN),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    voided = history_pb2.AuditEvent(event_id=ids[0], kind="HAND_VOIDED", subject="hand-1")
    # The same id in another writer's namespace is another event.
    assert not (
        await stub.RecordAuditEvent(history_pb2.RecordAuditEventRequest(event=voided), metadata=SERVICE)
    ).already_recorded
    await expect_error(
        stub.RecordAuditEvent(
            history_pb2.RecordAuditEventRequest(
                event=history_pb2.AuditEvent(event_id="x", actor="ops", kind="lower")
            ),
            metadata=ADMIN,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )
    far_future = history_pb2.AuditEvent(event_id="late", actor="ops", kind="OPERATOR_NOTE")
    far_future.time.seconds = 2**62
    await expect_error(
        stub.RecordAuditEvent(history_pb2.RecordAuditEventRequest(event=far_future), metadata=ADMIN),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )
    listed: list[str] = []
    token = ""
    while True:
        page = await stub.ListAuditEvents(
            history_pb2.ListAuditEventsRequest(
                kind=kind, page=common_pb2.PageRequest(page_size=2, page_token=token)
            ),
            metadata=ADMIN,
        )
        listed += [e.event_id for e in page.events]
        token = page.page.next_page_token
        if not token:
            break
    assert listed == [f"admin:ops/{event_id}" for event_id in reversed(ids)]


async def test_concurrent_retries_of_one_hand_store_it_once(stub: Stub) -> None:
    record = varied_records(1, prefix=unique_prefix(), table_id=f"t-{uuid.uuid4().hex[:8]}", seed=5)[0]
    responses = await asyncio.gather(
        *(stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE) for _ in range(6))
    )
    assert sorted(r.already_recorded for r in responses) == [False] + [True] * 5
    mine = await stub.ListMyHands(
        history_pb2.ListMyHandsRequest(), metadata=player(record.seats[0].player_id)
    )
    assert [h.hand_id for h in mine.hands] == [record.hand_id]


async def test_many_hands_at_once_each_stored_once_with_its_own_answer(stub: Stub) -> None:
    """On SQLite the hands waiting for the writer share one transaction (group commit); each still
    gets its own answer: stored, a retry of a stored one, or a conflict that changes nothing."""
    table_id = f"t-{uuid.uuid4().hex[:8]}"
    records = varied_records(24, prefix=unique_prefix(), table_id=table_id, seed=11)
    conflicting = history_pb2.HandRecord()
    conflicting.CopyFrom(records[0])
    conflicting.room_id = records[0].room_id + "-other"
    calls = [*records, records[3], records[7], conflicting]
    outcomes = await asyncio.gather(
        *(stub.RecordHand(history_pb2.RecordHandRequest(hand=r), metadata=SERVICE) for r in calls),
        return_exceptions=True,
    )
    refused = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert [(e.code(), reason_of(e)) for e in refused] == [
        (grpc.StatusCode.ALREADY_EXISTS, "IDEMPOTENCY_CONFLICT")
    ]
    answers = [o for o in outcomes if not isinstance(o, BaseException)]
    assert sorted(a.already_recorded for a in answers) == [False] * 24 + [True] * 2
    listed = await stub.ListTableHands(
        history_pb2.ListTableHandsRequest(table_id=table_id, page=common_pb2.PageRequest(page_size=100)),
        metadata=ADMIN,
    )
    assert sorted(h.hand_id for h in listed.hands) == sorted(r.hand_id for r in records)
    stored = await stub.GetHand(history_pb2.GetHandRequest(hand_id=records[0].hand_id), metadata=ADMIN)
    # Whichever of the two versions of hand 0 came first is stored; the other was refused.
    assert stored.hand.room_id in (records[0].room_id, conflicting.room_id)


async def test_staff_list_a_named_players_hands_and_a_player_only_their_own(stub: Stub) -> None:
    record = varied_records(1, prefix=unique_prefix(), table_id=f"t-{uuid.uuid4().hex[:8]}")[0]
    await record_all(stub, [record])
    hero = record.seats[0].player_id
    support = auth_metadata("sofia", "support")
    listed = await stub.ListMyHands(history_pb2.ListMyHandsRequest(player_id=hero), metadata=support)
    assert record.hand_id in [h.hand_id for h in listed.hands]
    own = await stub.ListMyHands(history_pb2.ListMyHandsRequest(player_id=hero), metadata=player(hero))
    assert [h.hand_id for h in own.hands] == [h.hand_id for h in listed.hands]
    await expect_error(
        stub.ListMyHands(history_pb2.ListMyHandsRequest(player_id=hero), metadata=player("someone-else")),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_RESOURCE",
    )
    # A page token is the reader's and the player's: another player's list does not take it.
    first = await stub.ListMyHands(
        history_pb2.ListMyHandsRequest(player_id=hero, page=common_pb2.PageRequest(page_size=1)),
        metadata=support,
    )
    if first.page.next_page_token:
        await expect_error(
            stub.ListMyHands(
                history_pb2.ListMyHandsRequest(
                    player_id="other", page=common_pb2.PageRequest(page_token=first.page.next_page_token)
                ),
                metadata=support,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "PAGE_TOKEN_INVALID",
        )
