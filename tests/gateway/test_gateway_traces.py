"""A Connect call through the gateway is traced like every service's call (issue 40): before, the
gateway made no span of its own, so the forwarded call started a trace of its own and what the
browser (or the ingress) sent as `traceparent` was lost.

The gateway runs in this process (its application on uvicorn, as `python -m services.gateway` runs
it), in front of a lobby stand-in that is a real server of the runtime (its interceptors, its
server spans), and every span both make goes to an in-memory exporter: the caller's trace continues
in the gateway's server span, whose forwarded call is its child client span, whose server span at
the backend is the child of that (the context crossed the wire as `traceparent`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
import structlog
import uvicorn
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from poker.gateway.v1 import gateway_pb2
from service_runtime import tracing
from service_runtime.access import PLAYERS, AccessPolicy
from service_runtime.settings import load_settings
from service_runtime.structured_logging import configure_logging
from service_runtime.testing import running_server
from services.gateway.__main__ import bind
from services.gateway.assembly import assemble
from services.gateway.settings import GatewaySettings
from tests.gateway.connect_http import call

SIGN_IN = "/poker.gateway.v1.GatewayService/SignIn"
LOBBY = "poker.lobby.v1.LobbyService"
LIST_ROOMS = f"{LOBBY}/ListRooms"
# The caller's trace, as an ingress or a browser's instrumentation would send it.
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.configure_tracing("gateway", exporter=exporter)
    yield exporter
    structlog.reset_defaults()
    tracing.shutdown_tracing()


async def _list_rooms(request: bytes, context: Any) -> bytes:
    return b""  # an empty ListRoomsResponse


def _lobby() -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        LOBBY, {"ListRooms": grpc.unary_unary_rpc_method_handler(_list_rooms)}
    )


@contextlib.asynccontextmanager
async def running_gateway(lobby_address: str) -> AsyncIterator[str]:
    settings = load_settings(
        GatewaySettings, {"POKER_GATEWAY_LOBBY_ADDRESS": lobby_address, "POKER_GATEWAY_PORT": "0"}
    )
    assembly = await assemble(settings)
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(assembly.app, log_config=None, access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        while not assembly.app.ready:
            assert not serving.done(), "the gateway stopped before it served"
            await asyncio.sleep(0.01)
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await serving
        await assembly.close()


def _span_id(span: ReadableSpan) -> str:
    assert span.context is not None
    return f"{span.context.span_id:016x}"


def _parent_id(span: ReadableSpan) -> str:
    assert span.parent is not None, span.name
    return f"{span.parent.span_id:016x}"


async def test_a_connect_call_is_a_server_span_and_its_forwarded_call_carries_the_trace(
    spans: InMemorySpanExporter, capsys: pytest.CaptureFixture[str]
) -> None:
    # POKER_LOG_CALLS: an answered call's line too (test_an_answered_unary_call_writes_no_line_...).
    configure_logging("gateway", log_format="json", level="info", log_calls=True)
    policy = AccessPolicy(roles={f"/{LIST_ROOMS}": PLAYERS})
    async with (
        running_server([], policy, extra_handlers=[_lobby()]) as (lobby, _),
        running_gateway(f"127.0.0.1:{lobby.port}") as address,
    ):
        request = gateway_pb2.SignInRequest(development_name="trace-ann", device_id="trace-device")
        signed_in = await asyncio.to_thread(call, address, SIGN_IN, request.SerializeToString())
        assert signed_in.code == "ok", signed_in
        token = gateway_pb2.SignInResponse.FromString(signed_in.body).session.token
        traceparent = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
        listed = await asyncio.to_thread(
            call, address, f"/{LIST_ROOMS}", b"", token=token, headers={"traceparent": traceparent}
        )
        assert listed.code == "ok", listed
        refused = await asyncio.to_thread(call, address, f"/{LIST_ROOMS}", b"")
        assert refused.label == "unauthenticated TOKEN_MISSING"
    finished = spans.get_finished_spans()
    in_trace = [s for s in finished if s.context is not None and f"{s.context.trace_id:032x}" == TRACE_ID]
    servers = [s for s in in_trace if s.kind is SpanKind.SERVER and s.name == LIST_ROOMS]
    (client,) = [s for s in in_trace if s.kind is SpanKind.CLIENT and s.name == LIST_ROOMS]
    (at_gateway,) = [s for s in servers if s.attributes and s.attributes.get("rpc.system") == "connect_rpc"]
    (at_lobby,) = [s for s in servers if s is not at_gateway]
    # The caller's span -> the gateway's server span -> its forwarded call -> the lobby's server span.
    assert _parent_id(at_gateway) == CALLER_SPAN
    assert _parent_id(client) == _span_id(at_gateway)
    assert _parent_id(at_lobby) == _span_id(client)
    assert at_gateway.attributes is not None
    assert at_gateway.attributes["rpc.grpc.status_code"] == grpc.StatusCode.OK.value[0]
    # The gateway's line of the call carries the trace, so it is found with the service's lines.
    lines = [json.loads(line) for line in io.StringIO(capsys.readouterr().err) if line.startswith("{")]
    # (The lobby stand-in, in this process, writes its own line of the call in the same trace.)
    in_the_trace = [line for line in lines if line.get("event") == "rpc" and line.get("trace_id") == TRACE_ID]
    (logged,) = [line for line in in_the_trace if line.get("span_id") == _span_id(at_gateway)]
    assert logged["method"] == LIST_ROOMS
    # A refused call is a span too, with its code, in a trace of its own (its caller sent none).
    (refusal,) = [
        s
        for s in finished
        if s.kind is SpanKind.SERVER and s.name == LIST_ROOMS and s not in servers and s.parent is None
    ]
    assert refusal.attributes is not None
    assert refusal.attributes["rpc.grpc.status_code"] == grpc.StatusCode.UNAUTHENTICATED.value[0]
    # The sign-in, too.
    assert any(s.kind is SpanKind.SERVER and s.name == SIGN_IN.lstrip("/") for s in finished)


async def test_an_answered_unary_call_writes_no_line_unless_asked_and_a_refused_one_does(
    spans: InMemorySpanExporter, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the services do: every call is counted (grpc_server_handled_total), an answered unary call
    writes its line only with POKER_LOG_CALLS; a refusal always writes one (issue 45: the line of
    every call was about 4% of the gateway's serving CPU)."""
    configure_logging("gateway", log_format="json", level="info")
    policy = AccessPolicy(roles={f"/{LIST_ROOMS}": PLAYERS})
    async with (
        running_server([], policy, extra_handlers=[_lobby()]) as (lobby, _),
        running_gateway(f"127.0.0.1:{lobby.port}") as address,
    ):
        request = gateway_pb2.SignInRequest(development_name="quiet-ann", device_id="quiet-device")
        signed_in = await asyncio.to_thread(call, address, SIGN_IN, request.SerializeToString())
        token = gateway_pb2.SignInResponse.FromString(signed_in.body).session.token
        listed = await asyncio.to_thread(call, address, f"/{LIST_ROOMS}", b"", token=token)
        assert listed.code == "ok", listed
        refused = await asyncio.to_thread(call, address, f"/{LIST_ROOMS}", b"")
        assert refused.label == "unauthenticated TOKEN_MISSING"
    lines = [json.loads(line) for line in io.StringIO(capsys.readouterr().err) if line.startswith("{")]
    calls = [(line.get("method"), line.get("code")) for line in lines if line.get("event") == "rpc"]
    assert (LIST_ROOMS, "UNAUTHENTICATED") in calls
    assert not [c for c in calls if c[1] == "OK"], calls
