"""The gRPC floors of the table and cluster benches: a bare grpc.aio server in its own process (no
interceptor, no auth, no work), and slices of bare unary calls and bare stream messages against it.

Unary: the health service's Check. Stream: `/bench.Bare/Stream` sends `count` messages of `size`
bytes (raw bytes, no protobuf work on either side) as fast as the client reads them, so a message
costs what the transport costs, the floor of a stream message to a watcher.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.bench import harness

STREAM_METHOD = "/bench.Bare/Stream"

BARE_SERVER = """
import asyncio, grpc
from grpc_health.v1 import health, health_pb2_grpc

async def stream(request, context):
    size, count = (int(part) for part in request.decode().split())
    payload = bytes(size)
    for _ in range(count):
        yield payload

async def main():
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    handler = grpc.method_handlers_generic_handler(
        "bench.Bare", {"Stream": grpc.unary_stream_rpc_method_handler(stream)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()

asyncio.run(main())
"""


@dataclass
class BareServer:
    process: subprocess.Popen[str]
    address: str

    @property
    def cpu(self) -> harness.CpuSource:
        return harness.process("bare grpc server", self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_bare_server() -> BareServer:
    process = subprocess.Popen([sys.executable, "-c", BARE_SERVER], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return BareServer(process, f"127.0.0.1:{process.stdout.readline().strip()}")


class BareUnary:
    """Slices of `clients` concurrent loops of bare unary calls (one channel, as a service's client has)."""

    def __init__(self, address: str, clients: int) -> None:
        self._channel = grpc.aio.insecure_channel(address)
        self._stub = health_pb2_grpc.HealthStub(self._channel)
        self._clients = clients

    async def run(self, seconds: float) -> harness.Outcome:
        async def call(_client: int, _n: int) -> None:
            await self._stub.Check(health_pb2.HealthCheckRequest())

        return await harness.timed_loops(self._clients, seconds, call)

    async def close(self) -> None:
        await self._channel.close()


class BareStream:
    """Slices of `streams` concurrent server streams, each reading messages of `size` bytes as fast
    as they come; operations are messages received."""

    def __init__(self, address: str, streams: int, size: int) -> None:
        self._channel = grpc.aio.insecure_channel(address)
        self._call = self._channel.unary_stream(STREAM_METHOD)
        self._streams = streams
        self._size = size

    async def run(self, seconds: float) -> harness.Outcome:
        deadline = time.perf_counter() + seconds
        received = 0

        async def read() -> None:
            nonlocal received
            while time.perf_counter() < deadline:
                call = self._call(f"{self._size} 1000".encode())
                async for _ in call:
                    received += 1
                    if time.perf_counter() >= deadline:
                        call.cancel()
                        break

        await asyncio.gather(*(read() for _ in range(self._streams)))
        return harness.Outcome(received)

    async def close(self) -> None:
        await self._channel.close()
