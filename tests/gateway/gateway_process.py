"""The gateway as a real process in front of the five services (tests/security's processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.security.service_processes import ServiceProcess


def gateway_env(
    services: dict[str, ServiceProcess], extra_env: dict[str, str] | None = None
) -> dict[str, str]:
    """The gateway's environment: a free port, JSON logs, wired to whichever of the services are given
    (the table is found through the lobby)."""
    return {
        **os.environ,
        "POKER_GATEWAY_PORT": "0",
        "POKER_LOG_FORMAT": "json",
        **{
            f"POKER_GATEWAY_{name.upper()}_ADDRESS": service.address
            for name, service in services.items()
            if name in ("lobby", "cashier", "fairness", "history")
        },
        **(extra_env or {}),
    }


def start_gateway(
    services: dict[str, ServiceProcess], extra_env: dict[str, str] | None = None
) -> ServiceProcess:
    env = gateway_env(services, extra_env)
    process = subprocess.Popen(
        [sys.executable, "-m", "services.gateway"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    gateway = ServiceProcess("gateway", process)
    threading.Thread(target=gateway._read, daemon=True).start()
    if not gateway.listening.wait(60):
        process.kill()
        raise AssertionError("the gateway did not start listening:\n" + "".join(gateway.lines[-20:]))
    return gateway


def stop(process: ServiceProcess) -> None:
    if process.process.poll() is None:
        process.process.terminate()
        try:
            process.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.process.kill()
            process.process.wait()


@contextmanager
def running_gateway(
    services: dict[str, ServiceProcess], extra_env: dict[str, str] | None = None
) -> Iterator[ServiceProcess]:
    gateway = start_gateway(services, extra_env)
    try:
        yield gateway
    finally:
        stop(gateway)


def url_of(gateway: ServiceProcess) -> str:
    return f"http://{gateway.address}"


def staff_address_of(gateway: ServiceProcess, within: float = 30.0) -> str:
    """The staff door's `host:port` (a gateway started with POKER_GATEWAY_STAFF_PORT), from its log."""
    import json
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for line in list(gateway.lines):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("event") == "staff door listening":
                return str(record["address"])
        if gateway.process.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError("the staff door did not start:\n" + "".join(gateway.lines[-20:]))


def staff_url_of(gateway: ServiceProcess) -> str:
    return f"http://{staff_address_of(gateway)}"


__all__ = ["Path", "running_gateway", "staff_address_of", "staff_url_of", "start_gateway", "stop", "url_of"]
