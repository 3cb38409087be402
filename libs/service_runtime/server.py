"""gRPC server bootstrap on grpc.aio: create on an address (port 0 for tests), serve until SIGTERM.

Shape from grpc/grpc's asyncio examples: `create_server` builds and binds a server with the health
service, reflection, the telemetry interceptor (metrics and traces, outermost) and the service
interceptor, and returns it with the bound port; `serve` starts it, reports SERVING, and on
SIGTERM/SIGINT reports NOT_SERVING, waits a short drain so load balancers stop routing, then stops
with a grace period that lets in-flight RPCs finish.

With TLS files the port is mutual TLS (service_runtime.tls) and, if asked, a second plaintext port
serves the health service alone, for kubelet probes, which cannot speak TLS.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from service_runtime.access import AccessPolicy
from service_runtime.auth import TokenKeys
from service_runtime.call_telemetry import TelemetryInterceptor
from service_runtime.interceptors import DEFAULT_LIMITS, Limits, ServiceInterceptor
from service_runtime.tls import TlsFiles, server_credentials


class HealthServicer(health.aio.HealthServicer):  # type: ignore[misc]
    """The library's asyncio health servicer, plus `List` (the library leaves it unimplemented)."""

    async def List(  # noqa: N802 - named by the health protocol
        self, request: health_pb2.HealthListRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> health_pb2.HealthListResponse:
        response = health_pb2.HealthListResponse()
        for service, status in dict(self._server_status).items():
            response.statuses[service].status = status
        return response


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
        for name in self.service_names:
            await self.health.set(name, serving)

    async def stop(self, grace_seconds: float, drain_seconds: float = 0.0) -> None:
        """NOT_SERVING first, then (after the drain) refuse new RPCs and let in-flight ones finish."""
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
        interceptors=[TelemetryInterceptor(), ServiceInterceptor(token_keys, access, limits=limits)],
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
    health_servicer = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for service in services:
        service.register(server)
    if extra_handlers:
        server.add_generic_rpc_handlers(tuple(extra_handlers))
    names = [s.full_name for s in services]
    reflection.enable_server_reflection([*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
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
) -> None:
    """Start, then run until SIGTERM or SIGINT, then shut down gracefully.

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
        await running.stop(grace_seconds, drain_seconds)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
