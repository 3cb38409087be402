"""The role matrix (issue 38): every RPC of every service, called by a player, by each staff role
alone and by each service, is refused with PERMISSION_DENIED `ROLE_REQUIRED` exactly when the grant
in the access policy (the one docs/access.md is generated from) does not name that identity.

One all-powerful admin token was the opposite of least privilege: support cannot fund the house bank,
finance cannot hold a player, risk cannot create a room, the staff admin does none of these. The
services run as real processes; each call is real, with an empty request (the role check runs
before the request is read, so what an allowed caller gets back is its own business here: an
INVALID_ARGUMENT, a NOT_FOUND, a stream that ends)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import descriptor_pool

from service_runtime.access import AccessPolicy
from service_runtime.auth import STAFF_ROLES, Caller, Principal, Role, ServiceName
from service_runtime.testing import auth_metadata, reason_of, service_metadata
from services.access_table import policy_of

from .service_processes import SERVICE_NAMES, ServiceProcess, running_services

IDENTITIES: dict[str, tuple[Principal, tuple[tuple[str, str], ...]]] = {
    "player": (Role.PLAYER, auth_metadata("alice")),
    **{
        f"staff {role.value}": (role, auth_metadata(f"staff-{role.value}", role))
        for role in sorted(STAFF_ROLES)
    },
    **{f"service {s.value}": (s, service_metadata(s)) for s in ServiceName},
}
DENIED = "PERMISSION_DENIED ROLE_REQUIRED"
# Far above any refusal's time on a loaded machine; an allowed stream that stays open is "not denied".
STREAM_SECONDS = 10.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ServiceProcess]]:
    with running_services(tmp_path_factory.mktemp("role-matrix")) as services:
        yield services


def _streams(method: str) -> bool:
    service_name, name = method.strip("/").split("/")
    found = descriptor_pool.Default().FindServiceByName(service_name).methods_by_name[name]
    return bool(found.server_streaming)


async def _outcome(channel: grpc.aio.Channel, method: str, metadata: tuple[tuple[str, str], ...]) -> str:
    try:
        if _streams(method):
            call = channel.unary_stream(method)
            stream = call(b"", metadata=metadata, timeout=STREAM_SECONDS)
            async for _ in stream:
                break
            stream.cancel()
        else:
            await channel.unary_unary(method)(b"", metadata=metadata, timeout=STREAM_SECONDS)
        return "OK"
    except grpc.aio.AioRpcError as error:
        return f"{error.code().name} {reason_of(error)}"


async def _mismatches(address: str, policy: AccessPolicy) -> list[str]:
    found: list[str] = []
    async with grpc.aio.insecure_channel(address) as channel:
        for method in sorted(policy.roles):
            allowed = policy.allowed_roles(method)
            outcomes = await asyncio.gather(
                *(_outcome(channel, method, metadata) for _, metadata in IDENTITIES.values())
            )
            for (who, (principal, _)), outcome in zip(IDENTITIES.items(), outcomes, strict=True):
                if (principal in allowed) == (outcome == DENIED):
                    found.append(f"{method} as {who}: {outcome} (grant: {sorted(allowed)})")
    return found


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_each_identity_reaches_exactly_the_rpcs_its_grant_names(
    cluster: dict[str, ServiceProcess], service: str
) -> None:
    assert asyncio.run(_mismatches(cluster[service].address, policy_of(service))) == []


def test_no_staff_role_is_all_powerful_and_each_has_a_job() -> None:
    """Each staff role reaches some staff-only RPC and none reaches every one of them."""
    policies = [policy_of(service) for service in SERVICE_NAMES]
    staff_only = {
        method: allowed
        for policy in policies
        for method, allowed in policy.roles.items()
        if allowed and allowed <= STAFF_ROLES
    }
    for role in STAFF_ROLES:
        reached = {method for method, allowed in staff_only.items() if role in allowed}
        assert reached, f"{role} has no job"
        assert reached != set(staff_only), f"{role} reaches every staff RPC"
    # Money is finance's alone; fair-play holds are risk's alone; rooms are operations'.
    assert staff_only["/poker.cashier.v1.CashierService/RequestHouseFunding"] == {Role.FINANCE}
    assert staff_only["/poker.cashier.v1.CashierService/DecideHouseFunding"] == {Role.FINANCE}
    assert staff_only["/poker.history.v1.HistoryService/HoldPlayer"] == {Role.RISK}
    assert staff_only["/poker.lobby.v1.LobbyService/CreateRoom"] == {Role.OPERATIONS}


def test_a_staff_token_reads_as_staff_and_a_player_token_does_not() -> None:
    for role in STAFF_ROLES:
        assert Caller("s", frozenset({role}), 0).is_staff
    assert not Caller("p", frozenset({Role.PLAYER}), 0).is_staff
    assert not Caller("table", frozenset({Role.SERVICE}), 0).is_staff
