"""Settings of the history service (POKER_HISTORY_* environment keys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from service_runtime.service_settings import ServiceSettings


@dataclass(frozen=True, kw_only=True)
class HistorySettings(ServiceSettings):
    ENV_PREFIX: ClassVar[str] = "POKER_HISTORY_"
    SERVICE: ClassVar[str] = "history"
    DEFAULT_PORT: ClassVar[int] = 50055
