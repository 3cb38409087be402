"""Table shard throughput: Act round trips at 64 concurrent clients beside bare grpc.aio unary calls
in the same run, and hands per second with the real cashier, fairness and lobby.

Starts cashier, fairness and lobby (embedded SQLite in a temporary folder, or the cashier on
`--database-url`), one table shard, and a bare grpc.aio server (health Check only, no interceptor:
the floor), each as its own process on loopback. Then:

- floor: 64 concurrent loops of bare unary Check calls for `--seconds`;
- act: 64 heads-up tables of the seeded room `nlhe-gram-duel` (128 players, each watching its
  table); one driver per table acts (check, else call) for whoever is to act, as fast as the stream
  tells it; every Act round trip is timed. Hands run to the river and settle through the cashier,
  fairness commits, seals and reveals, so this is also the hands-per-second figure.

Prints both rates, the ratio (goal >= 50%), Act p50/p99 (goal p99 <= 20 ms), hands per second and
the RPCs the shard makes per hand. Run: `.venv/bin/python tests/bench/bench_table.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata

ROOT = Path(__file__).resolve().parents[2]
PAYMENTS = auth_metadata("payments", Role.SERVICE)
ROOM = "nlhe-gram-duel"
BUY_IN = 1000
# Per hand the shard calls CommitHand, SealHand, SettleHand, RevealHand and RecordHand (the last
# retried while history is not served); AuthorizeSeat/GetRoom only at sit-down and room refresh.
RPCS_PER_HAND = 5

BARE_SERVER = """
import asyncio, sys, grpc
from grpc_health.v1 import health, health_pb2_grpc
async def main():
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()
asyncio.run(main())
"""


def start_service(name: str, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", f"services.{name}"],
        env={**env, f"POKER_{name.upper()}_PORT": "0"},
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


def start_bare_server() -> tuple[subprocess.Popen[str], str]:
    bare = subprocess.Popen([sys.executable, "-c", BARE_SERVER], stdout=subprocess.PIPE, text=True)
    assert bare.stdout is not None
    return bare, f"127.0.0.1:{bare.stdout.readline().strip()}"


def drain(process: subprocess.Popen[str]) -> None:
    import threading

    def run() -> None:
        assert process.stdout is not None
        for _ in process.stdout:
            pass

    threading.Thread(target=run, daemon=True).start()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def floor(address: str, clients: int, seconds: float) -> tuple[float, list[float]]:
    latencies: list[float] = []
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        await stub.Check(health_pb2.HealthCheckRequest())
        end = time.perf_counter() + seconds

        async def loop() -> None:
            while time.perf_counter() < end:
                started = time.perf_counter()
                await stub.Check(health_pb2.HealthCheckRequest())
                latencies.append(time.perf_counter() - started)

        began = time.perf_counter()
        await asyncio.gather(*(loop() for _ in range(clients)))
        return len(latencies) / (time.perf_counter() - began), latencies


class Seat:
    def __init__(self, player_id: str, table_id: str) -> None:
        self.player_id = player_id
        self.table_id = table_id
        self.metadata = auth_metadata(player_id, Role.PLAYER)
        self.view: table_pb2.TableView | None = None
        self.seat = 0


async def act_run(table_address: str, cashier_address: str, tables: int, seconds: float) -> dict[str, float]:
    async with (
        grpc.aio.insecure_channel(table_address) as channel,
        grpc.aio.insecure_channel(cashier_address) as cashier_channel,
    ):
        stub = table_pb2_grpc.TableServiceStub(channel)
        cashier = cashier_pb2_grpc.CashierServiceStub(cashier_channel)
        latencies: list[float] = []
        settled = 0
        pairs: list[tuple[Seat, Seat, asyncio.Event]] = []
        seats_of: dict[str, tuple[Seat, Seat]] = {}
        watchers: list[asyncio.Task[None]] = []
        for n in range(1, tables + 1):
            table_id = f"{ROOM}.{n}"
            seats = (
                Seat(f"bench-{uuid.uuid4().hex[:8]}", table_id),
                Seat(f"bench-{uuid.uuid4().hex[:8]}", table_id),
            )
            changed = asyncio.Event()
            for seat in seats:
                await cashier.Purchase(
                    cashier_pb2.PurchaseRequest(
                        payment_reference=f"bench-{seat.player_id}",
                        player_id=seat.player_id,
                        source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                        amount_minor=100_000 * 10**6,
                    ),
                    metadata=PAYMENTS,
                )

                async def watch(seat: Seat = seat, changed: asyncio.Event = changed) -> None:
                    nonlocal settled
                    call = stub.WatchTable(
                        table_pb2.WatchTableRequest(table_id=seat.table_id), metadata=seat.metadata
                    )
                    async for message in call:
                        seat.view = message.view
                        if message.event.notice.code == "HAND_SETTLED" and seat is seats_of[seat.table_id][0]:
                            settled += 1
                        changed.set()

                watchers.append(asyncio.create_task(watch()))
            pairs.append((seats[0], seats[1], changed))
            seats_of[table_id] = seats
        for a, b, _ in pairs:
            for seat in (a, b):
                reply = await stub.SitDown(
                    table_pb2.SitDownRequest(
                        request_id=uuid.uuid4().hex, table_id=seat.table_id, buy_in=BUY_IN
                    ),
                    metadata=seat.metadata,
                )
                seat.seat = reply.seat
        end = time.perf_counter() + seconds

        async def drive(a: Seat, b: Seat, changed: asyncio.Event) -> None:
            while time.perf_counter() < end:
                # Cleared before the views are read, so an update that lands after this is never lost.
                changed.clear()
                view = a.view
                actor = None
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
                    await stub.Act(
                        table_pb2.ActRequest(
                            request_id=uuid.uuid4().hex,
                            table_id=actor.table_id,
                            hand_id=own.hand_id,
                            action=kind,
                        ),
                        metadata=actor.metadata,
                    )
                    latencies.append(time.perf_counter() - started)
                except grpc.aio.AioRpcError:
                    pass
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await changed.wait()

        began = time.perf_counter()
        settled_before = settled
        await asyncio.gather(*(drive(a, b, c) for a, b, c in pairs))
        elapsed = time.perf_counter() - began
        hands = settled - settled_before
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        return {
            "acts_per_second": len(latencies) / elapsed,
            "p50_ms": percentile(latencies, 0.5) * 1000,
            "p99_ms": percentile(latencies, 0.99) * 1000,
            "hands_per_second": hands / elapsed,
            "acts": float(len(latencies)),
        }


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument(
        "--database-url", default="", help="cashier database (default: SQLite in a temp folder)"
    )
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-table-")
    env = {**os.environ, "POKER_LOG_FORMAT": "json", "POKER_DATA_DIR": folder, "POKER_LOG_LEVEL": "warning"}
    processes: list[subprocess.Popen[str]] = []
    try:
        bare, bare_address = start_bare_server()
        processes.append(bare)
        cashier_env = {**env, "POKER_LOG_LEVEL": "info"}
        if args.database_url:
            cashier_env["POKER_CASHIER_DATABASE_URL"] = args.database_url
        addresses = {}
        for name in ("cashier", "fairness", "lobby"):
            process, address = start_service(
                name, {**env, "POKER_LOG_LEVEL": "info"} if name != "cashier" else cashier_env
            )
            processes.append(process)
            addresses[name] = address
        table, table_address = start_service(
            "table",
            {
                **env,
                "POKER_LOG_LEVEL": "info",
                "POKER_TABLE_LOBBY_ADDRESS": addresses["lobby"],
                "POKER_TABLE_CASHIER_ADDRESS": addresses["cashier"],
                "POKER_TABLE_FAIRNESS_ADDRESS": addresses["fairness"],
                "POKER_TABLE_HISTORY_ADDRESS": "127.0.0.1:9",
                "POKER_TABLE_COUNTDOWN_SECONDS": "0",
                "POKER_TABLE_RETRY_MAX_SECONDS": "30",
            },
        )
        processes.append(table)
        floor_rate, floor_latencies = await floor(bare_address, args.clients, args.seconds)
        result = await act_run(table_address, addresses["cashier"], args.clients, args.seconds)
        print(
            f"floor  bare grpc.aio unary (health Check), {args.clients} clients: {floor_rate:,.0f} calls/s, "
            f"p50 {percentile(floor_latencies, 0.5) * 1000:.2f} ms, p99 {percentile(floor_latencies, 0.99) * 1000:.2f} ms"
        )
        print(
            f"act    TableService.Act through one shard, {args.clients} tables/clients: "
            f"{result['acts_per_second']:,.0f} acts/s, p50 {result['p50_ms']:.2f} ms, p99 {result['p99_ms']:.2f} ms "
            f"({int(result['acts'])} acts)"
        )
        print(
            f"ratio  act / floor = {result['acts_per_second'] / floor_rate:.1%} (goal >= 50%, p99 <= 20 ms)"
        )
        print(
            f"hands  {result['hands_per_second']:.1f} hands/s settled by one shard with real cashier and fairness; "
            f"the shard makes {RPCS_PER_HAND} RPCs per hand (commit, seal, settle, reveal, record)"
        )
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    asyncio.run(main())
