"""Every service starts from the command line, answers its health check, and stops on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.ports import free_port

SERVICES = ["lobby", "table", "cashier", "fairness", "history"]
# The address settings of each service's peers (docs/<service>.md).
PEERS = {
    "lobby": ("TABLE_SHARD",),
    "table": ("LOBBY", "CASHIER", "FAIRNESS", "HISTORY"),
    "history": ("CASHIER",),
}


def _listening_port(process: subprocess.Popen[str]) -> int:
    assert process.stdout is not None
    for line in process.stdout:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("event") == "listening":
            return int(record["address"].rsplit(":", 1)[1])
    raise AssertionError(f"service exited with {process.wait()} before listening")


def _start(service: str, data_dir: Path) -> subprocess.Popen[str]:
    nowhere = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "POKER_DATA_DIR": str(data_dir),
        f"POKER_{service.upper()}_PORT": "0",
        "POKER_LOG_FORMAT": "json",
        # The services it would call are at a port nobody serves, not at the default ones: a cluster
        # running on this machine (make run) would otherwise be joined, and its hands drained.
        **{f"POKER_{service.upper()}_{peer}_ADDRESS": nowhere for peer in PEERS.get(service, ())},
    }
    return subprocess.Popen(
        [sys.executable, "-m", f"services.{service}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


@pytest.mark.parametrize("service", SERVICES)
def test_service_process_starts_answers_health_and_stops_on_sigterm(service: str, tmp_path: Path) -> None:
    process = _start(service, tmp_path)
    try:
        port = _listening_port(process)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=20)
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_second_signal_during_drain_does_not_cut_shutdown_short(tmp_path: Path) -> None:
    # Ctrl-C in a terminal reaches every process of the group, then an orchestrator sends SIGTERM.
    env = {**os.environ, "POKER_DATA_DIR": str(tmp_path), "POKER_LOBBY_PORT": "0", "POKER_LOG_FORMAT": "json"}
    process = subprocess.Popen(
        [sys.executable, "-m", "services.lobby"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _listening_port(process)
        process.send_signal(signal.SIGINT)
        time.sleep(0.3)  # inside the one-second drain
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=30)
        assert process.returncode == 0
        assert '"event": "stopped"' in rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("service", ["cashier", "history"])
def test_signals_all_through_the_shutdown_never_cut_its_clean_up(service: str, tmp_path: Path) -> None:
    """Ctrl-C reaches every process of the group and the cluster (or an orchestrator) signals again:
    a signal that lands after the server stopped, while the service closes its database, must not
    interrupt that (before, the handlers were gone by then: a KeyboardInterrupt cut the engine's
    clean-up, and SQLAlchemy printed a traceback from a connection left to the garbage collector)."""
    process = _start(service, tmp_path)
    try:
        _listening_port(process)
        # SIGINT again and again (every 5 ms) until the process is gone: one lands in each phase
        # of the shutdown, the clean-up after the server's stop included.
        sent = 0
        while process.poll() is None and sent < 4000:
            process.send_signal(signal.SIGINT)
            sent += 1
            time.sleep(0.005)
        rest, _ = process.communicate(timeout=30)
        assert "Traceback" not in rest, rest[-3000:]
        assert process.returncode == 0, rest[-3000:]
        assert '"event": "stopped"' in rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
