"""Metrics and traces of every gRPC call a server serves: the outermost server interceptor.

It runs before the service interceptor (shedding, auth, errors, the summary log line), so it sees
every call, shed ones included, and the status each one ended with. Per call it: counts it started
and in flight, continues the caller's trace (W3C `traceparent` metadata) in a server span that is
current while the handler runs (so the service interceptor's log line and every call the handler
makes carry its ids), counts the messages a stream sent, and on the way out records the status
code, the latency and, for RESOURCE_EXHAUSTED, the shed reason.

opentelemetry-instrumentation-grpc's aio interceptor was not used: it wraps the servicer context in
a proxy that sees `abort` but not `abort_with_status`, which is how every error here ends, so its
spans lose the status code of every refused call; and one interceptor for both metrics and spans
costs one wrapper per call instead of two.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from service_runtime import metrics, tracing

_DETAILS_KEY = "grpc-status-details-bin"


def shed_reason(trailing: Any) -> str:
    """The ErrorInfo reason in a status's trailing metadata ('' when there is none)."""
    for key, value in trailing or ():
        if key == _DETAILS_KEY and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


def _code_after(error: BaseException, context: grpc.aio.ServicerContext[Any, Any]) -> grpc.StatusCode:
    """The status a call ended with when its handler raised: the client went away (cancelled), or
    the code the handler (the service interceptor) aborted with."""
    if isinstance(error, asyncio.CancelledError | GeneratorExit):
        return grpc.StatusCode.CANCELLED
    code = context.code()
    return code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.UNKNOWN


class _Method:
    """What every call of one method and call type shares: its metric children, its span's name and
    attributes (worked out once, when the handler is wrapped)."""

    __slots__ = ("figures", "grpc_type", "name", "span_attributes", "span_name")

    def __init__(self, name: str, grpc_type: str) -> None:
        self.name = name
        self.grpc_type = grpc_type
        self.figures = metrics.SERVER_FIGURES.for_method(name, grpc_type)
        self.span_name = name.lstrip("/")
        self.span_attributes: dict[str, str | int | bool] = {"rpc.system": "grpc", "rpc.method": name}


class _CallRecord:
    """One call's figures and span, from its start to its status."""

    __slots__ = ("figures", "grpc_type", "method", "span", "started", "token")

    def __init__(self, method: _Method, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self.method = method.name
        self.grpc_type = method.grpc_type
        self.figures = figures = method.figures
        figures.started.inc()
        figures.in_flight.inc()
        self.span = tracing.start_span(
            method.span_name,
            parent=tracing.extract(context.invocation_metadata()),
            kind=SpanKind.SERVER,
            attributes=method.span_attributes,
        )
        self.token = otel_context.attach(trace.set_span_in_context(self.span))
        self.started = time.perf_counter()

    def finish(
        self, context: grpc.aio.ServicerContext[Any, Any], code: grpc.StatusCode, *, detach: bool = True
    ) -> None:
        figures = self.figures
        figures.seconds.observe(time.perf_counter() - self.started)
        figures.in_flight.dec()
        figures.handled(code.name).inc()
        span = self.span
        if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
            reason = shed_reason(context.trailing_metadata())
            metrics.count_shed(self.method, self.grpc_type, reason or "UNSPECIFIED")
        if span.is_recording():
            span.set_attribute("rpc.grpc.status_code", code.value[0])
            if code in _SERVER_FAULTS:
                tracing.mark_error(span, code.name)
        span.end()
        # A stream closed by its client ends by GeneratorExit in whatever context closes the
        # generator, not the one it was attached in: resetting the token there fails (and
        # OpenTelemetry logs it as an error), and that context dies with the stream anyway.
        if detach:
            otel_context.detach(self.token)


# Codes that say the server failed (OpenTelemetry's rule for server spans): the caller's mistakes
# (INVALID_ARGUMENT, NOT_FOUND, ...) leave the span's status unset.
_SERVER_FAULTS = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)


class TelemetryInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps every handler of the server with `_CallRecord`; see the module docstring."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        return self.wrap(handler_call_details.method, handler)

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """`handler` of `method` observed; `create_server` wraps each handler once, when registered."""
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                _observe_unary(method, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            behavior = handler.unary_stream
            # A stream written with `context.write` (the health service's Watch) is a coroutine.
            observe = _observe_stream if inspect.isasyncgenfunction(behavior) else _observe_written_stream
            return grpc.unary_stream_rpc_method_handler(
                observe(method, behavior),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


def _observe_unary(
    method: str,
    behavior: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]],
    grpc_type: str = metrics.UNARY,
) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
    shared = _Method(method, grpc_type)

    async def observed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        record = _CallRecord(shared, context)
        try:
            response = await behavior(request, context)
        except BaseException as error:
            record.finish(context, _code_after(error, context))
            raise
        record.finish(context, grpc.StatusCode.OK)
        return response

    return observed


def _observe_written_stream(
    method: str, behavior: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]
) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
    return _observe_unary(method, behavior, metrics.SERVER_STREAM)


def _observe_stream(
    method: str, behavior: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]]
) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]]:
    shared = _Method(method, metrics.SERVER_STREAM)

    async def observed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        record = _CallRecord(shared, context)
        sent = record.figures.messages
        assert sent is not None
        try:
            async for item in behavior(request, context):
                yield item
                sent.inc()
        except BaseException as error:
            record.finish(context, _code_after(error, context), detach=not isinstance(error, GeneratorExit))
            raise
        record.finish(context, grpc.StatusCode.OK)

    return observed
