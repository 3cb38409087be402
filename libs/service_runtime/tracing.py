"""OpenTelemetry tracing of a process: the tracer, W3C trace context in gRPC metadata, log fields.

Every process installs the SDK's tracer provider at start, so every call and every hand has a trace
id and span id even when nothing is exported: the ids go into each log line (structlog processor
`add_trace_ids`) and into the `traceparent` metadata of every outgoing call, so the log lines of
one hand can be followed across the processes. Spans are recorded and exported only when an OTLP
endpoint is configured (`POKER_OTLP_ENDPOINT`, off by default); without one the sampler records
nothing and a span costs an id and a context switch.

Spans never carry a request body, a card, a seed or a token: only method names, status codes,
stable reasons, table and hand ids.

A collector that is away costs a counter (`poker_trace_export_failures_total`) and one warning line
a minute: an export that the collector has not taken within `EXPORT_TIMEOUT_SECONDS` is dropped,
not retried for ten seconds while the spans pile up behind it; the OTLP exporter's own lines (a
warning per retry, an error per batch) are not written; and a stop gives up on the collector after
one failed export, so it takes about a second at most.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import structlog
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ParentBased, Sampler, TraceIdRatioBased
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from prometheus_client import REGISTRY, Counter

TRACER_NAME = "poker"
TRACEPARENT = "traceparent"
_provider: TracerProvider | None = None
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_NOT_SAMPLED = TraceFlags(TraceFlags.DEFAULT)

# A collector on the node or in the cluster takes a batch in milliseconds. One that has not within a
# second is away or stuck: the batch is dropped (counted) rather than retried with back-off for the
# SDK's ten seconds, while the next spans fill the queue behind it and a stop waits for it.
EXPORT_TIMEOUT_SECONDS = 1.0
# At most one warning line this often while exports fail; the counter has every failure.
WARN_EVERY_SECONDS = 60.0
# The OTLP/gRPC exporter's module logger: a warning per retry, an error per failed batch.
_OTLP_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.grpc.exporter"

export_failures = Counter(
    "poker_trace_export_failures",
    "Batches of spans this process could not export (the collector refused them, was unreachable or "
    f"did not answer within {EXPORT_TIMEOUT_SECONDS:g} s); their spans are lost.",
    registry=REGISTRY,
)


class _ExporterLines(logging.Filter):
    """Keeps the OTLP exporter's own records out of the log; the text of the last one goes into the
    next `trace export failing` line instead (it says why: refused, deadline, TLS). It replaces the
    exporter's duplicate filter, which would hide a repeated failure's text from it."""

    def __init__(self) -> None:
        super().__init__()
        self.last = ""

    def install(self, logger: logging.Logger) -> None:
        for other in list(logger.filters):
            logger.removeFilter(other)
        logger.addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        self.last = record.getMessage()
        return False


_EXPORTER_LINES = _ExporterLines()


class CountedExport(SpanExporter):
    """An exporter whose failures are counted and written at most once every `WARN_EVERY_SECONDS`
    (by `clock`), and which, once `closing`, gives up on the collector after one failed export: the
    batches left when the process stops are counted as failed without waiting on it again."""

    def __init__(
        self, exporter: SpanExporter, endpoint: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._exporter = exporter
        self._endpoint = endpoint
        self._clock = clock
        self._lock = threading.Lock()
        self._unreported = 0
        self._last_warning: float | None = None
        self._closing = False
        self._given_up = False
        self._log = structlog.get_logger("tracing")

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._given_up:
            self._failed("gave up on the collector while stopping")
            return SpanExportResult.FAILURE
        error = _EXPORTER_LINES.last = ""
        try:
            result = self._exporter.export(spans)
        except Exception as failure:  # an exporter bug must not end the export thread either
            result, error = SpanExportResult.FAILURE, repr(failure)
        if result is not SpanExportResult.SUCCESS:
            self._given_up = self._closing
            self._failed(error or _EXPORTER_LINES.last)
        return result

    def _failed(self, error: str) -> None:
        export_failures.inc()
        with self._lock:
            self._unreported += 1
            now = self._clock()
            if self._last_warning is not None and now - self._last_warning < WARN_EVERY_SECONDS:
                return
            self._last_warning, failures, self._unreported = now, self._unreported, 0
        self._log.warning("trace export failing", endpoint=self._endpoint, failures=failures, error=error)

    def close(self) -> None:
        """From now on, one failed export is the last one tried (the process is stopping)."""
        self._closing = True

    def shutdown(self) -> None:
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._exporter.force_flush(timeout_millis)


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
_export: CountedExport | None = None


def configure_tracing(
    service: str,
    *,
    otlp_endpoint: str = "",
    sample_ratio: float = 1.0,
    exporter: SpanExporter | None = None,
    ca_file: str = "",
    batch: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> TracerProvider:
    """Install the process's tracer provider; spans go to `exporter`, or OTLP at `otlp_endpoint`.

    `otlp_endpoint` is `http://host:4317` (plaintext, a collector on the node or in the pod) or
    `https://host:4317` (TLS, verified against `ca_file` or the system's roots). With neither an
    endpoint nor an exporter, spans are not recorded at all: ids and propagation only. A given
    `exporter` gets each span as it ends (tests), or in batches with `batch` (as OTLP does). Failed
    exports are counted, and warned about once a minute by `clock`.
    """
    global _provider, _tracer, _export
    sampler: Sampler = ParentBased(TraceIdRatioBased(sample_ratio))
    if exporter is None and not otlp_endpoint:
        sampler = ParentBased(ALWAYS_OFF)
    provider = TracerProvider(resource=Resource.create({"service.name": service}), sampler=sampler)
    counted: CountedExport | None = None
    if exporter is not None:
        counted = CountedExport(exporter, type(exporter).__name__, clock)
        provider.add_span_processor(BatchSpanProcessor(counted) if batch else SimpleSpanProcessor(counted))
    elif otlp_endpoint:
        counted = CountedExport(_otlp_exporter(otlp_endpoint, ca_file), otlp_endpoint, clock)
        provider.add_span_processor(BatchSpanProcessor(counted))
    if _provider is not None:
        _stop(_provider, _export)
    # Not the API's global provider (settable once per process): a test reconfigures at will.
    _provider, _export = provider, counted
    exporting = exporter is not None or bool(otlp_endpoint)
    _tracer = provider.get_tracer(TRACER_NAME) if exporting else IdsOnlyTracer()
    return provider


def _otlp_exporter(endpoint: str, ca_file: str) -> SpanExporter:
    import grpc
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    _EXPORTER_LINES.install(logging.getLogger(_OTLP_EXPORTER_LOGGER))
    scheme, _, address = endpoint.partition("://")
    if scheme == "http":
        return OTLPSpanExporter(endpoint=address, insecure=True, timeout=EXPORT_TIMEOUT_SECONDS)
    root = open(ca_file, "rb").read() if ca_file else None  # noqa: SIM115 - read once at start
    return OTLPSpanExporter(
        endpoint=address, credentials=grpc.ssl_channel_credentials(root), timeout=EXPORT_TIMEOUT_SECONDS
    )


def _stop(provider: TracerProvider, counted: CountedExport | None) -> None:
    if counted is not None:
        counted.close()
    provider.shutdown()


def shutdown_tracing() -> None:
    """Export what is buffered and stop (at process exit): about `EXPORT_TIMEOUT_SECONDS` at most
    when the collector is away (the export under way, then the rest given up on)."""
    global _provider, _tracer, _export
    if _provider is not None:
        _stop(_provider, _export)
        _provider, _export = None, None
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
