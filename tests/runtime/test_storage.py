"""The database and Redis factories work against real servers and the embedded default."""

from __future__ import annotations

import subprocess
import sys

from sqlalchemy import text

from service_runtime.auth import Role, verify_token
from service_runtime.database import create_engine, create_session_factory, normalise_url, sync_url
from service_runtime.redis_client import create_redis
from service_runtime.testing import DEV_KEYS


def test_plain_urls_get_the_async_drivers() -> None:
    assert normalise_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("sqlite:///x.db") == "sqlite+aiosqlite:///x.db"
    assert sync_url("sqlite+aiosqlite:///x.db") == "sqlite:///x.db"


async def test_sqlite_engine_creates_its_folder_and_answers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path}/nested/db.sqlite")
    async with create_session_factory(engine).begin() as session:
        assert (await session.execute(text("select 1"))).scalar_one() == 1
    await engine.dispose()
    assert (tmp_path / "nested" / "db.sqlite").exists()


async def test_postgres_engine_answers_on_a_fresh_database(postgres_url: str) -> None:
    engine = create_engine(postgres_url)
    async with create_session_factory(engine).begin() as session:
        assert (
            (await session.execute(text("select current_database()"))).scalar_one().startswith("poker_test_")
        )
    await engine.dispose()


async def test_redis_client_round_trips_under_a_private_prefix(
    redis_server_url: str, redis_prefix: str
) -> None:
    client = create_redis(redis_server_url)
    await client.set(f"{redis_prefix}k", b"v")
    assert await client.get(f"{redis_prefix}k") == b"v"
    await client.aclose()


def test_mint_token_command_prints_a_token_the_services_accept() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "service_runtime.mint_token", "--subject", "alice", "--roles", "player,admin"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    caller = verify_token(DEV_KEYS, out.stdout.strip(), now=0)
    assert caller.subject == "alice"
    assert caller.roles == {Role.PLAYER, Role.ADMIN}
