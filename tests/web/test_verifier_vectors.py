"""The page's fairness verifier (web/src/fairness/verifier.ts, run in Node with its Web Crypto) gets
the known-answer vectors of docs/fairness.md right, and catches a moved card and a wrong commitment."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fairness.test_shuffle import SHUFFLE_VECTORS, VECTORS

WEB = Path(__file__).resolve().parents[2] / "web"
ESBUILD = WEB / "node_modules" / ".bin" / "esbuild"


def test_the_browser_verifier_agrees_with_the_known_answer_vectors(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not ESBUILD.exists():
        pytest.skip(
            "node or the web client's packages (make web) are missing: the browser verifier was not run"
        )
    bundle = tmp_path / "vectors.mjs"
    subprocess.run(
        [str(ESBUILD), "e2e/verifier_vectors.ts", "--bundle", "--platform=node", "--format=esm", f"--outfile={bundle}"],
        cwd=WEB, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    done = subprocess.run(
        [node, str(bundle)], input=json.dumps(VECTORS), capture_output=True, text=True, timeout=60, check=True
    )
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["name"] for r in results] == [v["name"] for v in SHUFFLE_VECTORS]
    for result, vector in zip(results, SHUFFLE_VECTORS, strict=True):
        assert result["ok"] is True, result
        assert result["checked"] == 52
        assert result["computed"] == vector["commitment"]
        assert result["movedCardCaught"] is True
        assert result["wrongCommitmentCaught"] is True
