"""Prometheus metrics of a process: the gRPC figures every service shares, and the HTTP endpoint.

One registry per process (prometheus-client's default): every service is its own process, and a
test that hosts several servers in one process reads the deltas it caused. The gRPC names follow
the grpc-ecosystem convention (go-grpc-prometheus / py-grpc-prometheus: `grpc_server_handled_total`
with `grpc_service`, `grpc_method`, `grpc_code`), so existing Grafana panels and alerts read them.
Labels only ever take values from a small fixed set (methods, status codes, reasons from the
catalogue), never an id.

`GrpcServerFigures.for_method` / `GrpcClientFigures.for_method` hand out the labelled children of one
method once and keep them, so a call pays a dictionary lookup, not a label resolution.
"""

from __future__ import annotations

import importlib.metadata
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIServer

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, start_http_server

# Call latency, 1 ms to 10 s: the hand path's calls are a few ms; a settlement under load, seconds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Human-scale durations (time to act, lags): 50 ms to 2 minutes.
HUMAN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 120.0)
# Storage round trips (SQL statements, Redis commands): 0.1 ms to 2.5 s.
STORAGE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 2.5)

UNARY = "unary"
SERVER_STREAM = "server_stream"

_CALL_LABELS = ("grpc_type", "grpc_service", "grpc_method")

server_started = Counter(
    "grpc_server_started_total", "RPCs started on the server.", _CALL_LABELS, registry=REGISTRY
)
server_handled = Counter(
    "grpc_server_handled_total",
    "RPCs completed on the server, by status code.",
    (*_CALL_LABELS, "grpc_code"),
    registry=REGISTRY,
)
server_handling_seconds = Histogram(
    "grpc_server_handling_seconds",
    "Time from the start of an RPC to its status (a stream: its whole life).",
    _CALL_LABELS,
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
server_msg_sent = Counter(
    "grpc_server_msg_sent_total", "Messages the server sent on streams.", _CALL_LABELS, registry=REGISTRY
)
server_in_flight = Gauge(
    "grpc_server_in_flight",
    "RPCs and streams being served now.",
    _CALL_LABELS,
    registry=REGISTRY,
)
server_shed = Counter(
    "grpc_server_shed_total",
    "RPCs refused with RESOURCE_EXHAUSTED before their handler ran, by reason (SERVER_OVERLOADED, quotas).",
    (*_CALL_LABELS, "reason"),
    registry=REGISTRY,
)
client_started = Counter(
    "grpc_client_started_total",
    "RPCs this process started to other services.",
    _CALL_LABELS,
    registry=REGISTRY,
)
client_handled = Counter(
    "grpc_client_handled_total",
    "RPCs this process made that completed, by status code.",
    (*_CALL_LABELS, "grpc_code"),
    registry=REGISTRY,
)
client_handling_seconds = Histogram(
    "grpc_client_handling_seconds",
    "Time from the start of an outgoing RPC to its status.",
    _CALL_LABELS,
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
client_in_flight = Gauge(
    "grpc_client_in_flight",
    "Outgoing RPCs and streams not finished yet.",
    _CALL_LABELS,
    registry=REGISTRY,
)
sql_seconds = Histogram(
    "poker_sql_statement_seconds",
    "Time of one SQL statement (execute to result), or of one pipeline of them sent to the driver "
    "(statement=PIPELINE), by database backend and statement kind.",
    ("backend", "statement"),
    buckets=STORAGE_BUCKETS,
    registry=REGISTRY,
)
redis_seconds = Histogram(
    "poker_redis_command_seconds",
    "Time of one Redis command or pipeline round trip, by command.",
    ("command",),
    buckets=STORAGE_BUCKETS,
    registry=REGISTRY,
)
redis_errors = Counter(
    "poker_redis_command_errors_total",
    "Redis commands or pipelines that failed (connection lost or refused, timeout, an error reply), by command.",
    ("command",),
    registry=REGISTRY,
)
process_info = Gauge(
    "poker_service_info",
    "Always 1: which service this process is, for joins in queries.",
    ("service",),
    registry=REGISTRY,
)
build_info = Gauge(
    "poker_build_info",
    "Always 1: the version and revision this process runs (POKER_BUILD_VERSION / POKER_BUILD_REVISION, "
    "set by the image build), for rollouts.",
    ("service", "version", "revision"),
    registry=REGISTRY,
)
# Every status code's series of a method a server serves exists from the start (at 0), as
# go-grpc-prometheus's InitializeMetrics does: Prometheus's increase() cannot see the first event of
# a series that is born at 1, so the first INTERNAL would never page.
# The status codes of the gRPC spec, by name (not imported from grpc: a process sets gRPC core's
# logging before grpc is first imported, and this module is imported early).
STATUS_CODES = (
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
)


def split_method(full_method: str) -> tuple[str, str]:
    """'/poker.cashier.v1.CashierService/GetBalances' -> ('poker.cashier.v1.CashierService', 'GetBalances')."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return service or "unknown", method or "unknown"


@dataclass
class MethodFigures:
    """The labelled children of one method and call type, resolved once."""

    started: Counter
    seconds: Histogram
    messages: Counter | None  # streams' messages sent (server side only)
    in_flight: Gauge
    _handled_family: Counter
    _labels: tuple[str, str, str]
    _handled: dict[str, Counter] = field(default_factory=dict)

    def handled(self, code_name: str) -> Counter:
        child = self._handled.get(code_name)
        if child is None:
            child = self._handled[code_name] = self._handled_family.labels(*self._labels, code_name)
        return child


class _Figures:
    def __init__(
        self,
        started: Counter,
        handled: Counter,
        seconds: Histogram,
        messages: Counter | None,
        in_flight: Gauge,
        *,
        every_code: bool = False,
    ) -> None:
        self._families = (started, handled, seconds, messages, in_flight)
        self._every_code = every_code
        self._by_method: dict[tuple[str, str], MethodFigures] = {}
        self._lock = threading.Lock()

    def for_method(self, full_method: str, grpc_type: str) -> MethodFigures:
        key = (full_method, grpc_type)
        figures = self._by_method.get(key)
        if figures is None:
            with self._lock:
                figures = self._by_method.get(key)
                if figures is None:
                    started, handled, seconds, messages, in_flight = self._families
                    service, method = split_method(full_method)
                    labels = (grpc_type, service, method)
                    figures = MethodFigures(
                        started=started.labels(*labels),
                        seconds=seconds.labels(*labels),
                        messages=None if messages is None else messages.labels(*labels),
                        in_flight=in_flight.labels(*labels),
                        _handled_family=handled,
                        _labels=labels,
                    )
                    if self._every_code:
                        for code in STATUS_CODES:
                            figures.handled(code)
                    self._by_method[key] = figures
        return figures


SERVER_FIGURES = _Figures(
    server_started,
    server_handled,
    server_handling_seconds,
    server_msg_sent,
    server_in_flight,
    every_code=True,
)
CLIENT_FIGURES = _Figures(client_started, client_handled, client_handling_seconds, None, client_in_flight)


def count_shed(full_method: str, grpc_type: str, reason: str) -> None:
    service, method = split_method(full_method)
    server_shed.labels(grpc_type, service, method, reason).inc()


@dataclass
class MetricsEndpoint:
    """The HTTP server that serves /metrics for Prometheus; `stop` once."""

    port: int
    _server: WSGIServer
    _thread: threading.Thread

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def start_metrics_endpoint(
    host: str, port: int, service: str, registry: CollectorRegistry = REGISTRY
) -> MetricsEndpoint:
    """Serve the registry over HTTP on host:port (0 picks a free port) from a daemon thread.

    Plaintext on purpose: metrics carry no secret and no player data (labels are methods, codes
    and reasons), the NetworkPolicies admit only the monitoring namespace, and Prometheus's own
    scrape of a pod is plaintext in the usual set-ups."""
    process_info.labels(service).set(1)
    build_info.labels(service, *build_version()).set(1)
    server, thread = start_http_server(port, addr=host, registry=registry)
    return MetricsEndpoint(port=int(server.server_port), _server=server, _thread=thread)


def build_version() -> tuple[str, str]:
    """(version, revision) of this build: the image's (POKER_BUILD_VERSION, POKER_BUILD_REVISION), else
    the installed package's version and "unknown"."""
    version = os.environ.get("POKER_BUILD_VERSION", "")
    if not version:
        try:
            version = importlib.metadata.version("poker-platform")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
    return version, os.environ.get("POKER_BUILD_REVISION", "") or "unknown"


def sample_value(
    name: str, labels: dict[str, str] | None = None, registry: CollectorRegistry = REGISTRY
) -> float:
    """The current value of one sample (0 when it does not exist yet): for tests and benches."""
    value = registry.get_sample_value(name, labels or {})
    return 0.0 if value is None else value


def metric_names(registry: CollectorRegistry = REGISTRY) -> Iterable[str]:
    """Every sample name the registry exposes (counters with _total, histograms with _bucket...)."""
    for family in registry.collect():
        for sample in family.samples:
            yield sample.name
