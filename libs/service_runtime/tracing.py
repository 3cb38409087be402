"""OpenTelemetry tracing of a process: the tracer, W3C trace context in gRPC metadata, log fields.

Every process installs the SDK's tracer provider at start, so every call and every hand has a trace
id and span id even when nothing is exported: the ids go into each log line (structlog processor
`add_trace_ids`) and into the `traceparent` metadata of every outgoing call, so the log lines of
one hand can be followed across the processes. Spans are recorded and exported only when an OTLP
endpoint is configured (`POKER_OTLP_ENDPOINT`, off by default); without one the sampler records
nothing and a span costs an id and a context switch.

Spans never carry a request body, a card, a seed or a token: only method names, status codes,
stable reasons, table and hand ids.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ParentBased, Sampler, TraceIdRatioBased
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, SpanKind, Status, StatusCode, TraceFlags

TRACER_NAME = "poker"
TRACEPARENT = "traceparent"
_provider: TracerProvider | None = None
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_NOT_SAMPLED = TraceFlags(TraceFlags.DEFAULT)


class IdsOnlyTracer(trace.NoOpTracer):
    """What runs when nothing is exported: spans that record nothing but have real ids.

    The SDK's tracer with a sampler that drops everything does the same at several times the cost
    (sampler, attribute containers, span limits for each span); here a span is two random numbers,
    so every call and log line keeps its trace and span ids for the price of a context switch.
    A child keeps its parent's trace id and sampled flag, so a caller that records still gets the
    spans of the services after this one."""

    def start_span(
        self,
        name: str,
        context: otel_context.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Mapping[str, Any] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Span:
        parent = trace.get_current_span(context).get_span_context()
        if parent.is_valid:
            trace_id, flags = parent.trace_id, parent.trace_flags
        else:
            trace_id, flags = random.getrandbits(128) or 1, _NOT_SAMPLED
        return NonRecordingSpan(SpanContext(trace_id, random.getrandbits(64) or 1, False, flags))


# Until `configure_tracing` runs (unit tests of one module), spans are no-ops without ids.
_tracer: trace.Tracer = trace.NoOpTracer()


def configure_tracing(
    service: str,
    *,
    otlp_endpoint: str = "",
    sample_ratio: float = 1.0,
    exporter: SpanExporter | None = None,
    ca_file: str = "",
    batch: bool = False,
) -> TracerProvider:
    """Install the process's tracer provider; spans go to `exporter`, or OTLP at `otlp_endpoint`.

    `otlp_endpoint` is `http://host:4317` (plaintext, a collector on the node or in the pod) or
    `https://host:4317` (TLS, verified against `ca_file` or the system's roots). With neither an
    endpoint nor an exporter, spans are not recorded at all: ids and propagation only. A given
    `exporter` gets each span as it ends (tests), or in batches with `batch` (as OTLP does).
    """
    global _provider, _tracer
    sampler: Sampler = ParentBased(TraceIdRatioBased(sample_ratio))
    if exporter is None and not otlp_endpoint:
        sampler = ParentBased(ALWAYS_OFF)
    provider = TracerProvider(resource=Resource.create({"service.name": service}), sampler=sampler)
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    elif otlp_endpoint:
        provider.add_span_processor(BatchSpanProcessor(_otlp_exporter(otlp_endpoint, ca_file)))
    if _provider is not None:
        _provider.shutdown()
    # Not the API's global provider (settable once per process): a test reconfigures at will.
    _provider = provider
    exporting = exporter is not None or bool(otlp_endpoint)
    _tracer = provider.get_tracer(TRACER_NAME) if exporting else IdsOnlyTracer()
    return provider


def _otlp_exporter(endpoint: str, ca_file: str) -> SpanExporter:
    import grpc
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    scheme, _, address = endpoint.partition("://")
    if scheme == "http":
        return OTLPSpanExporter(endpoint=address, insecure=True)
    root = open(ca_file, "rb").read() if ca_file else None  # noqa: SIM115 - read once at start
    return OTLPSpanExporter(endpoint=address, credentials=grpc.ssl_channel_credentials(root))


def shutdown_tracing() -> None:
    """Export what is buffered and stop (at process exit)."""
    global _provider, _tracer
    if _provider is not None:
        _provider.shutdown()
        _provider = None
    _tracer = trace.NoOpTracer()


def inject(metadata: Any, span: Span | None = None) -> None:
    """Add `traceparent` of `span` (else the current span) to outgoing metadata (grpc.aio.Metadata)."""
    span_context = (span or trace.get_current_span()).get_span_context()
    if span_context.is_valid:
        metadata.add(TRACEPARENT, _traceparent(span_context))


def _traceparent(span_context: trace.SpanContext) -> str:
    flags = "01" if span_context.trace_flags.sampled else "00"
    return f"00-{span_context.trace_id:032x}-{span_context.span_id:016x}-{flags}"


def parse_traceparent(value: str) -> SpanContext | None:
    """The remote span context of a W3C `traceparent` (version 00 and later), None if malformed.

    Written out rather than through the SDK's propagator (a regular expression and a context
    per call): it runs on every incoming call."""
    parts = value.strip().split("-")
    if len(parts) < 4 or len(parts[0]) != 2 or parts[0] == "ff":
        return None
    version, trace_hex, span_hex, flags_hex = parts[:4]
    if (
        len(trace_hex) != 32
        or len(span_hex) != 16
        or len(flags_hex) != 2
        or (version == "00" and len(parts) != 4)
    ):
        return None
    try:
        trace_id, span_id, flags = int(trace_hex, 16), int(span_hex, 16), int(flags_hex, 16)
    except ValueError:
        return None
    if trace_id == 0 or span_id == 0:
        return None
    return SpanContext(trace_id, span_id, True, _SAMPLED if flags & 1 else _NOT_SAMPLED)


def extract(metadata: Sequence[tuple[str, Any]] | None) -> otel_context.Context | None:
    """The caller's trace context from incoming metadata, or None when it sent none (or garbage)."""
    for key, value in metadata or ():
        if key == TRACEPARENT and isinstance(value, str):
            remote = parse_traceparent(value)
            return None if remote is None else trace.set_span_in_context(NonRecordingSpan(remote))
    return None


def start_span(
    name: str,
    *,
    parent: otel_context.Context | None = None,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: dict[str, str | int | bool] | None = None,
    root: bool = False,
) -> Span:
    """A started span (end it yourself): a child of `parent`, of the current span, or a new trace.

    `root=True` starts a trace of its own even inside another span: a hand is its own story, not a
    part of whichever call happened to open its table."""
    context = otel_context.Context() if root else parent
    return _tracer.start_span(name, context=context, kind=kind, attributes=attributes)


@contextlib.contextmanager
def current(span: Span) -> Iterator[Span]:
    """Make `span` the current span for the block (outgoing calls become its children)."""
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield span
    finally:
        otel_context.detach(token)


def mark_error(span: Span, description: str) -> None:
    if span.is_recording():
        span.set_status(Status(StatusCode.ERROR, description))


def ids_of(span: Span) -> tuple[str, str]:
    """(trace id, span id) in the W3C hex form, as log lines carry them."""
    span_context = span.get_span_context()
    return f"{span_context.trace_id:032x}", f"{span_context.span_id:016x}"


def add_trace_ids(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """structlog processor: the current trace and span id on every line logged inside a span."""
    span_context = trace.get_current_span().get_span_context()
    if span_context.is_valid:
        event.setdefault("trace_id", f"{span_context.trace_id:032x}")
        event.setdefault("span_id", f"{span_context.span_id:016x}")
    return event
