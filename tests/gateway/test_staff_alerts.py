"""The console's dashboard reads the alerts firing at the operator's Prometheus (issue 38:
"alerts firing (from the metrics)"): `staff_door.prometheus_alerts` against a real Prometheus that
evaluates a rule that always fires (skipped without the binary, a failure where
POKER_REQUIRE_PROMTOOL=1, as in CI: Debian's `prometheus` package brings both), and against a
stand-in that answers what the API may answer (pending alerts, missing fields, garbage, nothing)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from service_runtime.errors import Unavailable
from services.gateway.staff_door import prometheus_alerts

RULES = """groups:
  - name: console
    interval: 1s
    rules:
      - alert: PokerAlwaysFiring
        expr: vector(1)
        labels: {severity: page}
        annotations: {summary: "fires from the first evaluation on"}
      - alert: PokerNeverFiring
        expr: vector(1) == 2
        labels: {severity: ticket}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[str]:
    binary = shutil.which("prometheus")
    if binary is None:
        message = "a real Prometheus is not installed (apt-get install prometheus)"
        if os.environ.get("POKER_REQUIRE_PROMTOOL") == "1":
            pytest.fail(f"{message} (POKER_REQUIRE_PROMTOOL=1)")
        pytest.skip(message)
    (tmp_path / "rules.yml").write_text(RULES)
    (tmp_path / "prometheus.yml").write_text("global: {evaluation_interval: 1s}\nrule_files: [rules.yml]\n")
    port = _free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--web.listen-address=127.0.0.1:{port}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_alerts_firing_at_a_real_prometheus_reach_the_dashboard(prometheus: str) -> None:
    alerts = prometheus_alerts(prometheus)
    deadline = time.monotonic() + 60  # start-up and the first evaluations, on a loaded machine
    reply = None
    while time.monotonic() < deadline:
        try:
            reply = asyncio.run(alerts())
        except Unavailable:
            reply = None  # not listening yet
        if reply is not None and reply.alerts:
            break
        time.sleep(0.2)
    assert reply is not None, "Prometheus never answered"
    assert reply.configured
    assert [(a.name, a.severity, a.summary) for a in reply.alerts] == [
        ("PokerAlwaysFiring", "page", "fires from the first evaluation on")
    ]
    since = reply.alerts[0].active_since.ToDatetime().timestamp()
    assert abs(since - time.time()) < 120


class _StandIn(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(type(self).body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stand_in() -> Iterator[tuple[str, type[_StandIn]]]:
    handler = type("Answer", (_StandIn,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_pending_alerts_odd_fields_and_garbage_never_fail_the_dashboard(
    stand_in: tuple[str, type[_StandIn]],
) -> None:
    url, answer = stand_in
    answer.body = json.dumps(
        {
            "status": "success",
            "data": {
                "alerts": [
                    {"labels": {"alertname": "Pending"}, "state": "pending"},
                    {"labels": {"alertname": "NoTime", "severity": "ticket"}, "state": "firing"},
                    {"labels": {"alertname": "BadTime"}, "state": "firing", "activeAt": "yesterday"},
                    {
                        "labels": {"alertname": "X" * 1000},
                        "annotations": {"summary": "s" * 5000},
                        "state": "firing",
                    },
                    "not an alert",
                ]
            },
        }
    ).encode()
    reply = asyncio.run(prometheus_alerts(url)())
    assert [a.name[:7] for a in reply.alerts] == ["NoTime", "BadTime", "XXXXXXX"]
    assert len(reply.alerts[2].name) == 200
    assert len(reply.alerts[2].summary) == 500
    assert not reply.alerts[1].HasField("active_since")
    answer.body = b"<html>not json</html>"
    with pytest.raises(Unavailable) as garbage:
        asyncio.run(prometheus_alerts(url)())
    assert garbage.value.metadata == {"dependency": "prometheus"}
    answer.body = json.dumps({"status": "success", "data": None}).encode()
    assert list(asyncio.run(prometheus_alerts(url)()).alerts) == []


def test_a_prometheus_that_is_away_is_unavailable_with_its_name() -> None:
    with pytest.raises(Unavailable) as away:
        asyncio.run(prometheus_alerts(f"http://127.0.0.1:{_free_port()}")())
    assert away.value.reason == "UNAVAILABLE"
    assert away.value.metadata == {"dependency": "prometheus"}
