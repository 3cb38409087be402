"""The whole cluster with bots, mid-play: hands/s, actions/s, Act p50/p99, CPU per hand in each
process, and the bound of what its RPC traffic costs at the floor: bare unary calls and bare stream
messages measured in the same run, in alternating slices with the cluster's play.

Starts lobby, table shard(s), cashier, fairness and history as processes on loopback: with
POKER_TEST_DATABASE_URL and POKER_TEST_REDIS_URL set (CI) on PostgreSQL with two shards and Redis,
else on SQLite with one shard (the `make run` shape), each with its metrics endpoint. A bare grpc.aio
server (no interceptors) gives the floors. poker-bots (in this process: random-legal and
tight-aggressive, no clock timeouts, no leaving) buy chips, join and sit at `--tables` tables of four
seeded rooms (NL and FL, both pools); once every bot is seated and hands are flowing, the measured
window begins, so bot set-up (purchase, join, sit) and the leaving and cash-out at the end stay out
of it. Then `--rounds` rounds, each one slice of: bare unary calls, bare stream messages, and the
cluster's play (the bots act only during their slices; the table clock is slowed so that a pause
never times a bot out).

During the play slices, each service's own metrics count every unary call it served
(grpc_server_started_total, unary) and every stream message it sent (grpc_server_msg_sent_total):
per hand, U unary calls and M stream messages. The bound is that traffic at the floor: in hands per
second 1 / (U / unary rate + M / message rate), in CPU per hand U x (CPU per bare call) + M x (CPU per
bare message), client and server together, from /proc. The cluster's CPU per hand is every
service process plus this one (the bots), from /proc. Both ratios to the bound are printed with the
rounds' spread (goals: >= 50% of the bound, <= 25 ms of CPU per hand).

Soak (`--soak`, not in CI): 10,000 hands; every process's resident memory sampled every
`--sample-seconds` (60); the stated bound: after the first sample no process grows by more than
`--rss-bound-mb` (64 MB) or 50%, whichever is larger. Exits 1 if any process breaks it.

Run: `.venv/bin/python tests/bench/bench_cluster.py` (`make bench` runs every bench).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
import urllib.request
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from poker_bots.bot import Behaviour, Connections  # noqa: E402
from poker_bots.credentials import MintedCredentials  # noqa: E402
from poker_bots.run import RunPlan, run_bots  # noqa: E402
from poker_bots.stats import RunStats, percentile  # noqa: E402
from service_runtime.testing import DEV_KEYS  # noqa: E402
from tests.bench import harness  # noqa: E402
from tests.bench.bare_grpc import BareStream, BareUnary, start_bare_server  # noqa: E402
from tests.e2e.cluster import Cluster, running_cluster  # noqa: E402

ROOMS = ("nlhe-gram-classic", "nlhe-mpx-classic", "flhe-gram-6max-10-20", "flhe-mpx-6max-10-20")
# A bot paused for a floor slice must not be timed out by the table (tests/e2e's fast clock is 0.5 s).
SLOW_CLOCK = {
    # The product's lease (services/table/settings.py), not the end-to-end runs' 1 s: each shard's
    # ownership round (every third of the lease) is part of what a hand costs in production.
    "POKER_TABLE_LEASE_SECONDS": "3",
    "POKER_TABLE_ACTION_SECONDS": "60",
    "POKER_TABLE_TIME_BANK_SECONDS": "0",
    # The drain bound covers a hand at this clock (services/table/settings.py).
    "POKER_TABLE_DRAIN_SECONDS": "2500",
}
# A table view message on a watcher's stream is about this big (issue 28: 41 KB in 92 messages).
MESSAGE_BYTES = 450


def load_average() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def plan_for(cluster: Cluster, tables: int, hands: int, seconds: float) -> RunPlan:
    return RunPlan(
        lobby=cluster.address("lobby"),
        cashier=cluster.address("cashier"),
        rooms=ROOMS,
        bots=tables * 4,
        tables=tables,
        hands=hands,
        seconds=seconds,
        seed=5,
        player_prefix=f"bench-{uuid.uuid4().hex[:6]}",
        behaviour=Behaviour(timeout_rate=0.0, leave_rate=0.0, buy_ins_per_purchase=50, max_purchases=1000),
    )


class GatedTable:
    """A table stub whose Act waits while the gate is closed (the floors' slices) and is timed from
    the moment it passes the gate; everything else goes straight to the stub."""

    def __init__(self, stub: Any, gate: asyncio.Event, latencies: list[float]) -> None:
        self._stub = stub
        self._gate = gate
        self._latencies = latencies

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stub, name)

    async def Act(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - the stub's method name
        await self._gate.wait()
        started = time.perf_counter()
        reply = await self._stub.Act(*args, **kwargs)
        if self._gate.is_set():
            self._latencies.append(time.perf_counter() - started)
        return reply


class GatedConnections(Connections):
    def __init__(self, lobby: str, cashier: str, gate: asyncio.Event, latencies: list[float]) -> None:
        super().__init__(lobby, cashier)
        self._gate = gate
        self._latencies = latencies

    def table(self, address: str) -> Any:
        return GatedTable(super().table(address), self._gate, self._latencies)


def served_counts(ports: Sequence[int]) -> tuple[int, int, dict[str, int]]:
    """(unary calls served, stream messages sent, Redis round trips by command) so far, summed over
    the services' metrics (a pipeline is one round trip, `PIPELINE`)."""
    unary = messages = 0
    redis_trips: dict[str, int] = {}
    for port in ports:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            text = answer.read().decode()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "grpc_server_started_total" and sample.labels.get("grpc_type") == "unary":
                    unary += int(sample.value)
                elif sample.name == "grpc_server_msg_sent_total":
                    messages += int(sample.value)
                elif sample.name == "poker_redis_command_seconds_count":
                    command = f"redis {sample.labels.get('command', '?')}"
                    redis_trips[command] = redis_trips.get(command, 0) + int(sample.value)
    return unary, messages, redis_trips


class Play:
    """The bots' play as slices: the gate opens for a slice and closes after it."""

    def __init__(self, stats: RunStats, gate: asyncio.Event, metrics_ports: Sequence[int]) -> None:
        self._stats = stats
        self._gate = gate
        self._ports = metrics_ports

    async def run(self, seconds: float) -> harness.Outcome:
        unary, messages, trips = await asyncio.to_thread(served_counts, self._ports)
        hands, actions = len(self._stats.hands), self._stats.actions
        self._gate.set()
        await asyncio.sleep(seconds)
        self._gate.clear()
        unary_after, messages_after, trips_after = await asyncio.to_thread(served_counts, self._ports)
        return harness.Outcome(
            len(self._stats.hands) - hands,
            counts={
                "actions": self._stats.actions - actions,
                "unary calls": unary_after - unary,
                "stream messages": messages_after - messages,
                **{name: n - trips.get(name, 0) for name, n in trips_after.items()},
            },
        )


def bound_of(
    unary: harness.Tally, stream: harness.Tally, calls: float, messages: float
) -> tuple[float, float]:
    """(hands per second, CPU seconds per hand) of `calls` unary calls and `messages` stream messages
    per hand at the floors' rates and CPU per operation."""
    seconds = calls / unary.rate + messages / stream.rate
    cpu = calls * unary.cpu_per_operation + messages * stream.cpu_per_operation
    return 1 / seconds, cpu


async def throughput(cluster: Cluster, args: argparse.Namespace) -> int:
    ports = [p.metrics_port for p in cluster.services.values() if p.metrics_port]
    if len(ports) != len(cluster.services):
        print("cluster: a service has no metrics endpoint", file=sys.stderr)
        return 1
    bare = start_bare_server()
    unary_floor = BareUnary(bare.address, args.clients)
    stream_floor = BareStream(bare.address, args.tables * 4, MESSAGE_BYTES)
    stats = RunStats()
    gate = asyncio.Event()
    gate.set()
    stop = asyncio.Event()
    act_latencies: list[float] = []
    conns = GatedConnections(cluster.address("lobby"), cluster.address("cashier"), gate, act_latencies)
    bots = asyncio.create_task(
        run_bots(plan_for(cluster, args.tables, 0, 0), MintedCredentials(DEV_KEYS), stop, conns, stats)
    )
    try:
        # Set-up outside the window: every bot bought chips, joined and sat, and hands are flowing.
        deadline = time.monotonic() + 180
        while stats.sits < args.tables * 4 or len(stats.hands) < args.tables * 3:
            if bots.done() or time.monotonic() > deadline:
                print(f"cluster: the bots did not get going ({stats.summary()})", file=sys.stderr)
                return 1
            await asyncio.sleep(0.5)
        sits, purchases = stats.sits, stats.purchases
        bench = harness.this_process()
        services = [harness.process(name, pid) for name, pid in cluster.pids().items()]
        play = Play(stats, gate, ports)
        act_latencies.clear()
        unary, stream, window = await harness.interleave_all(
            [
                harness.Side("bare unary calls", unary_floor.run, [bench, bare.cpu]),
                harness.Side(
                    f"bare stream messages of {MESSAGE_BYTES} B", stream_floor.run, [bench, bare.cpu]
                ),
                harness.Side("cluster mid-play", play.run, [bench, *services]),
            ],
            rounds=args.rounds,
            slice_seconds=args.seconds / args.rounds,
        )
        gate.set()
        setup_calls = {"sits": stats.sits - sits, "purchases": stats.purchases - purchases}
    finally:
        gate.set()
        stop.set()
        await asyncio.gather(bots, return_exceptions=True)
        await conns.close()
        await unary_floor.close()
        await stream_floor.close()
        bare.stop()
    return report(args, unary, stream, window, act_latencies, stats, setup_calls)


def report(
    args: argparse.Namespace,
    unary: harness.Tally,
    stream: harness.Tally,
    window: harness.Tally,
    act_latencies: list[float],
    stats: RunStats,
    setup_calls: dict[str, int],
) -> int:
    hands = window.operations
    if not hands:
        print("cluster: no hands were played in the window", file=sys.stderr)
        return 1
    calls = window.counts["unary calls"] / hands
    messages = window.counts["stream messages"] / hands
    actions = window.counts["actions"] / hands
    bound_rate, bound_cpu = bound_of(unary, stream, calls, messages)
    rate = window.rate
    ratios = []
    for (u_ops, u_s, _), (m_ops, m_s, _), (h_ops, h_s, _) in zip(
        unary.slices, stream.slices, window.slices, strict=True
    ):
        if u_ops and m_ops and h_ops:
            round_bound = 1 / (calls * u_s / u_ops + messages * m_s / m_ops)
            ratios.append((h_ops / h_s) / round_bound)
    spread = (min(ratios), statistics.median(ratios), max(ratios)) if ratios else (float("nan"),) * 3
    cpu_per_hand = window.cpu_seconds / hands
    print(
        f"cluster {args.tables} tables x 4 bots over {', '.join(ROOMS)}, mid-play window {window.seconds:.1f} s "
        f"in {len(window.slices)} slices: {rate:.1f} hands/s, {window.counts['actions'] / window.seconds:.1f} "
        f"actions/s, Act p50 {percentile(act_latencies, 0.5) * 1000:.1f} ms, p99 "
        f"{percentile(act_latencies, 0.99) * 1000:.1f} ms"
    )
    print(
        f"  per hand: {calls:.1f} unary calls ({actions:.1f} Acts), {messages:.1f} stream messages; in the "
        f"window {setup_calls['sits']} sits and {setup_calls['purchases']} purchases (set-up is outside it)"
    )
    trips = {
        name.split(" ", 1)[1]: n / hands for name, n in window.counts.items() if name.startswith("redis ")
    }
    print(
        f"  Redis round trips per hand (all processes): {sum(trips.values()):.1f} ("
        + ", ".join(
            f"{name} {n:.1f}" for name, n in sorted(trips.items(), key=lambda item: -item[1]) if n >= 0.05
        )
        + ")"
    )
    print(
        f"  floors: bare unary {unary.rate:,.0f} calls/s at {unary.cpu_per_operation * 1e6:,.0f} us of CPU each; "
        f"bare stream {stream.rate:,.0f} messages/s at {stream.cpu_per_operation * 1e6:,.0f} us each "
        f"(client and server)"
    )
    print(
        f"  bound: 1 / ({calls:.1f} / {unary.rate:,.0f} + {messages:.1f} / {stream.rate:,.0f}) = {bound_rate:.1f} "
        f"hands/s; {bound_cpu * 1000:.1f} ms of CPU per hand"
    )
    print("  cpu per hand and share of one core, by process:")
    for name, used in sorted(window.cpu.items(), key=lambda item: -item[1]):
        print(f"    {name:<22} {used / hands * 1000:8.2f} ms/hand   {used / window.seconds:6.1%} of a core")
    print(
        f"  all processes {cpu_per_hand * 1000:.1f} ms of CPU per hand (goal <= 25 ms); load average "
        f"{load_average()} on {os.cpu_count()} cores"
    )
    row = harness.ratio_row(
        "cluster", f"cluster hands vs the bound of its RPCs ({args.tables} tables)", unit="hands",
        rate=rate, floor_rate=bound_rate, cpu_us=cpu_per_hand * 1e6, floor_cpu_us=bound_cpu * 1e6,
        spread=spread, goal=0.5,
    )  # fmt: skip
    print(
        f"  ratio rate {row['rate_ratio']:.2f}x of the bound (rounds {spread[0]:.2f}-{spread[2]:.2f}, median "
        f"{spread[1]:.2f})  cpu {row['cpu_ratio']:.2f}x  {harness.verdict(row['rate_ratio'], 0.5)}"
    )
    harness.record_summary(row)
    unexpected = stats.unexpected_errors()
    print(f"  bot errors: {dict(stats.errors) or 'none'}")
    if unexpected:
        print(f"  FAIL: unexpected bot errors: {unexpected}", file=sys.stderr)
        return 1
    return 0


async def soak(cluster: Cluster, args: argparse.Namespace) -> int:
    pids = cluster.pids()
    stats = RunStats()
    samples: dict[str, list[float]] = {name: [] for name in pids}
    stop = asyncio.Event()
    conns = Connections(cluster.address("lobby"), cluster.address("cashier"))
    task = asyncio.create_task(
        run_bots(
            plan_for(cluster, args.tables, args.soak_hands, 0),
            MintedCredentials(DEV_KEYS),
            stop,
            conns,
            stats,
        )
    )
    while not task.done():
        for name, pid in pids.items():
            samples[name].append(rss_mb(pid))
        line = ", ".join(f"{n} {s[-1]:.0f}" for n, s in samples.items())
        print(f"soak   {len(stats.hands)} hands; RSS MB: {line}", flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(task), timeout=args.sample_seconds)
    task.result()
    await conns.close()
    failed = 0
    for name, series in samples.items():
        if len(series) < 2:
            continue
        allowed = max(args.rss_bound_mb, series[0] * 0.5)
        grown = max(series) - series[0]
        verdict = "ok" if grown <= allowed else "GREW"
        failed += verdict != "ok"
        print(
            f"soak   {name:<10} first {series[0]:.0f} MB, peak {max(series):.0f} MB, growth {grown:.0f} MB (bound {allowed:.0f}): {verdict}"
        )
    print(f"soak   {len(stats.hands)} hands; unexpected errors: {stats.unexpected_errors() or 'none'}")
    return 1 if failed or stats.unexpected_errors() else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--seconds", type=float, default=24.0, help="seconds of each side, all slices together"
    )
    parser.add_argument("--rounds", type=int, default=6, help="slices of each side, alternating")
    parser.add_argument("--tables", type=int, default=8, help="tables (4 bots each)")
    parser.add_argument("--clients", type=int, default=64, help="concurrent callers of the bare floor")
    parser.add_argument("--soak", action="store_true", help="the soak run instead (not in CI)")
    parser.add_argument("--soak-hands", type=int, default=10_000)
    parser.add_argument("--sample-seconds", type=float, default=60.0)
    parser.add_argument("--rss-bound-mb", type=float, default=64.0)
    args = parser.parse_args()
    postgres = os.environ.get("POKER_TEST_DATABASE_URL", "")
    redis = os.environ.get("POKER_TEST_REDIS_URL", "")
    prefix = f"poker-bench:{uuid.uuid4().hex[:8]}:"
    shape = "PostgreSQL, Redis, two shards" if postgres and redis else "SQLite, one shard"
    print(f"cluster {shape}")
    with (
        harness.scratch_folder("bench-cluster-") as folder,
        running_cluster(
            postgres if redis else "",
            redis if postgres else "",
            prefix,
            folder,
            table_env=None if args.soak else SLOW_CLOCK,
            extra_env={"POKER_METRICS_PORT": "0"},
        ) as cluster,
    ):
        code = asyncio.run(soak(cluster, args) if args.soak else throughput(cluster, args))
    if redis and postgres:
        asyncio.run(_forget_keys(redis, prefix))
    raise SystemExit(code)


async def _forget_keys(redis_url: str, prefix: str) -> None:
    import redis.asyncio as redis

    client = redis.Redis.from_url(redis_url)
    try:
        async for key in client.scan_iter(match=f"{prefix}*"):
            await client.delete(key)
    finally:
        await client.aclose()


if __name__ == "__main__":
    main()
