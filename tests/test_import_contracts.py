"""The import contracts (.importlinter, run by `make lint`) hold on the tree and break on a planted
violation: a `time.time()` in the seats' core and a `uuid4()` in the house rounds' core break the
pure cores' contract (issue 42: before, the purity tests only checked that asyncio, grpc, redis and
sqlalchemy were not loaded, so a wall-clock read in a core passed); a wall-clock read or a random
draw anywhere in the table's shell breaks the clock's contract."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT / 'libs'}"}
    return subprocess.run(
        [str(LINT_IMPORTS), str(ROOT / ".importlinter"), "--no-cache"],
        cwd=tree,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cores_import_contract_holds_on_the_tree() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_a_clock_read_or_an_id_drawn_in_a_core_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "services", tmp_path / "services", ignore=shutil.ignore_patterns("__pycache__"))
    seats = tmp_path / "services" / "table" / "cash" / "table_core.py"
    seats.write_text(seats.read_text() + "\n\nimport time\n\n\ndef now() -> float:\n    return time.time()\n")
    rounds = tmp_path / "services" / "table" / "house" / "house_core.py"
    rounds.write_text(rounds.read_text() + "\n\nfrom uuid import uuid4\n\nROUND = uuid4().hex\n")
    result = lint(tmp_path)
    assert result.returncode != 0, result.stdout
    assert "services.table.cash.table_core is not allowed to import time" in result.stdout
    assert "services.table.house.house_core is not allowed to import uuid" in result.stdout


def test_a_wall_clock_read_in_the_table_shell_breaks_the_clock_contract(tmp_path: Path) -> None:
    """The table's shell reads time only through its clock (services/table/ports/clock.py): a
    `time.time()` in the actor and a `random` draw in the shard break the second contract."""
    shutil.copytree(ROOT / "services", tmp_path / "services", ignore=shutil.ignore_patterns("__pycache__"))
    actor = tmp_path / "services" / "table" / "cash" / "actor.py"
    actor.write_text(actor.read_text() + "\n\nimport time\n\n\ndef now() -> float:\n    return time.time()\n")
    shard = tmp_path / "services" / "table" / "ownership" / "shard.py"
    shard.write_text(shard.read_text() + "\n\nimport random\n\nJITTER = random.random()\n")
    result = lint(tmp_path)
    assert result.returncode != 0, result.stdout
    assert "services.table.cash.actor is not allowed to import time" in result.stdout
    assert "services.table.ownership.shard is not allowed to import random" in result.stdout
    assert "1 kept, 1 broken" in result.stdout
