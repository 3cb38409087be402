"""Fairness throughput: hands committed and dealt per second through gRPC against a real server.

Starts `python -m services.fairness` as its own process on a free loopback port (embedded SQLite in a
temporary folder, or `--database-url`), then drives it with concurrent clients for a fixed time per
scenario and prints hands per second and latency percentiles:

- commit+deck: one CommitHand with `deal_now` (the plain scheme; one round trip);
- commit, 2 seeds, seal: CommitHand, two AddPlayerEntropy, SealHand (the deck with player entropy);
- full hand: the above plus RevealHand.

Run: `.venv/bin/python tests/bench/bench_fairness.py` (about a minute with the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.testing import token_for
from services.fairness.shuffle import SeatSeed, shuffle_deck

ROOT = Path(__file__).resolve().parents[2]
Scenario = Callable[[fairness_pb2_grpc.FairnessServiceStub, str, int], Awaitable[None]]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_serving(target: str, deadline_seconds: float = 60.0) -> None:
    deadline = time.monotonic() + deadline_seconds
    async with grpc.aio.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"the fairness service at {target} did not become SERVING")


def _metadata() -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token_for('bench-table', 'service', ttl_seconds=3600)}"),)


METADATA = _metadata()


async def commit_and_deck(stub: fairness_pb2_grpc.FairnessServiceStub, table: str, n: int) -> None:
    request = fairness_pb2.CommitHandRequest(request_id=f"{table}/{n}", table_id=table, deal_now=True)
    response = await stub.CommitHand(request, metadata=METADATA)
    assert len(response.deck) == 52


async def commit_entropy_seal(stub: fairness_pb2_grpc.FairnessServiceStub, table: str, n: int) -> None:
    committed = await stub.CommitHand(
        fairness_pb2.CommitHandRequest(request_id=f"{table}/{n}", table_id=table), metadata=METADATA
    )
    hand_id = committed.commitment.hand_id
    for seat in (1, 2):
        await stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(
                hand_id=hand_id, seat=seat, player_id=f"p{seat}", client_seed=os.urandom(16)
            ),
            metadata=METADATA,
        )
    sealed = await stub.SealHand(fairness_pb2.SealHandRequest(hand_id=hand_id), metadata=METADATA)
    assert len(sealed.deck) == 52


async def full_hand(stub: fairness_pb2_grpc.FairnessServiceStub, table: str, n: int) -> None:
    committed = await stub.CommitHand(
        fairness_pb2.CommitHandRequest(request_id=f"{table}/{n}", table_id=table, deal_now=True),
        metadata=METADATA,
    )
    await stub.RevealHand(
        fairness_pb2.RevealHandRequest(
            hand_id=committed.commitment.hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED
        ),
        metadata=METADATA,
    )


async def run_scenario(
    target: str, scenario: Scenario, *, clients: int, seconds: float
) -> tuple[int, list[float]]:
    """Each client plays one table, hand after hand, until the time is up; latencies in ms."""
    latencies: list[float] = []
    stop_at = time.perf_counter() + seconds
    async with grpc.aio.insecure_channel(target) as channel:
        stub = fairness_pb2_grpc.FairnessServiceStub(channel)

        async def client() -> None:
            table = f"bench-{uuid.uuid4().hex[:10]}"
            n = 0
            while time.perf_counter() < stop_at:
                started = time.perf_counter()
                await scenario(stub, table, n)
                latencies.append((time.perf_counter() - started) * 1000)
                n += 1

        await asyncio.gather(*(client() for _ in range(clients)))
    return len(latencies), latencies


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def pure_shuffle_rate(seconds: float = 2.0) -> float:
    """Decks per second of the v1 shuffle alone (key derivation, DRBG, Fisher-Yates), for reference."""
    count, stop_at = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop_at:
        shuffle_deck(os.urandom(32), (SeatSeed(1, b"a"), SeatSeed(2, b"b")), os.urandom(16))
        count += 1
    return count / seconds


async def bench(target: str, *, clients: int, seconds: float) -> None:
    print(f"pure shuffle, no I/O: {pure_shuffle_rate():.0f} decks/s on one core")
    await _wait_serving(target)
    # Warm-up: connections, the first migration-fresh pages, the interpreter's caches.
    await run_scenario(target, commit_and_deck, clients=2, seconds=1.0)
    print(
        f"{'scenario':<28}{'hands/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'hands':>8}  ({clients} clients, {seconds:.0f} s)"
    )
    for name, scenario in (
        ("commit+deck (deal_now)", commit_and_deck),
        ("commit, 2 seeds, seal", commit_entropy_seal),
        ("commit+deck, reveal", full_hand),
    ):
        count, latencies = await run_scenario(target, scenario, clients=clients, seconds=seconds)
        print(
            f"{name:<28}{count / seconds:>10.1f}{statistics.median(latencies):>10.2f}"
            f"{_percentile(latencies, 0.99):>10.2f}{count:>8}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent tables")
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each scenario")
    parser.add_argument(
        "--database-url", default="", help="PostgreSQL URL; empty means SQLite in a temp folder"
    )
    args = parser.parse_args()
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="fairness-bench-") as folder:
        environ = {
            **os.environ,
            "POKER_FAIRNESS_PORT": str(port),
            "POKER_DATA_DIR": folder,
            "POKER_FAIRNESS_DATABASE_URL": args.database_url,
            "POKER_LOG_FORMAT": "json",
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "services.fairness"],
            cwd=ROOT,
            env=environ,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            print(
                f"fairness service pid {server.pid} on 127.0.0.1:{port}, "
                f"database {args.database_url.partition(':')[0] or 'sqlite (temporary file)'}"
            )
            asyncio.run(bench(f"127.0.0.1:{port}", clients=args.clients, seconds=args.seconds))
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
