"""The five services as real processes on loopback (embedded defaults), for tests that attack them.

Each process's output is read by a thread for as long as it runs (so a full pipe can never block a
service) and kept for the test to inspect.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.ports import free_port

SERVICE_NAMES = ("lobby", "table", "cashier", "fairness", "history")
FULL_NAMES = {
    "lobby": "poker.lobby.v1.LobbyService",
    "table": "poker.table.v1.TableService",
    "cashier": "poker.cashier.v1.CashierService",
    "fairness": "poker.fairness.v1.FairnessService",
    "history": "poker.history.v1.HistoryService",
    # The gateway serves Connect over HTTP (tests/gateway/gateway_process.py starts it).
    "gateway": "poker.gateway.v1.GatewayService",
}


@dataclass
class ServiceProcess:
    name: str
    process: subprocess.Popen[str]
    port: int = 0
    lines: list[str] = field(default_factory=list)
    listening: threading.Event = field(default_factory=threading.Event)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            if not self.listening.is_set():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict) and record.get("event") == "listening":
                    self.port = int(record["address"].rsplit(":", 1)[1])
                    self.listening.set()


def _free_port() -> int:
    return free_port()


def _start(name: str, data_dir: Path, extra_env: dict[str, str]) -> ServiceProcess:
    env = {
        **os.environ,
        "POKER_DATA_DIR": str(data_dir),
        f"POKER_{name.upper()}_PORT": "0",
        "POKER_LOG_FORMAT": "json",
        **extra_env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", f"services.{name}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    service = ServiceProcess(name, process)
    threading.Thread(target=service._read, daemon=True).start()
    return service


@contextmanager
def running_services(
    data_dir: Path, extra_env: dict[str, str] | None = None
) -> Iterator[dict[str, ServiceProcess]]:
    """All five services started and listening, wired to each other as `make run` wires them (so the
    table's calls reach the real lobby, cashier, fairness and history); SIGTERM (then kill) for each
    when the block ends."""
    extra = extra_env or {}
    started: dict[str, ServiceProcess] = {}

    def wait(*names: str) -> None:
        for name in names:
            service = started[name]
            if not service.listening.wait(60):
                output = "".join(service.lines[-20:])
                raise AssertionError(f"{service.name} did not start listening:\n{output}")

    try:
        for name in ("cashier", "fairness"):
            started[name] = _start(name, data_dir, extra)
        wait("cashier", "fairness")
        started["history"] = _start(
            "history", data_dir, {"POKER_HISTORY_CASHIER_ADDRESS": started["cashier"].address, **extra}
        )
        # The lobby asks the one shard for its tables and the shard reads rooms from the lobby: the
        # shard's port is chosen first so each can be told the other's address.
        table_port = _free_port()
        started["lobby"] = _start(
            "lobby", data_dir, {"POKER_LOBBY_TABLE_SHARD_ADDRESS": f"127.0.0.1:{table_port}", **extra}
        )
        wait("history", "lobby")
        started["table"] = _start(
            "table",
            data_dir,
            {
                "POKER_TABLE_LOBBY_ADDRESS": started["lobby"].address,
                "POKER_TABLE_CASHIER_ADDRESS": started["cashier"].address,
                "POKER_TABLE_FAIRNESS_ADDRESS": started["fairness"].address,
                "POKER_TABLE_HISTORY_ADDRESS": started["history"].address,
                # The next hand at once after a showdown, unless a test asks for the hold.
                "POKER_TABLE_SHOWDOWN_SECONDS": "0",
                **extra,
                "POKER_TABLE_PORT": str(table_port),
            },
        )
        wait("table")
        yield {name: started[name] for name in SERVICE_NAMES}
    finally:
        for service in started.values():
            if service.process.poll() is None:
                service.process.send_signal(signal.SIGTERM)
        for service in started.values():
            try:
                service.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                service.process.kill()
                service.process.wait()
