"""Node.js for the cross-checks in another language (the fairness specs, the browser verifier).

Without node these checks skip, loudly; CI sets POKER_REQUIRE_NODE=1 (node is on its machines for buf
and the web client), so there a missing node fails them instead of letting them pass unseen.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest


def require_node(what: str, *needed: Path) -> str:
    """The path of `node`, or skip (fail under POKER_REQUIRE_NODE=1) naming `what` did not run."""
    node = shutil.which("node")
    missing = [str(p) for p in needed if not p.exists()]
    if node is not None and not missing:
        return node
    lacking = "node is not installed" if node is None else f"missing {', '.join(missing)} (make web)"
    message = f"{lacking}: {what} did not run"
    if os.environ.get("POKER_REQUIRE_NODE") == "1":
        pytest.fail(f"POKER_REQUIRE_NODE=1 but {message}")
    pytest.skip(message)


WEB = Path(__file__).resolve().parents[1] / "web"
ESBUILD = WEB / "node_modules" / ".bin" / "esbuild"


def run_web_script(entry: str, given: Any, folder: Path, what: str) -> list[Any]:
    """Bundle one of the web client's scripts (`web/e2e/<name>.ts`) for Node, give it `given` as JSON
    on its input, and read back the JSON value of each line it prints (`what` names it if node or the
    built web client is missing: see `require_node`)."""
    node = require_node(what, ESBUILD, WEB / "src" / "gen")
    bundle = folder / (Path(entry).stem + ".mjs")
    subprocess.run(
        [str(ESBUILD), entry, "--bundle", "--platform=node", "--format=esm", f"--outfile={bundle}"],
        cwd=WEB, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    done = subprocess.run(
        [node, str(bundle)], input=json.dumps(given), capture_output=True, text=True, timeout=60, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]
