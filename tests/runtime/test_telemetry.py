"""Every server and channel counts its calls and carries the trace: metrics, spans, log fields.

Real servers on port 0 with the runtime's interceptors: the gRPC figures move by method and code
(shed calls by reason, stream messages), the /metrics endpoint serves them to a scraper (read with
prometheus-client's own parser), and a call made inside a span continues that trace on the server,
whose log lines carry the trace and span ids.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import urllib.request
from collections.abc import Iterator

import grpc
import pytest
import structlog
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from prometheus_client.parser import text_string_to_metric_families

from service_runtime import metrics, tracing
from service_runtime.clients import create_channel
from service_runtime.interceptors import Limits
from service_runtime.structured_logging import CALL_LINES, configure_logging
from service_runtime.testing import running_server, token_for

from .probe_service import PROBE_ACCESS, SERVICE, probe_handler


def _token() -> str:
    return token_for("table", "service")


def _value(name: str, **labels: str) -> float:
    return metrics.sample_value(name, {"grpc_service": SERVICE, **labels})


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.configure_tracing("test", exporter=exporter)
    yield exporter
    tracing.shutdown_tracing()


async def test_server_and_client_count_calls_by_method_and_code() -> None:
    unary = {"grpc_type": "unary"}
    before_ok = _value("grpc_server_handled_total", grpc_method="Whoami", grpc_code="OK", **unary)
    before_refused = _value(
        "grpc_server_handled_total", grpc_method="Fail", grpc_code="FAILED_PRECONDITION", **unary
    )
    before_client = _value("grpc_client_handled_total", grpc_method="Whoami", grpc_code="OK", **unary)
    before_sent = _value("grpc_server_msg_sent_total", grpc_method="Count", grpc_type="server_stream")
    before_latency = _value("grpc_server_handling_seconds_count", grpc_method="Whoami", **unary)
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
        create_channel(f"127.0.0.1:{server.port}", token=_token) as channel,
    ):
        for _ in range(3):
            await channel.unary_unary(f"/{SERVICE}/Whoami")(b"")
        with pytest.raises(grpc.aio.AioRpcError):
            await channel.unary_unary(f"/{SERVICE}/Fail")(b"")
        assert len([r async for r in channel.unary_stream(f"/{SERVICE}/Count")(b"4")]) == 4
    assert _value("grpc_server_handled_total", grpc_method="Whoami", grpc_code="OK", **unary) == before_ok + 3
    assert (
        _value("grpc_server_handled_total", grpc_method="Fail", grpc_code="FAILED_PRECONDITION", **unary)
        == before_refused + 1
    )
    assert (
        _value("grpc_client_handled_total", grpc_method="Whoami", grpc_code="OK", **unary)
        == before_client + 3
    )
    assert _value("grpc_server_handling_seconds_count", grpc_method="Whoami", **unary) == before_latency + 3
    assert (
        _value("grpc_server_msg_sent_total", grpc_method="Count", grpc_type="server_stream")
        == before_sent + 4
    )
    assert _value("grpc_server_in_flight", grpc_type="unary", grpc_method="Whoami") == 0
    assert _value("grpc_client_in_flight", grpc_type="unary", grpc_method="Whoami") == 0


async def test_shed_calls_are_counted_by_reason() -> None:
    labels = {"grpc_type": "unary", "grpc_method": "Sleep", "reason": "SERVER_OVERLOADED"}
    before = _value("grpc_server_shed_total", **labels)
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()], limits=Limits(1, 1)) as (
            server,
            _,
        ),
        create_channel(f"127.0.0.1:{server.port}", token=_token) as channel,
    ):
        # The first call holds the one slot until the test ends it (no race with the clock: under
        # load a short sleep ended, or the second call's short deadline passed, before any shed).
        sleeping = asyncio.ensure_future(channel.unary_unary(f"/{SERVICE}/Sleep")(b"60"))
        for _ in range(500):
            if _value("grpc_server_in_flight", grpc_type="unary", grpc_method="Sleep") == 1:
                break
            await asyncio.sleep(0.02)
        assert _value("grpc_server_in_flight", grpc_type="unary", grpc_method="Sleep") == 1
        # The channel retries RESOURCE_EXHAUSTED (up to 4 attempts): each is shed while the first sleeps.
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await channel.unary_unary(f"/{SERVICE}/Sleep")(b"0", timeout=20)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        sleeping.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await sleeping
    assert _value("grpc_server_shed_total", **labels) >= before + 1


async def test_the_metrics_endpoint_serves_what_a_prometheus_scraper_reads() -> None:
    endpoint = metrics.start_metrics_endpoint("127.0.0.1", 0, "probe")
    try:
        async with (
            running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
            create_channel(f"127.0.0.1:{server.port}", token=_token) as channel,
        ):
            await channel.unary_unary(f"/{SERVICE}/Whoami")(b"")
        url = f"http://127.0.0.1:{endpoint.port}/metrics"
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read().decode())
    finally:
        endpoint.stop()
    families = {family.name: family for family in text_string_to_metric_families(body)}
    handled = families["grpc_server_handled"]
    assert any(
        s.labels.get("grpc_method") == "Whoami" and s.labels.get("grpc_code") == "OK" and s.value >= 1
        for s in handled.samples
    )
    assert families["grpc_server_handling_seconds"].type == "histogram"
    assert any(s.labels == {"service": "probe"} for s in families["poker_service_info"].samples)


async def test_a_call_continues_the_callers_trace_and_the_servers_log_lines_carry_it(
    spans: InMemorySpanExporter, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("probe", log_format="json", level="info", log_calls=True)
    try:
        async with (
            running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
            create_channel(f"127.0.0.1:{server.port}", token=_token) as channel,
        ):
            hand = tracing.start_span("hand", root=True)
            with tracing.current(hand):
                await channel.unary_unary(f"/{SERVICE}/Whoami")(b"")
                with pytest.raises(grpc.aio.AioRpcError):
                    await channel.unary_unary(f"/{SERVICE}/Fail")(b"")
            hand.end()
    finally:
        structlog.reset_defaults()
    trace_id, hand_span_id = tracing.ids_of(hand)
    finished = spans.get_finished_spans()
    in_trace = [s for s in finished if f"{s.context.trace_id:032x}" == trace_id]
    clients = [s for s in in_trace if s.kind is SpanKind.CLIENT]
    servers = [s for s in in_trace if s.kind is SpanKind.SERVER]
    assert {s.name for s in clients} == {f"{SERVICE}/Whoami", f"{SERVICE}/Fail"}
    assert all(f"{s.parent.span_id:016x}" == hand_span_id for s in clients if s.parent)
    # Each server span is the child of the client span of its call (the context crossed the wire).
    client_ids = {s.name: s.context.span_id for s in clients}
    assert {s.name: s.parent.span_id for s in servers if s.parent} == client_ids
    failed = next(s for s in servers if s.name.endswith("Fail"))
    assert failed.attributes["rpc.grpc.status_code"] == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    # The service interceptor's summary line of each call carries the server span's ids.
    lines = [json.loads(line) for line in io.StringIO(capsys.readouterr().err) if line.startswith("{")]
    rpc_lines = [line for line in lines if line.get("event") == "rpc"]
    server_ids = {f"{s.context.span_id:016x}" for s in servers}
    assert rpc_lines
    assert all(line["trace_id"] == trace_id for line in rpc_lines)
    assert {line["span_id"] for line in rpc_lines} == server_ids


async def test_a_stream_continues_the_callers_trace_and_its_handler_runs_in_the_server_span(
    spans: InMemorySpanExporter,
) -> None:
    """Server streams (WatchTable, the spectators' feed) carry the trace like unary calls: the
    server's span is the child of the caller's, and what the handler does between its messages
    (its log lines, its own calls) is inside that span."""
    method = f"{SERVICE}/TraceIds"
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
        create_channel(f"127.0.0.1:{server.port}", token=_token) as channel,
    ):
        hand = tracing.start_span("hand", root=True)
        with tracing.current(hand):
            replies = [r.decode() async for r in channel.unary_stream(f"/{method}")(b"3")]
        hand.end()
        # The server's span ends as its handler returns, maybe just after the client read the end.
        deadline = asyncio.get_running_loop().time() + 10
        while not any(s.kind is SpanKind.SERVER and s.name == method for s in spans.get_finished_spans()):
            assert asyncio.get_running_loop().time() < deadline, "the stream's server span never ended"
            await asyncio.sleep(0.05)
    trace_id, hand_span_id = tracing.ids_of(hand)
    finished = [s for s in spans.get_finished_spans() if s.name == method]
    (client,) = [s for s in finished if s.kind is SpanKind.CLIENT]
    (served,) = [s for s in finished if s.kind is SpanKind.SERVER]
    assert f"{client.context.trace_id:032x}" == f"{served.context.trace_id:032x}" == trace_id
    assert client.parent is not None
    assert f"{client.parent.span_id:016x}" == hand_span_id
    assert served.parent is not None
    assert served.parent.span_id == client.context.span_id
    assert replies == [f"{trace_id}:{served.context.span_id:016x}"] * 3


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            (0x4BF92F3577B34DA6A3CE929D0E0E4736, True),
        ),
        (
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
            (0x4BF92F3577B34DA6A3CE929D0E0E4736, False),
        ),
        # A later version may carry more fields (W3C trace context, "future versions").
        (
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            (0x4BF92F3577B34DA6A3CE929D0E0E4736, True),
        ),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", None),
        ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", None),
        ("00-zzf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None),
        ("garbage", None),
        ("", None),
    ],
)
def test_traceparent_is_read_as_w3c_trace_context_says(value: str, expected: tuple[int, bool] | None) -> None:
    parsed = tracing.parse_traceparent(value)
    if expected is None:
        assert parsed is None
    else:
        assert parsed is not None
        assert (parsed.trace_id, parsed.trace_flags.sampled) == expected
        assert parsed.is_remote


async def test_a_hostile_traceparent_starts_a_new_trace_and_the_call_is_served(
    spans: InMemorySpanExporter,
) -> None:
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (_, channel):
        for value in ("00-" + "z" * 32 + "-" + "1" * 16 + "-01", "x" * 5000, "00-1-2-3"):
            metadata = (("authorization", f"Bearer {_token()}"), ("traceparent", value))
            assert await channel.unary_unary(f"/{SERVICE}/Whoami")(b"", metadata=metadata) == b"table"
    servers = [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert len(servers) == 3
    assert all(s.parent is None for s in servers)


async def test_a_stream_its_client_cancels_ends_its_span_without_an_error_log(
    spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    # Seen in the end-to-end run: every WatchTable a client cancelled logged OpenTelemetry's
    # "Failed to detach context" at error level (the generator is closed from another context).
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
        create_channel(f"127.0.0.1:{server.port}", token=_token) as channel,
    ):
        for _ in range(5):
            # The server is in the middle of its writes (flow control) when the client goes away.
            call = channel.unary_stream(f"/{SERVICE}/Flood")(b"100000")
            await call.read()
            await asyncio.sleep(0.2)
            call.cancel()
        deadline = asyncio.get_running_loop().time() + 10
        while len([s for s in spans.get_finished_spans() if s.name.endswith("/Flood")]) < 5:
            assert asyncio.get_running_loop().time() < deadline, "the cancelled streams' spans never ended"
            await asyncio.sleep(0.05)
    failures = [r for r in caplog.records if "detach" in r.getMessage().lower()]
    assert not failures, failures[0].getMessage()


@pytest.mark.parametrize("log_calls", [False, True])
async def test_successful_calls_are_counted_and_logged_only_with_log_calls(
    spans: InMemorySpanExporter, capsys: pytest.CaptureFixture[str], log_calls: bool
) -> None:
    # Issue 28: log outcomes and errors, count the rest. A refused call, a failed one and a stream's
    # end always get their line; a successful unary call only with POKER_LOG_CALLS, and is counted
    # in grpc_server_handled_total either way.
    unary = {"grpc_type": "unary"}
    before_ok = _value("grpc_server_handled_total", grpc_method="Whoami", grpc_code="OK", **unary)
    saved = (CALL_LINES.enabled, CALL_LINES.debug)
    configure_logging("probe", log_format="json", level="info", log_calls=log_calls)
    try:
        async with (
            running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
            create_channel(f"127.0.0.1:{server.port}", token=_token) as channel,
        ):
            for _ in range(3):
                await channel.unary_unary(f"/{SERVICE}/Whoami")(b"")
            with pytest.raises(grpc.aio.AioRpcError):
                await channel.unary_unary(f"/{SERVICE}/Fail")(b"")
            with pytest.raises(grpc.aio.AioRpcError):
                await channel.unary_unary(f"/{SERVICE}/AdminOnly")(b"")
            assert [item async for item in channel.unary_stream(f"/{SERVICE}/Count")(b"2")] == [b"0", b"1"]
    finally:
        structlog.reset_defaults()
        CALL_LINES.enabled, CALL_LINES.debug = saved
    lines = [json.loads(line) for line in io.StringIO(capsys.readouterr().err) if line.startswith("{")]
    logged = sorted(
        (line["method"].rsplit("/", 1)[-1], line["code"]) for line in lines if line.get("event") == "rpc"
    )
    always = [("AdminOnly", "PERMISSION_DENIED"), ("Count", "OK"), ("Fail", "FAILED_PRECONDITION")]
    assert logged == sorted(always + ([("Whoami", "OK")] * 3 if log_calls else []))
    assert all(line["level"] == "info" and line["trace_id"] for line in lines if line.get("event") == "rpc")
    assert _value("grpc_server_handled_total", grpc_method="Whoami", grpc_code="OK", **unary) == before_ok + 3
