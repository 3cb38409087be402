"""A tiny service used only by the runtime tests: raw-bytes RPCs that sleep, fail or echo the caller."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
from grpc_health.v1 import health_pb2
from opentelemetry import trace

from poker.fairness.v1 import fairness_pb2
from service_runtime import tracing
from service_runtime.access import ANY_CALLER, STAFF_ADMIN, AccessPolicy
from service_runtime.auth import current_caller
from service_runtime.errors import FailedPrecondition

SERVICE = "test.Probe"
PROBE_ACCESS = AccessPolicy(
    roles={
        f"/{SERVICE}/Sleep": ANY_CALLER,
        f"/{SERVICE}/Whoami": ANY_CALLER,
        f"/{SERVICE}/Fail": ANY_CALLER,
        f"/{SERVICE}/Crash": ANY_CALLER,
        f"/{SERVICE}/AdminOnly": STAFF_ADMIN,
        f"/{SERVICE}/Parse": ANY_CALLER,
        f"/{SERVICE}/Count": ANY_CALLER,
        f"/{SERVICE}/WhoamiStream": ANY_CALLER,
        f"/{SERVICE}/Flood": ANY_CALLER,
        f"/{SERVICE}/TraceIds": ANY_CALLER,
        f"/{SERVICE}/WaitForever": ANY_CALLER,
    }
)


async def _sleep(request: bytes, context: Any) -> bytes:
    await asyncio.sleep(float(request.decode() or "0"))
    return b"slept"


async def _whoami(request: bytes, context: Any) -> bytes:
    return current_caller().subject.encode()


async def _fail(request: bytes, context: Any) -> bytes:
    raise FailedPrecondition("NOT_YOUR_TURN", "it is seat 3's turn", {"seat": "3"})


async def _crash(request: bytes, context: Any) -> bytes:
    raise KeyError("secret-internal-detail")


async def _parse(request: fairness_pb2.CommitHandRequest, context: Any) -> health_pb2.HealthCheckResponse:
    return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


async def _count(request: bytes, context: Any) -> AsyncIterator[bytes]:
    for index in range(int(request.decode() or "0")):
        await asyncio.sleep(0.01)
        yield str(index).encode()


async def _flood(request: bytes, context: Any) -> AsyncIterator[bytes]:
    """Large messages as fast as the client takes them: the server waits in its writes, not here."""
    for _ in range(int(request.decode() or "0")):
        yield b"x" * 65536


async def _whoami_stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
    yield current_caller().subject.encode()


async def _trace_ids(request: bytes, context: Any) -> AsyncIterator[bytes]:
    """`trace id:span id` of the span current in the handler, once per message asked for."""
    for _ in range(int(request.decode() or "0")):
        await asyncio.sleep(0)
        trace_id, span_id = tracing.ids_of(trace.get_current_span())
        yield f"{trace_id}:{span_id}".encode()


async def _wait_forever(request: bytes, context: Any) -> AsyncIterator[bytes]:
    """One message, then nothing until the call ends (a quiet table)."""
    yield b"hello"
    await asyncio.Event().wait()


def probe_handler() -> grpc.GenericRpcHandler:
    def unary(fn: Any) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(fn)

    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Sleep": unary(_sleep),
            "Whoami": unary(_whoami),
            "Fail": unary(_fail),
            "Crash": unary(_crash),
            "AdminOnly": unary(_whoami),
            # A method with a protobuf request type (any with a request_id), parsed after authentication.
            "Parse": grpc.unary_unary_rpc_method_handler(
                _parse,
                request_deserializer=fairness_pb2.CommitHandRequest.FromString,
                response_serializer=health_pb2.HealthCheckResponse.SerializeToString,
            ),
            "Count": grpc.unary_stream_rpc_method_handler(_count),
            "WhoamiStream": grpc.unary_stream_rpc_method_handler(_whoami_stream),
            "Flood": grpc.unary_stream_rpc_method_handler(_flood),
            "TraceIds": grpc.unary_stream_rpc_method_handler(_trace_ids),
            "WaitForever": grpc.unary_stream_rpc_method_handler(_wait_forever),
        },
    )
