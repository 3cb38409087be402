"""gRPC server bootstrap on grpc.aio: create on an address (port 0 for tests), serve until SIGTERM.

Shape from grpc/grpc's asyncio examples: `create_server` builds and binds a server with the health
service, reflection, the telemetry wrapper (metrics and traces, outermost) and the service
interceptor's wrapper around every handler, and returns it with the bound port; `serve` starts it, reports SERVING, and on
SIGTERM/SIGINT reports NOT_SERVING, runs the service's own drain if it has one (a table shard plays
its hands out and hands its rooms over, still serving), waits a short drain so load balancers stop
routing, then stops with a grace period that lets in-flight RPCs finish. The health entry
`liveness` stays SERVING until the server stops, so a liveness probe that asks for it never kills a
process in the middle of its drain (readiness asks for the overall entry, which goes NOT_SERVING).

The wrappers are put around each method's handler once, as the services register them, not by
grpc.aio server interceptors: an interceptor runs on every call, and these built a new handler
and wrapper functions for it each time (grpc's own interceptor machinery costs little: one that
only continues measured within 2 us of none, `tests/bench/bench_runtime.py --shapes`,
docs/performance.md "Service runtime per call").

With TLS files the port is mutual TLS (service_runtime.tls) and, if asked, a second plaintext port
serves the health service alone, for kubelet probes, which cannot speak TLS.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from service_runtime.access import AccessPolicy
from service_runtime.auth import TokenKeys
from service_runtime.call_telemetry import TelemetryInterceptor
from service_runtime.interceptors import DEFAULT_LIMITS, Limits, ServiceInterceptor
from service_runtime.tls import TlsFiles, server_credentials

# The health entry a liveness probe asks for: SERVING from start until the server stops.
LIVENESS_SERVICE = "liveness"


class HealthServicer(health.aio.HealthServicer):  # type: ignore[misc]
    """The library's asyncio health servicer, plus `List` (the library leaves it unimplemented)."""

    async def List(  # noqa: N802 - named by the health protocol
        self, request: health_pb2.HealthListRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> health_pb2.HealthListResponse:
        response = health_pb2.HealthListResponse()
        for service, status in dict(self._server_status).items():
            response.statuses[service].status = status
        return response


Wrap = Callable[[str, grpc.RpcMethodHandler], grpc.RpcMethodHandler]


class _WrappedGeneric(grpc.GenericRpcHandler):  # type: ignore[misc]
    """A generic handler whose handlers come out wrapped, each wrapped once: the wrapped handler is
    kept per method for as long as the inner handler hands out the same one (only methods it serves
    are kept, so callers naming unknown methods cannot grow the cache)."""

    def __init__(self, inner: grpc.GenericRpcHandler, wrap: Wrap) -> None:
        self._inner = inner
        self._wrap = wrap
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        handler = self._inner.service(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        kept = self._wrapped.get(method)
        if kept is not None and kept[0] is handler:
            return kept[1]
        wrapped = self._wrap(method, handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped


class _WrappingServer:
    """What services register on: the server, with every handler wrapped by the runtime's telemetry
    and service wrappers (what server interceptors would do, without their cost on every call)."""

    def __init__(self, server: grpc.aio.Server, wrap: Wrap) -> None:
        self._server = server
        self._wrap = wrap

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(tuple(_WrappedGeneric(h, self._wrap) for h in handlers))

    def add_registered_method_handlers(
        self, service_name: str, method_handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        self._server.add_registered_method_handlers(
            service_name,
            {
                name: self._wrap(f"/{service_name}/{name}", handler)
                for name, handler in method_handlers.items()
            },
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


def wrapping(
    server: grpc.aio.Server, token_keys: TokenKeys, access: AccessPolicy, limits: Limits = DEFAULT_LIMITS
) -> Any:
    """`server` as services register on it: each handler wrapped once, telemetry outermost (it sees
    shed calls and every status), then the service wrapper (shedding, auth, parsing, errors, log)."""
    telemetry = TelemetryInterceptor()
    service = ServiceInterceptor(token_keys, access, limits=limits)

    def wrap(method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        return telemetry.wrap(method, service.wrap(method, handler))

    return _WrappingServer(server, wrap)


@dataclass(frozen=True)
class GrpcService:
    """One gRPC service to host: its full proto name and how to add its servicer to a server."""

    full_name: str
    register: Callable[[grpc.aio.Server], None]


@dataclass
class RunningServer:
    """A bound server with its health servicer; `start`, then `stop` exactly once."""

    server: grpc.aio.Server
    port: int
    health: HealthServicer
    service_names: Sequence[str]
    # The plaintext health-only server for probes, and its port, when one was asked for.
    health_server: grpc.aio.Server | None = None
    health_port: int | None = None
    _stopped: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> None:
        await self.server.start()
        if self.health_server is not None:
            await self.health_server.start()
        serving = health_pb2.HealthCheckResponse.SERVING
        await self.health.set("", serving)
        await self.health.set(LIVENESS_SERVICE, serving)
        for name in self.service_names:
            await self.health.set(name, serving)

    async def stop(
        self,
        grace_seconds: float,
        drain_seconds: float = 0.0,
        before_stop: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """NOT_SERVING first (all but `liveness`), then the service's own drain (`before_stop`, RPCs
        still served), then (after the drain pause) refuse new RPCs and let in-flight ones finish."""
        not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
        await self.health.set("", not_serving)
        for name in self.service_names:
            await self.health.set(name, not_serving)
        if before_stop is not None:
            await before_stop()
        await self.health.enter_graceful_shutdown()
        if drain_seconds > 0:
            await asyncio.sleep(drain_seconds)
        await self.server.stop(grace_seconds)
        if self.health_server is not None:
            await self.health_server.stop(0)
        self._stopped.set()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()


async def create_server(
    address: str,
    *,
    services: Sequence[GrpcService],
    access: AccessPolicy,
    token_keys: TokenKeys,
    extra_handlers: Sequence[grpc.GenericRpcHandler] = (),
    limits: Limits = DEFAULT_LIMITS,
    tls: TlsFiles | None = None,
    tls_check_seconds: float = 30.0,
    health_address: str | None = None,
) -> tuple[RunningServer, int]:
    """A server bound to `address` (use port 0 in tests) and the port it got; mutual TLS with `tls`.

    `health_address` also binds a plaintext server there that hosts only the health service."""
    # gRPC core cancels calls at random (status CANCELLED, no reason, never seen by any handler) once
    # more than `max_pending_requests` (default 1,000) wait to be picked up by the application. The
    # queue is set well above the interceptor's bound instead, so overload is always shed explicitly
    # by the interceptor: RESOURCE_EXHAUSTED with the reason SERVER_OVERLOADED, and a log line.
    pending = 8 * (limits.max_concurrent_rpcs + limits.max_concurrent_streams)
    server = grpc.aio.server(
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.server.max_pending_requests", pending),
            ("grpc.server.max_pending_requests_hard_limit", pending),
            # Clients ping every couple of seconds (service_runtime.clients.KEEPALIVE_OPTIONS) to notice
            # a frozen server; accept that instead of answering GOAWAY "too_many_pings". The server
            # pings too, so a client whose network died ends its streams (a table's presence).
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 1000),
            ("grpc.http2.max_ping_strikes", 0),
            ("grpc.keepalive_time_ms", 10000),
            ("grpc.keepalive_timeout_ms", 20000),
            ("grpc.http2.ping_timeout_ms", 20000),
        ],
    )
    # No server interceptor: each handler is wrapped once as it is registered (`wrapping`).
    registrar = wrapping(server, token_keys, access, limits)
    health_servicer = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, registrar)
    for service in services:
        service.register(registrar)
    if extra_handlers:
        registrar.add_generic_rpc_handlers(tuple(extra_handlers))
    names = [s.full_name for s in services]
    # What `reflection.enable_server_reflection` does for an aio server (it cannot tell the registrar is one).
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
        reflection.aio.ReflectionServicer([*names, health.SERVICE_NAME, reflection.SERVICE_NAME]), registrar
    )
    if tls is not None:
        port = server.add_secure_port(address, server_credentials(tls, check_seconds=tls_check_seconds))
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"could not bind {address}")
    running = RunningServer(server=server, port=port, health=health_servicer, service_names=names)
    if health_address is not None:
        probe_server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, probe_server)
        running.health_server = probe_server
        running.health_port = probe_server.add_insecure_port(health_address)
        if running.health_port == 0:
            raise OSError(f"could not bind {health_address}")
    return running, port


async def serve(
    running: RunningServer,
    *,
    grace_seconds: float,
    drain_seconds: float = 1.0,
    on_serving: Callable[[], None] | None = None,
    before_stop: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Start, then run until SIGTERM or SIGINT, then shut down gracefully (`before_stop` runs
    after the health service reports NOT_SERVING, while RPCs are still served).

    The signal handlers go in before the server starts, so a signal that arrives the moment the
    service announces itself (through `on_serving`) still gets a graceful shutdown.
    """
    stop_requested = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop_requested.set)
    try:
        await running.start()
        if on_serving is not None:
            on_serving()
        await stop_requested.wait()
        # The handlers stay installed while draining: a second signal (Ctrl-C reaches every process
        # of a terminal's group, then an orchestrator sends SIGTERM) must not cut the grace short.
        await running.stop(grace_seconds, drain_seconds, before_stop)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
            if stop_requested.is_set():
                # Shutting down: what is left (the assembly's close, the event loop's own) runs to its
                # end. A later signal (Ctrl-C reaches the whole group, then the cluster or the kubelet
                # signals again) would otherwise raise KeyboardInterrupt in the middle of closing the
                # database and leave a connection to the garbage collector; SIGKILL still ends a hang.
                signal.signal(sig, signal.SIG_IGN)
