"""Outgoing gRPC channels: a deadline on every call, bearer token, request id and trace context
propagated, and retries of UNAVAILABLE and RESOURCE_EXHAUSTED (bounded attempts, jittered
exponential backoff, per gRFC A6). A server sheds overload with RESOURCE_EXHAUSTED before it runs the
handler, so a retry is safe; every mutating RPC is idempotent by its request id anyway.

Every call is counted (grpc_client_* metrics by method and code, latency) and gets a client span,
a child of the current span, whose context goes to the server as `traceparent`. With TLS files the
channel is mutual TLS and follows certificate rotation (service_runtime.tls); without, plaintext,
which only development allows.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import grpc
import structlog
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.trace import Span, SpanKind

from service_runtime import metrics, tracing
from service_runtime.tls import ReloadingChannel, TlsFiles

RETRY_SERVICE_CONFIG = {
    "methodConfig": [
        {
            "name": [{}],
            "retryPolicy": {
                "maxAttempts": 4,
                "initialBackoff": "0.1s",
                "maxBackoff": "2s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"],
            },
        }
    ]
}


# HTTP/2 keepalive: a peer that stops answering (a frozen process, a cut network) fails the channel's
# calls, streams included, within the time plus the timeout, so a client re-routes instead of waiting
# on a stream for ever (a table shard frozen past its lease: its players find the room's new owner).
# Servers accept pings this often (service_runtime.server).
# (grpcio 1.85 waits `ping_timeout_ms`, default a minute, for a keepalive ping's answer, whatever
# `keepalive_timeout_ms` says: measured with a SIGSTOPped server, a stream failed after 4 s with both
# set and never within 30 s with the keepalive pair alone.)
KEEPALIVE_OPTIONS: list[tuple[str, int]] = [
    ("grpc.keepalive_time_ms", 2000),
    ("grpc.keepalive_timeout_ms", 3000),
    ("grpc.http2.ping_timeout_ms", 3000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]


def _error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info
    return None


def reason_of(error: grpc.aio.AioRpcError) -> str:
    """The stable reason (google.rpc.ErrorInfo) a failed call carries, or '' when it carries none."""
    info = _error_info(error)
    return "" if info is None else str(info.reason)


def error_metadata_of(error: grpc.aio.AioRpcError) -> dict[str, str]:
    """The ErrorInfo metadata a failed call carries (`field`, `needed`, ...), empty when none."""
    info = _error_info(error)
    return {} if info is None else dict(info.metadata)


def _method_of(details: grpc.aio.ClientCallDetails) -> str:
    method = details.method
    # grpc.aio hands the method over as bytes (grpc/grpc#31092).
    return method.decode() if isinstance(method, bytes) else str(method)


class _CallDefaults:
    """Adds the default deadline, the bearer token, the current request id and the trace context to
    each call, and counts it.

    grpc.aio files an interceptor under the first kind it is an instance of, so one object that is
    both kinds would never see a stream: each kind gets its own object (`_UnaryDefaults`,
    `_StreamDefaults`)."""

    def __init__(self, timeout_seconds: float, token: Callable[[], str] | None) -> None:
        self._timeout = timeout_seconds
        self._token = token

    def _details(
        self, details: grpc.aio.ClientCallDetails, method: str, span: Span, timeout: float | None
    ) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        if self._token is not None and "authorization" not in metadata:
            metadata.add("authorization", f"Bearer {self._token()}")
        request_id = structlog.contextvars.get_contextvars().get("request_id")
        if request_id and "x-request-id" not in metadata:
            metadata.add("x-request-id", str(request_id))
        tracing.inject(metadata, span)
        return grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=timeout,
            metadata=metadata,
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )


def _client_span(method: str) -> Span:
    return tracing.start_span(
        method.lstrip("/"), kind=SpanKind.CLIENT, attributes={"rpc.system": "grpc", "rpc.method": method}
    )


def _end(span: Span, code: grpc.StatusCode) -> None:
    if span.is_recording():
        span.set_attribute("rpc.grpc.status_code", code.value[0])
        if code is not grpc.StatusCode.OK:
            tracing.mark_error(span, code.name)
    span.end()


class _UnaryDefaults(_CallDefaults, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        method = _method_of(details)
        figures = metrics.CLIENT_FIGURES.for_method(method, metrics.UNARY)
        span = _client_span(method)
        timeout = details.timeout if details.timeout is not None else self._timeout
        figures.started.inc()
        figures.in_flight.inc()
        started = time.perf_counter()
        code = grpc.StatusCode.OK
        try:
            call = await continuation(self._details(details, method, span, timeout), request)
            # Awaited here so the figures and the span get the call's status; the caller awaits the
            # same (finished) call and gets the same response.
            await call
            return call
        except grpc.aio.AioRpcError as error:
            code = error.code()
            raise
        except asyncio.CancelledError:
            code = grpc.StatusCode.CANCELLED
            raise
        finally:
            figures.seconds.observe(time.perf_counter() - started)
            figures.in_flight.dec()
            figures.handled(code.name).inc()
            _end(span, code)


class _StreamDefaults(_CallDefaults, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        method = _method_of(details)
        figures = metrics.CLIENT_FIGURES.for_method(method, metrics.SERVER_STREAM)
        span = _client_span(method)
        # Streams live as long as the subscriber wants; only unary calls get the default deadline.
        call = await continuation(self._details(details, method, span, details.timeout), request)
        figures.started.inc()
        figures.in_flight.inc()
        started = time.perf_counter()

        def ended(done: Any) -> None:
            task = asyncio.ensure_future(_stream_ended(done, figures, span, started))
            _STREAM_ENDINGS.add(task)
            task.add_done_callback(_STREAM_ENDINGS.discard)

        call.add_done_callback(ended)
        return call


_STREAM_ENDINGS: set[asyncio.Future[None]] = set()


async def _stream_ended(call: Any, figures: metrics.MethodFigures, span: Span, started: float) -> None:
    try:
        code = await call.code()
    except Exception:
        code = grpc.StatusCode.UNKNOWN
    figures.seconds.observe(time.perf_counter() - started)
    figures.in_flight.dec()
    figures.handled(code.name).inc()
    _end(span, code)


def create_channel(
    target: str,
    *,
    timeout_seconds: float = 5.0,
    token: Callable[[], str] | None = None,
    tls: TlsFiles | None = None,
    tls_check_seconds: float = 30.0,
) -> grpc.aio.Channel:
    """A channel with deadlines, auth, retries with backoff, metrics and trace context: mutual TLS
    with `tls` (following rotation of its files), else plaintext (development, loopback)."""
    options = [
        ("grpc.enable_retries", 1),
        ("grpc.service_config", json.dumps(RETRY_SERVICE_CONFIG)),
        *KEEPALIVE_OPTIONS,
    ]
    interceptors = [_UnaryDefaults(timeout_seconds, token), _StreamDefaults(timeout_seconds, token)]
    if tls is not None:
        return ReloadingChannel(
            target, tls, options=options, interceptors=interceptors, check_seconds=tls_check_seconds
        )
    return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)
