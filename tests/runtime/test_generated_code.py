"""The committed generated tree under libs/poker matches what protos/ generates now."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_is_not_stale(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "protos" / "generate.py"), "--out", str(tmp_path)], check=True)
    fresh = {p.relative_to(tmp_path) for p in (tmp_path / "poker").rglob("*") if p.is_file()}
    committed = {
        p.relative_to(ROOT / "libs")
        for p in (ROOT / "libs" / "poker").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert fresh == committed, "run `make protos`: generated files were added or removed"
    stale = [str(p) for p in sorted(fresh) if not filecmp.cmp(tmp_path / p, ROOT / "libs" / p, shallow=False)]
    assert not stale, f"run `make protos`: these generated files are stale: {stale}"
