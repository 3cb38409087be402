"""The committed generated tree under libs/poker matches what protos/ generates now."""

from __future__ import annotations

import filecmp
import re
import subprocess
import sys
import tomllib
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


def _floor(requirement: str) -> tuple[int, ...]:
    return tuple(int(part) for part in requirement.split(">=", 1)[1].split("."))


def test_the_dependency_floors_admit_no_runtime_the_generated_code_refuses() -> None:
    """An install without deploy/constraints.txt must import: the committed stubs check the protobuf
    runtime and grpcio they were generated for, so pyproject's floors are at least those (issue 39:
    they allowed grpcio 1.70 and protobuf 5.29, and such an install failed at import)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    floors = {
        re.split(r"[<>=\[ ]", requirement, maxsplit=1)[0]: _floor(requirement)
        for requirement in project["project"]["dependencies"]
        if ">=" in requirement
    }
    protobuf_needs, grpc_needs = set(), set()
    for path in (ROOT / "libs" / "poker").rglob("*_pb2.py"):
        found = re.search(r"Domain\.PUBLIC,\s*(\d+),\s*(\d+),\s*(\d+),", path.read_text())
        assert found is not None, path
        protobuf_needs.add(tuple(int(n) for n in found.groups()))
    for path in (ROOT / "libs" / "poker").rglob("*_pb2_grpc.py"):
        found = re.search(r"GRPC_GENERATED_VERSION = '([\d.]+)'", path.read_text())
        if found is not None:
            grpc_needs.add(tuple(int(n) for n in found.group(1).split(".")))
    assert protobuf_needs
    assert grpc_needs
    assert floors["protobuf"] >= max(protobuf_needs)
    for package in ("grpcio", "grpcio-health-checking", "grpcio-reflection", "grpcio-status"):
        assert floors[package] >= max(grpc_needs), package
