"""The whole cluster with bots: hands/s, actions/s, Act p50/p99, CPU per hand in each service, and the
bound (bare grpc.aio unary calls per second measured in the same run, divided by the RPCs a hand
costs) side by side; names the service that saturates first.

Starts lobby, table shard(s), cashier, fairness and history as processes on loopback: with
POKER_TEST_DATABASE_URL and POKER_TEST_REDIS_URL set (CI) on PostgreSQL with two shards and Redis,
else on SQLite with one shard (the `make run` shape). A bare grpc.aio server (health Check, no
interceptors) gives the floor. Then poker-bots (in this process: random-legal and tight-aggressive,
no clock timeouts, no leaving) play `--tables` tables of four seeded rooms (NL and FL, both pools)
for `--seconds`.

CPU per hand is user+system time of each process (from /proc/<pid>/stat) during the bots phase
divided by the hands played; utilisation is that CPU over the wall time. Each service is one asyncio
event loop, so the one nearest 100% of a core saturates first.

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
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from poker_bots.bot import Behaviour, Connections  # noqa: E402
from poker_bots.credentials import MintedCredentials  # noqa: E402
from poker_bots.run import RunPlan, run_bots  # noqa: E402
from poker_bots.stats import RunStats, percentile  # noqa: E402
from service_runtime.testing import DEV_KEYS  # noqa: E402
from tests.bench.bench_table import floor, start_bare_server  # noqa: E402
from tests.e2e.cluster import Cluster, running_cluster  # noqa: E402

ROOMS = ("nlhe-gram-classic", "nlhe-mpx-classic", "flhe-gram-6max-10-20", "flhe-mpx-6max-10-20")
# Per hand the shard calls CommitHand, SealHand, SettleHand, RevealHand and RecordHand (docs/table.md);
# each bot decision is one Act. Streams and sit-downs are not counted (they do not recur per hand).
SHARD_RPCS_PER_HAND = 5
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


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


async def throughput(cluster: Cluster, args: argparse.Namespace) -> int:
    bare, bare_address = start_bare_server()
    try:
        floor_rate, _ = await floor(bare_address, args.clients, min(args.seconds, 10.0))
    finally:
        bare.terminate()
        bare.wait()
    pids = cluster.pids()
    stats = RunStats()
    conns = Connections(cluster.address("lobby"), cluster.address("cashier"))
    # A short warm-up (connections, first tables, purchases) outside the measured window.
    await run_bots(plan_for(cluster, args.tables, 20, 60), MintedCredentials(DEV_KEYS), connections=conns)
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    bots_cpu = time.process_time()
    started = time.monotonic()
    await run_bots(
        plan_for(cluster, args.tables, 0, args.seconds),
        MintedCredentials(DEV_KEYS),
        connections=conns,
        stats=stats,
    )
    wall = time.monotonic() - started
    bots_cpu = time.process_time() - bots_cpu
    after = {name: cpu_seconds(pid) for name, pid in pids.items()}
    await conns.close()
    hands, actions = len(stats.hands), stats.actions
    if not hands:
        print("cluster: no hands were played", file=sys.stderr)
        return 1
    acts = stats.latencies["act"]
    rpcs_per_hand = actions / hands + SHARD_RPCS_PER_HAND
    bound = floor_rate / rpcs_per_hand
    print(f"floor  bare grpc.aio unary (health Check), {args.clients} clients: {floor_rate:,.0f} calls/s")
    print(
        f"bots   {args.tables} tables x 4 bots over {', '.join(ROOMS)} for {wall:.1f} s: "
        f"{hands / wall:.1f} hands/s, {actions / wall:.1f} actions/s, Act p50 {percentile(acts, 0.5) * 1000:.2f} ms, "
        f"p99 {percentile(acts, 0.99) * 1000:.2f} ms"
    )
    print(
        f"bound  {floor_rate:,.0f} calls/s / {rpcs_per_hand:.1f} RPCs per hand ({actions / hands:.1f} Acts + "
        f"{SHARD_RPCS_PER_HAND} shard calls) = {bound:.1f} hands/s; measured {hands / wall:.1f} = "
        f"{hands / wall / bound:.1%} of the bound (goal >= 50%)"
    )
    print("cpu    per hand and utilisation of one core, by process:")
    usage = {name: after[name] - before[name] for name in pids}
    usage["bots (this process)"] = bots_cpu
    for name, used in sorted(usage.items(), key=lambda item: -item[1]):
        print(f"       {name:<20} {used / hands * 1000:8.2f} ms/hand   {used / wall:6.1%} of a core")
    services = {name: used for name, used in usage.items() if not name.startswith("bots")}
    busiest = max(services, key=lambda name: services[name])
    cores = os.cpu_count() or 1
    total = sum(usage.values()) / wall
    print(
        f"first  {busiest} saturates first: {usage[busiest] / wall:.0%} of its one core (each process is one "
        f"event loop) at {hands / wall:.1f} hands/s, so about {hands / wall / max(usage[busiest] / wall, 1e-9):.0f} "
        f"hands/s is its ceiling; all processes together use {total:.0%} of a core on a {cores}-core machine "
        f"(load average {load_average()})"
    )
    if busiest.startswith("table"):
        print(
            f"why    a shard does the most work per hand: each of the ~{actions / hands:.0f} decisions is checked, "
            f"appended to the hand log (a fenced Redis script with Redis) and turned into a view for every "
            f"watcher of the table (4 here), {usage[busiest] / actions * 1000:.2f} ms of CPU per decision; "
            f"cashier, fairness and history see a hand 1-2 times. The bound counts RPCs only, not the "
            f"stream messages (watchers x decisions) nor database and Redis work, which is why the measured "
            f"rate sits well under it."
        )
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
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the measured bots phase")
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
        tempfile.TemporaryDirectory(prefix="bench-cluster-") as folder,
        running_cluster(
            postgres if redis else "", redis if postgres else "", prefix, Path(folder)
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
