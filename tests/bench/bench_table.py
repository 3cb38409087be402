"""Table shard: Act round trips through one shard at many heads-up tables against bare grpc.aio unary
calls, in alternating slices of one run, by rate and by CPU per operation; hands per second with
the real cashier, fairness and lobby.

Starts cashier, fairness and lobby (embedded SQLite in a temporary folder that is removed at the end,
or the cashier on `--database-url`), one table shard, and a bare grpc.aio server (health Check, no
interceptor: the floor), each as its own process on loopback. Then, in `--rounds` alternating slices
(tests/bench/harness.py):

- floor: `--clients` concurrent loops of bare unary Check calls on one channel;
- act: `--clients` heads-up tables of the seeded room `nlhe-gram-duel` (two players each, each
  watching its table); one driver per table acts (check, else call) for whoever is to act. After an
  Act it waits until both players' streams have delivered the event the Act answered with (its
  sequence number), so it never decides on a view older than its own action (the unary answer often
  beats the stream message). Hands run to the river and settle through the cashier; fairness commits,
  seals and reveals.

CPU per operation is read from /proc: for the floor, this process and the bare server; for Act, this
process and every service process. Every refusal of an Act is counted by reason and printed; the bench
fails (exit 1) if there is any, since this driver only acts on a view that is current. Prints both
rates and ratios (goal >= 50% by rate and by CPU), Act p50/p99 (goal p99 <= 50 ms at 64 tables), hands
per second and CPU per hand. Run: `.venv/bin/python tests/bench/bench_table.py`.
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
import uuid
from collections import Counter
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc  # noqa: E402
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc  # noqa: E402
from poker.table.v1 import table_pb2, table_pb2_grpc  # noqa: E402
from service_runtime.auth import Role  # noqa: E402
from service_runtime.clients import reason_of  # noqa: E402
from service_runtime.testing import auth_metadata  # noqa: E402
from tests.bench import harness  # noqa: E402
from tests.bench.bare_grpc import BareUnary, start_bare_server  # noqa: E402
from tests.e2e.cluster import free_port  # noqa: E402

PAYMENTS = auth_metadata("payments", Role.SERVICE)
ROOM = "nlhe-gram-duel"
BUY_IN = 1000
# How long a driver waits for the streams to deliver the event its Act answered with.
STREAM_PATIENCE_SECONDS = 5.0


def start_service(name: str, env: dict[str, str], port: int = 0) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", f"services.{name}"],
        env={**env, f"POKER_{name.upper()}_PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    for line in process.stdout:
        with contextlib.suppress(json.JSONDecodeError):
            record = json.loads(line)
            if record.get("event") == "listening":
                drain(process)
                return process, record["address"]
    raise RuntimeError(f"{name} exited with {process.wait()} before listening")


def drain(process: subprocess.Popen[str]) -> None:
    import threading

    def run() -> None:
        assert process.stdout is not None
        for _ in process.stdout:
            pass

    threading.Thread(target=run, daemon=True).start()


class Seat:
    """One player of a driven table: their latest view and the last event sequence their stream
    delivered."""

    def __init__(self, player_id: str, table_id: str, changed: asyncio.Event) -> None:
        self.player_id = player_id
        self.table_id = table_id
        self.metadata = auth_metadata(player_id, Role.PLAYER)
        self.view: table_pb2.TableView | None = None
        self.sequence = 0
        self.seat = 0
        self.changed = changed


class ActWorkload:
    """`tables` heads-up tables driven through one shard; `run(seconds)` is one slice of Acts."""

    def __init__(
        self, table_address: str, cashier_address: str, lobby_address: str, tables: int, spectators: int = 0
    ) -> None:
        self._channel = grpc.aio.insecure_channel(table_address)
        self._cashier_channel = grpc.aio.insecure_channel(cashier_address)
        self._lobby_channel = grpc.aio.insecure_channel(lobby_address)
        self._stub = table_pb2_grpc.TableServiceStub(self._channel)
        self._tables = tables
        self._pairs: list[tuple[Seat, Seat]] = []
        self._watchers: list[asyncio.Task[None]] = []
        self._measuring = False
        self.settled = 0
        self.refusals: Counter[str] = Counter()
        self.stream_late = 0
        self.snapshots = 0
        self.spectators = spectators
        # What the players' (and spectators') streams delivered while measuring: per hand, the cost
        # the stream contract puts on the shard (issue 28).
        self.stream_messages = 0
        self.stream_bytes = 0
        self.spectator_messages = 0
        self.spectator_bytes = 0

    async def open(self) -> None:
        """Per table: a pair of funded players; the lobby names (and opens) the next table, since
        only the lobby opens a table beyond a room's first; both sit down and watch it."""
        cashier = cashier_pb2_grpc.CashierServiceStub(self._cashier_channel)
        lobby = lobby_pb2_grpc.LobbyServiceStub(self._lobby_channel)
        used: set[str] = set()
        for _ in range(self._tables):
            changed = asyncio.Event()
            pair = [Seat(f"bench-{uuid.uuid4().hex[:8]}", "", changed) for _ in range(2)]
            for seat in pair:
                await cashier.Purchase(
                    cashier_pb2.PurchaseRequest(
                        payment_reference=f"bench-{seat.player_id}",
                        player_id=seat.player_id,
                        source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                        amount_minor=100_000 * 10**6,
                    ),
                    metadata=PAYMENTS,
                )
            # The fullest table with a free seat, else a new one; both players ask, as clients do (the
            # lobby counts the players it sent to a table before the shard's figures do, issue 45).
            joined = await lobby.JoinTable(
                lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=pair[0].metadata
            )
            await lobby.JoinTable(
                lobby_pb2.JoinTableRequest(room_id=ROOM, table_id=joined.table_id), metadata=pair[1].metadata
            )
            if joined.table_id in used:
                raise RuntimeError(f"the lobby named {joined.table_id}, where a pair of ours sits")
            used.add(joined.table_id)
            for seat in pair:
                seat.table_id = joined.table_id
                reply = await self._stub.SitDown(
                    table_pb2.SitDownRequest(
                        request_id=uuid.uuid4().hex, table_id=seat.table_id, buy_in=BUY_IN
                    ),
                    metadata=seat.metadata,
                )
                seat.seat = reply.seat
                self._watchers.append(asyncio.create_task(self._watch(seat, first=seat is pair[0])))
            for n in range(self.spectators):
                fan = auth_metadata(f"bench-fan-{uuid.uuid4().hex[:8]}-{n}", Role.PLAYER)
                self._watchers.append(asyncio.create_task(self._spectate(joined.table_id, fan)))
            self._pairs.append((pair[0], pair[1]))

    async def _watch(self, seat: Seat, *, first: bool) -> None:
        call = self._stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=seat.table_id), metadata=seat.metadata
        )
        async for message in call:
            seat.view = message.view
            if self._measuring:
                self.stream_messages += 1
                self.stream_bytes += message.ByteSize()
            if message.events:
                seat.sequence = max(seat.sequence, message.events[-1].sequence)
                if first and self._measuring:
                    self.settled += sum(1 for e in message.events if e.notice.code == "HAND_SETTLED")
            else:
                self.snapshots += 1  # the first view, or the table as it is now after a dropped update
            seat.changed.set()

    async def _spectate(self, table_id: str, metadata: tuple[tuple[str, str], ...]) -> None:
        call = self._stub.SpectateTable(table_pb2.SpectateTableRequest(table_id=table_id), metadata=metadata)
        async for message in call:
            if self._measuring:
                self.spectator_messages += 1
                self.spectator_bytes += message.ByteSize()

    async def close(self) -> None:
        for task in self._watchers:
            task.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)
        await self._channel.close()
        await self._cashier_channel.close()
        await self._lobby_channel.close()

    async def run(self, seconds: float) -> harness.Outcome:
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds
        settled, refused = self.settled, sum(self.refusals.values())
        before = (self.stream_messages, self.stream_bytes, self.spectator_messages, self.spectator_bytes)
        self._measuring = True
        try:
            await asyncio.gather(*(self._drive(a, b, deadline, latencies) for a, b in self._pairs))
        finally:
            self._measuring = False
        counts = {
            "hands settled": self.settled - settled,
            "acts refused": sum(self.refusals.values()) - refused,
            "stream messages": self.stream_messages - before[0],
            "stream bytes": self.stream_bytes - before[1],
            "spectator messages": self.spectator_messages - before[2],
            "spectator bytes": self.spectator_bytes - before[3],
        }
        return harness.Outcome(len(latencies), latencies, counts)

    async def _drive(self, a: Seat, b: Seat, deadline: float, latencies: list[float]) -> None:
        changed = a.changed
        while time.perf_counter() < deadline:
            # Cleared before the views are read, so an update that lands after this is never lost.
            changed.clear()
            actor = None
            view = a.view
            if view is not None and view.to_act_seat:
                actor = a if view.to_act_seat == a.seat else b
                own = actor.view
                if own is None or own.to_act_seat != actor.seat or not own.legal_actions.actions:
                    actor = None
            if actor is None or actor.view is None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await changed.wait()
                continue
            own = actor.view
            kind = (
                table_pb2.ACTION_KIND_CHECK
                if table_pb2.ACTION_KIND_CHECK in own.legal_actions.actions
                else table_pb2.ACTION_KIND_CALL
            )
            started = time.perf_counter()
            try:
                reply = await self._stub.Act(
                    table_pb2.ActRequest(
                        request_id=uuid.uuid4().hex, table_id=actor.table_id, hand_id=own.hand_id, action=kind
                    ),
                    metadata=actor.metadata,
                )
            except grpc.aio.AioRpcError as error:
                self.refusals[f"{error.code().name} {reason_of(error) or '-'}"] += 1
                target = max(a.sequence, b.sequence) + 1  # decide again on the next event
            else:
                latencies.append(time.perf_counter() - started)
                target = reply.event.sequence
            # The unary answer often arrives before the stream message of the same event: wait for
            # both players' streams to reach it, so the next decision is made on a current view.
            try:
                async with asyncio.timeout(STREAM_PATIENCE_SECONDS):
                    while a.sequence < target or b.sequence < target:
                        changed.clear()
                        await changed.wait()
            except TimeoutError:
                self.stream_late += 1


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--seconds", type=float, default=24.0, help="seconds of each side, all slices together"
    )
    parser.add_argument("--rounds", type=int, default=6, help="slices of each side, alternating")
    parser.add_argument("--clients", type=int, default=64, help="tables (and concurrent floor loops)")
    parser.add_argument(
        "--spectators", type=int, default=0, help="SpectateTable streams per table (no delay)"
    )
    parser.add_argument(
        "--database-url", default="", help="cashier database (default: SQLite in a temp folder)"
    )
    args = parser.parse_args()
    with harness.scratch_folder("bench-table-") as folder:
        env = {
            **os.environ,
            "POKER_LOG_FORMAT": "json",
            "POKER_DATA_DIR": str(folder),
            "POKER_LOG_LEVEL": "info",  # the services announce their address in the "listening" line
        }
        processes: dict[str, subprocess.Popen[str]] = {}
        bare = start_bare_server()
        try:
            addresses = {}
            table_port = free_port()
            for name in ("cashier", "fairness", "lobby"):
                service_env = {**env}
                if name == "cashier" and args.database_url:
                    service_env["POKER_CASHIER_DATABASE_URL"] = args.database_url
                if name == "lobby":  # one shard, no Redis: the lobby routes every room to it
                    service_env["POKER_LOBBY_TABLE_SHARD_ADDRESS"] = f"127.0.0.1:{table_port}"
                    service_env["POKER_LOBBY_TABLE_SHARD_ID"] = "table-a"
                    service_env["POKER_LOBBY_MAX_TABLES_PER_ROOM"] = str(args.clients + 1)
                processes[name], addresses[name] = start_service(name, service_env)
            processes["table"], table_address = start_service(
                "table",
                {
                    **env,
                    "POKER_TABLE_LOBBY_ADDRESS": addresses["lobby"],
                    "POKER_TABLE_CASHIER_ADDRESS": addresses["cashier"],
                    "POKER_TABLE_FAIRNESS_ADDRESS": addresses["fairness"],
                    "POKER_TABLE_HISTORY_ADDRESS": "127.0.0.1:9",
                    "POKER_TABLE_COUNTDOWN_SECONDS": "0",
                    "POKER_TABLE_SHOWDOWN_SECONDS": "0",
                    "POKER_TABLE_RETRY_MAX_SECONDS": "30",
                    "POKER_TABLE_SHARD_ID": "table-a",
                    "POKER_TABLE_SPECTATOR_DELAY_SECONDS": "0",
                    "POKER_TABLE_MAX_SPECTATORS": str(max(200, args.spectators)),
                },
                table_port,
            )
            return await measure(
                args,
                bare.address,
                bare.cpu,
                table_address,
                addresses["cashier"],
                addresses["lobby"],
                processes,
            )
        finally:
            bare.stop()
            for process in processes.values():
                process.terminate()
            for process in processes.values():
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()


async def measure(
    args: argparse.Namespace,
    bare_address: str,
    bare_cpu: harness.CpuSource,
    table_address: str,
    cashier_address: str,
    lobby_address: str,
    processes: dict[str, subprocess.Popen[str]],
) -> int:
    floor = BareUnary(bare_address, args.clients)
    act = ActWorkload(table_address, cashier_address, lobby_address, args.clients, args.spectators)
    opening = time.perf_counter()
    await act.open()
    # Issue 45: the lobby opened tables at about one a second a room (64 took 34 s).
    print(f"table: {args.clients} tables opened through JoinTable in {time.perf_counter() - opening:.1f} s")
    bench = harness.this_process()
    services = [harness.process(name, process.pid) for name, process in processes.items()]
    try:
        await floor.run(1.0)
        await act.run(3.0)  # warm-up: every table has dealt its first hand
        comparison = await harness.interleave(
            harness.Side("bare grpc.aio unary (health Check)", floor.run, [bench, bare_cpu]),
            harness.Side(f"TableService.Act, {args.clients} heads-up tables", act.run, [bench, *services]),
            rounds=args.rounds,
            slice_seconds=args.seconds / args.rounds,
        )
    finally:
        await floor.close()
        await act.close()
    work = comparison.workload
    harness.report(
        "table", f"Act through one shard, {args.clients} tables", comparison, unit="acts", goal=0.5
    )
    hands = work.counts.get("hands settled", 0)
    shard_cpu = work.cpu.get("table", 0.0)
    # Issue 45: the cost per Act must stay flat as hands pile up; each round's rate and CPU per Act,
    # in order, beside the floor's rate in the same round.
    rounds = [
        f"{ops / secs:,.0f}/{f_ops / f_secs:,.0f} acts/s {cpu / max(ops, 1) * 1e6:,.0f} us"
        for (ops, secs, cpu), (f_ops, f_secs, _) in zip(work.slices, comparison.floor.slices, strict=False)
        if secs > 0 and f_secs > 0
    ]
    print(f"  rounds in order (Act/floor rate, CPU per Act): {'; '.join(rounds)}")
    print(
        f"  Act p99 {work.percentile(0.99) * 1000:.1f} ms (goal <= 50 ms at 64 tables); "
        f"hands {hands / work.seconds:.1f}/s settled by one shard with real cashier and fairness, "
        f"{work.cpu_seconds / max(hands, 1) * 1000:.1f} ms of CPU per hand in all processes "
        f"({shard_cpu / max(hands, 1) * 1000:.1f} in the shard)"
    )
    per_hand = max(hands, 1)
    print(
        f"  per hand: {work.counts.get('stream messages', 0) / per_hand:.1f} stream messages to the players "
        f"({work.counts.get('stream bytes', 0) / per_hand / 1000:.1f} KB), "
        f"{work.counts.get('spectator messages', 0) / per_hand:.1f} to {args.spectators} spectators per table "
        f"({work.counts.get('spectator bytes', 0) / per_hand / 1000:.1f} KB)"
    )
    print(
        f"  views: {act.snapshots} full views (first views and dropped updates); "
        f"{act.stream_late} waits for a stream longer than {STREAM_PATIENCE_SECONDS:.0f} s"
    )
    if act.refusals:
        print(f"  FAIL: Acts refused on a current view: {dict(act.refusals)}", file=sys.stderr)
        return 1
    print("  Acts refused: none")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
