"""`make up` waits for health and fails loudly on a broken stack (issue 25 item 17), the gateway's
readiness (its HTTP `/readyz`) included, and then prints the web client's address (issue 27). No
container engine is needed: the waiter is driven with a fake clock, against real health servers, real
HTTP servers and closed ports, and deploy/compose.sh is run with a stand-in compose that "starts" a
stack nobody serves, and with a stand-in waiter that says what it was asked to wait for."""

from __future__ import annotations

import http.server
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from service_runtime.stack_health import grpc_health, http_ready, stack_check, wait_for_stack

ROOT = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def serving() -> Iterator[tuple[str, health.HealthServicer]]:
    from concurrent import futures

    server = grpc.server(futures.ThreadPoolExecutor(2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    yield f"127.0.0.1:{port}", servicer
    server.stop(0)


def test_the_stack_is_up_only_when_every_service_answers_serving(
    serving: tuple[str, health.HealthServicer],
) -> None:
    address, servicer = serving
    assert grpc_health(address) == "SERVING"
    closed = f"127.0.0.1:{_closed_port()}"
    assert grpc_health(closed).startswith("UNAVAILABLE")
    servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    assert grpc_health(address) == "NOT_SERVING"


@pytest.fixture
def readyz() -> Iterator[tuple[str, list[int]]]:
    """A real HTTP server whose /readyz answers the status in the list (200 unless changed)."""
    status = [200]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            code = status[0] if self.path == "/readyz" else 404
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", status
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def test_the_gateway_is_up_only_when_its_readyz_answers_200(
    readyz: tuple[str, list[int]], serving: tuple[str, health.HealthServicer]
) -> None:
    base, status = readyz
    assert http_ready(f"{base}/readyz") == "SERVING"
    status[0] = 503  # draining, or not serving yet
    assert http_ready(f"{base}/readyz") == "HTTP 503"
    assert http_ready(f"{base}/nothing-here") == "HTTP 404"
    assert http_ready(f"http://127.0.0.1:{_closed_port()}/readyz").startswith("UNAVAILABLE")
    # The waiter's check asks an http(s):// address over HTTP and any other over gRPC health.
    status[0] = 200
    assert stack_check(f"{base}/readyz") == "SERVING"
    assert stack_check(serving[0]) == "SERVING"
    assert stack_check(f"127.0.0.1:{_closed_port()}").startswith("UNAVAILABLE")


def test_the_waiter_waits_for_late_services_and_names_the_ones_that_never_come() -> None:
    now = [0.0]
    answers = {
        "lobby": iter(["UNAVAILABLE: refused", "SERVING"]),
        "cashier": iter(["UNAVAILABLE: refused"] * 99),
    }
    said: list[str] = []

    def check(address: str) -> str:
        return next(answers[address])

    def sleep(seconds: float) -> None:
        now[0] += seconds

    broken = wait_for_stack(
        {"lobby": "lobby", "cashier": "cashier"},
        timeout=10,
        check=check,
        clock=lambda: now[0],
        sleep=sleep,
        say=said.append,
    )
    assert broken == {"cashier": "UNAVAILABLE: refused"}
    assert said == ["stack: lobby SERVING at lobby"]
    assert now[0] >= 10


def test_make_up_fails_loudly_when_the_stack_does_not_come_up(tmp_path: Path) -> None:
    # A stand-in compose whose `up -d` "succeeds" (as when pulls failed and services crash-loop).
    fake = tmp_path / "podman-compose"
    fake.write_text('#!/bin/sh\necho "fake compose $*"\nexit 0\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {
        **os.environ,
        "PATH": f"{tmp_path}:{os.environ['PATH']}",
        "POKER_PYTHON": sys.executable,
        "POKER_UP_TIMEOUT_SECONDS": "3",
    }
    done = subprocess.run(
        ["bash", str(ROOT / "deploy/compose.sh"), "up"], env=env, capture_output=True, text=True, timeout=120
    )
    if "50051" in done.stdout and "SERVING at" in done.stdout:
        pytest.skip("something on this machine serves the compose ports (a real stack is up)")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "compose.sh: FAILED: the stack is not healthy" in done.stderr
    assert "stack: FAILED: lobby at 127.0.0.1:50051 not SERVING" in done.stderr
    # The gateway is waited for too, by its readiness.
    assert "stack: FAILED: gateway at http://127.0.0.1:50056/readyz not SERVING" in done.stderr
    assert "fake compose -f" in done.stdout + done.stderr  # ps and logs were shown
    assert "services on 127.0.0.1:50051-50055" not in done.stdout
    assert "web client" not in done.stdout


def test_make_up_waits_for_every_service_and_the_gateway_then_prints_the_page_address(tmp_path: Path) -> None:
    fake = tmp_path / "podman-compose"
    fake.write_text('#!/bin/sh\necho "fake compose $*"\nexit 0\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    # A stand-in Python: records what the waiter was asked to wait for and says the stack is up.
    asked = tmp_path / "asked"
    waiter = tmp_path / "python"
    waiter.write_text(f'#!/bin/sh\necho "$@" > {asked}\nexit 0\n')
    waiter.chmod(waiter.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "POKER_PYTHON": str(waiter)}
    done = subprocess.run(
        ["bash", str(ROOT / "deploy/compose.sh"), "up"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    waited = asked.read_text().split()
    assert waited[:2] == ["-m", "service_runtime.stack_health"]
    assert {
        "lobby=127.0.0.1:50051",
        "table=127.0.0.1:50052",
        "cashier=127.0.0.1:50053",
        "fairness=127.0.0.1:50054",
        "history=127.0.0.1:50055",
        "gateway=http://127.0.0.1:50056/readyz",
    } <= set(waited)
    assert "the web client: http://127.0.0.1:50056/" in done.stdout
