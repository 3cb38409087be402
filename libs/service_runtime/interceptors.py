"""The one server interceptor: load shedding, authentication, access control, parsing, errors, logging.

For every RPC of a service it, in this order: sheds the call with RESOURCE_EXHAUSTED if the server
is at its bound of concurrent calls (or streams); verifies the bearer token and the caller's role or
service identity from metadata alone; sheds the call with RESOURCE_EXHAUSTED CALLER_QUOTA_EXCEEDED
if a player (one token subject) already holds their share of concurrent calls (or streams), so one
account cannot take the server from everyone else; only then parses the request bytes (undecodable bytes are
INVALID_ARGUMENT); binds a bounded request id, the method and the caller to the logging context; runs
the handler; turns a DomainError into its status code with a `google.rpc.ErrorInfo` carrying the
stable reason, and anything unexpected into INTERNAL without leaking internals; and writes one
summary line for every call that was refused or failed and every stream that ended (a successful
unary call is counted in the metrics and logged only at debug, or with POKER_LOG_CALLS). Nothing from an unauthenticated request reaches a log line.

Health and reflection pass through untouched: probes and tools call them without a token, as the
standard protocols expect.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from service_runtime.access import PUBLIC_INFRASTRUCTURE, AccessPolicy, describe
from service_runtime.auth import (
    Caller,
    Role,
    TokenKeys,
    VerifiedTokens,
    bearer_from_metadata,
    set_current_caller,
)
from service_runtime.database import is_outage
from service_runtime.errors import (
    ERROR_DOMAIN,
    DomainError,
    ErrorKind,
    InvalidArgument,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from service_runtime.structured_logging import CALL_LINES, bounded_text

log = structlog.get_logger("rpc")

_QUIET_METHODS = frozenset({"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"})
# A request id longer than this is cut in log lines (ids are 128 characters at most by contract).
MAX_LOGGED_REQUEST_ID = 128


@dataclass(frozen=True)
class Limits:
    """How many unary calls and how many streams a server serves at once, in all and to one player
    (a token with the player role, by subject); the rest are shed. Admins and services are bound only
    by the totals: their callers are the platform's own processes and operators."""

    max_concurrent_rpcs: int = 1000
    max_concurrent_streams: int = 1000
    player_concurrent_calls: int = 32
    player_concurrent_streams: int = 16


DEFAULT_LIMITS = Limits()


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
    """The id a call is logged under, bounded and printable (it comes from the caller)."""
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id" and isinstance(value, str) and value:
            return bounded_text(value, MAX_LOGGED_REQUEST_ID)
    # Mutations carry `request_id` or a domain id that plays its role (AIP-155).
    for name in _id_fields(type(request)):
        from_body = getattr(request, name, "")
        if isinstance(from_body, str) and from_body:
            return bounded_text(from_body, MAX_LOGGED_REQUEST_ID)
    return f"srv-{random.getrandbits(64):016x}"


_ID_FIELDS: dict[type, tuple[str, ...]] = {}


def _id_fields(message_type: type) -> tuple[str, ...]:
    """The idempotency fields a request type has, in the order of `_IDEMPOTENCY_FIELDS`, found once
    per type (asking a message for a field it lacks raises and catches an AttributeError)."""
    fields = _ID_FIELDS.get(message_type)
    if fields is None:
        descriptor = getattr(message_type, "DESCRIPTOR", None)
        names = getattr(descriptor, "fields_by_name", None)
        if names is None:  # not a protobuf message (raw bytes): ask for each
            fields = _IDEMPOTENCY_FIELDS
        else:
            fields = tuple(name for name in _IDEMPOTENCY_FIELDS if name in names)
        _ID_FIELDS[message_type] = fields
    return fields


class _Gate:
    """A counter of calls in flight with a bound; over it, calls are refused instead of queued."""

    def __init__(self, limit: int, what: str) -> None:
        self._limit = limit
        self._what = what
        self.in_flight = 0

    def enter(self) -> None:
        if self.in_flight >= self._limit:
            raise ResourceExhausted(
                "SERVER_OVERLOADED",
                f"the server is serving its maximum of {self._limit} concurrent {self._what}; retry with backoff",
            )
        self.in_flight += 1

    def leave(self) -> None:
        self.in_flight -= 1


class _CallerQuota:
    """Calls (or streams) in flight per player; over the share, the caller is refused, not queued."""

    def __init__(self, limit: int, what: str) -> None:
        self._limit = limit
        self._what = what
        self._in_flight: dict[str, int] = {}

    def enter(self, caller: Caller | None) -> str | None:
        """The key to `leave` with, or None when the caller has no quota (staff, services)."""
        if caller is None or not caller.has(Role.PLAYER) or caller.is_staff or caller.service:
            return None
        held = self._in_flight.get(caller.subject, 0)
        if held >= self._limit:
            raise ResourceExhausted(
                "CALLER_QUOTA_EXCEEDED",
                f"you already hold the {self._limit} concurrent {self._what} one player may; "
                "retry with backoff, or close one first",
                {"limit": str(self._limit), "what": self._what},
            )
        self._in_flight[caller.subject] = held + 1
        return caller.subject

    def leave(self, key: str | None) -> None:
        if key is None:
            return
        held = self._in_flight.get(key, 0) - 1
        if held > 0:
            self._in_flight[key] = held
        else:
            self._in_flight.pop(key, None)


class ServiceInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps every handler of the server; see the module docstring."""

    def __init__(
        self,
        token_keys: TokenKeys,
        access: AccessPolicy,
        clock: Callable[[], float] = time.time,
        limits: Limits = DEFAULT_LIMITS,
    ):
        self._keys = token_keys
        self._tokens = VerifiedTokens(token_keys)
        self._access = access
        self._clock = clock
        self._unary_gate = _Gate(limits.max_concurrent_rpcs, "calls")
        self._stream_gate = _Gate(limits.max_concurrent_streams, "streams")
        self._unary_quota = _CallerQuota(limits.player_concurrent_calls, "calls")
        self._stream_quota = _CallerQuota(limits.player_concurrent_streams, "streams")

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
        """`handler` of `method` wrapped as the module docstring says. `create_server` wraps each
        method's handler once, when it is registered, instead of interposing per call (a grpc.aio
        server interceptor costs every call a coroutine chain and a new handler)."""
        # The handler gets the raw bytes: the request is parsed only after the caller is verified.
        parse = handler.request_deserializer or (lambda data: data)
        if method in PUBLIC_INFRASTRUCTURE:
            return _public_handler(handler, parse, method)
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(method, parse, handler.unary_unary),
                request_deserializer=None,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(method, parse, handler.unary_stream),
                request_deserializer=None,
                response_serializer=handler.response_serializer,
            )
        # Client-streaming and bidirectional RPCs are not part of any contract here; refuse them
        # rather than serve them unauthenticated.
        return grpc.unary_unary_rpc_method_handler(_refuse_streaming_shape)

    def _authenticate(self, method: str, context: grpc.aio.ServicerContext[Any, Any]) -> Caller | None:
        if self._access.is_public(method):
            return None
        token = bearer_from_metadata(context.invocation_metadata() or ())
        if token is None:
            raise Unauthenticated(
                "TOKEN_MISSING", "this call needs an 'authorization: Bearer <token>' header"
            )
        caller = self._tokens.verify(token, now=int(self._clock()))
        allowed = self._access.allowed_roles(method)
        if not caller.principals & allowed:
            raise PermissionDenied("ROLE_REQUIRED", f"this call is for {describe(allowed)}")
        return caller

    def _enter(
        self, method: str, raw: bytes, parse: Callable[[bytes], Any], context: Any, quota: _CallerQuota
    ) -> tuple[str | None, Any, Caller | None]:
        """Authenticate and authorise, take the caller's share, then parse; bind the call to the
        logging context. The quota key to leave with (None: none taken), the request and the caller."""
        caller = self._authenticate(method, context)
        held = quota.enter(caller)
        try:
            return held, self._parse(raw, parse, context, caller), caller
        except BaseException:
            quota.leave(held)
            raise

    def _parse(self, raw: bytes, parse: Callable[[bytes], Any], context: Any, caller: Caller | None) -> Any:
        try:
            request = parse(raw)
        except Exception as error:  # protobuf raises DecodeError and, for some inputs, others
            raise InvalidArgument(
                "REQUEST_MALFORMED", "the request bytes are not a valid message for this method"
            ) from error
        set_current_caller(caller)
        if caller is None:
            structlog.contextvars.bind_contextvars(request_id=_request_id(context, request))
        else:
            structlog.contextvars.bind_contextvars(
                request_id=_request_id(context, request), caller=bounded_text(caller.subject, 128)
            )
        return request

    async def _fail(
        self, method: str, started: float, context: grpc.aio.ServicerContext[Any, Any], error: Exception
    ) -> None:
        """End a failed call: domain errors with their code and reason, a database that is away as
        UNAVAILABLE (DATABASE_UNAVAILABLE, which clients retry), anything else as INTERNAL."""
        if not isinstance(error, DomainError) and is_outage(error):
            log.warning("database unavailable", error=type(error).__name__)
            error = Unavailable(
                "DATABASE_UNAVAILABLE", "the database is unavailable; retry", {"dependency": "database"}
            )
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

    def _begin(self, method: str) -> float:
        structlog.contextvars.bind_contextvars(method=method)
        return time.perf_counter()

    def _finish(
        self, method: str, started: float, code: grpc.StatusCode, reason: str | None, *, unary: bool = False
    ) -> None:
        """The call's `rpc` line: at info for a refused or failed call and for a stream's end; at
        debug for a successful unary call unless POKER_LOG_CALLS (each is counted in
        grpc_server_handled_total anyway), so a busy server writes what needs a look, not every call."""
        quiet = method in _QUIET_METHODS or (unary and code is grpc.StatusCode.OK and not CALL_LINES.enabled)
        if quiet and not CALL_LINES.debug:
            return
        duration_ms = round((time.perf_counter() - started) * 1000, 2)
        emit = log.debug if quiet else log.info
        emit("rpc", code=code.name, reason=reason, duration_ms=duration_ms)

    def _cancelled(self, method: str, started: float) -> None:
        """The client went away (or its deadline passed) while the call ran: say so in the log."""
        self._finish(method, started, grpc.StatusCode.CANCELLED, "CLIENT_CANCELLED")

    def _wrap_unary(
        self,
        method: str,
        parse: Callable[[bytes], Any],
        behavior: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]],
    ) -> Callable[[bytes, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
        async def wrapper(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = self._begin(method)
            entered = False
            held: str | None = None
            try:
                self._unary_gate.enter()
                entered = True
                held, request, _caller = self._enter(method, raw, parse, context, self._unary_quota)
                response = await behavior(request, context)
            except asyncio.CancelledError:
                self._cancelled(method, started)
                raise
            except Exception as error:
                await self._fail(method, started, context, error)
            else:
                self._finish(method, started, grpc.StatusCode.OK, None, unary=True)
                return response
            finally:
                if entered:
                    self._unary_gate.leave()
                self._unary_quota.leave(held)
                set_current_caller(None)
                structlog.contextvars.unbind_contextvars("method", "request_id", "caller")

        return wrapper

    def _wrap_stream(
        self,
        method: str,
        parse: Callable[[bytes], Any],
        behavior: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]],
    ) -> Callable[[bytes, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]]:
        async def wrapper(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            started = self._begin(method)
            entered = False
            held: str | None = None
            try:
                self._stream_gate.enter()
                entered = True
                held, request, caller = self._enter(method, raw, parse, context, self._stream_quota)
                stream = behavior(request, context)
                if caller is not None:
                    stream = until_expiry(stream, caller.expires_at - self._clock())
                async for item in stream:
                    yield item
            except asyncio.CancelledError:
                self._cancelled(method, started)
                raise
            except Exception as error:
                await self._fail(method, started, context, error)
            else:
                self._finish(method, started, grpc.StatusCode.OK, None)
            finally:
                if entered:
                    self._stream_gate.leave()
                self._stream_quota.leave(held)
                set_current_caller(None)
                structlog.contextvars.unbind_contextvars("method", "request_id", "caller")

        return wrapper


async def until_expiry(stream: AsyncIterator[Any], seconds_left: float) -> AsyncIterator[Any]:
    """`stream`'s messages until its caller's token expires, then UNAUTHENTICATED TOKEN_EXPIRED: a
    token is checked when a stream opens, and a stream must not outlive it (a stolen token would
    otherwise stream a player's cards for as long as the connection lasts). Clients renew their token
    and open the stream again; its first message is a full view."""
    deadline = asyncio.get_running_loop().time() + seconds_left
    iterator = aiter(stream)
    while True:
        limit = asyncio.timeout_at(deadline)
        try:
            async with limit:
                item = await anext(iterator)
        except StopAsyncIteration:
            return
        except TimeoutError:
            if not limit.expired():
                raise  # the handler's own
            raise Unauthenticated(
                "TOKEN_EXPIRED", "the bearer token has expired; open the stream again with a renewed token"
            ) from None
        yield item


def _malformed_status() -> grpc.Status:
    return status_for(
        InvalidArgument("REQUEST_MALFORMED", "the request bytes are not a valid message for this method")
    )


def _public_handler(
    handler: grpc.RpcMethodHandler, parse: Callable[[bytes], Any], name: str
) -> grpc.RpcMethodHandler:
    """Health and reflection, served without a token as their protocols expect, but parsed here: bytes
    that are no valid message get INVALID_ARGUMENT REQUEST_MALFORMED and one log line, instead of
    gRPC's UNKNOWN naming a Python exception class and a plain-text traceback per call."""

    def parsed(raw: bytes, method: str) -> Any:
        try:
            return parse(raw)
        except Exception:
            log.info("rpc", method=method, code="INVALID_ARGUMENT", reason="REQUEST_MALFORMED")
            return _MALFORMED

    if handler.unary_unary:
        behavior = handler.unary_unary

        async def unary(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            request = parsed(raw, name)
            if request is _MALFORMED:
                await context.abort_with_status(_malformed_status())
            return await behavior(request, context)

        return grpc.unary_unary_rpc_method_handler(
            unary, request_deserializer=None, response_serializer=handler.response_serializer
        )
    if handler.unary_stream:
        streamer = handler.unary_stream

        async def stream(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            request = parsed(raw, name)
            if request is _MALFORMED:
                await context.abort_with_status(_malformed_status())
            await _relay(streamer(request, context), context)

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=None, response_serializer=handler.response_serializer
        )
    if handler.stream_stream:
        both = handler.stream_stream

        async def bidirectional(
            requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
        ) -> None:
            async def messages() -> AsyncIterator[Any]:
                async for raw in requests:
                    request = parsed(raw, name)
                    if request is _MALFORMED:
                        await context.abort_with_status(_malformed_status())
                    yield request

            await _relay(both(messages(), context), context)

        return grpc.stream_stream_rpc_method_handler(
            bidirectional, request_deserializer=None, response_serializer=handler.response_serializer
        )
    return handler


_MALFORMED = object()


async def _relay(result: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """A streaming handler's answers, whichever shape it has: an async iterator of messages, or a
    coroutine that writes them itself (the health servicer's Watch)."""
    if hasattr(result, "__aiter__"):
        async for item in result:
            await context.write(item)
    else:
        await result


async def _refuse_streaming_shape(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    error = InvalidArgument("REQUEST_MALFORMED", "this method's streaming shape is not served")
    await context.abort_with_status(status_for(error))


assert {k.value for k in ErrorKind} <= {c.name for c in grpc.StatusCode}
