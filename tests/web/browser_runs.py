"""What every browser test shares: whether it can run (Debian's Chromium, node, the built client),
skipped loudly where not (failed where CI sets POKER_REQUIRE_BROWSER=1), and one run of a page
script of web/e2e against a gateway: its exit checked with the script's output and the gateway's
log tail in the message, its JSON step lines returned."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Protocol

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
CHROMIUM = Path(os.environ.get("POKER_CHROMIUM", "/usr/bin/chromium"))


class Gateway(Protocol):
    address: str
    lines: list[str]


def missing() -> str:
    """Why no browser test can run here ("" when one can)."""
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if shutil.which("node") is None:
        return "no node"
    if not (WEB / "dist" / "index.html").exists() or not (WEB / "node_modules" / "playwright-core").exists():
        return "the web client is not built (make web)"
    return ""


def require_browser() -> None:
    """Skip loudly without a browser; fail instead where CI requires one."""
    why = missing()
    if why:
        if os.environ.get("POKER_REQUIRE_BROWSER") == "1":
            pytest.fail(f"POKER_REQUIRE_BROWSER=1 but {why}")
        print(f"\n!!! browser test SKIPPED: {why} !!!")
        pytest.skip(why)


def run_page_script(
    gateway: Gateway, script: str, *args: str, timeout: float, artefacts: Path | None = None
) -> list[dict[str, Any]]:
    """`node web/e2e/<script> http://<gateway> <args...>`: its step lines, once it exited 0."""
    run = subprocess.run(
        ["node", str(WEB / "e2e" / script), f"http://{gateway.address}", *args],
        cwd=WEB, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    log = "".join(gateway.lines)
    where = f"artefacts: {artefacts}\n" if artefacts is not None else ""
    if artefacts is not None:
        print(f"\nbrowser artefacts: {artefacts}\n{run.stdout}")
    assert run.returncode == 0, f"{where}{run.stdout[-4000:]}\n{run.stderr[-4000:]}\ngateway:\n{log[-3000:]}"
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
