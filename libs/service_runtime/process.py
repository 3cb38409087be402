"""The one composition root every service process shares: settings, logging, assembly, serving.

A service's `__main__` calls `run_service(SettingsClass, assemble)`; `assemble` opens what the service
needs (database, clients) and returns what to host plus how to close it, so this file is the only
place that knows the order of start-up and shutdown.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from service_runtime import tracing
from service_runtime.access import AccessPolicy
from service_runtime.auth import TokenKeys
from service_runtime.interceptors import Limits
from service_runtime.metrics import MetricsEndpoint, start_metrics_endpoint
from service_runtime.server import GrpcService, create_server, serve
from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import SettingsError, load_settings
from service_runtime.structured_logging import configure_logging, get_logger, log_uncaught_exceptions
from service_runtime.tls import TlsFiles

S = TypeVar("S", bound=ServiceSettings)


async def _nothing() -> None:
    return None


@dataclass
class Assembly:
    """What a service hosts, who may call it, what to do on SIGTERM before the server stops
    (`drain`, run while RPCs are still served; a table shard hands its rooms over), and what to
    close after the server stopped."""

    services: Sequence[GrpcService]
    access: AccessPolicy
    close: Callable[[], Awaitable[None]] = field(default=_nothing)
    drain: Callable[[], Awaitable[None]] | None = None


def health_address(settings: ServiceSettings) -> str | None:
    return None if settings.health_port < 0 else f"{settings.host}:{settings.health_port}"


async def run_assembled(settings: ServiceSettings, assembly: Assembly) -> None:
    log = get_logger("process")
    tls = TlsFiles.from_settings(settings)
    running, port = await create_server(
        settings.address,
        services=assembly.services,
        access=assembly.access,
        token_keys=TokenKeys.from_settings(settings.auth_keys),
        limits=Limits(
            settings.max_concurrent_rpcs,
            settings.max_concurrent_streams,
            settings.player_concurrent_calls,
            settings.player_concurrent_streams,
        ),
        tls=tls,
        tls_check_seconds=settings.tls_reload_seconds,
        health_address=health_address(settings),
    )
    names = [s.full_name for s in assembly.services]
    endpoint: MetricsEndpoint | None = None
    if settings.metrics_port >= 0:
        endpoint = start_metrics_endpoint(settings.host, settings.metrics_port, settings.SERVICE)

    def announce() -> None:
        log.info(
            "listening",
            address=f"{settings.host}:{port}",
            services=names,
            tls=tls is not None,
            metrics_port=endpoint.port if endpoint else None,
            health_port=running.health_port,
        )

    try:
        await serve(
            running,
            grace_seconds=settings.shutdown_grace_seconds,
            drain_seconds=settings.shutdown_drain_seconds,
            on_serving=announce,
            before_stop=assembly.drain,
        )
    finally:
        await assembly.close()
        if endpoint is not None:
            endpoint.stop()
        tracing.shutdown_tracing()
        log.info("stopped")


def run_service(settings_class: type[S], assemble: Callable[[S], Awaitable[Assembly]]) -> None:
    """Entry point of a service process; exits 2 with every bad setting listed if settings are wrong."""
    try:
        settings = load_settings(settings_class)
    except SettingsError as error:
        print(f"{settings_class.SERVICE}: {error}", file=sys.stderr)
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

    async def main() -> None:
        assembly = await assemble(settings)
        await run_assembled(settings, assembly)

    asyncio.run(main())
