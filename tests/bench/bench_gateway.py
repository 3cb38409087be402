"""The gateway (issue 45): a player's call as it really comes in, Connect over HTTP/1.1 through the
gateway, against the same gRPC call made straight to the service behind, in alternating slices of
one run, by rate and by CPU per call.

Starts the five services as `tests/gateway` does (`running_services`: real processes on loopback,
embedded SQLite in a temporary folder removed at the end) and the gateway in front of them with
the environment `tests.gateway.gateway_process.start_gateway` gives it, its log going to a file (a
line per call) rather than to a pipe this process would read. The gateway's per-address and
per-player call limits are raised so that one bench client is not refused (they are still taken on
every call). Players sign in through the gateway (development sign-in by name); the same token then
serves both sides: the gateway sends the player's own token on, so the service behind verifies the
same token either way.

- unary: GetTableSnapshot of a seated player's table (alone at a table of `nlhe-gram-prestige`,
  so the table holds still), the table path's read: the gateway verifies the token, takes the rate
  limits, finds the table's shard (remembered) and forwards the call as it forwards Act. Floor: the
  same call on a plain grpc.aio channel straight to the table shard. `--clients` concurrent loops;
  through the gateway each loop is a keep-alive HTTP/1.1 connection sending what a browser's
  connect-web sends (tests/bench/gateway_http.py: binary protobuf, Chrome's headers, among them
  `accept-encoding: gzip, ...`, so every answer comes back gzipped, as to the page; `--no-browser`:
  only the Connect headers, and the answers come back plain). `--list-rooms`: the lobby's ListRooms
  (page size 500, as the lobby screen asks) the same way. `--runtime-client`: also the call straight
  to the service on the runtime's channel (`service_runtime.clients.create_channel`, as the gateway
  sends it on).
- stream (unless `--no-stream`): WatchTable to the seated players of `--tables` heads-up tables of
  `nlhe-gram-duel`, driven as bench_table.py drives them (their Acts, and the one stream each player's
  driver reads, go straight to the shard on both sides, so the tables play at the same pace). Each
  player also holds `--streams` more WatchTable streams (another tab, another device): through the
  gateway each is a Connect stream on its own HTTP/1.1 connection, as the page's table feed opens it;
  floor: the same WatchTable straight from the shard on one channel. Each slice opens those streams,
  drives the tables, and closes the streams. An operation is a message one of them received; its
  latency is from the step's last event (stamped by the shard) to the message in the client's hands.

CPU per operation is read from /proc for every process (this one, the client: the loops, and for
the stream also the table drivers; the gateway; each service) on both sides alike, and printed by
group: client, gateway, services (what each spends idle is printed first). Run:
`.venv/bin/python tests/bench/bench_gateway.py` (65-90 s with the defaults on a 2-core machine;
`--seconds` and `--rounds` for longer).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import Message

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from poker.common.v1 import common_pb2  # noqa: E402
from poker.lobby.v1 import lobby_pb2  # noqa: E402
from poker.table.v1 import table_pb2  # noqa: E402
from service_runtime.clients import create_channel  # noqa: E402
from tests.bench import harness  # noqa: E402
from tests.bench.bench_table import ActWorkload  # noqa: E402
from tests.bench.gateway_http import CallFailed, ConnectStream, UnaryConnection  # noqa: E402
from tests.gateway.gateway_process import gateway_env, stop  # noqa: E402
from tests.gateway.raw_player import seat, sign_in  # noqa: E402
from tests.security.service_processes import ServiceProcess, running_services  # noqa: E402

TABLE = "poker.table.v1.TableService"
LOBBY = "poker.lobby.v1.LobbyService"
CLIENT = "client"
GATEWAY = "gateway"
GATEWAYS = (GATEWAY,)
# Out of the way of a bench client's thousands of calls a second from one address as one player; the
# limiters still run on every call. Tokens outlive the longest run (a stream ends with its token).
GATEWAY_ENV = {
    "POKER_GATEWAY_CALLS_PER_SECOND_PER_ADDRESS": "1000000",
    "POKER_GATEWAY_CALL_BURST_PER_ADDRESS": "1000000",
    "POKER_GATEWAY_CALLS_PER_SECOND_PER_USER": "1000000",
    "POKER_GATEWAY_CALL_BURST_PER_USER": "1000000",
    "POKER_GATEWAY_SIGN_INS_PER_MINUTE_PER_ADDRESS": "600",
    "POKER_GATEWAY_TOKEN_TTL_SECONDS": "14400",
}
# The driven tables deal the next hand at once (as bench_table.py's); only the table reads these.
SERVICES_ENV = {
    "POKER_TABLE_COUNTDOWN_SECONDS": "0",
    "POKER_TABLE_SHOWDOWN_SECONDS": "0",
    "POKER_TABLE_RETRY_MAX_SECONDS": "30",
}
# The gateway as shipped (its connections with TCP_NODELAY since this bench found them waiting on
# Nagle's algorithm: docs/performance.md "The gateway (issue 45)").
GATEWAY_COMMAND = ["-m", "services.gateway"]
# A slice of the stream side ends its streams, then waits this long (inside the slice, on both sides
# alike) so that the servers' side of closing them is counted in the slice that opened them.
SETTLE_SECONDS = 0.2
# How long each process's CPU is read with nothing to do, before the unary calls (printed: what a
# process spends idle is in every figure's CPU per operation, on both sides).
IDLE_SECONDS = 3.0
TABLE_STOP_SECONDS = 5.0
MAX_STREAMS_PER_PLAYER = 4  # the shard's default POKER_TABLE_MAX_STREAMS_PER_PLAYER


def start_gateway_logging_to(
    log: Path,
    services: dict[str, ServiceProcess],
    extra_env: dict[str, str],
    command: Sequence[str] = GATEWAY_COMMAND,
) -> ServiceProcess:
    """The gateway with the environment `tests.gateway.gateway_process.start_gateway` gives it, but
    its log written to a file, as in a container, rather than to a pipe this process reads: the
    gateway writes a line for every call, and reading them here would cost the client's CPU."""
    env = gateway_env(services, extra_env)
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, *command], env=env, stdout=output, stderr=subprocess.STDOUT, text=True, cwd=ROOT
        )
    gateway = ServiceProcess(GATEWAY, process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        for line in log.read_text().splitlines():
            with contextlib.suppress(ValueError, AttributeError, KeyError, TypeError):
                record = json.loads(line)
                if record.get("event") == "listening":
                    gateway.port = int(record["address"].rsplit(":", 1)[1])
                    return gateway
        time.sleep(0.1)
    stop(gateway)
    raise RuntimeError(f"the gateway did not start listening:\n{log.read_text()[-2000:]}")


def stop_table(table: ServiceProcess) -> None:
    """SIGTERM, then SIGKILL after `TABLE_STOP_SECONDS`. On SIGTERM a shard plays its running hands
    out first (POKER_TABLE_DRAIN_SECONDS), and the driven tables' hands wait for actions that no longer
    come: each would end only after its players' action times and time banks ran out."""
    if table.process.poll() is None:
        table.process.terminate()
        try:
            table.process.wait(timeout=TABLE_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            table.process.kill()
            table.process.wait()


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


class UnaryRead:
    """One unary read, straight to the service (`direct`, a plain grpc.aio channel; `runtime`, the
    runtime's channel as the gateway's) or through a gateway (`via(address)`: one keep-alive HTTP/1.1
    connection per loop); every answer is decoded and checked."""

    def __init__(
        self,
        *,
        method: str,
        request: Message,
        reply: Any,
        check: Callable[[Any], bool],
        service_address: str,
        token: str,
        clients: int,
        browser: bool,
    ) -> None:
        self.method = method
        self.name = method.rsplit("/", 1)[1]
        self._request = request
        self._bytes = request.SerializeToString()
        self._reply = reply
        self._check = check
        self._token = token
        self._metadata = _auth(token)
        self._clients = clients
        self._browser = browser
        self._channels = [
            grpc.aio.insecure_channel(service_address),
            create_channel(service_address, timeout_seconds=5.0),
        ]
        self._calls = [
            channel.unary_unary(
                method,
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=reply.FromString,
            )
            for channel in self._channels
        ]
        self._connections: list[UnaryConnection] = []
        self.answer_bytes = 0

    def _checked(self, answer: Any) -> None:
        if not self._check(answer):
            raise AssertionError(f"{self.method}: an unexpected answer {answer}")

    async def direct(self, seconds: float) -> harness.Outcome:
        async def call(_client: int, _n: int) -> None:
            self._checked(await self._calls[0](self._request, metadata=self._metadata))

        return await harness.timed_loops(self._clients, seconds, call)

    async def runtime(self, seconds: float) -> harness.Outcome:
        async def call(_client: int, _n: int) -> None:
            self._checked(await self._calls[1](self._request, metadata=self._metadata))

        return await harness.timed_loops(self._clients, seconds, call)

    def via(self, gateway_address: str) -> Callable[[float], Awaitable[harness.Outcome]]:
        connections = [UnaryConnection(gateway_address, browser=self._browser) for _ in range(self._clients)]
        self._connections += connections

        async def run(seconds: float) -> harness.Outcome:
            async def call(client: int, _n: int) -> None:
                data = await connections[client].call(self.method, self._bytes, self._token)
                self.answer_bytes = len(data)
                self._checked(self._reply.FromString(data))

            return await harness.timed_loops(self._clients, seconds, call)

        return run

    @property
    def reconnects(self) -> int:
        return sum(connection.reconnects for connection in self._connections)

    async def close(self) -> None:
        for connection in self._connections:
            await connection.close()
        for channel in self._channels:
            await channel.close()


class Watchers:
    """Streams of WatchTable (table id, token) held while the tables are driven, both ways."""

    def __init__(
        self, act: ActWorkload, streams: Sequence[tuple[str, str]], shard: str, *, browser: bool
    ) -> None:
        self._act = act
        self._streams = list(streams)
        self._browser = browser
        self._channel = grpc.aio.insecure_channel(shard)
        self._watch = self._channel.unary_stream(
            f"/{TABLE}/WatchTable",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=table_pb2.WatchTableResponse.FromString,
        )
        self._counting = False

    async def direct(self, seconds: float) -> harness.Outcome:
        tally = self._tally()
        calls = [
            self._watch(table_pb2.WatchTableRequest(table_id=table_id), metadata=_auth(token))
            for table_id, token in self._streams
        ]

        async def read(call: Any) -> None:
            async for message in call:
                self._count(tally, message, message.ByteSize())
            raise RuntimeError(f"a direct stream ended by itself: {await call.code()}")

        async def close() -> None:
            for call in calls:
                call.cancel()

        return await self._slice(seconds, [read(call) for call in calls], close, tally)

    def via(self, gateway: str) -> Callable[[float], Awaitable[harness.Outcome]]:
        """Slices of the streams through the gateway at `gateway`."""

        async def run(seconds: float) -> harness.Outcome:
            return await self._via(gateway, seconds)

        return run

    async def _via(self, gateway: str, seconds: float) -> harness.Outcome:
        tally = self._tally()
        streams = [
            ConnectStream(
                gateway,
                f"/{TABLE}/WatchTable",
                table_pb2.WatchTableRequest(table_id=table_id).SerializeToString(),
                token,
                browser=self._browser,
            )
            for table_id, token in self._streams
        ]

        async def read(stream: ConnectStream) -> None:
            async for data in stream.messages():
                self._count(tally, table_pb2.WatchTableResponse.FromString(data), len(data))
            raise RuntimeError("a stream through the gateway ended by itself")

        async def close() -> None:
            for stream in streams:
                await stream.close()

        return await self._slice(seconds, [read(stream) for stream in streams], close, tally)

    @staticmethod
    def _tally() -> dict[str, Any]:
        return {"messages": 0, "full views": 0, "events": 0, "bytes": 0, "latencies": []}

    def _count(self, tally: dict[str, Any], message: table_pb2.WatchTableResponse, size: int) -> None:
        if not self._counting:
            return
        if message.events:
            # From the step's last event (stamped by the shard as it happened, on this machine's
            # clock) to this message in the watcher's hands.
            tally["latencies"].append(time.time() - message.events[-1].time.ToNanoseconds() / 1e9)
        tally["messages"] += 1
        tally["bytes"] += size
        tally["events"] += len(message.events)
        if not message.events:
            tally["full views"] += 1  # the first message of a stream, or one after dropped updates

    async def _slice(
        self,
        seconds: float,
        readers: Sequence[Coroutine[Any, Any, None]],
        close: Callable[[], Awaitable[None]],
        tally: dict[str, Any],
    ) -> harness.Outcome:
        """The streams open while the tables are driven for `seconds`; then they end as a page's do
        (the tasks reading them stop, the calls or connections close)."""
        self._counting = True
        tasks = [asyncio.create_task(reader) for reader in readers]
        try:
            driven = await self._act.run(seconds)
        finally:
            self._counting = False
            for task in tasks:
                task.cancel()
            ended = await asyncio.gather(*tasks, return_exceptions=True)
            await close()
        failures = [error for error in ended if isinstance(error, Exception)]
        if failures:
            raise RuntimeError(f"{len(failures)} WatchTable streams failed: {failures[0]!r}")
        await asyncio.sleep(SETTLE_SECONDS)
        latencies = tally.pop("latencies")
        counts = {**tally, "acts": driven.operations, "hands": driven.counts.get("hands settled", 0)}
        return harness.Outcome(tally["messages"], latencies, counts)

    async def close(self) -> None:
        await self._channel.close()


async def idle_rates(cpu: Sequence[harness.CpuSource], seconds: float) -> dict[str, float]:
    """CPU seconds per second each source spends with nothing asked of it."""
    before = harness.read_all(cpu)
    await asyncio.sleep(seconds)
    after = harness.read_all(cpu)
    return {name: (after[name] - before[name]) / seconds for name in after}


def _groups(tally: harness.Tally) -> str:
    """CPU per operation of the client, the gateway(s) and the services, in microseconds."""
    per = 1e6 / tally.operations if tally.operations else float("nan")
    services = {name: used for name, used in tally.cpu.items() if name not in (CLIENT, *GATEWAYS)}
    detail = ", ".join(f"{name} {used * per:,.0f}" for name, used in services.items() if used * per >= 0.5)
    gateways = ", ".join(f"{name} {tally.cpu[name] * per:,.0f}" for name in GATEWAYS if name in tally.cpu)
    return (
        f"client {tally.cpu.get(CLIENT, 0.0) * per:,.0f}, {gateways}, "
        f"services {sum(services.values()) * per:,.0f} ({detail or '-'}) us"
    )


def _print_groups(floor: harness.Tally, works: Sequence[harness.Tally], unit: str) -> None:
    for tally in (floor, *works):
        print(f"  per {unit}, {tally.name}: {_groups(tally)}")
    for tally in works:
        for name in GATEWAYS:
            spent = tally.cpu.get(name, 0.0)
            if spent > 0.05 * tally.cpu_seconds:
                print(
                    f"  {name} alone, {tally.name}: {spent / max(tally.operations, 1) * 1e6:,.0f} us per "
                    f"{unit}, {spent / tally.seconds * 100:.0f}% of a core over its slices"
                )


async def measure(
    args: argparse.Namespace, services: dict[str, ServiceProcess], gateways: dict[str, ServiceProcess]
) -> None:
    gateway = gateways[GATEWAY]
    cpu = [
        harness.this_process(CLIENT),
        *(harness.process(name, process.process.pid) for name, process in gateways.items()),
        *(harness.process(name, service.process.pid) for name, service in services.items()),
    ]
    slice_seconds = args.seconds / args.rounds
    browser = not args.no_browser
    # The reader: signed in through the gateway, seated alone at a table (sync HTTP, before any load).
    token = await asyncio.to_thread(sign_in, gateway.address, "bench-reader")
    table_id = await asyncio.to_thread(seat, gateway.address, token, "bench-reader")
    reads = [
        UnaryRead(
            method=f"/{TABLE}/GetTableSnapshot",
            request=table_pb2.GetTableSnapshotRequest(table_id=table_id),
            reply=table_pb2.GetTableSnapshotResponse,
            check=lambda answer: answer.view.table_id == table_id,
            service_address=services["table"].address,
            token=token,
            clients=args.clients,
            browser=browser,
        )
    ]
    if args.list_rooms:
        reads.append(
            UnaryRead(
                method=f"/{LOBBY}/ListRooms",
                request=lobby_pb2.ListRoomsRequest(page=common_pb2.PageRequest(page_size=500)),
                reply=lobby_pb2.ListRoomsResponse,
                check=lambda answer: len(answer.rooms) > 0,
                service_address=services["lobby"].address,
                token=token,
                clients=args.clients,
                browser=browser,
            )
        )
    idle = await idle_rates(cpu, IDLE_SECONDS)
    print("idle: " + ", ".join(f"{name} {rate * 100:.1f}%" for name, rate in idle.items()) + " of a core")
    print(
        f"unary reads: {args.clients} concurrent loops (through the gateway: one HTTP/1.1 connection "
        f"each, {'browser headers, gzip answers' if browser else 'Connect headers only'}), "
        f"{args.rounds} rounds of {slice_seconds:.1f} s per side; load average {_load()}",
        flush=True,
    )
    try:
        for read in reads:
            sides = [
                harness.Side(f"{read.name} direct gRPC", read.direct, cpu),
                harness.Side(f"{read.name} via gateway", read.via(gateway.address), cpu),
            ]
            if args.runtime_client:
                sides.append(harness.Side(f"{read.name} direct, runtime client", read.runtime, cpu))
            for side in sides:
                await side.run(0.5)  # warm-up: connections, the gateway's route to the table
            tallies = await harness.interleave_all(sides, rounds=args.rounds, slice_seconds=slice_seconds)
            for tally in tallies[1:]:
                harness.report(
                    "gateway",
                    f"{tally.name} vs direct gRPC",
                    harness.Comparison(tallies[0], tally),
                    unit="calls",
                )
            _print_groups(tallies[0], tallies[1:], "call")
            print(
                f"  answer: {read.answer_bytes} bytes of protobuf (before gzip); keep-alive connections "
                f"the gateway had closed while idle, opened again: {read.reconnects}",
                flush=True,
            )
    finally:
        for read in reads:
            await read.close()
    if not args.no_stream:
        await watch_tables(args, services, gateways, cpu)


async def watch_tables(
    args: argparse.Namespace,
    services: dict[str, ServiceProcess],
    gateways: dict[str, ServiceProcess],
    cpu: list[harness.CpuSource],
) -> None:
    gateway = gateways[GATEWAY]
    slice_seconds = args.seconds / args.rounds
    act = ActWorkload(
        services["table"].address, services["cashier"].address, services["lobby"].address, args.tables
    )
    await act.open()
    players = [player for pair in act._pairs for player in pair]
    # The same players signed in through the gateway (a development name is the player id).
    tokens = {
        player.player_id: await asyncio.to_thread(sign_in, gateway.address, player.player_id)
        for player in players
    }
    streams = [(player.table_id, tokens[player.player_id]) for player in players for _ in range(args.streams)]
    watchers = Watchers(act, streams, services["table"].address, browser=not args.no_browser)
    sides = [
        harness.Side("WatchTable direct from the shard", watchers.direct, cpu),
        harness.Side("WatchTable via gateway", watchers.via(gateway.address), cpu),
    ]
    print(
        f"WatchTable: {len(streams)} streams, {args.streams} more for each seated player of "
        f"{len(act._pairs)} driven heads-up tables, {args.rounds} rounds of {slice_seconds:.1f} s per "
        f"side; load average {_load()}",
        flush=True,
    )
    try:
        await act.run(2.0)  # warm-up: every table deals
        for side in sides:
            await side.run(1.0)
        tallies = await harness.interleave_all(sides, rounds=args.rounds, slice_seconds=slice_seconds)
    finally:
        await watchers.close()
        await act.close()
    for tally in tallies[1:]:
        harness.report(
            "gateway",
            f"{tally.name}, {len(streams)} streams",
            harness.Comparison(tallies[0], tally),
            unit="messages",
        )
    _print_groups(tallies[0], tallies[1:], "message")
    for tally in tallies:
        counts = tally.counts
        messages = max(counts.get("messages", 0), 1)
        print(
            f"  {tally.name}: the tables at {counts.get('acts', 0) / tally.seconds:,.1f} acts/s, "
            f"{counts.get('hands', 0) / tally.seconds:,.1f} hands/s; {counts.get('full views', 0)} full "
            f"views of {counts.get('messages', 0)} messages, {counts.get('events', 0) / messages:.1f} "
            f"events and {counts.get('bytes', 0) / messages:,.0f} bytes a message"
        )
    if act.refusals:
        print(f"  Acts refused: {dict(act.refusals)}")


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=8, help="concurrent loops of unary calls")
    parser.add_argument("--seconds", type=float, default=8.0, help="time per side, over all its slices")
    parser.add_argument("--rounds", type=int, default=4, help="slices per side, alternating with the others")
    parser.add_argument("--tables", type=int, default=4, help="driven heads-up tables for the stream")
    parser.add_argument(
        "--streams", type=int, default=2, help="WatchTable streams each seated player holds beside its own"
    )
    parser.add_argument("--list-rooms", action="store_true", help="also ListRooms (page size 500)")
    parser.add_argument(
        "--runtime-client", action="store_true", help="also straight to the service on the runtime's channel"
    )
    parser.add_argument("--no-stream", action="store_true", help="the unary reads only")
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help="send only the Connect headers (no browser headers, no accept-encoding: plain answers)",
    )
    args = parser.parse_args()
    if not 1 <= args.streams < MAX_STREAMS_PER_PLAYER:
        parser.error(f"--streams is 1 to {MAX_STREAMS_PER_PLAYER - 1} (the driver holds one of the player's)")
    started = time.monotonic()
    gateway_env = {
        **GATEWAY_ENV,
        "POKER_GATEWAY_CONNECTIONS_PER_ADDRESS": str(
            max(64, 2 * (args.clients + 2 * args.tables * args.streams))
        ),
    }
    commands = {GATEWAY: GATEWAY_COMMAND}
    gateways: dict[str, ServiceProcess] = {}
    logs: dict[str, Path] = {}
    with (
        harness.scratch_folder("poker-bench-gateway-") as folder,
        running_services(folder, SERVICES_ENV) as services,
    ):
        try:
            for name, command in commands.items():
                logs[name] = folder / f"{name.replace(' ', '-')}.log"
                gateways[name] = start_gateway_logging_to(logs[name], services, gateway_env, command)
            asyncio.run(measure(args, services, gateways))
        except CallFailed as error:
            print(f"FAIL: a call through the gateway failed: {error}", file=sys.stderr)
            return 1
        finally:
            for process in gateways.values():
                stop(process)
            stop_table(services["table"])
        lines = {name: len(process.lines) for name, process in services.items()}
        for name, log in logs.items():
            with log.open() as written:
                lines[name] = sum(1 for _ in written)
    print(f"log lines written over the run: {lines}")
    print(f"load average after: {_load()}; {time.monotonic() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        raise SystemExit(main())
