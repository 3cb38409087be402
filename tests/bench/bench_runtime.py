"""The service runtime's cost per unary call against a bare grpc.aio server, in the same run.

Each server is its own process; the client loops run in this one:

- bare unary (floor): health Check on a bare grpc.aio server (tests/bench/bare_grpc.py: no
  interceptor, no auth, no work);
- runtime: `/bench.Runtime/Check` (the same protobuf messages, a handler that does nothing) on a
  server built by `service_runtime.server.create_server`, the whole runtime around it (telemetry:
  metrics and an ids-only span; shedding, a real bearer token verified, the access policy, quotas,
  request id, errors, the log line), logging configured as a service process is (JSON at
  `--level`, default info as in production and `make run`, written to a file), tracing with
  nothing exported (the default). The client is a plain channel that sends the token;
- runtime, POKER_LOG_CALLS=1 (with `--log-calls`): the same with a log line for every successful
  call;
- runtime + runtime client: the same server called through `service_runtime.clients.create_channel`
  (deadline, token, request id, trace context, client metrics and span), as services call each other;
- runtime at REF (`--before REF`, e.g. `main` or a commit, repeatable): the server of the runtime at another
  commit (its libs/service_runtime extracted with `git archive`), so before and after are measured
  back to back in one run;
- with `--shapes`: the same handler on a plain grpc.aio server (the bare floor's twin with the
  runtime's handler), and on one with a single server interceptor that only continues.

Sides run in alternating slices (tests/bench/harness.py); CPU per call is read from /proc for this
process and the server of the side. Each side is reported against the floor by rate and by CPU,
and the server's own CPU per call is printed beside the floor server's.
Run: `.venv/bin/python tests/bench/bench_runtime.py` (about a minute with the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import grpc
from grpc_health.v1 import health_pb2

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from service_runtime.clients import create_channel  # noqa: E402
from service_runtime.testing import token_for  # noqa: E402
from tests.bench import harness  # noqa: E402
from tests.bench.bare_grpc import BareUnary, start_bare_server  # noqa: E402
from tests.ports import free_port  # noqa: E402

METHOD = "/bench.Runtime/Check"
TOKEN = token_for("table", "service", ttl_seconds=3600)
METADATA = (("authorization", f"Bearer {TOKEN}"),)


@dataclass
class RuntimeServer:
    process: subprocess.Popen[str]
    address: str
    log: IO[str]

    def cpu(self, name: str) -> harness.CpuSource:
        return harness.process(name, self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def start_runtime_server(
    log_file: Path, level: str, *, before: Path | None = None, log_calls: bool = False, shape: str = "runtime"
) -> RuntimeServer:
    port = free_port()
    command = [
        sys.executable,
        str(ROOT / "tests/bench/runtime_server.py"),
        "--port",
        str(port),
        "--level",
        level,
    ]
    command += ["--shape", shape]
    if before is not None:
        command += ["--before", str(before)]
    env = {**os.environ, "POKER_LOG_CALLS": "1" if log_calls else "0"}
    log = log_file.open("w")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line:
        process.wait(timeout=15)
        log.close()
        raise RuntimeError(f"the runtime server did not start: {log_file.read_text()[-2000:]}")
    return RuntimeServer(process, f"127.0.0.1:{line}", log)


class RuntimeUnary:
    """Slices of `clients` concurrent loops of Check on one channel (plain, or the runtime's)."""

    def __init__(
        self, channel: grpc.aio.Channel, clients: int, metadata: tuple[tuple[str, str], ...]
    ) -> None:
        self._channel = channel
        self._call = channel.unary_unary(
            METHOD,
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        self._clients = clients
        self._metadata = metadata

    async def run(self, seconds: float) -> harness.Outcome:
        request = health_pb2.HealthCheckRequest()

        async def call(_client: int, _n: int) -> None:
            reply = await self._call(request, metadata=self._metadata or None)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING

        return await harness.timed_loops(self._clients, seconds, call)

    async def close(self) -> None:
        await self._channel.close()


def extract_runtime(ref: str, folder: Path) -> Path:
    """libs/service_runtime of `ref` under folder/before-<ref>."""
    target = folder / f"before-{ref.replace('/', '-')}"
    target.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "libs/service_runtime"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise SystemExit(f"--before {ref}: git archive failed: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


async def bench(args: argparse.Namespace, folder: Path) -> None:
    bench_cpu = harness.this_process()
    bare_server = start_bare_server()
    servers: list[RuntimeServer] = []
    runs: list[tuple[str, RuntimeUnary, RuntimeServer]] = []
    try:
        shipped = start_runtime_server(folder / "runtime.log", args.level)
        servers.append(shipped)
        runs.append(
            (
                "runtime",
                RuntimeUnary(grpc.aio.insecure_channel(shipped.address), args.clients, METADATA),
                shipped,
            )
        )
        if args.log_calls:
            logging = start_runtime_server(folder / "log-calls.log", args.level, log_calls=True)
            servers.append(logging)
            runs.append(
                (
                    "runtime, POKER_LOG_CALLS=1",
                    RuntimeUnary(grpc.aio.insecure_channel(logging.address), args.clients, METADATA),
                    logging,
                )
            )
        client = create_channel(shipped.address, token=lambda: TOKEN)
        runs.append(("runtime + runtime client", RuntimeUnary(client, args.clients, ()), shipped))
        for ref in args.before:
            old = start_runtime_server(
                folder / f"before-{ref.replace('/', '-')}.log",
                args.level,
                before=extract_runtime(ref, folder),
            )
            servers.append(old)
            runs.append(
                (
                    f"runtime at {ref}",
                    RuntimeUnary(grpc.aio.insecure_channel(old.address), args.clients, METADATA),
                    old,
                )
            )
        if args.shapes:
            for shape in ("plain", "passthrough"):
                other = start_runtime_server(folder / f"{shape}.log", args.level, shape=shape)
                servers.append(other)
                channel = grpc.aio.insecure_channel(other.address)
                runs.append(
                    (f"{shape} grpc.aio, same handler", RuntimeUnary(channel, args.clients, METADATA), other)
                )
        bare = BareUnary(bare_server.address, args.clients)
        sides = [harness.Side("bare unary", bare.run, [bench_cpu, bare_server.cpu])]
        await bare.run(0.5)
        for name, run, server in runs:
            await run.run(0.5)  # warm-up: the connection, the per-method caches
            sides.append(harness.Side(name, run.run, [bench_cpu, server.cpu("server")]))
        print(
            f"runtime per call: {args.clients} concurrent loops, {args.rounds} rounds of "
            f"{args.seconds / args.rounds:.1f} s per side, log level {args.level}; "
            f"load average {_load()}",
            flush=True,
        )
        tallies = await harness.interleave_all(
            sides, rounds=args.rounds, slice_seconds=args.seconds / args.rounds
        )
        await bare.close()
        for _, run, _ in runs:
            await run.close()
    finally:
        bare_server.stop()
        for server in servers:
            server.stop()
    print(f"load average after: {_load()}")
    floor = tallies[0]
    floor_server = floor.cpu["bare grpc server"] / floor.operations * 1e6
    for side, tally in zip(sides[1:], tallies[1:], strict=True):
        harness.report(
            "runtime", f"{side.name} vs bare unary", harness.Comparison(floor, tally), unit="calls"
        )
        server = tally.cpu["server"] / tally.operations * 1e6
        print(
            f"  server alone: {server:,.0f} us/call against the bare server's {floor_server:,.0f} ({floor_server / server:.2f}x)"
        )


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent loops of calls")
    parser.add_argument("--seconds", type=float, default=8.0, help="time per side, over all its slices")
    parser.add_argument("--rounds", type=int, default=4, help="slices per side, alternating with the others")
    parser.add_argument("--level", default="info", help="the servers' log level (production: info)")
    parser.add_argument(
        "--before",
        action="append",
        default=[],
        help="a commit (main, a hash) whose runtime to measure too, back to back (repeat for several)",
    )
    parser.add_argument("--log-calls", action="store_true", help="also a server with POKER_LOG_CALLS=1")
    parser.add_argument(
        "--shapes",
        action="store_true",
        help="also the same handler on a plain grpc.aio server, and on one with a pass-through interceptor",
    )
    args = parser.parse_args()
    with harness.scratch_folder("poker-bench-runtime-") as folder:
        asyncio.run(bench(args, folder))
        for path in sorted(folder.glob("*.log")):
            with path.open() as lines:
                print(f"log lines the {path.stem} server wrote over the run: {sum(1 for _ in lines)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
