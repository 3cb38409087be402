"""The gateway (issue 45): a player's call as it really comes in, Connect over HTTP/1.1 through the
gateway, against the same gRPC call made straight to the service behind, in alternating slices of
one run, by rate and by CPU per call.

Starts the five services and the gateway as `tests/gateway` does (`running_services`,
`start_gateway`: real processes on loopback, embedded SQLite in a temporary folder removed at the
end), with the gateway's per-address and per-player call limits raised so that one bench client is
not refused (the limits are still checked on every call). Players sign in through the gateway
(development sign-in by name); the same token then serves both sides: the gateway sends the
player's own token on, so the service behind verifies the same token either way.

- unary: GetTableSnapshot of a seated player's table (alone at a table of `nlhe-gram-prestige`,
  so the table holds still), the table path's read: the gateway verifies the token, takes the rate
  limits, finds the table's shard (remembered) and forwards the call as Act is forwarded. Floor:
  the same call on a plain grpc.aio channel straight to the table shard. `--clients` concurrent
  loops; through the gateway each loop is a keep-alive HTTP/1.1 connection sending what a browser's
  connect-web sends (tests/bench/gateway_http.py: binary protobuf, Chrome's headers, among them
  `accept-encoding: gzip, ...`, so every answer comes back gzipped, as to the page; `--no-browser`:
  only the Connect headers, and the answers come back plain);
- with `--list-rooms`: the lobby's ListRooms (page size 500, as the lobby screen asks) the same way;
- stream (unless `--no-stream`): WatchTable messages to `--watchers` players who watch, without a
  seat, `--tables` heads-up tables of `nlhe-gram-duel` whose two seated players are driven as in
  bench_table.py (their Acts and their own streams go straight to the shard on both sides, so the
  tables play at the same pace). Through the gateway each watcher is a Connect stream on its own
  HTTP/1.1 connection, as the page's table feed; floor: the same WatchTable straight from the shard
  on one channel. Each slice opens the watchers' streams, drives the tables, and closes the streams.
  An operation is a message a watcher received.

CPU per operation is read from /proc for every process (this one, the client: the loops, and for the
stream also the table driver; the gateway; each service), on both sides alike, and printed by group:
client, gateway, services. Run: `.venv/bin/python tests/bench/bench_gateway.py` (about a minute and a
half with the defaults; `--seconds` and `--rounds` for longer).
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
from tests.bench import harness  # noqa: E402
from tests.bench.bench_table import ActWorkload  # noqa: E402
from tests.bench.gateway_http import CallFailed, ConnectStream, UnaryConnection  # noqa: E402
from tests.gateway.gateway_process import stop  # noqa: E402
from tests.gateway.raw_player import seat, sign_in  # noqa: E402
from tests.security.service_processes import ServiceProcess, running_services  # noqa: E402

TABLE = "poker.table.v1.TableService"
LOBBY = "poker.lobby.v1.LobbyService"
CLIENT = "client"
GATEWAY = "gateway"
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
# A slice of the stream side ends its streams, then waits this long (inside the slice, on both sides
# alike) so that the servers' side of closing them is counted in the slice that opened them.
SETTLE_SECONDS = 0.2


def start_gateway_logging_to(
    log: Path, services: dict[str, ServiceProcess], extra_env: dict[str, str]
) -> ServiceProcess:
    """The gateway as `tests.gateway.gateway_process.start_gateway` starts it (the same environment),
    but writing its log to a file, as in a container, rather than to a pipe this process reads: the
    gateway writes a line for every call, and reading them here would cost the client's CPU (and
    could hold the gateway up on a full pipe)."""
    env = {
        **os.environ,
        "POKER_GATEWAY_PORT": "0",
        "POKER_LOG_FORMAT": "json",
        **{
            f"POKER_GATEWAY_{name.upper()}_ADDRESS": service.address
            for name, service in services.items()
            if name in ("lobby", "cashier", "fairness", "history")
        },
        **extra_env,
    }
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.gateway"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
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


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


class UnaryRead:
    """One unary read both ways: `direct` (a plain grpc.aio channel to the service) and `gateway`
    (one keep-alive HTTP/1.1 connection per loop); each answer is decoded and checked."""

    def __init__(
        self,
        *,
        method: str,
        request: Message,
        reply: Any,
        check: Callable[[Any], bool],
        service_address: str,
        gateway_address: str,
        token: str,
        clients: int,
        browser: bool,
    ) -> None:
        self.method = method
        self._request = request
        self._bytes = request.SerializeToString()
        self._reply = reply
        self._check = check
        self._token = token
        self._metadata = _auth(token)
        self._clients = clients
        self._channel = grpc.aio.insecure_channel(service_address)
        self._call = self._channel.unary_unary(
            method,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=reply.FromString,
        )
        self._connections = [UnaryConnection(gateway_address, browser=browser) for _ in range(clients)]
        self.answer_bytes = 0

    async def direct(self, seconds: float) -> harness.Outcome:
        async def call(_client: int, _n: int) -> None:
            answer = await self._call(self._request, metadata=self._metadata)
            if not self._check(answer):
                raise AssertionError(f"{self.method}: an unexpected answer {answer}")

        return await harness.timed_loops(self._clients, seconds, call)

    async def gateway(self, seconds: float) -> harness.Outcome:
        async def call(client: int, _n: int) -> None:
            data = await self._connections[client].call(self.method, self._bytes, self._token)
            self.answer_bytes = len(data)
            answer = self._reply.FromString(data)
            if not self._check(answer):
                raise AssertionError(f"{self.method}: an unexpected answer {answer}")

        return await harness.timed_loops(self._clients, seconds, call)

    async def close(self) -> None:
        for connection in self._connections:
            await connection.close()
        await self._channel.close()


class Watchers:
    """`tokens` players watching the driven tables without a seat, both ways, while the tables play."""

    def __init__(
        self,
        act: ActWorkload,
        table_ids: Sequence[str],
        tokens: Sequence[str],
        shard: str,
        gateway: str,
        *,
        browser: bool,
    ) -> None:
        self._act = act
        self._browser = browser
        self._tables = list(table_ids)
        self._tokens = list(tokens)
        self._gateway = gateway
        self._channel = grpc.aio.insecure_channel(shard)
        self._watch = self._channel.unary_stream(
            f"/{TABLE}/WatchTable",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=table_pb2.WatchTableResponse.FromString,
        )
        self._counting = False

    def _table_of(self, index: int) -> str:
        return self._tables[index % len(self._tables)]

    async def direct(self, seconds: float) -> harness.Outcome:
        tally = {"messages": 0, "full views": 0, "bytes": 0}
        calls = [
            self._watch(table_pb2.WatchTableRequest(table_id=self._table_of(i)), metadata=_auth(token))
            for i, token in enumerate(self._tokens)
        ]

        async def read(call: Any) -> None:
            async for message in call:
                self._count(tally, message, message.ByteSize())
            raise RuntimeError(f"a direct stream ended by itself: {await call.code()}")

        async def close() -> None:
            for call in calls:
                call.cancel()

        return await self._slice(seconds, [read(call) for call in calls], close, tally)

    async def gateway(self, seconds: float) -> harness.Outcome:
        tally = {"messages": 0, "full views": 0, "bytes": 0}
        streams = [
            ConnectStream(
                self._gateway,
                f"/{TABLE}/WatchTable",
                table_pb2.WatchTableRequest(table_id=self._table_of(i)).SerializeToString(),
                token,
                browser=self._browser,
            )
            for i, token in enumerate(self._tokens)
        ]

        async def read(stream: ConnectStream) -> None:
            async for data in stream.messages():
                self._count(tally, table_pb2.WatchTableResponse.FromString(data), len(data))
            raise RuntimeError("a stream through the gateway ended by itself")

        async def close() -> None:
            for stream in streams:
                await stream.close()

        return await self._slice(seconds, [read(stream) for stream in streams], close, tally)

    def _count(self, tally: dict[str, int], message: table_pb2.WatchTableResponse, size: int) -> None:
        if not self._counting:
            return
        tally["messages"] += 1
        tally["bytes"] += size
        if not message.events:
            tally["full views"] += 1  # the first message of a stream, or one after dropped updates

    async def _slice(
        self,
        seconds: float,
        readers: Sequence[Coroutine[Any, Any, None]],
        close: Callable[[], Awaitable[None]],
        tally: dict[str, int],
    ) -> harness.Outcome:
        """The watchers' streams open while the tables are driven for `seconds`; then the streams
        end as a page's do (the tasks reading them stop, the calls or connections close)."""
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
            raise RuntimeError(f"{len(failures)} watchers' streams failed: {failures[0]!r}")
        await asyncio.sleep(SETTLE_SECONDS)
        counts = {**tally, "acts": driven.operations, "hands": driven.counts.get("hands settled", 0)}
        return harness.Outcome(tally["messages"], counts=counts)

    async def close(self) -> None:
        await self._channel.close()


def _groups(tally: harness.Tally) -> str:
    """CPU per operation of the client, the gateway and the services, in microseconds."""
    per = 1e6 / tally.operations if tally.operations else float("nan")
    services = {name: used for name, used in tally.cpu.items() if name not in (CLIENT, GATEWAY)}
    detail = ", ".join(f"{name} {used * per:,.0f}" for name, used in services.items() if used * per >= 0.5)
    return (
        f"client {tally.cpu.get(CLIENT, 0.0) * per:,.0f}, gateway {tally.cpu.get(GATEWAY, 0.0) * per:,.0f}, "
        f"services {sum(services.values()) * per:,.0f} ({detail or '-'}) us"
    )


def _print_groups(comparison: harness.Comparison, unit: str) -> None:
    floor, work = comparison.floor, comparison.workload
    print(f"  per {unit}, direct:  {_groups(floor)}")
    print(f"  per {unit}, gateway: {_groups(work)}")
    gateway_cpu = work.cpu.get(GATEWAY, 0.0)
    print(
        f"  the gateway's own CPU: {gateway_cpu / max(work.operations, 1) * 1e6:,.0f} us per {unit} "
        f"({gateway_cpu / work.seconds * 100:.0f}% of a core over the gateway's slices)",
        flush=True,
    )


async def measure(
    args: argparse.Namespace, services: dict[str, ServiceProcess], gateway: ServiceProcess
) -> None:
    cpu = [
        harness.this_process(CLIENT),
        harness.process(GATEWAY, gateway.process.pid),
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
            gateway_address=gateway.address,
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
                gateway_address=gateway.address,
                token=token,
                clients=args.clients,
                browser=browser,
            )
        )
    print(
        f"gateway per call: {args.clients} concurrent loops (through the gateway: one HTTP/1.1 "
        f"connection each, {'browser headers, gzip answers' if browser else 'Connect headers only'}), "
        f"{args.rounds} rounds of {slice_seconds:.1f} s per side; load average {_load()}",
        flush=True,
    )
    try:
        for read in reads:
            await read.direct(0.5)  # warm-up: connections, the gateway's route to the table
            await read.gateway(0.5)
            comparison = await harness.interleave(
                harness.Side(f"{read.method.rsplit('/', 1)[1]} direct gRPC", read.direct, cpu),
                harness.Side(f"{read.method.rsplit('/', 1)[1]} via gateway", read.gateway, cpu),
                rounds=args.rounds,
                slice_seconds=slice_seconds,
            )
            harness.report(
                "gateway",
                f"{read.method.rsplit('/', 1)[1]} via gateway vs direct gRPC",
                comparison,
                unit="calls",
            )
            _print_groups(comparison, "call")
            print(f"  answer: {read.answer_bytes} bytes of protobuf (before gzip)")
    finally:
        for read in reads:
            await read.close()
    if args.no_stream:
        return
    await watch_tables(args, services, gateway, cpu)


async def watch_tables(
    args: argparse.Namespace,
    services: dict[str, ServiceProcess],
    gateway: ServiceProcess,
    cpu: list[harness.CpuSource],
) -> None:
    slice_seconds = args.seconds / args.rounds
    tokens = [
        await asyncio.to_thread(sign_in, gateway.address, f"bench-watcher-{n}") for n in range(args.watchers)
    ]
    act = ActWorkload(
        services["table"].address, services["cashier"].address, services["lobby"].address, args.tables
    )
    await act.open()
    table_ids = sorted({pair[0].table_id for pair in act._pairs})
    watchers = Watchers(
        act, table_ids, tokens, services["table"].address, gateway.address, browser=not args.no_browser
    )
    print(
        f"WatchTable: {args.watchers} watchers without a seat on {len(table_ids)} driven heads-up "
        f"table(s), {args.rounds} rounds of {slice_seconds:.1f} s per side; load average {_load()}",
        flush=True,
    )
    try:
        await act.run(2.0)  # warm-up: every table deals
        await watchers.direct(1.0)
        await watchers.gateway(1.0)
        comparison = await harness.interleave(
            harness.Side("WatchTable direct from the shard", watchers.direct, cpu),
            harness.Side("WatchTable via gateway", watchers.gateway, cpu),
            rounds=args.rounds,
            slice_seconds=slice_seconds,
        )
    finally:
        await watchers.close()
        await act.close()
    harness.report(
        "gateway", f"WatchTable via gateway, {args.watchers} watchers", comparison, unit="messages"
    )
    _print_groups(comparison, "message")
    for tally in (comparison.floor, comparison.workload):
        counts = tally.counts
        messages = max(counts.get("messages", 0), 1)
        print(
            f"  {tally.name}: {counts.get('acts', 0) / tally.seconds:,.1f} acts/s and "
            f"{counts.get('hands', 0) / tally.seconds:,.1f} hands/s at the driven tables, "
            f"{counts.get('full views', 0)} full views of {counts.get('messages', 0)} messages, "
            f"{counts.get('bytes', 0) / messages:,.0f} bytes a message"
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
    parser.add_argument("--seconds", type=float, default=12.0, help="time per side, over all its slices")
    parser.add_argument("--rounds", type=int, default=4, help="slices per side, alternating with the other")
    parser.add_argument("--watchers", type=int, default=16, help="players watching the driven tables")
    parser.add_argument("--tables", type=int, default=1, help="driven heads-up tables for the stream")
    parser.add_argument("--list-rooms", action="store_true", help="also ListRooms (page size 500)")
    parser.add_argument("--no-stream", action="store_true", help="the unary reads only")
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help="send only the Connect headers (no browser headers, no accept-encoding: plain answers)",
    )
    args = parser.parse_args()
    started = time.monotonic()
    gateway_env = {
        **GATEWAY_ENV,
        "POKER_GATEWAY_CONNECTIONS_PER_ADDRESS": str(max(64, 2 * (args.clients + args.watchers))),
    }
    with (
        harness.scratch_folder("poker-bench-gateway-") as folder,
        running_services(folder, SERVICES_ENV) as services,
    ):
        gateway_log = folder / "gateway.log"
        gateway = start_gateway_logging_to(gateway_log, services, gateway_env)
        try:
            asyncio.run(measure(args, services, gateway))
        except CallFailed as error:
            print(f"FAIL: a call through the gateway failed: {error}", file=sys.stderr)
            return 1
        finally:
            stop(gateway)
        lines = {name: len(process.lines) for name, process in services.items()}
        with gateway_log.open() as written:
            lines[GATEWAY] = sum(1 for _ in written)
    print(f"log lines written over the run: {lines}")
    print(f"load average after: {_load()}; {time.monotonic() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        raise SystemExit(main())
