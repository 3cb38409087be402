"""The one server interceptor: request context, authentication, access control, error mapping, logging.

For every RPC it binds the request id, method and caller to the logging context, verifies the bearer
token and the caller's role, runs the handler, turns a DomainError into its status code with a
`google.rpc.ErrorInfo` carrying the stable reason, turns anything unexpected into INTERNAL without
leaking internals, and writes one summary line.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from service_runtime.access import AccessPolicy
from service_runtime.auth import Caller, TokenKeys, bearer_from_metadata, set_current_caller, verify_token
from service_runtime.errors import ERROR_DOMAIN, DomainError, ErrorKind, PermissionDenied, Unauthenticated

log = structlog.get_logger("rpc")

_QUIET_METHODS = frozenset({"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"})


def status_for(error: DomainError) -> grpc.Status:
    """The rich status for a domain error: code, safe message and ErrorInfo(reason, domain, metadata)."""
    code = grpc.StatusCode[error.kind.value]
    info = error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata)
    status = status_pb2.Status(code=code.value[0], message=error.message)
    status.details.add().Pack(info)
    return rpc_status.to_status(status)


def internal_status() -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason="INTERNAL", domain=ERROR_DOMAIN)
    status = status_pb2.Status(code=code_pb2.INTERNAL, message="internal error")
    status.details.add().Pack(info)
    return rpc_status.to_status(status)


_IDEMPOTENCY_FIELDS = ("request_id", "session_id", "hand_id", "payment_reference", "round_id", "event_id")


def _request_id(context: grpc.aio.ServicerContext[Any, Any], request: Any) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id":
            return value if isinstance(value, str) else value.decode()
    # Mutations carry `request_id` or a domain id that plays its role (AIP-155).
    for name in _IDEMPOTENCY_FIELDS:
        from_body = getattr(request, name, "")
        if isinstance(from_body, str) and from_body:
            return from_body
    return f"srv-{uuid.uuid4().hex[:16]}"


class ServiceInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps every handler of the server; see the module docstring."""

    def __init__(self, token_keys: TokenKeys, access: AccessPolicy, clock: Callable[[], float] = time.time):
        self._keys = token_keys
        self._access = access
        self._clock = clock

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(method, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(method, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream and method in _PASS_THROUGH_STREAMS:
            return handler
        # Client-streaming and bidirectional RPCs are not part of any contract here; refuse them
        # rather than serve them unauthenticated.
        raise RuntimeError(f"unsupported streaming shape for {method}")

    def _authenticate(self, method: str, context: grpc.aio.ServicerContext[Any, Any]) -> Caller | None:
        if self._access.is_public(method):
            return None
        token = bearer_from_metadata(context.invocation_metadata() or ())
        if token is None:
            raise Unauthenticated(
                "TOKEN_MISSING", "this call needs an 'authorization: Bearer <token>' header"
            )
        caller = verify_token(self._keys, token, now=int(self._clock()))
        allowed = self._access.allowed_roles(method)
        if not caller.roles & allowed:
            needed = " or ".join(sorted(r.value for r in allowed)) or "a role this method does not grant"
            raise PermissionDenied("ROLE_REQUIRED", f"this call needs the role {needed}")
        return caller

    def _enter(self, method: str, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Authenticate and authorise, then make the caller visible to handlers and log lines."""
        caller = self._authenticate(method, context)
        set_current_caller(caller)
        if caller is not None:
            structlog.contextvars.bind_contextvars(caller=caller.subject)

    async def _fail(
        self, method: str, started: float, context: grpc.aio.ServicerContext[Any, Any], error: Exception
    ) -> None:
        """End a failed call: domain errors with their code and reason, anything else as INTERNAL."""
        if isinstance(error, DomainError):
            self._finish(method, started, grpc.StatusCode[error.kind.value], error.reason)
            await context.abort_with_status(status_for(error))
        if isinstance(error, grpc.aio.AbortError):
            # The handler aborted by itself with its own status; pass it through untouched.
            self._finish(method, started, context.code() or grpc.StatusCode.UNKNOWN, None)
            raise error
        log.error("rpc failed", exc_info=error)
        self._finish(method, started, grpc.StatusCode.INTERNAL, "INTERNAL")
        await context.abort_with_status(internal_status())

    def _begin(self, method: str, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> float:
        structlog.contextvars.bind_contextvars(method=method, request_id=_request_id(context, request))
        return time.perf_counter()

    def _finish(self, method: str, started: float, code: grpc.StatusCode, reason: str | None) -> None:
        duration_ms = round((time.perf_counter() - started) * 1000, 2)
        emit = log.debug if method in _QUIET_METHODS else log.info
        emit("rpc", code=code.name, reason=reason, duration_ms=duration_ms)

    def _wrap_unary(
        self, method: str, behavior: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]
    ) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
        async def wrapper(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = self._begin(method, request, context)
            try:
                self._enter(method, context)
                response = await behavior(request, context)
            except Exception as error:
                await self._fail(method, started, context, error)
            else:
                self._finish(method, started, grpc.StatusCode.OK, None)
                return response
            finally:
                set_current_caller(None)
                structlog.contextvars.unbind_contextvars("method", "request_id", "caller")

        return wrapper

    def _wrap_stream(
        self, method: str, behavior: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]]
    ) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]]:
        async def wrapper(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            started = self._begin(method, request, context)
            try:
                self._enter(method, context)
                async for item in behavior(request, context):
                    yield item
            except Exception as error:
                await self._fail(method, started, context, error)
            else:
                self._finish(method, started, grpc.StatusCode.OK, None)
            finally:
                set_current_caller(None)
                structlog.contextvars.unbind_contextvars("method", "request_id", "caller")

        return wrapper


# Server reflection is a bidirectional stream; it is public and read-only, so it passes through.
_PASS_THROUGH_STREAMS = frozenset(
    {
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    }
)

assert {k.value for k in ErrorKind} <= {c.name for c in grpc.StatusCode}
