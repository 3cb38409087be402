"""Fixtures every test may use: slow-test opt-in, real PostgreSQL and Redis, tokens.

PostgreSQL and Redis come from POKER_TEST_DATABASE_URL / POKER_TEST_REDIS_URL when set; otherwise
throwaway servers are started if their binaries are on the machine; otherwise the tests that need
them are skipped and the summary says so loudly. Each test gets its own database or key prefix and
removes it, so no run depends on what an earlier one left.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from service_runtime.testing import throwaway_postgres_database
from tests.ports import free_port

_missing_backends: dict[str, str] = {}

# No property test is timed: Hypothesis's default 200 ms deadline per example is a wall-clock bound
# that a loaded 2-core machine misses now and then (tests/runtime/test_shard_registry.py's rendezvous
# property failed so in a parallel run). Each test's own `@settings` still sets its examples.
settings.register_profile("poker", deadline=None)
settings.load_profile("poker")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip_slow = pytest.mark.skip(reason="slow golden test: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for backend, why in _missing_backends.items():
        terminalreporter.write_sep("!", f"{backend.upper()} TESTS SKIPPED: {why}", red=True, bold=True)


def _free_port() -> int:
    return free_port()


def _postgres_binaries() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return candidates[-1].parent if candidates else None


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A PostgreSQL server URL (any database on it) that tests may create databases on."""
    configured = os.environ.get("POKER_TEST_DATABASE_URL")
    if configured:
        yield configured
        return
    bin_dir = _postgres_binaries()
    if bin_dir is None:
        _missing_backends["postgres"] = "POKER_TEST_DATABASE_URL unset and no initdb on this machine"
        pytest.skip(_missing_backends["postgres"])
    folder = Path(tempfile.mkdtemp(prefix="poker-pg-"))
    port = _free_port()
    # initdb refuses to run as root; run the throwaway server as the postgres user then.
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if prefix:
        shutil.chown(folder, "postgres")
    subprocess.run(
        [*prefix, str(bin_dir / "initdb"), "-D", str(folder / "db"), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
    )
    server = subprocess.Popen(
        [
            *prefix,
            str(bin_dir / "postgres"),
            "-D",
            str(folder / "db"),
            "-p",
            str(port),
            "-k",
            str(folder),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        import psycopg

        for _ in range(100):
            try:
                psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres").close()
                break
            except psycopg.OperationalError:
                time.sleep(0.1)
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """An async SQLAlchemy URL of a brand-new database, dropped after the test."""
    with throwaway_postgres_database(postgres_server_url) as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{(tmp_path / 'test.db').as_posix()}"


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    configured = os.environ.get("POKER_TEST_REDIS_URL")
    if configured:
        yield configured
        return
    binary = shutil.which("redis-server")
    if binary is None:
        _missing_backends["redis"] = "POKER_TEST_REDIS_URL unset and no redis-server on this machine"
        pytest.skip(_missing_backends["redis"])
    port = _free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.3)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture
async def redis_prefix(redis_server_url: str) -> AsyncIterator[str]:
    """A unique key prefix on the test Redis; every key under it is deleted afterwards."""
    import redis.asyncio as redis

    prefix = f"poker-test:{uuid.uuid4().hex[:12]}:"
    client = redis.Redis.from_url(redis_server_url)
    try:
        yield prefix
    finally:
        async for key in client.scan_iter(match=f"{prefix}*"):
            await client.delete(key)
        await client.aclose()
