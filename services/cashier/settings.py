"""Settings of the cashier process, read once from POKER_CASHIER_* (and shared POKER_*) variables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import positive, setting


@dataclass(frozen=True, kw_only=True)
class CashierSettings(ServiceSettings):
    """The cashier's keys on top of the shared ones."""

    ENV_PREFIX: ClassVar[str] = "POKER_CASHIER_"
    SERVICE: ClassVar[str] = "cashier"
    DEFAULT_PORT: ClassVar[int] = 50053

    stars_purchases_enabled: bool = setting(
        False, help="accept Telegram Stars purchases (off until the operator enables them)"
    )
    stars_lock_days: int = setting(
        21, help="days chips bought with Stars stay locked against withdrawal to GRAM", check=positive
    )
    database_pool_size: int = setting(10, help="database connections kept open", check=positive)
    audit_interval_seconds: float = setting(
        60.0,
        help="how often the cashier runs the conservation audit for its metrics (0: never)",
        check=lambda v: None if v >= 0 else "must not be negative",
    )
