"""The cost of metrics and traces on every call: the runtime's interceptors with and without them.

One process, one event loop: a server with the service interceptor (shedding, auth, parsing, errors,
the log line) and a client, making unary calls to a method that does nothing, from 16 concurrent
loops. Three variants, interleaved round by round in the same run so load on the machine hits each
alike:

- floor: the server and client interceptors as they were before metrics and traces (the service
  interceptor; a client interceptor that adds the token, the request id and the deadline);
- telemetry: the runtime as shipped (create_server / create_channel): gRPC metrics on both sides, a
  server span and a client span per call with `traceparent` propagation, ids in the log context;
  spans not exported (POKER_OTLP_ENDPOINT unset, the default);
- telemetry + export: the same with every span recorded and handed to a batch span processor (the
  exporter drops them: the network is not what is measured).

Prints calls per second and CPU microseconds per call (client and server together) for each, and
each variant's ratio to the floor. Run: `.venv/bin/python tests/bench/bench_observability.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
import structlog
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from service_runtime import tracing
from service_runtime.access import ANY_CALLER, AccessPolicy
from service_runtime.clients import create_channel
from service_runtime.interceptors import ServiceInterceptor
from service_runtime.server import create_server
from service_runtime.testing import DEV_KEYS, token_for

METHOD = "/bench.Echo/Echo"
ACCESS = AccessPolicy(roles={METHOD: ANY_CALLER})
CONCURRENCY = 16


async def _echo(request: bytes, context: Any) -> bytes:
    return request


def _handler() -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(_echo)}
    )


class _FloorDefaults(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """The client interceptor before metrics and traces: token, request id, default deadline."""

    def __init__(self, token: Callable[[], str]) -> None:
        self._token = token

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        metadata.add("authorization", f"Bearer {self._token()}")
        request_id = structlog.contextvars.get_contextvars().get("request_id")
        if request_id:
            metadata.add("x-request-id", str(request_id))
        new = grpc.aio.ClientCallDetails(
            details.method, details.timeout or 5.0, metadata, details.credentials, details.wait_for_ready
        )
        return await continuation(new, request)


class _DropSpans(SpanExporter):  # type: ignore[misc]
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


async def _floor_pair(token: Callable[[], str]) -> tuple[Any, grpc.aio.Channel]:
    server = grpc.aio.server(interceptors=[ServiceInterceptor(DEV_KEYS, ACCESS)])
    server.add_generic_rpc_handlers((_handler(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, grpc.aio.insecure_channel(f"127.0.0.1:{port}", interceptors=[_FloorDefaults(token)])


async def _runtime_pair(token: Callable[[], str]) -> tuple[Any, grpc.aio.Channel]:
    running, port = await create_server(
        "127.0.0.1:0", services=[], access=ACCESS, token_keys=DEV_KEYS, extra_handlers=[_handler()]
    )
    await running.start()
    return running.server, create_channel(f"127.0.0.1:{port}", token=token)


async def _round(channel: grpc.aio.Channel, calls: int) -> tuple[float, float]:
    """(calls per second, CPU microseconds per call) of `calls` calls from CONCURRENCY loops."""
    call = channel.unary_unary(METHOD)
    per_loop = calls // CONCURRENCY

    async def loop() -> None:
        for _ in range(per_loop):
            await call(b"x")

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(loop() for _ in range(CONCURRENCY)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    done = per_loop * CONCURRENCY
    return done / wall, cpu / done * 1e6


async def main(calls: int, rounds: int) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))  # no per-call lines
    token_value = token_for("table", "service")

    def token() -> str:
        return token_value

    variants: dict[str, Callable[[], Any]] = {
        "floor (no metrics, no traces)": lambda: tracing.shutdown_tracing(),
        "telemetry (spans not exported)": lambda: tracing.configure_tracing("bench"),
        "telemetry + spans exported": lambda: tracing.configure_tracing(
            "bench", exporter=_DropSpans(), batch=True
        ),
    }
    pairs = {
        name: await (_floor_pair(token) if name.startswith("floor") else _runtime_pair(token))
        for name in variants
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for name, (_, channel) in pairs.items():
        variants[name]()
        await _round(channel, calls // 5)  # warm-up
    for _ in range(rounds):
        for name, (_, channel) in pairs.items():
            variants[name]()
            results[name].append(await _round(channel, calls))
    tracing.shutdown_tracing()
    for server, channel in pairs.values():
        await channel.close()
        await server.stop(0)
    floor_rate = statistics.median(r for r, _ in results[next(iter(results))])
    floor_cpu = statistics.median(c for _, c in results[next(iter(results))])
    print(f"{calls} unary calls x {rounds} rounds, {CONCURRENCY} concurrent loops; medians of the rounds")
    for name, figures in results.items():
        rate = statistics.median(r for r, _ in figures)
        cpu = statistics.median(c for _, c in figures)
        print(
            f"  {name:<34} {rate:8.0f} calls/s ({rate / floor_rate:5.1%} of the floor)   "
            f"{cpu:6.1f} CPU us/call ({cpu / floor_cpu:4.2f}x the floor)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=8000, help="calls per round and variant")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
