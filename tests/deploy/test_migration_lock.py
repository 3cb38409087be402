"""Replicas that start together migrate one after the other: every one starts, the schema ends at head.

Each replica process migrates at start-up (the "init step" of the deployment); the advisory lock in
`upgrade_to_head` is what keeps a rollout of several replicas from racing the same DDL.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from service_runtime.testing import throwaway_postgres_database

# Six replica processes racing their migrations: a deployment run of the whole-cluster tier,
# `make test-cluster` (issue 39: `make test` within 10 minutes).
pytestmark = [pytest.mark.postgres, pytest.mark.cluster]

REPLICAS = 6

# Every replica imports first and then waits at the same barrier, so their migrations really overlap.
REPLICA = """
import sys, time
from pathlib import Path
from services.cashier.assembly import migrate as migrate_cashier
from services.fairness.storage import migrate as migrate_fairness
Path(sys.argv[2]).touch()
while not Path(sys.argv[3]).exists():
    time.sleep(0.005)
migrate_cashier(sys.argv[1])
migrate_fairness(sys.argv[1])
"""


@pytest.fixture
def fresh_database(postgres_server_url: str) -> Iterator[str]:
    with throwaway_postgres_database(postgres_server_url, prefix="poker_migrate") as url:
        yield url


def _versions(url: str, table: str) -> list[str]:
    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo) as conn:
        return [row[0] for row in conn.execute(f"SELECT version_num FROM {table}")]


def test_replicas_starting_together_all_migrate_without_racing(fresh_database: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", REPLICA, fresh_database, str(tmp_path / f"ready-{i}"), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(REPLICAS)
    ]
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("ready-*"))) < REPLICAS and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()
        outputs = [p.communicate(timeout=120)[0] for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    failed = [out for p, out in zip(processes, outputs, strict=True) if p.returncode != 0]
    assert not failed, failed[0][-3000:]
    assert len(_versions(fresh_database, "cashier_alembic_version")) == 1
    assert len(_versions(fresh_database, "fairness_alembic_version")) == 1
