"""`make run`'s launcher starts all five services, reports them SERVING, and stops them on Ctrl-C."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path


def test_cluster_starts_every_service_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    base_port = random.randint(30000, 39000)
    process = subprocess.Popen(
        [sys.executable, "-m", "service_runtime.cluster", "--data-dir", str(tmp_path), "--base-port", str(base_port)],
        env={**os.environ, "POKER_LOG_FORMAT": "json"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 90
        for line in process.stdout:
            lines.append(line)
            if "All services are SERVING" in line or time.monotonic() > deadline:
                break
        assert any("All services are SERVING" in line for line in lines), "".join(lines[-30:])
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
        lines.extend(rest.splitlines())
        assert process.returncode == 0, "".join(lines[-30:])
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = "\n".join(lines)
    assert "cluster: every service stopped" in output
    for name in ("lobby", "table", "cashier", "fairness", "history"):
        assert f"{name} |" in output, f"no line labelled with {name}"
        assert any(f"{name} |" in line and '"stopped"' in line for line in lines), (
            f"{name} did not stop cleanly"
        )
