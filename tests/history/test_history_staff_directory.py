"""The staff directory (issue 38, docs/backoffice.md "Adding a staff member"): staff administrators
add people, change their roles and take them off by idempotent SetStaffMember; a name is given once
and shared by nobody; nobody changes their own entry; ListStaff pages by name; only the gateway's
staff door reads one person (FindStaffMember), and a person taken off is not found. On SQLite and
PostgreSQL, through a real history server."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import ServiceName
from service_runtime.clients import error_metadata_of
from service_runtime.testing import auth_metadata, reason_of, service_metadata

Stub = history_pb2_grpc.HistoryServiceStub
ADMIN = auth_metadata("alma", "admin")
OTHER_ADMIN = auth_metadata("boris", "admin")
GATEWAY = service_metadata(ServiceName.GATEWAY)


async def expect(call: object, code: grpc.StatusCode, reason: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call  # type: ignore[misc]
    assert (error.value.code(), reason_of(error.value)) == (code, reason), error.value.details()
    return error.value


def person() -> tuple[int, str]:
    tag = uuid.uuid4().hex[:10]
    return int(tag, 16) % 10**12 + 1, f"p-{tag}"


def change(
    telegram_id: int, name: str, roles: list[str], active: bool = True, request_id: str = ""
) -> history_pb2.SetStaffMemberRequest:
    return history_pb2.SetStaffMemberRequest(
        request_id=request_id or uuid.uuid4().hex,
        telegram_id=telegram_id,
        name=name,
        roles=roles,
        active=active,
    )


async def find(stub: Stub, **key: object) -> history_pb2.StaffMember:
    return (await stub.FindStaffMember(history_pb2.FindStaffMemberRequest(**key), metadata=GATEWAY)).member


async def test_an_administrator_adds_changes_and_takes_off_a_person_each_change_once(stub: Stub) -> None:
    telegram_id, name = person()
    added = change(telegram_id, name, ["support", "risk"])
    first = await stub.SetStaffMember(added, metadata=ADMIN)
    assert not first.existing
    assert (first.member.name, list(first.member.roles), first.member.active) == (
        name,
        ["risk", "support"],
        True,
    )
    assert first.member.updated_by == "alma"
    # The retry answers the first result; the same id with any field changed is a conflict.
    again = await stub.SetStaffMember(added, metadata=ADMIN)
    assert again.existing
    assert again.member == first.member
    for field, value in (("roles", ["finance"]), ("active", False), ("name", f"{name}x")):
        changed = history_pb2.SetStaffMemberRequest()
        changed.CopyFrom(added)
        if field == "roles":
            del changed.roles[:]
            changed.roles.extend(value)  # type: ignore[arg-type]
        else:
            setattr(changed, field, value)
        error = await expect(
            stub.SetStaffMember(changed, metadata=ADMIN),
            grpc.StatusCode.ALREADY_EXISTS,
            "IDEMPOTENCY_CONFLICT",
        )
        assert error_metadata_of(error)["field"] in (field, "request_id")
    # Another administrator's use of the id is a conflict too (the id binds who asked).
    await expect(
        stub.SetStaffMember(added, metadata=OTHER_ADMIN),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    # The staff door finds the person by account and by name (any case), with their roles.
    assert (await find(stub, telegram_id=telegram_id)).roles == ["risk", "support"]
    assert (await find(stub, name=name.upper())).telegram_id == telegram_id

    # Roles change; a retried change of a changed person still answers what it left.
    promoted = await stub.SetStaffMember(change(telegram_id, name, ["finance"]), metadata=OTHER_ADMIN)
    assert list(promoted.member.roles) == ["finance"]
    assert promoted.member.updated_by == "boris"
    assert (await stub.SetStaffMember(added, metadata=ADMIN)).member == first.member
    assert (await find(stub, name=name)).roles == ["finance"]

    # Taken off: not found by the door, listed only when asked for; their roles are kept on record.
    off = await stub.SetStaffMember(change(telegram_id, name, [], active=False), metadata=ADMIN)
    assert (off.member.active, list(off.member.roles)) == (False, ["finance"])
    await expect(find(stub, telegram_id=telegram_id), grpc.StatusCode.NOT_FOUND, "STAFF_MEMBER_NOT_FOUND")
    await expect(find(stub, name=name), grpc.StatusCode.NOT_FOUND, "STAFF_MEMBER_NOT_FOUND")
    listed = await stub.ListStaff(history_pb2.ListStaffRequest(), metadata=ADMIN)
    assert name not in [m.name for m in listed.members]
    everyone = await stub.ListStaff(history_pb2.ListStaffRequest(include_inactive=True), metadata=ADMIN)
    assert name in [m.name for m in everyone.members]
    # And listed again.
    back = await stub.SetStaffMember(change(telegram_id, name, ["support"]), metadata=ADMIN)
    assert back.member.active
    assert (await find(stub, telegram_id=telegram_id)).name == name


async def test_a_name_is_given_once_shared_by_nobody_and_nobody_changes_their_own_entry(stub: Stub) -> None:
    telegram_id, name = person()
    await stub.SetStaffMember(change(telegram_id, name, ["risk"]), metadata=ADMIN)
    other_id, _ = person()
    error = await expect(
        stub.SetStaffMember(change(other_id, name.upper(), ["risk"]), metadata=ADMIN),
        grpc.StatusCode.FAILED_PRECONDITION,
        "STAFF_NAME_TAKEN",
    )
    assert error_metadata_of(error)["field"] == "name"
    await expect(
        stub.SetStaffMember(change(telegram_id, f"{name}-new", ["risk"]), metadata=ADMIN),
        grpc.StatusCode.FAILED_PRECONDITION,
        "STAFF_NAME_FIXED",
    )
    # An administrator can neither give themself a role nor take themself off, however named.
    own = auth_metadata(name, "admin")
    for request in (
        change(telegram_id, name, ["risk", "finance"]),
        change(telegram_id, name, [], active=False),
    ):
        await expect(
            stub.SetStaffMember(request, metadata=own), grpc.StatusCode.PERMISSION_DENIED, "OWN_STAFF_ENTRY"
        )
    alma_id, _ = person()
    await expect(
        stub.SetStaffMember(change(alma_id, "ALMA", ["admin"]), metadata=ADMIN),
        grpc.StatusCode.PERMISSION_DENIED,
        "OWN_STAFF_ENTRY",
    )
    # Taking off a person the directory never listed.
    unknown_id, unknown = person()
    await expect(
        stub.SetStaffMember(change(unknown_id, unknown, [], active=False), metadata=ADMIN),
        grpc.StatusCode.NOT_FOUND,
        "STAFF_MEMBER_NOT_FOUND",
    )
    # Nothing of the refused changes landed.
    assert (await find(stub, telegram_id=telegram_id)).roles == ["risk"]
    await expect(find(stub, telegram_id=other_id), grpc.StatusCode.NOT_FOUND, "STAFF_MEMBER_NOT_FOUND")


@pytest.mark.parametrize(
    ("fields", "reason", "field"),
    [
        ({"request_id": ""}, "FIELD_REQUIRED", "request_id"),
        ({"request_id": "x" * 65}, "FIELD_INVALID", "request_id"),
        ({"request_id": "has space"}, "FIELD_INVALID", "request_id"),
        ({"telegram_id": 0}, "FIELD_REQUIRED", "telegram_id"),
        ({"telegram_id": -5}, "FIELD_INVALID", "telegram_id"),
        ({"telegram_id": 2**60}, "FIELD_INVALID", "telegram_id"),
        ({"name": ""}, "FIELD_REQUIRED", "name"),
        ({"name": "service:lobby"}, "FIELD_INVALID", "name"),
        ({"name": "tg:12"}, "FIELD_INVALID", "name"),
        ({"name": "gateway"}, "FIELD_INVALID", "name"),
        ({"name": "Ольга"}, "FIELD_INVALID", "name"),
        ({"name": "x" * 57}, "FIELD_INVALID", "name"),
        ({"roles": []}, "FIELD_REQUIRED", "roles"),
        ({"roles": ["player"]}, "FIELD_INVALID", "roles"),
        ({"roles": ["service"]}, "FIELD_INVALID", "roles"),
        ({"roles": ["risk", "risk"]}, "FIELD_INVALID", "roles"),
        ({"roles": ["Risk"]}, "FIELD_INVALID", "roles"),
    ],
)
async def test_bad_input_is_refused_with_its_field_and_changes_nothing(
    stub: Stub, fields: dict[str, object], reason: str, field: str
) -> None:
    telegram_id, name = person()
    request = change(telegram_id, name, ["support"])
    for key, value in fields.items():
        if key == "roles":
            del request.roles[:]
            request.roles.extend(value)  # type: ignore[arg-type]
        else:
            setattr(request, key, value)
    error = await expect(
        stub.SetStaffMember(request, metadata=ADMIN), grpc.StatusCode.INVALID_ARGUMENT, reason
    )
    assert error_metadata_of(error)["field"] == field
    await expect(find(stub, telegram_id=telegram_id), grpc.StatusCode.NOT_FOUND, "STAFF_MEMBER_NOT_FOUND")
    await expect(
        stub.FindStaffMember(history_pb2.FindStaffMemberRequest(), metadata=GATEWAY),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_REQUIRED",
    )


async def test_only_the_staff_administrator_keeps_the_directory_and_only_the_staff_door_reads_one_person(
    stub: Stub,
) -> None:
    telegram_id, name = person()
    for caller in (
        auth_metadata("p1"),
        auth_metadata("rita", "risk", "finance", "support", "operations"),
        service_metadata(ServiceName.GATEWAY),
        service_metadata(ServiceName.LOBBY),
    ):
        await expect(
            stub.SetStaffMember(change(telegram_id, name, ["admin"]), metadata=caller),
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_REQUIRED",
        )
        await expect(
            stub.ListStaff(history_pb2.ListStaffRequest(), metadata=caller),
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_REQUIRED",
        )
    for caller in (ADMIN, auth_metadata("p1"), service_metadata(ServiceName.TABLE)):
        await expect(
            stub.FindStaffMember(history_pb2.FindStaffMemberRequest(name="alma"), metadata=caller),
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_REQUIRED",
        )


async def test_the_list_pages_by_name_without_a_gap_or_a_repeat_and_its_token_binds_the_filter(
    stub: Stub,
) -> None:
    tag = uuid.uuid4().hex[:6]
    names = [f"zz-{tag}-{i:02d}" for i in range(7)]
    for i, name in enumerate(names):
        await stub.SetStaffMember(change(10**13 + int(tag, 16) * 10 + i, name, ["support"]), metadata=ADMIN)
    seen: list[str] = []
    token = ""
    while True:
        reply = await stub.ListStaff(
            history_pb2.ListStaffRequest(page={"page_size": 3, "page_token": token}), metadata=ADMIN
        )
        seen += [m.name for m in reply.members]
        token = reply.page.next_page_token
        if not token:
            break
        await expect(
            stub.ListStaff(
                history_pb2.ListStaffRequest(page={"page_token": token}, include_inactive=True),
                metadata=ADMIN,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "PAGE_TOKEN_INVALID",
        )
    assert [n for n in seen if n.startswith(f"zz-{tag}")] == names
    assert seen == sorted(seen, key=str.lower)
    assert len(seen) == len(set(seen))


async def test_the_same_change_sent_many_times_at_once_applies_once(stub: Stub) -> None:
    telegram_id, name = person()
    request = change(telegram_id, name, ["operations"])
    replies = await asyncio.gather(*(stub.SetStaffMember(request, metadata=ADMIN) for _ in range(8)))
    assert sum(not r.existing for r in replies) == 1
    assert len({r.member.SerializeToString(deterministic=True) for r in replies}) == 1
    # Two people asking for one free name at once: one gets it.
    name_b = f"{name}-b"
    ids = [person()[0] for _ in range(4)]
    answers = await asyncio.gather(
        *(stub.SetStaffMember(change(i, name_b, ["risk"]), metadata=ADMIN) for i in ids),
        return_exceptions=True,
    )
    won = [a for a in answers if isinstance(a, history_pb2.SetStaffMemberResponse)]
    assert len(won) == 1
    assert all(
        isinstance(a, grpc.aio.AioRpcError) and reason_of(a) == "STAFF_NAME_TAKEN"
        for a in answers
        if a not in won
    )


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    roles=st.lists(
        st.sampled_from(["support", "risk", "finance", "operations", "admin"]), min_size=1, unique=True
    )
)
async def test_any_set_of_staff_roles_is_kept_sorted_and_read_back_as_given(
    stub: Stub, roles: list[str]
) -> None:
    telegram_id, name = person()
    reply = await stub.SetStaffMember(change(telegram_id, name, roles), metadata=ADMIN)
    assert list(reply.member.roles) == sorted(roles)
    assert list((await find(stub, telegram_id=telegram_id)).roles) == sorted(roles)
