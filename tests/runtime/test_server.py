"""The server bootstrap: health, graceful shutdown, error mapping, authentication, access control."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service_runtime.auth import STAFF_ROLES, Role, TokenKeys, mint_token
from service_runtime.server import LIVENESS_SERVICE
from service_runtime.testing import auth_metadata, reason_of, running_server, token_for

from .probe_service import PROBE_ACCESS, probe_handler

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def probe(channel: grpc.aio.Channel, method: str) -> grpc.aio.UnaryUnaryMultiCallable:
    return channel.unary_unary(f"/test.Probe/{method}")


async def test_health_reports_serving_once_started() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert reply.status == SERVING


async def test_shutdown_reports_not_serving_while_in_flight_rpc_completes() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, channel):
        slow = asyncio.ensure_future(
            probe(channel, "Sleep")(b"1.5", metadata=auth_metadata("alice"), timeout=10)
        )
        await asyncio.sleep(0.3)  # the slow call is now in flight
        stopping = asyncio.ensure_future(server.stop(grace_seconds=5, drain_seconds=0.6))
        await asyncio.sleep(0.2)
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert reply.status == NOT_SERVING
        assert await slow == b"slept"
        await stopping


async def test_a_service_drain_runs_not_serving_while_calls_are_served_and_liveness_stays_serving() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, channel):
        health = health_pb2_grpc.HealthStub(channel)
        draining = asyncio.Event()
        finish = asyncio.Event()

        async def drain() -> None:
            draining.set()
            await finish.wait()

        stopping = asyncio.ensure_future(server.stop(grace_seconds=1, before_stop=drain))
        await asyncio.wait_for(draining.wait(), timeout=5)
        # Readiness sees NOT_SERVING at once; liveness still SERVING; new calls are still served.
        assert (await health.Check(health_pb2.HealthCheckRequest())).status == NOT_SERVING
        reply = await health.Check(health_pb2.HealthCheckRequest(service=LIVENESS_SERVICE))
        assert reply.status == SERVING
        assert await probe(channel, "Sleep")(b"0", metadata=auth_metadata("alice"), timeout=5) == b"slept"
        assert not stopping.done()
        finish.set()
        await asyncio.wait_for(stopping, timeout=5)


async def test_domain_error_becomes_status_code_with_error_info_reason() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await probe(channel, "Fail")(b"", metadata=auth_metadata("alice"))
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert reason_of(caught.value) == "NOT_YOUR_TURN"


async def test_unexpected_exception_is_internal_without_leaking_details() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await probe(channel, "Crash")(b"", metadata=auth_metadata("alice"))
        assert caught.value.code() == grpc.StatusCode.INTERNAL
        assert reason_of(caught.value) == "INTERNAL"
        assert "secret-internal-detail" not in (caught.value.details() or "")


async def test_caller_identity_comes_from_the_token() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        assert await probe(channel, "Whoami")(b"", metadata=auth_metadata("bob")) == b"bob"


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ((), "TOKEN_MISSING"),
        ((("authorization", "Bearer not.a.token"),), "TOKEN_MALFORMED"),
        ((("authorization", "Basic abc"),), "TOKEN_MALFORMED"),
    ],
)
async def test_missing_or_malformed_token_is_unauthenticated(
    metadata: tuple[tuple[str, str], ...], reason: str
) -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await probe(channel, "Whoami")(b"", metadata=metadata)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert reason_of(caught.value) == reason


async def test_expired_token_is_unauthenticated() -> None:
    expired = token_for("alice", Role.PLAYER, ttl_seconds=-1)
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await probe(channel, "Whoami")(b"", metadata=(("authorization", f"Bearer {expired}"),))
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert reason_of(caught.value) == "TOKEN_EXPIRED"


async def test_forged_token_is_unauthenticated() -> None:
    forger = TokenKeys(keys={"dev": b"someone-elses-key-material"}, signing_key_id="dev")
    forged = mint_token(forger, "alice", [Role.ADMIN], now=int(time.time()), ttl_seconds=60)
    # A genuine signature glued onto claims that were changed (roles raised to admin).
    genuine = token_for("alice").split(".")
    tampered = f"{genuine[0]}.{forged.split('.')[1]}.{genuine[2]}"
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        for token in (forged, tampered):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await probe(channel, "Whoami")(b"", metadata=(("authorization", f"Bearer {token}"),))
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert reason_of(caught.value) == "TOKEN_INVALID_SIGNATURE"


async def test_wrong_role_is_permission_denied() -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await probe(channel, "AdminOnly")(b"", metadata=auth_metadata("alice", Role.PLAYER))
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert reason_of(caught.value) == "ROLE_REQUIRED"
        assert await probe(channel, "AdminOnly")(b"", metadata=auth_metadata("root", *STAFF_ROLES)) == b"root"


async def test_method_missing_from_the_access_policy_is_denied_to_everyone() -> None:
    from service_runtime.access import AccessPolicy

    async with running_server([], AccessPolicy(roles={}), extra_handlers=[probe_handler()]) as (_, channel):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await probe(channel, "Whoami")(b"", metadata=auth_metadata("root", *Role))
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
