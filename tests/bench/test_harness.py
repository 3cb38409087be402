"""The bench harness itself (tests/bench/harness.py): its slicing, its /proc CPU reading and its ratio
arithmetic, so a broken harness cannot silently flatter or wrong every bench."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench import harness
from tests.bench.harness import Comparison, CpuSource, Outcome, Side, Tally

# ---------------------------------------------------------------- /proc


def test_parse_stat_counts_fields_after_a_command_name_with_spaces_and_parentheses() -> None:
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
    line = f"4242 (a (b) c) S 1 1 1 0 -1 4194304 10 0 0 0 {3 * harness.TICKS} {harness.TICKS} 7 1 20 0 1 0"
    stat = harness.parse_stat(line)
    assert stat.own == pytest.approx(4.0)
    assert stat.children == pytest.approx(8 / harness.TICKS)
    assert harness.process_name(line) == "a (b) c"


def _burn(seconds: float) -> None:
    deadline = time.process_time() + seconds
    while time.process_time() < deadline:
        pass


def test_this_process_reads_the_cpu_it_burns() -> None:
    source = harness.this_process()
    before = source.read()
    _burn(0.3)
    used = source.read() - before
    # /proc counts in clock ticks (10 ms); the burn is CPU time, so load cannot shorten it.
    assert 0.25 <= used <= 0.5


def test_process_reads_another_process_and_keeps_its_last_value_after_it_exits() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nt = time.process_time() + 0.4\nwhile time.process_time() < t: pass\n"
         "sys.stdout.write('done\\n'); sys.stdout.flush(); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        source = harness.process("child", child.pid)
        assert child.stdout is not None
        assert child.stdout.readline() == "done\n"
        used = source.read()
        assert 0.35 <= used <= 1.5  # the burn plus the interpreter's start
    finally:
        child.communicate("")
    assert source.read() == used  # gone: the last reading stands


def test_reaped_children_count_once_waited_for() -> None:
    source = harness.reaped_children("children")
    before = source.read()
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import time\nt = time.process_time() + 0.3\nwhile time.process_time() < t: pass",
        ],
        check=True,
    )
    assert source.read() - before >= 0.25


# ---------------------------------------------------------------- slicing


def test_slice_order_alternates_which_side_goes_first() -> None:
    assert harness.slice_order(1) == [0, 1]
    assert harness.slice_order(4) == [0, 1, 1, 0, 0, 1, 1, 0]
    order = harness.slice_order(6)
    assert order.count(0) == order.count(1) == 6
    assert harness.slice_order(2, sides=3) == [0, 1, 2, 2, 1, 0]


async def test_interleave_all_gives_each_side_its_own_tally() -> None:
    ran: list[str] = []

    def side(name: str, operations: int) -> Side:
        def run(seconds: float) -> int:
            ran.append(name)
            return operations

        return Side(name, run, [])

    tallies = await harness.interleave_all(
        [side("a", 1), side("b", 2), side("c", 3)], rounds=2, slice_seconds=0.01
    )
    assert ran == ["a", "b", "c", "c", "b", "a"]
    assert [t.operations for t in tallies] == [2, 4, 6]
    assert [len(t.slices) for t in tallies] == [2, 2, 2]


async def test_interleave_runs_each_side_its_rounds_in_alternation_for_the_slice_length() -> None:
    calls: list[tuple[str, float]] = []
    ticks = {"floor": 0.0, "work": 0.0}

    def counter(name: str, cost: float) -> CpuSource:
        return CpuSource(name, lambda: ticks[name])

    async def floor_run(seconds: float) -> int:
        calls.append(("floor", seconds))
        ticks["floor"] += 0.2  # the floor's process spends 0.2 s of CPU per slice
        await asyncio.sleep(0.01)
        return 100

    def work_run(seconds: float) -> Outcome:  # a synchronous slice is accepted too
        calls.append(("work", seconds))
        ticks["work"] += 0.4
        time.sleep(0.02)
        return Outcome(50, [0.001] * 50, {"refused": 1})

    comparison = await harness.interleave(
        Side("floor", floor_run, [counter("floor", 0.2)]),
        Side("work", work_run, [counter("work", 0.4)]),
        rounds=3,
        slice_seconds=0.25,
    )
    assert [name for name, _ in calls] == ["floor", "work", "work", "floor", "floor", "work"]
    assert all(seconds == 0.25 for _, seconds in calls)
    assert comparison.floor.operations == 300
    assert comparison.workload.operations == 150
    assert comparison.workload.counts == {"refused": 3}
    assert len(comparison.workload.latencies) == 150
    assert comparison.floor.cpu == {"floor": pytest.approx(0.6)}
    assert comparison.workload.cpu_per_operation == pytest.approx(1.2 / 150)
    # Wall time is measured around each slice (about 10 ms and 20 ms here, whatever was asked).
    assert 0.02 < comparison.floor.seconds < 0.5
    assert len(comparison.slice_ratios()) == 3


async def test_timed_loops_runs_concurrent_clients_until_the_time_is_up() -> None:
    seen: set[int] = set()

    async def call(client: int, n: int) -> int:
        seen.add(client)
        await asyncio.sleep(0.01)
        return 2

    started = time.perf_counter()
    outcome = await harness.timed_loops(4, 0.1, call)
    assert time.perf_counter() - started < 1.0
    assert seen == {0, 1, 2, 3}
    assert outcome.operations == 2 * len(outcome.latencies) > 0


def test_run_for_calls_the_step_until_the_time_is_up() -> None:
    outcome = harness.run_for(0.05, lambda: 3)
    assert outcome.operations > 0
    assert outcome.operations % 3 == 0


# ---------------------------------------------------------------- ratio arithmetic


def _tally(name: str, slices: list[tuple[int, float, float]]) -> Tally:
    tally = Tally(name)
    for operations, seconds, cpu in slices:
        tally.add(Outcome(operations), seconds, {"process": cpu})
    return tally


def test_ratios_of_rate_and_of_cpu_per_operation() -> None:
    floor = _tally("floor", [(1000, 1.0, 0.5), (1000, 1.0, 0.5)])  # 1,000/s, 500 us/op
    work = _tally("work", [(400, 1.0, 0.8), (600, 1.0, 1.2)])  # 500/s, 2,000 us/op
    comparison = Comparison(floor, work)
    assert floor.rate == 1000
    assert work.rate == 500
    assert comparison.rate_ratio == pytest.approx(0.5)
    assert comparison.cpu_ratio == pytest.approx(0.25)  # the floor spends a quarter per operation
    assert comparison.slice_ratios() == pytest.approx([0.4, 0.6])
    assert comparison.spread() == pytest.approx((0.4, 0.5, 0.6))


def test_rounds_are_paired_so_a_machine_slowing_down_moves_both_sides() -> None:
    # The machine halves in speed after the first round: each round's ratio stays 0.5.
    floor = _tally("floor", [(1000, 1.0, 1.0), (500, 1.0, 1.0)])
    work = _tally("work", [(500, 1.0, 1.0), (250, 1.0, 1.0)])
    assert Comparison(floor, work).slice_ratios() == pytest.approx([0.5, 0.5])
    assert Comparison(floor, work).rate_ratio == pytest.approx(0.5)


def test_ratios_without_operations_are_not_a_number_not_an_error() -> None:
    empty = _tally("empty", [(0, 1.0, 0.1)])
    floor = _tally("floor", [(10, 1.0, 0.1)])
    assert Comparison(floor, empty).rate_ratio == 0.0
    assert Comparison(floor, empty).cpu_ratio != Comparison(floor, empty).cpu_ratio  # nan
    assert Comparison(empty, floor).slice_ratios() == []


def test_percentile_is_nearest_rank() -> None:
    tally = Tally("t", latencies=[float(v) for v in range(1, 101)])
    assert tally.percentile(0.5) == 50.0
    assert tally.percentile(0.99) == 99.0
    assert tally.percentile(1.0) == 100.0
    assert Tally("none").percentile(0.5) != Tally("none").percentile(0.5)


def test_report_prints_both_ratios_and_writes_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "summary.jsonl"
    monkeypatch.setenv(harness.SUMMARY_ENV, str(summary))
    comparison = Comparison(_tally("floor", [(1000, 1.0, 0.5)]), _tally("work", [(600, 1.0, 1.2)]))
    harness.report("demo", "work vs floor", comparison, unit="ops", goal=0.5)
    printed = capsys.readouterr().out
    assert "rate 0.60x" in printed
    assert "cpu 0.25x" in printed
    assert "goal >= 0.50x ok" in printed
    (row,) = [json.loads(line) for line in summary.read_text().splitlines()]
    assert row["rate_ratio"] == pytest.approx(0.6)
    assert row["cpu_ratio"] == pytest.approx(0.25)
    assert row["cpu_us"] == pytest.approx(2000)
    assert row["floor_cpu_us"] == pytest.approx(500)
    assert harness.main(["summary", str(summary)]) == 0
    table = capsys.readouterr().out
    assert "work vs floor" in table
    assert "0.60x" in table
    assert "MISS" not in table


def test_scratch_folder_is_removed_even_when_the_bench_fails() -> None:
    kept: list[Path] = []

    def failing_bench() -> None:
        with harness.scratch_folder("harness-test-") as folder:
            kept.append(folder)
            (folder / "data").write_text("x")
            raise RuntimeError("bench failed")

    with pytest.raises(RuntimeError):
        failing_bench()
    (folder,) = kept
    assert not folder.exists()
    assert os.path.basename(folder).startswith("harness-test-")


def test_scratch_folder_is_removed_when_the_bench_is_terminated(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "from tests.bench import harness\n"
        "with harness.scratch_folder('harness-term-') as folder:\n"
        "    print(folder, flush=True)\n"
        "    time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    folder = Path(child.stdout.readline().strip())
    assert folder.is_dir()
    child.terminate()
    assert child.wait(timeout=30) == 143
    assert not folder.exists()
