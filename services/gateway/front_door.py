"""The one Connect interceptor of the gateway: it runs on the headers alone, before any request body
is read or parsed, and after the call.

Before: the client address (from the connection, or from X-Forwarded-For behind the configured
number of trusted proxies), the per-address rate limit (and the sign-in limit), then for every
method but the public sign-in ones the bearer token, verified as every service verifies it, which
must be a player token (nothing else passes the gateway) of a session not signed out, the method's
grant, and the per-player rate limit. The verified call is filed for the handler under its request context.

After (or when it refuses the call itself): one log line per call (method, code, reason, time; never
a token or initData), and any error the library raised by itself (a body it could not decode, a
message over the size limit) given the catalogue's reason, so nothing reaches the page without one;
anything unexpected becomes INTERNAL.

Every call is measured and traced from its first moment to its status (`call_telemetry.py`): it is
the front door that knows both the method and the status the page gets, its refusals included. The
calls each rate limit refuses are counted by limit (`metrics.py`).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext

from service_runtime.access import PUBLIC_INFRASTRUCTURE, AccessPolicy, describe
from service_runtime.auth import Caller, Role, TokenKeys, verify_token
from service_runtime.errors import DomainError, PermissionDenied, ResourceExhausted, Unauthenticated
from service_runtime.structured_logging import CALL_LINES, bounded_text
from services.gateway import connect_errors
from services.gateway import metrics as gateway_metrics
from services.gateway.call_telemetry import CallTelemetry, ServedCall
from services.gateway.rate_limits import RateLimiter
from services.gateway.revocations import SessionRevocations
from services.gateway.sessions import Client

log = structlog.get_logger("gateway.rpc")

SIGN_IN = "poker.gateway.v1.GatewayService/SignIn"  # as `method` is spelt here: no leading slash
MAX_USER_AGENT = 512


@dataclass(frozen=True)
class GatewayCall:
    """A call the front door let in: who makes it (None for the public methods), with which token."""

    method: str
    client: Client
    caller: Caller | None
    token: str

    @property
    def player(self) -> Caller:
        if self.caller is None:
            raise Unauthenticated("TOKEN_MISSING", "this call needs a bearer token")
        return self.caller


@dataclass(frozen=True)
class Limits:
    per_address: RateLimiter
    per_user: RateLimiter
    sign_ins: RateLimiter


def _host(address: str | None) -> str:
    if not address:
        return "unknown"
    host, _, _port = address.rpartition(":")
    return host.strip("[]") or "unknown"


def client_address(ctx: RequestContext[Any, Any], forwarded_hops: int) -> str:
    """The browser's address: the peer, or the entry the trusted proxies added to X-Forwarded-For."""
    peer = _host(ctx.client_address)
    if forwarded_hops <= 0:
        return peer
    chain = [
        part.strip() for part in ctx.request_headers.get("x-forwarded-for", "").split(",") if part.strip()
    ]
    return chain[-forwarded_hops] if len(chain) >= forwarded_hops else peer


class FrontDoor:
    """A connectrpc MetadataInterceptor (on_start / on_end)."""

    def __init__(
        self,
        keys: TokenKeys,
        access: AccessPolicy,
        limits: Limits,
        *,
        revocations: SessionRevocations,
        forwarded_hops: int = 0,
        clock: Callable[[], float] = time.time,
        admit: Callable[[Caller], None] | None = None,
        sign_ins: frozenset[str] = frozenset({SIGN_IN}),
    ) -> None:
        self._keys = keys
        # Whose tokens pass this door (the players' door: player tokens only; the staff door: staff).
        self._admit_caller = admit or admit_player
        self._sign_ins = sign_ins
        self._revocations = revocations
        self._access = access
        self._limits = limits
        self._hops = forwarded_hops
        self._clock = clock
        self._calls: weakref.WeakKeyDictionary[RequestContext[Any, Any], GatewayCall] = (
            weakref.WeakKeyDictionary()
        )
        # The verified caller of a call, kept from its token's check on (a refusal after it, a role
        # the method is not for, still knows who asked).
        self._verified: weakref.WeakKeyDictionary[RequestContext[Any, Any], Caller] = (
            weakref.WeakKeyDictionary()
        )
        # Every method the gateway serves (the policy lists them all, "nobody" ones included).
        self._telemetry = CallTelemetry(
            method for method in (*access.roles, *access.public) if method not in PUBLIC_INFRASTRUCTURE
        )

    def call_of(self, ctx: RequestContext[Any, Any]) -> GatewayCall:
        return self._calls[ctx]

    async def on_start(self, ctx: RequestContext[Any, Any]) -> ServedCall:
        method = f"{ctx.method.service_name}/{ctx.method.name}"
        served = self._telemetry.start(f"/{method}", ctx.request_headers)
        structlog.contextvars.bind_contextvars(method=method)
        try:
            call = self._admit(method, ctx)
            session = call.caller.session if call.caller is not None else ""
            if session and await self._revocations.is_revoked(session):
                raise Unauthenticated("SESSION_REVOKED", "this session was signed out; sign in again")
        except Exception as error:
            # The library calls no on_end of an interceptor whose on_start raised: the call ends here.
            refusal = _final_error(error)
            assert refusal is not None
            await self.refused(method, ctx, self._verified.pop(ctx, None), refusal)
            _end(served, error, refusal)
            raise refusal from None
        except BaseException:
            # Cancelled while it waited (its client went away, the server stops): ended here too.
            cancelled = ConnectError(Code.CANCELED, "Request was cancelled")
            _end(served, cancelled, cancelled)
            raise
        self._calls[ctx] = call
        return served

    def _admit(self, method: str, ctx: RequestContext[Any, Any]) -> GatewayCall:
        address = client_address(ctx, self._hops)
        client = Client(
            address=address, user_agent=ctx.request_headers.get("user-agent", "")[:MAX_USER_AGENT]
        )
        _take(self._limits.per_address, address, gateway_metrics.ADDRESS)
        full = f"/{method}"
        if self._access.is_public(full):
            if method in self._sign_ins:
                _take(self._limits.sign_ins, address, gateway_metrics.SIGN_IN)
            return GatewayCall(method, client, None, "")
        token = _bearer(ctx.request_headers.get("authorization", ""))
        caller = verify_token(self._keys, token, now=int(self._clock()))
        self._admit_caller(caller)
        self._verified[ctx] = caller
        allowed = self._access.allowed_roles(full)
        if not caller.principals & allowed:
            raise PermissionDenied(
                "ROLE_REQUIRED", f"this call is for {describe(allowed)}, not through the gateway"
            )
        _take(self._limits.per_user, caller.subject, gateway_metrics.PLAYER)
        structlog.contextvars.bind_contextvars(caller=bounded_text(caller.subject, 128))
        return GatewayCall(method, client, caller, token)

    async def on_end(
        self, served: ServedCall, ctx: RequestContext[Any, Any], error: Exception | None
    ) -> None:
        call = self._calls.pop(ctx, None)
        self._verified.pop(ctx, None)
        final = _final_error(error)
        if call is not None:
            await self.ended(call, ctx, final)
        _end(served, error, final)
        if final is not None and final is not error:
            raise final

    async def refused(
        self, method: str, ctx: RequestContext[Any, Any], caller: Caller | None, refusal: ConnectError
    ) -> None:
        """The door refused a call (`caller`: who asked, if their token was verified); the staff
        door records it."""

    async def ended(
        self, call: GatewayCall, ctx: RequestContext[Any, Any], final: ConnectError | None
    ) -> None:
        """A call the door let in ended with `final` (None: answered); the staff door records it."""


def admit_player(caller: Caller) -> None:
    """The players' door: a player token, nothing else."""
    if caller.roles != frozenset({Role.PLAYER}):
        raise PermissionDenied("ROLE_REQUIRED", "the gateway serves player tokens only")


def _take(limiter: RateLimiter, key: str, limit: str) -> None:
    try:
        limiter.take(key)
    except ResourceExhausted:
        gateway_metrics.count_rate_limited(limit)
        raise


def _end(served: ServedCall, error: Exception | None, final: ConnectError | None) -> None:
    """The call's line (inside its span, so it carries the trace), its figures and the end of its
    span. As the services log theirs (service_runtime.interceptors): at info for a refused or failed
    call and a stream's end, at debug for an answered unary call unless POKER_LOG_CALLS (each call is
    counted in grpc_server_handled_total anyway; the line was about 4% of the gateway's serving CPU,
    docs/performance.md "The gateway")."""
    quiet = final is None and served.unary and not CALL_LINES.enabled
    if not quiet or CALL_LINES.debug:
        reason = connect_errors.reason_of_connect(final) if final is not None else None
        (log.debug if quiet else log.info)(
            "rpc",
            code=final.code.name if final is not None else "OK",
            reason=reason,
            duration_ms=round((time.perf_counter() - served.started) * 1000, 2),
        )
    # The library's own error for a client that went away (or a request cancelled): the page gets
    # UNAVAILABLE if anything, but the call is counted as the gRPC servers count it.
    client_gone = isinstance(error, ConnectError) and error.code is Code.CANCELED
    served.finish(final, client_gone=client_gone)
    structlog.contextvars.unbind_contextvars("method", "caller")


def _bearer(header: str) -> str:
    if not header:
        raise Unauthenticated("TOKEN_MISSING", "this call needs an 'authorization: Bearer <token>' header")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("TOKEN_MALFORMED", "authorization must be 'Bearer <token>'")
    return token.strip()


def _final_error(error: Exception | None) -> ConnectError | None:
    """The error the page gets: with a catalogue reason, whoever raised it."""
    if error is None:
        return None
    if isinstance(error, DomainError):
        return connect_errors.from_domain(error)
    if not isinstance(error, ConnectError):
        log.error("rpc failed", exc_info=error)
        return connect_errors.internal()
    if connect_errors.reason_of_connect(error):
        return error
    # Raised by the library itself, before or around the handler.
    if error.code == Code.RESOURCE_EXHAUSTED:
        return ConnectError(error.code, error.message, [connect_errors.error_info("REQUEST_TOO_LARGE")])
    if error.code == Code.INVALID_ARGUMENT:
        return ConnectError(error.code, error.message, [connect_errors.error_info("REQUEST_MALFORMED")])
    if error.code in (Code.CANCELED, Code.DEADLINE_EXCEEDED):
        return ConnectError(error.code, error.message, [connect_errors.error_info("UNAVAILABLE")])
    if error.code == Code.INTERNAL and error.message.startswith("protocol error"):
        # The client broke the framing (an envelope flagged compressed without a compression).
        return ConnectError(
            Code.INVALID_ARGUMENT, error.message, [connect_errors.error_info("REQUEST_MALFORMED")]
        )
    if error.code == Code.UNIMPLEMENTED:
        return ConnectError(error.code, error.message, [connect_errors.error_info("NOT_IMPLEMENTED")])
    log.error("rpc failed without a reason", code=error.code.name)
    return connect_errors.internal()
