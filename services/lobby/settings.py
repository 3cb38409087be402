"""Settings of the lobby service (POKER_LOBBY_* environment keys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from service_runtime.service_settings import ServiceSettings


@dataclass(frozen=True, kw_only=True)
class LobbySettings(ServiceSettings):
    ENV_PREFIX: ClassVar[str] = "POKER_LOBBY_"
    SERVICE: ClassVar[str] = "lobby"
    DEFAULT_PORT: ClassVar[int] = 50051
