"""Settings of the table service (POKER_TABLE_* environment keys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from service_runtime.service_settings import ServiceSettings


@dataclass(frozen=True, kw_only=True)
class TableSettings(ServiceSettings):
    ENV_PREFIX: ClassVar[str] = "POKER_TABLE_"
    SERVICE: ClassVar[str] = "table"
    DEFAULT_PORT: ClassVar[int] = 50052
