"""Settings of the lobby service (POKER_LOBBY_* environment keys, and the shared POKER_* ones)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import positive, setting
from service_runtime.shard_registry import DEFAULT_PREFIX, SHARD_ID_PATTERN


def _shard_id(value: str) -> str | None:
    return None if SHARD_ID_PATTERN.fullmatch(value) else "1-64 of A-Z a-z 0-9 . _ -"


def _address(value: str) -> str | None:
    host, colon, port = value.rpartition(":")
    return None if colon and host and port.isdigit() else "host:port"


@dataclass(frozen=True, kw_only=True)
class LobbySettings(ServiceSettings):
    ENV_PREFIX: ClassVar[str] = "POKER_LOBBY_"
    SERVICE: ClassVar[str] = "lobby"
    DEFAULT_PORT: ClassVar[int] = 50051

    closed_access: bool = setting(
        False, help="closed access (rules 18): only players on the lobby-wide allow-list may sit anywhere"
    )
    table_shard_address: str = setting(
        "127.0.0.1:50052",
        help="without Redis: the address of the one table shard (it owns every room)",
        check=_address,
    )
    table_shard_id: str = setting(
        "table-0", help="without Redis: the id of the one table shard", check=_shard_id
    )
    redis_prefix: str = setting(
        DEFAULT_PREFIX,
        help="prefix of the shard registry, table directory and maintenance keys; the same on every shard",
    )
    database_pool_size: int = setting(10, help="database connections kept open", check=positive)
    max_tables_per_room: int = setting(
        20,
        help="tables JoinTable opens per room at most (a room with more standing tables keeps those)",
        check=positive,
    )
