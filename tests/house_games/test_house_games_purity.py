"""The rules library stays pure: no grpc, no clock, no randomness, no I/O outside the simulator CLI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import house_games

PACKAGE = Path(house_games.__file__).parent
FORBIDDEN_IMPORTS = {"grpc", "random", "time", "datetime", "os", "secrets", "socket", "io", "pathlib"}


@pytest.mark.parametrize("module", sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "simulate.py"))
def test_rules_modules_import_nothing_impure(module: str):
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"open", "print", "input"}, f"{module} does I/O"
    assert not imported & FORBIDDEN_IMPORTS


def test_simulator_randomness_is_seeded_only():
    source = (PACKAGE / "simulate.py").read_text(encoding="utf-8")
    assert "random.Random(seed)" in source
    assert "import grpc" not in source
