"""Metrics and traces of every Connect call the gateway serves, as `service_runtime.call_telemetry`
measures every gRPC call a service serves, in the same families: `grpc_server_started_total`,
`grpc_server_handled_total{grpc_code}`, `grpc_server_handling_seconds`, `grpc_server_msg_sent_total`
and `grpc_server_in_flight`, labelled with the method as the gateway serves it
(`poker.gateway.v1.GatewayService/SignIn`, `poker.lobby.v1.LobbyService/ListRooms`, ...). So one
query reads the calls players make wherever they are served, and an alert on a service's error ratio
covers the front door too.

A call's code is the gRPC code of the Connect error its caller got (OK for an answer; a stream's,
the code it ended with), except that a call whose client went away (a closed page, a dropped link)
is CANCELLED, as the gRPC servers count it: nobody was told anything, and a page leaving its table
must not look like the gateway failing.

A call is a server span too: it continues the caller's trace (`traceparent`, from the browser's
instrumentation or the ingress), is current while the call is served, so the forwarded gRPC call is
its child and carries the trace on to the service behind (`service_runtime.clients`), and ends with
the call's status code. The front door (`front_door.py`) starts and finishes each call's record; the
end of a SignIn or a RenewToken is also counted by its outcome (`metrics.py`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.protobuf import descriptor_pool
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from service_runtime import metrics, tracing
from services.gateway import connect_errors
from services.gateway import metrics as gateway_metrics
from services.gateway.access import GATEWAY_SERVICE

_SIGN_IN_KINDS = {
    f"/{GATEWAY_SERVICE}/SignIn": gateway_metrics.SIGN_IN,
    f"/{GATEWAY_SERVICE}/RenewToken": gateway_metrics.RENEWAL,
}
# The gRPC name of each Connect code (Connect spells one differently).
_GRPC_CODES = {code: code.name for code in Code} | {Code.CANCELED: "CANCELLED"}
_GRPC_NUMBERS = {code.name: code.value[0] for code in grpc.StatusCode}
# Codes that say the server failed (OpenTelemetry's rule for server spans, as the services apply it).
_SERVER_FAULTS = frozenset(
    {"UNKNOWN", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS"}
)


def _grpc_type_of(full_method: str) -> str:
    """`metrics.SERVER_STREAM` for a server-streaming method of the descriptor pool, else `UNARY`."""
    service, method = metrics.split_method(full_method)
    try:
        descriptor = descriptor_pool.Default().FindServiceByName(service).FindMethodByName(method)
    except KeyError:
        return metrics.UNARY
    return metrics.SERVER_STREAM if descriptor is not None and descriptor.server_streaming else metrics.UNARY


class _Method:
    """What every call of one method shares: its metric children, its span's name and attributes,
    and whether it is a sign-in or a renewal (worked out once)."""

    __slots__ = ("figures", "sign_in_kind", "span_attributes", "span_name", "unary")

    def __init__(self, full_method: str) -> None:
        grpc_type = _grpc_type_of(full_method)
        self.unary = grpc_type == metrics.UNARY
        self.figures = metrics.SERVER_FIGURES.for_method(full_method, grpc_type)
        self.span_name = full_method.lstrip("/")
        self.span_attributes: dict[str, str | int | bool] = {
            "rpc.system": "connect_rpc",
            "rpc.method": full_method,
        }
        self.sign_in_kind = _SIGN_IN_KINDS.get(full_method)


class ServedCall:
    """One call's figures and span, from its start to its status; `finish` once."""

    __slots__ = ("_method", "_span", "_token", "started")

    def __init__(self, method: _Method, headers: Mapping[str, str]) -> None:
        self._method = method
        method.figures.started.inc()
        method.figures.in_flight.inc()
        traceparent = headers.get(tracing.TRACEPARENT)
        self._span = tracing.start_span(
            method.span_name,
            parent=tracing.extract([(tracing.TRACEPARENT, traceparent)] if traceparent else None),
            kind=SpanKind.SERVER,
            attributes=method.span_attributes,
        )
        self._token = otel_context.attach(trace.set_span_in_context(self._span))
        self.started = time.perf_counter()

    @property
    def unary(self) -> bool:
        return self._method.unary

    def finish(self, error: ConnectError | None, *, client_gone: bool = False) -> None:
        """The call ended with `error` (None: answered); `client_gone`: its client went away first."""
        method = self._method
        figures = method.figures
        code = "CANCELLED" if client_gone else code_of(error)
        figures.seconds.observe(time.perf_counter() - self.started)
        figures.in_flight.dec()
        figures.handled(code).inc()
        if method.sign_in_kind is not None:
            outcome = connect_errors.reason_of_connect(error) if error is not None else gateway_metrics.OK
            gateway_metrics.count_sign_in(method.sign_in_kind, outcome or gateway_metrics.OTHER)
        span = self._span
        if span.is_recording():
            span.set_attribute("rpc.grpc.status_code", _GRPC_NUMBERS.get(code, 2))
            if code in _SERVER_FAULTS:
                tracing.mark_error(span, code)
        span.end()
        otel_context.detach(self._token)


def code_of(error: ConnectError | None) -> str:
    """The gRPC code name of a Connect call's outcome."""
    return "OK" if error is None else _GRPC_CODES.get(error.code, "UNKNOWN")


class CallTelemetry:
    """The records of the calls of the methods the gateway serves. Each method's series are made
    (at 0) when the gateway starts, so the first call of a method, or its first error, is an increase
    Prometheus sees."""

    def __init__(self, methods: Iterable[str]) -> None:
        self._methods = {method: _Method(method) for method in methods}

    def start(self, full_method: str, headers: Mapping[str, str]) -> ServedCall:
        """A call of `full_method` (`/package.Service/Method`) begins: counted and current as a span."""
        method = self._methods.get(full_method)
        if method is None:
            # Only methods the Connect applications route reach here; kept once made.
            method = self._methods[full_method] = _Method(full_method)
        return ServedCall(method, headers)


async def counted_messages(stream: AsyncIterator[Any], full_method: str) -> AsyncIterator[Any]:
    """`stream`, each message counted in `grpc_server_msg_sent_total` of `full_method` as it is sent."""
    sent = metrics.SERVER_FIGURES.for_method(full_method, metrics.SERVER_STREAM).messages
    assert sent is not None
    try:
        async for message in stream:
            yield message
            sent.inc()
    finally:
        # Closed with this one (the client left): the stream behind stops now, not when collected.
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
