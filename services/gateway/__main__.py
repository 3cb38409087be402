"""Process entry point: `python -m services.gateway` (an ASGI app on uvicorn, HTTP/1.1 and Connect)."""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
from typing import Any

import uvicorn

from service_runtime import tracing
from service_runtime.settings import SettingsError, load_settings
from service_runtime.structured_logging import (
    configure_logging,
    get_logger,
    log_uncaught_exceptions,
    quiet_grpc_core,
)
from services.gateway.connection_guard import ConnectionLimits, guarded_protocol
from services.gateway.http_app import GatewayApp
from services.gateway.settings import GatewaySettings

# Nothing above imports grpc: gRPC core reads GRPC_VERBOSITY as grpc is first imported (main sets it),
# so what does (the metrics endpoint, the assembly's channels) is imported in `serve`.


class _Server(uvicorn.Server):
    """uvicorn, whose first signal also turns /readyz to 503 before it stops taking connections, and
    which returns after a graceful stop instead of raising the signal again (uvicorn re-raises it,
    which would end the process before the gateway closes its channels)."""

    def __init__(self, config: uvicorn.Config, app: GatewayApp) -> None:
        super().__init__(config)
        self._app = app
        # The other listeners of this process (the staff door): one signal stops them all, whichever
        # server's handler the signal reached (each uvicorn server installs its own).
        self.group: list[_Server] = [self]

    def handle_exit(self, sig: int, frame: Any) -> None:
        for server in self.group:
            server.stop(sig)

    def stop(self, sig: int) -> None:
        self._app.ready = False
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Named TCP, so asyncio turns Nagle's algorithm off on every connection it accepts: uvicorn writes
    # an answer in pieces, and with Nagle on the second waited for the client's delayed ACK (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


async def serve(settings: GatewaySettings) -> None:
    from service_runtime.metrics import start_metrics_endpoint
    from services.gateway.assembly import assemble

    log = get_logger("process")
    # The calls it serves are counted and traced by the front door (call_telemetry.py), its calls to
    # the services by their channels (service_runtime.clients).
    metrics_endpoint = (
        start_metrics_endpoint(settings.host, settings.metrics_port, settings.SERVICE)
        if settings.metrics_port >= 0
        else None
    )
    assembly = await assemble(settings)
    sock = bind(settings.host, settings.port)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        assembly.app,
        log_config=None,
        access_log=False,
        lifespan="on",
        # The client address is the gateway's to work out (front_door.client_address, believing
        # X-Forwarded-For only for POKER_GATEWAY_FORWARDED_HOPS proxies): uvicorn's own proxy headers
        # would take the header from any peer on loopback (its FORWARDED_ALLOW_IPS default), so a
        # browser reaching the gateway through a local port forward could name any address and escape
        # the per-address limits.
        proxy_headers=False,
        # Read deadlines and a cap of connections per address (slowloris): connection_guard.py.
        http=guarded_protocol(
            ConnectionLimits(
                head_seconds=settings.head_timeout_seconds,
                body_seconds=settings.body_timeout_seconds,
                per_address=0 if settings.forwarded_hops else settings.connections_per_address,
            )
        ),
        timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_seconds)),
        ssl_certfile=settings.tls_cert_file or None,
        ssl_keyfile=settings.tls_key_file or None,
    )
    server = _Server(config, assembly.app)
    scheme = "https" if settings.tls_cert_file else "http"
    servers = [server]
    staff_sock = None
    if assembly.staff_app is not None:
        # The staff door: its own listener (never the players' address), the same server settings.
        staff_sock = bind(settings.staff_host or settings.host, settings.staff_port)
        staff_config = uvicorn.Config(
            assembly.staff_app,
            log_config=None,
            access_log=False,
            lifespan="on",
            proxy_headers=False,
            http=config.http,
            timeout_graceful_shutdown=config.timeout_graceful_shutdown,
            ssl_certfile=config.ssl_certfile,
            ssl_keyfile=config.ssl_keyfile,
        )
        staff_server = _Server(staff_config, assembly.staff_app)
        servers.append(staff_server)
        staff_address = staff_sock.getsockname()
        assembly.staff_app.on_ready = lambda: log.info(
            "staff door listening",
            address=f"{staff_address[0]}:{staff_address[1]}",
            url=f"{scheme}://{staff_address[0]}:{staff_address[1]}/",
        )
    for one in servers:
        one.group = servers

    def announce() -> None:
        log.info(
            "listening",
            address=f"{settings.host}:{port}",
            url=f"{scheme}://{settings.host}:{port}/",
            tls=bool(settings.tls_cert_file),
            metrics_port=metrics_endpoint.port if metrics_endpoint else None,
        )

    assembly.app.on_ready = announce
    try:
        if staff_sock is None:
            await server.serve(sockets=[sock])
        else:
            await asyncio.gather(server.serve(sockets=[sock]), servers[1].serve(sockets=[staff_sock]))
    finally:
        await assembly.close()
        if metrics_endpoint is not None:
            metrics_endpoint.stop()
        tracing.shutdown_tracing()
        log.info("stopped")


def main() -> None:
    quiet_grpc_core()
    try:
        settings = load_settings(GatewaySettings)
    except SettingsError as error:
        print(f"gateway: {error}", file=sys.stderr)
        raise SystemExit(2) from error
    configure_logging(
        settings.SERVICE,
        log_format=settings.log_format,
        level=settings.log_level,
        log_calls=settings.log_calls,
    )
    log_uncaught_exceptions()
    tracing.configure_tracing(
        settings.SERVICE,
        otlp_endpoint=settings.otlp_endpoint,
        sample_ratio=settings.trace_sample_ratio,
        ca_file=settings.tls_ca_file,
    )
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
