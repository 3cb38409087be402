"""`make run`'s launcher: starts all five services where the settings say, reports them SERVING only when
they are this run's and alive, fails fast and clearly, reads output of any line length, and always
stops on Ctrl-C within the grace period. Real processes throughout."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from service_runtime import cluster
from tests.ports import free_port

SERVICES = ("lobby", "table", "cashier", "fairness", "history", "gateway")
BANNER = "All services are SERVING"


def _free_base_port() -> int:
    """A base port whose six ports are free right now."""
    return free_port(len(SERVICES))


def _free_port() -> int:
    return free_port()


def _start(tmp_path: Path, base_port: int, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "service_runtime.cluster", "--data-dir", str(tmp_path), "--base-port", str(base_port)],
        env={**os.environ, "POKER_LOG_FORMAT": "json", **env},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def _read_until_banner(process: subprocess.Popen[str], seconds: float = 90) -> list[str]:
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    for line in process.stdout:
        lines.append(line)
        if BANNER in line or time.monotonic() > deadline:
            break
    assert any(BANNER in line for line in lines), "".join(lines[-30:])
    # The rest of the banner: the address rows follow the first line.
    for line in process.stdout:
        lines.append(line)
        if "Ctrl-C" in line:
            break
    return lines


def _health(target: str) -> int:
    with grpc.insecure_channel(target) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    return int(reply.status)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_cluster_starts_every_service_where_the_settings_say_and_stops_cleanly_on_ctrl_c(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    base_port, cashier_port = _free_base_port(), _free_port()
    # POKER_<SERVICE>_PORT / _HOST win over the launcher's defaults (they used to be overwritten).
    process = _start(tmp_path, base_port, POKER_CASHIER_PORT=str(cashier_port), POKER_LOBBY_HOST="127.0.0.2")
    processes.append(process)
    lines = _read_until_banner(process)
    banner = "".join(lines)
    assert f"cashier   127.0.0.1:{cashier_port}" in banner
    assert f"lobby     127.0.0.2:{base_port}" in banner
    assert f"table     127.0.0.1:{base_port + 1}" in banner
    # The gateway serves the web client; the banner gives its page's address.
    assert f"http://127.0.0.1:{base_port + 5}/" in banner
    assert _health(f"127.0.0.1:{cashier_port}") == health_pb2.HealthCheckResponse.SERVING
    assert _health(f"127.0.0.2:{base_port}") == health_pb2.HealthCheckResponse.SERVING
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=60)
    lines.extend(rest.splitlines())
    assert process.returncode == 0, "".join(lines[-30:])
    output = "\n".join(lines)
    assert "cluster: every service stopped" in output
    assert "Traceback" not in output
    for name in SERVICES:
        assert f"{name} |" in output, f"no line labelled with {name}"
        # Quiet `make run` shows the record as `stopped`; JSON as the service wrote it when verbose.
        assert any(f"{name} |" in line and ("| stopped" in line or '"stopped"' in line) for line in lines), (
            f"{name} did not stop cleanly"
        )


def test_a_service_that_exits_during_start_up_stops_the_run_at_once_with_its_error(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    # The cashier refuses its settings with a 100 KB line: the launcher reads it whole (asyncio's line
    # reader used to die on it), stops at once, and names the cashier and its error (it used to wait
    # 60 s and then blame all five).
    started = time.monotonic()
    process = _start(tmp_path, _free_base_port(), POKER_CASHIER_DATABASE_POOL_SIZE="x" * 100_000)
    processes.append(process)
    output, _ = process.communicate(timeout=45)
    elapsed = time.monotonic() - started
    assert process.returncode == 1
    assert elapsed < 30, f"took {elapsed:.0f}s"
    assert BANNER not in output
    reports = [
        line for line in output.splitlines() if line.startswith("cluster: cashier exited during start-up")
    ]
    assert len(reports) == 1, output[-3000:]
    assert "with code 2" in reports[0]
    assert "POKER_CASHIER_DATABASE_POOL_SIZE" in reports[0]
    assert len(reports[0]) < 500
    assert "Traceback" not in output
    assert "cluster: every service stopped" in output


def test_a_port_in_use_is_one_line_naming_it_and_nothing_starts(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    # Something that answers health SERVING already holds the cashier's port (another `make run`, say):
    # the launcher used to print the SERVING banner over the cashier's bind traceback.
    foreign = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), foreign)
    port = foreign.add_insecure_port("127.0.0.1:0")
    foreign.start()
    try:
        started = time.monotonic()
        process = _start(tmp_path, port - 2)
        processes.append(process)
        output, _ = process.communicate(timeout=30)
    finally:
        foreign.stop(None)
    assert process.returncode == 1
    assert time.monotonic() - started < 15
    assert BANNER not in output
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert f"127.0.0.1:{port} (cashier)" in lines[0]
    assert "already in use" in lines[0]
    assert f"POKER_CASHIER_PORT={port + 100}" in lines[0]


def _children(pid: int) -> dict[str, int]:
    """Service name -> pid of the launcher's children (Linux /proc)."""
    found = {}
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        for name in SERVICES:
            if f"services.{name}".encode() in command:
                found[name] = int(child)
    return found


# A whole `make run` cluster: the whole-cluster tier (`make test-cluster`, which CI runs after `make test`).
@pytest.mark.cluster
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the services through Linux /proc")
def test_ctrl_c_returns_within_the_grace_period_even_if_a_service_hangs(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    process = _start(tmp_path, _free_base_port(), POKER_SHUTDOWN_GRACE_SECONDS="1")
    processes.append(process)
    _read_until_banner(process)
    children = _children(process.pid)
    assert set(children) == set(SERVICES)
    os.kill(children["cashier"], signal.SIGSTOP)  # a service that never answers SIGTERM
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=60)
    elapsed = time.monotonic() - started
    # 1 s grace + 1 s drain + the launcher's 2 s margin, then SIGKILL; the rest is process exit.
    assert elapsed < 8, f"Ctrl-C took {elapsed:.1f}s"
    assert "cluster: cashier did not stop in time; killing it" in rest
    assert "cluster: every service stopped" in rest
    with pytest.raises(ProcessLookupError):
        os.kill(children["cashier"], 0)


def test_the_reader_survives_a_line_of_any_length(capsys: pytest.CaptureFixture[str]) -> None:
    # A child that prints a 100 KB line and then more: every byte is read (the child is never left
    # blocked on a full pipe), the long line is cut on the terminal, and the lines after it arrive.
    script = "import sys; sys.stdout.write('a' * 100_000 + '\\n' + 'after the long line\\n' + 'b' * 70_000)"

    async def pump() -> int | None:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        await asyncio.wait_for(cluster._pump(cluster.Child("cashier", 0, process)), timeout=30)
        return await asyncio.wait_for(process.wait(), timeout=30)

    returncode = asyncio.run(pump())
    output = capsys.readouterr().out
    assert returncode == 0
    lines = output.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(" cashier | aaaa")
    assert lines[0].endswith(f"[{100_000 - cluster.MAX_LINE_BYTES} more bytes of this line not shown]")
    assert lines[1] == " cashier | after the long line"
    assert lines[2].endswith(f"[{70_000 - cluster.MAX_LINE_BYTES} more bytes of this line not shown]")


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="port ownership is read from Linux /proc")
def test_a_health_server_that_is_not_the_child_never_counts_as_ready() -> None:
    # The banner must come from the services this run started: SERVING from someone else's server on
    # the child's port does not make the child ready.
    foreign = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), foreign)
    port = foreign.add_insecure_port("127.0.0.1:0")
    foreign.start()

    async def ready_within(seconds: float) -> bool:
        sleeper = await asyncio.create_subprocess_exec(sys.executable, "-c", "import time; time.sleep(30)")
        try:
            child = cluster.Child("cashier", port, sleeper)
            await asyncio.wait_for(cluster._wait_ready(child, "127.0.0.1"), timeout=seconds)
            return True
        except TimeoutError:
            return False
        finally:
            sleeper.kill()
            await sleeper.wait()

    try:
        assert cluster.owns_port(os.getpid(), port) is True
        assert not asyncio.run(ready_within(3))
    finally:
        foreign.stop(None)


def test_a_bad_port_setting_is_refused_before_anything_starts() -> None:
    with pytest.raises(cluster.ClusterError) as error:
        cluster.plan_endpoints({"POKER_TABLE_PORT": "70000"}, "127.0.0.1", 40000)
    assert "POKER_TABLE_PORT" in str(error.value)
    planned = cluster.plan_endpoints({"POKER_FAIRNESS_PORT": "0"}, "127.0.0.1", 40000)
    assert [e.port for e in planned][:3] == [40000, 40001, 40002]
    assert planned[3].port not in (0, 40003)  # 0 picks a free port, which the launcher then passes on
    # An address this machine cannot listen on (TEST-NET-1) is one line too, not a traceback.
    with pytest.raises(cluster.ClusterError) as error:
        cluster.check_ports_free(
            cluster.plan_endpoints({"POKER_TABLE_HOST": "192.0.2.1"}, "127.0.0.1", 40000)
        )
    assert "192.0.2.1:40001 (table)" in str(error.value)


def test_each_service_is_told_where_the_services_it_calls_listen() -> None:
    # With a base port other than 50051 the table shard must still find the lobby, cashier, fairness
    # and history of this run, and history its cashier; a setting in the environment still wins.
    endpoints = cluster.plan_endpoints({"POKER_FAIRNESS_PORT": "41000"}, "127.0.0.1", 40000)
    table = cluster.peer_addresses("table", endpoints, {})
    assert table == {
        "POKER_TABLE_LOBBY_ADDRESS": "127.0.0.1:40000",
        "POKER_TABLE_CASHIER_ADDRESS": "127.0.0.1:40002",
        "POKER_TABLE_FAIRNESS_ADDRESS": "127.0.0.1:41000",
        "POKER_TABLE_HISTORY_ADDRESS": "127.0.0.1:40004",
    }
    assert cluster.peer_addresses("history", endpoints, {}) == {
        "POKER_HISTORY_CASHIER_ADDRESS": "127.0.0.1:40002"
    }
    assert cluster.peer_addresses("lobby", endpoints, {}) == {
        "POKER_LOBBY_TABLE_SHARD_ADDRESS": "127.0.0.1:40001"
    }
    given = {"POKER_TABLE_LOBBY_ADDRESS": "10.0.0.1:1"}
    assert "POKER_TABLE_LOBBY_ADDRESS" not in cluster.peer_addresses("table", endpoints, given)
    assert cluster.peer_addresses("cashier", endpoints, {}) == {}


def _lines_for(process: subprocess.Popen[str], seconds: float) -> list[str]:
    """What the launcher prints in the next `seconds` (read on a thread: the pipe may stay quiet)."""
    assert process.stdout is not None
    stream = process.stdout
    lines: list[str] = []
    with futures.ThreadPoolExecutor(1) as pool:
        reader = pool.submit(lambda: [lines.append(line) for line in stream])
        time.sleep(seconds)
        process.send_signal(signal.SIGINT)
        reader.result(timeout=60)
    process.wait(timeout=60)
    return lines


def test_the_runs_own_bots_are_permitted_automation_for_history() -> None:
    assert cluster.permitted_automation("history", 4, {}) == {"POKER_HISTORY_PERMITTED_AUTOMATION": "bot-"}
    assert cluster.permitted_automation("history", 0, {}) == {}
    assert cluster.permitted_automation("table", 4, {}) == {}
    assert cluster.permitted_automation("history", 4, {"POKER_HISTORY_PERMITTED_AUTOMATION": "x-"}) == {}


# A whole `make run` cluster: the whole-cluster tier (`make test-cluster`, which CI runs after `make test`).
@pytest.mark.cluster
@pytest.mark.parametrize("verbose", [False, True])
def test_make_run_is_quiet_by_default_and_says_everything_when_verbose(
    tmp_path: Path, processes: list[subprocess.Popen[str]], verbose: bool
) -> None:
    # Issue 25 item 16: the table polls GetMaintenance every second; quiet, no RPC line shows (the
    # banner stays on screen), warnings and addresses do; verbose shows every line.
    banner: list[str] = []
    for _attempt in range(3):
        # Another test may take a port of the base range between the check and the bind (a
        # parallel run): then the launcher says which and stops; try another range.
        process = _start(tmp_path, _free_base_port(), **({"POKER_CLUSTER_VERBOSE": "1"} if verbose else {}))
        processes.append(process)
        try:
            banner = _read_until_banner(process)
            break
        except AssertionError as error:
            if "Failed to bind" not in str(error) and "already in use" not in str(error):
                raise
    after = _lines_for(process, 4.0)
    rpc_lines = [line for line in banner + after if '"event": "rpc"' in line]
    listening = [line for line in banner if "listening" in line]
    assert len(listening) >= 5, "".join(banner)  # every gRPC service (the gateway logs its own way)
    if verbose:
        assert any("GetMaintenance" in line for line in rpc_lines), "".join(after[-20:])
    else:
        assert not rpc_lines, "".join(rpc_lines[:5])
        # Beyond the shutdown's own lines (one per service, and the last), a few lines at most.
        talk = [
            line
            for line in after
            if line.strip() and not line.rstrip().endswith(("| stopped", "every service stopped"))
        ]
        assert len(talk) < 6, "".join(after)
    # Issue 25 item 14: the development house bank is funded once SERVING (so house games can be
    # played), asked and approved by two development staff members of finance, once per data folder.
    for pool in ("GRAM", "MPX"):
        assert any(
            f"{pool} house bank funded by the approved funding funding:make-run-house-bank-{pool}" in line
            for line in after
        ), "".join(after)


# A whole `make run` cluster: the whole-cluster tier (`make test-cluster`, which CI runs after `make test`).
@pytest.mark.cluster
def test_the_development_house_bank_is_funded_once_per_data_folder(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    base = _free_base_port()
    for run, word in enumerate(("funded", "already funded")):
        process = _start(tmp_path, base)
        processes.append(process)
        _read_until_banner(process)
        after = _lines_for(process, 3.0)
        assert any(f"GRAM house bank {word} by the approved funding" in line for line in after), (run, after)
        balance = "balance now 100,000,000" if run else "balance 100,000,000"
        assert any(balance in line for line in after), after


def test_quiet_output_keeps_warnings_and_counts_what_happened() -> None:
    from service_runtime.cluster_output import QuietOutput

    shown = QuietOutput()
    ok = '{"event": "rpc", "level": "info", "method": "/poker.cashier.v1.CashierService/SettleHand", "code": "OK"}'
    poll = '{"event": "rpc", "level": "info", "method": "/poker.lobby.v1.LobbyService/GetMaintenance", "code": "OK"}'
    refused = (
        '{"event": "rpc", "level": "info", "method": "/poker.table.v1.TableService/Act", '
        '"code": "FAILED_PRECONDITION", "reason": "NOT_YOUR_TURN"}'
    )
    left = '{"event": "rpc", "level": "info", "method": "/poker.cashier.v1.CashierService/CashOutSeatSession", "code": "OK"}'
    warning = (
        '{"event": "table step refused", "level": "warning", "reason": "UNAVAILABLE", "service": "table"}'
    )
    assert [shown.line(line) for line in (ok, ok, poll, refused, left)] == [None] * 5
    assert shown.line(warning) == "WARNING table step refused reason=UNAVAILABLE"
    assert shown.line("Traceback (most recent call last):") == "Traceback (most recent call last):"
    # In words (issue 39: "1 seats left", "1 calls refused" without saying which call).
    assert shown.summary() == (
        "cluster: since the last summary: 1 seat left; 2 hands settled; "
        "1 call refused (Act FAILED_PRECONDITION NOT_YOUR_TURN x1)"
    )
    assert shown.summary() is None
    assert QuietOutput(verbose=True).line(poll) == poll


def test_the_banner_names_what_a_person_can_do_and_grpcurl_only_where_it_is_installed() -> None:
    """Issue 39: the banner suggested grpcurl, which this machine lacks, and never named the web
    page's sign-in, poker-play or the bots."""
    from service_runtime.cluster import Endpoint, _usage

    names = ("lobby", "table", "cashier", "fairness", "history", "gateway")
    endpoints = [Endpoint(name, "127.0.0.1", 50051 + i) for i, name in enumerate(names)]
    without = _usage(endpoints, grpcurl=False)
    assert "Play in a browser: http://127.0.0.1:50056/ (sign in with any name" in without
    assert ".venv/bin/poker-play --name alice" in without
    assert "make run BOTS=3" in without
    assert "grpcurl" not in without
    assert "grpcurl -plaintext -H" in _usage(endpoints, grpcurl=True)
    # Issue 38: the back office, on its own port, with the development staff to sign in as.
    assert "Back office (staff): http://127.0.0.1:50057/ (sign in as olga" in _usage(
        endpoints, grpcurl=False, staff_port=50057
    )


def test_make_run_s_bots_never_leave_a_turn_to_the_clock() -> None:
    """Issue 39: `make run BOTS=3` bots let the clock run out on purpose, and the table sat ~35 s on a
    bot with nothing saying why; a person watching sees them play at once."""
    from service_runtime.cluster import Endpoint, bots_command

    endpoints = [Endpoint("lobby", "127.0.0.1", 50051), Endpoint("cashier", "127.0.0.1", 50053)]
    command = bots_command(endpoints, 3, "nlhe-gram-classic")
    assert command[command.index("--timeout-rate") + 1] == "0"
