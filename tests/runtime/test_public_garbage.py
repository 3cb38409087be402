"""Garbage bytes to the token-free endpoints (health, reflection) get a clear status, one JSON log line
(issue 23, item 8).

On the old code the bytes reached gRPC's own deserialiser: the caller got UNKNOWN naming
`google.protobuf.message.DecodeError`, and the log got a multi-line plain-text traceback per call.
"""

from __future__ import annotations

import json
import logging

import grpc
import pytest
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service_runtime.structured_logging import configure_logging
from service_runtime.testing import reason_of, running_server

from .probe_service import PROBE_ACCESS, probe_handler

GARBAGE = b"\xff\xff\xff"


async def _outcome(call: object) -> tuple[grpc.StatusCode, str, str]:
    try:
        if hasattr(call, "__aiter__"):
            async for _ in call:  # type: ignore[attr-defined]
                pass
        else:
            await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return error.code(), reason_of(error), error.details() or ""
    return grpc.StatusCode.OK, "", ""


async def test_garbage_to_health_is_invalid_argument_without_a_class_name_or_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("probe", log_format="json", level="info")
    try:
        async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
            outcomes = [
                await _outcome(channel.unary_unary("/grpc.health.v1.Health/Check")(GARBAGE, timeout=5)),
                await _outcome(channel.unary_unary("/grpc.health.v1.Health/List")(GARBAGE, timeout=5)),
                await _outcome(channel.unary_stream("/grpc.health.v1.Health/Watch")(GARBAGE, timeout=5)),
            ]
            # The endpoints still answer well-formed requests, without a token.
            stub = health_pb2_grpc.HealthStub(channel)
            check = await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert check.status == health_pb2.HealthCheckResponse.SERVING
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    finally:
        structlog.reset_defaults()
    for code, reason, details in outcomes:
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_MALFORMED")
        assert not any(word in details for word in ("Error", "class", "protobuf"))
    assert all(line.startswith("{") for line in lines), lines
    assert not any("Traceback" in line for line in lines)


async def test_a_stdlib_log_record_is_one_json_line_in_json_mode(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("probe", log_format="json", level="info")
    try:
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("grpc._cython.cygrpc").exception("library trouble")
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    finally:
        structlog.reset_defaults()
        root = logging.getLogger()
        for handler in [h for h in root.handlers if h.get_name() == "poker-structlog"]:
            root.removeHandler(handler)
    assert len(lines) == 1, lines
    record = json.loads(lines[0])
    assert record["event"] == "library trouble"
    assert record["logger"] == "grpc._cython.cygrpc"
    assert record["service"] == "probe"
    assert "ValueError" in record["exception"]


async def test_garbage_to_reflection_is_invalid_argument_and_reflection_still_works() -> None:
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    method = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        call = channel.stream_stream(method)(iter([GARBAGE]), timeout=5)
        code, reason, details = await _outcome(call)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_MALFORMED")
        assert "Error" not in details
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
        names = [s.name async for reply in replies for s in reply.list_services_response.service]
        assert "grpc.health.v1.Health" in names
