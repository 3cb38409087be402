"""The benches' shared harness: a workload measured against its floor in the same run, so that a
shared machine cannot flatter or wrong the ratio.

- Floor and workload run in alternating short slices within one run (floor, workload, workload,
  floor, floor, workload, ...: a load that drifts during the run weighs on both sides alike), and
  each pair of slices gives a ratio of its own, whose spread is printed beside the ratio of the
  totals.
- CPU per operation is read from /proc for every process a side involves (the bench's own process,
  the servers it started, reaped children such as pgbench, the PostgreSQL backends of its database),
  so the CPU ratio (the floor's CPU per operation over the workload's) is printed beside the rate
  ratio: the rate moves with the machine's load, CPU per operation much less.
- Every figure also goes, as one JSON line, to the file named by POKER_BENCH_SUMMARY when it is set;
  `make bench` prints them all at the end as one table (`python tests/bench/harness.py summary FILE`).

Use it from a bench:

    floor = Side("bare unary", bare_slice, [this_process(), process("bare server", pid)])
    work = Side("Act", act_slice, [this_process(), process("table", shard_pid), ...])
    comparison = await interleave(floor, work, rounds=6, slice_seconds=2.0)
    report("table", "Act vs bare unary", comparison, unit="acts", goal=0.5)

A slice is `async def run(seconds) -> Outcome` (or an int of operations): it works for about
`seconds` and says how many operations it completed (and, optionally, their latencies).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import math
import os
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")
SUMMARY_ENV = "POKER_BENCH_SUMMARY"


# ---------------------------------------------------------------- CPU from /proc


@dataclass(frozen=True)
class ProcStat:
    """The CPU fields of one /proc/<pid>/stat line, in seconds."""

    user: float
    system: float
    children_user: float
    children_system: float

    @property
    def own(self) -> float:
        return self.user + self.system

    @property
    def children(self) -> float:
        return self.children_user + self.children_system


def parse_stat(line: str) -> ProcStat:
    """Parse /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself hold
    spaces and parentheses, so the fields are counted from the last ')'."""
    fields = line[line.rindex(")") + 2 :].split()
    # After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17), 1-based.
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return ProcStat(utime / TICKS, stime / TICKS, cutime / TICKS, cstime / TICKS)


def process_name(line: str) -> str:
    return line[line.index("(") + 1 : line.rindex(")")]


def read_stat(pid: int | str) -> ProcStat:
    return parse_stat(Path(f"/proc/{pid}/stat").read_text())


@dataclass(frozen=True)
class CpuSource:
    """A named reading of CPU seconds used so far by one process or a group of them."""

    name: str
    read: Callable[[], float]


def process(name: str, pid: int) -> CpuSource:
    """A process the bench started (user + system of all its threads). A process that has exited
    reads as its last value, so a slice that outlives it still adds up."""
    last = [0.0]

    def read() -> float:
        with contextlib.suppress(OSError):
            last[0] = read_stat(pid).own
        return last[0]

    return CpuSource(name, read)


def this_process(name: str = "bench (this process)") -> CpuSource:
    return CpuSource(name, lambda: read_stat("self").own)


def reaped_children(name: str) -> CpuSource:
    """Children this process started and waited for (pgbench): their CPU counts once reaped."""

    def read() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    return CpuSource(name, read)


def postgres_backends(name: str, database: str) -> CpuSource:
    """The PostgreSQL backends serving `database` on this machine (their command line names it).

    Backends that end within a slice (pgbench's connections) are counted up to the last reading
    that saw them: read this source often enough (the slice does, at its start and end), or keep
    connections open for the whole slice, as the floors here do."""
    seen: dict[int, float] = {}

    def read() -> float:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes()
                if not command.startswith(b"postgres: ") or f" {database} ".encode() not in command:
                    continue
                seen[int(entry.name)] = read_stat(entry.name).own
            except OSError:
                continue
        return sum(seen.values())

    return CpuSource(name, read)


def read_all(sources: Sequence[CpuSource]) -> dict[str, float]:
    return {source.name: source.read() for source in sources}


# ---------------------------------------------------------------- slices and their tallies


@dataclass
class Outcome:
    """What one slice did: operations completed (and their latencies in seconds, when timed)."""

    operations: int
    latencies: list[float] = field(default_factory=list)
    # Anything else the slice counted (refusals, stream messages ...), added up over the slices.
    counts: dict[str, int] = field(default_factory=dict)


SliceRun = Callable[[float], Awaitable[Outcome | int]] | Callable[[float], Outcome | int]


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its name, how to run a slice, and the processes whose CPU it costs."""

    name: str
    run: SliceRun
    cpu: Sequence[CpuSource]


@dataclass
class Tally:
    """One side's slices added up."""

    name: str
    operations: int = 0
    seconds: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    # (operations, seconds, cpu seconds) of each slice, in order.
    slices: list[tuple[int, float, float]] = field(default_factory=list)

    def add(self, outcome: Outcome, seconds: float, cpu: dict[str, float]) -> None:
        self.operations += outcome.operations
        self.seconds += seconds
        for name, used in cpu.items():
            self.cpu[name] = self.cpu.get(name, 0.0) + used
        self.latencies.extend(outcome.latencies)
        for name, count in outcome.counts.items():
            self.counts[name] = self.counts.get(name, 0) + count
        self.slices.append((outcome.operations, seconds, sum(cpu.values())))

    @property
    def rate(self) -> float:
        return self.operations / self.seconds if self.seconds > 0 else 0.0

    @property
    def cpu_seconds(self) -> float:
        return sum(self.cpu.values())

    @property
    def cpu_per_operation(self) -> float:
        """CPU seconds per operation, all the side's processes together (inf for none done)."""
        return self.cpu_seconds / self.operations if self.operations else float("inf")

    def percentile(self, fraction: float) -> float:
        """Nearest-rank percentile of the latencies, in seconds (nan for none)."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered), max(1, math.ceil(fraction * len(ordered)))) - 1]


def rate_ratio(workload: Tally, floor: Tally) -> float:
    """The workload's rate over the floor's (1.0: as fast as the floor)."""
    return workload.rate / floor.rate if floor.rate > 0 else float("nan")


def cpu_ratio(workload: Tally, floor: Tally) -> float:
    """The floor's CPU per operation over the workload's (1.0: as cheap as the floor)."""
    if not workload.operations or not floor.operations or workload.cpu_seconds <= 0:
        return float("nan")
    return floor.cpu_per_operation / workload.cpu_per_operation


@dataclass
class Comparison:
    floor: Tally
    workload: Tally

    @property
    def rate_ratio(self) -> float:
        return rate_ratio(self.workload, self.floor)

    @property
    def cpu_ratio(self) -> float:
        return cpu_ratio(self.workload, self.floor)

    def slice_ratios(self) -> list[float]:
        """The rate ratio of each round (its floor slice against its workload slice)."""
        ratios = []
        for (f_ops, f_s, _), (w_ops, w_s, _) in zip(self.floor.slices, self.workload.slices, strict=False):
            if f_ops and f_s > 0 and w_s > 0:
                ratios.append((w_ops / w_s) / (f_ops / f_s))
        return ratios

    def spread(self) -> tuple[float, float, float]:
        """(lowest, median, highest) of the rounds' rate ratios."""
        ratios = self.slice_ratios()
        if not ratios:
            return (float("nan"),) * 3  # type: ignore[return-value]
        return min(ratios), statistics.median(ratios), max(ratios)


def slice_order(rounds: int, sides: int = 2) -> list[int]:
    """Which side runs in each of `sides` x `rounds` slices: forward in even rounds, backward in odd
    ones (F W, W F, F W, ... for two), so no side always runs before another and a load that drifts
    during the run weighs on every side alike."""
    order: list[int] = []
    for index in range(rounds):
        sequence = list(range(sides))
        order.extend(sequence if index % 2 == 0 else sequence[::-1])
    return order


async def _run_slice(side: Side, seconds: float, tally: Tally) -> None:
    before = read_all(side.cpu)
    started = time.perf_counter()
    result = side.run(seconds)
    if inspect.isawaitable(result):
        result = await result
    elapsed = time.perf_counter() - started
    after = read_all(side.cpu)
    outcome = result if isinstance(result, Outcome) else Outcome(int(result))  # type: ignore[arg-type]
    tally.add(outcome, elapsed, {name: after[name] - before[name] for name in after})


async def interleave_all(sides: Sequence[Side], *, rounds: int, slice_seconds: float) -> list[Tally]:
    """Run `rounds` slices of each side in the order of `slice_order`; wall time of a slice is measured
    around its run, CPU of each side's processes around each of its slices."""
    if rounds < 1 or slice_seconds <= 0 or not sides:
        raise ValueError("need sides and at least one round of a positive length")
    tallies = [Tally(side.name) for side in sides]
    for index in slice_order(rounds, len(sides)):
        await _run_slice(sides[index], slice_seconds, tallies[index])
    return tallies


async def interleave(floor: Side, workload: Side, *, rounds: int, slice_seconds: float) -> Comparison:
    """A workload against its floor in alternating slices (see `interleave_all`)."""
    floor_tally, workload_tally = await interleave_all(
        [floor, workload], rounds=rounds, slice_seconds=slice_seconds
    )
    return Comparison(floor_tally, workload_tally)


def run_for(seconds: float, step: Callable[[], int]) -> Outcome:
    """A synchronous slice: call `step` (which returns operations done) until `seconds` passed."""
    deadline = time.perf_counter() + seconds
    operations = 0
    while time.perf_counter() < deadline:
        operations += step()
    return Outcome(operations)


async def timed_loops(
    clients: int, seconds: float, call: Callable[[int, int], Awaitable[int | None]]
) -> Outcome:
    """`clients` concurrent loops of `call(client, n)` for `seconds`; each call is timed and counts
    the operations it returns (None: one)."""
    latencies: list[float] = []
    operations = 0
    deadline = time.perf_counter() + seconds

    async def loop(client: int) -> None:
        nonlocal operations
        n = 0
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            done = await call(client, n)
            latencies.append(time.perf_counter() - started)
            operations += 1 if done is None else done
            n += 1

    await asyncio.gather(*(loop(client) for client in range(clients)))
    return Outcome(operations, latencies)


# ---------------------------------------------------------------- reporting


def verdict(ratio: float, goal: float | None) -> str:
    if goal is None:
        return ""
    return f"goal >= {goal:.2f}x " + ("ok" if ratio >= goal else "MISS")


def figure_lines(title: str, comparison: Comparison, *, unit: str, goal: float | None = None) -> list[str]:
    """The printed lines of one comparison: both sides, then the ratios with their spread."""
    floor, work = comparison.floor, comparison.workload
    low, median, high = comparison.spread()
    lines = [f"{title}"]
    for tally in (floor, work):
        p50, p99 = tally.percentile(0.5) * 1000, tally.percentile(0.99) * 1000
        latency = f"  p50 {p50:8.2f} ms  p99 {p99:8.2f} ms" if tally.latencies else ""
        cpu = ", ".join(f"{name} {used / tally.operations * 1e6:,.0f}" for name, used in tally.cpu.items())
        lines.append(
            f"  {'floor' if tally is floor else 'bench'} {tally.name:<40} {tally.rate:>10,.1f} {unit}/s"
            f"{latency}  cpu {tally.cpu_per_operation * 1e6:>9,.0f} us/op ({cpu if tally.operations else '-'})"
        )
    lines.append(
        f"  ratio rate {comparison.rate_ratio:.2f}x (rounds {low:.2f}-{high:.2f}, median {median:.2f})"
        f"  cpu {comparison.cpu_ratio:.2f}x  {verdict(comparison.rate_ratio, goal)}"
    )
    return lines


def summary_row(
    bench: str, title: str, comparison: Comparison, unit: str, goal: float | None
) -> dict[str, Any]:
    return ratio_row(
        bench, title, unit=unit, rate=comparison.workload.rate, floor_rate=comparison.floor.rate,
        cpu_us=comparison.workload.cpu_per_operation * 1e6, floor_cpu_us=comparison.floor.cpu_per_operation * 1e6,
        spread=comparison.spread(), goal=goal,
    )  # fmt: skip


def ratio_row(
    bench: str,
    title: str,
    *,
    unit: str,
    rate: float,
    floor_rate: float,
    cpu_us: float,
    floor_cpu_us: float,
    spread: tuple[float, float, float],
    goal: float | None,
) -> dict[str, Any]:
    """One figure of the summary: rate and CPU per operation beside its floor's, and both ratios."""
    return {
        "bench": bench,
        "figure": title,
        "unit": unit,
        "rate": rate,
        "floor_rate": floor_rate,
        "rate_ratio": rate / floor_rate if floor_rate > 0 else float("nan"),
        "spread": list(spread),
        "cpu_us": cpu_us,
        "floor_cpu_us": floor_cpu_us,
        "cpu_ratio": floor_cpu_us / cpu_us if cpu_us > 0 else float("nan"),
        "goal": goal,
    }


def report(
    bench: str, title: str, comparison: Comparison, *, unit: str = "ops", goal: float | None = None
) -> None:
    """Print the figure and add it to the run's summary (POKER_BENCH_SUMMARY)."""
    print("\n".join(figure_lines(title, comparison, unit=unit, goal=goal)), flush=True)
    record_summary(summary_row(bench, title, comparison, unit, goal))


def record_summary(row: dict[str, Any]) -> None:
    path = os.environ.get(SUMMARY_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(row) + "\n")


def summary_table(rows: Sequence[dict[str, Any]]) -> str:
    """Every figure of a `make bench` run, each as its ratios to its own floor."""
    lines = [
        f"{'bench':<9}{'figure':<46}{'rate':>12}{'floor':>12}{'rate x':>8}{'rounds':>13}"
        f"{'cpu us/op':>11}{'floor us':>10}{'cpu x':>7}  goal"
    ]
    for row in rows:
        low, _, high = row["spread"]
        goal = row.get("goal")
        mark = ""
        if goal is not None:
            mark = f">= {goal:.2f}x " + ("ok" if row["rate_ratio"] >= goal else "MISS")
        lines.append(
            f"{row['bench']:<9}{row['figure'][:45]:<46}{row['rate']:>12,.1f}{row['floor_rate']:>12,.1f}"
            f"{row['rate_ratio']:>7.2f}x{low:>6.2f}-{high:<6.2f}{row['cpu_us']:>11,.0f}{row['floor_cpu_us']:>10,.0f}"
            f"{row['cpu_ratio']:>6.2f}x  {mark}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- scratch folders


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder removed on the way out, whatever happened (servers' data, pgbench logs);
    a SIGTERM (a bench stopped from outside) unwinds through it too, instead of ending the process
    on the spot."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    # Only the main thread may set a handler (a folder made in a worker thread relies on the main one's).
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if main else None
    try:
        yield folder
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(folder, ignore_errors=True)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="print the summary of a `make bench` run")
    parser.add_argument("command", choices=["summary"])
    parser.add_argument("file")
    args = parser.parse_args(argv)
    path = Path(args.file)
    rows = (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )
    print(f"=== summary: every figure as a ratio to its floor in the same run ({len(rows)} figures)")
    print(summary_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
