"""Settings of the history process, read once from POKER_HISTORY_* (and shared POKER_*) variables."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import positive, setting

# Known to everybody, so it protects nothing: `validate` refuses it in production.
DEV_PAGE_TOKEN_KEY = "dev-history-page-token-key-for-local-runs-only"


def _long_enough(value: str) -> str | None:
    return None if len(value) >= 16 else "must be at least 16 characters"


def _score(value: float) -> str | None:
    return None if math.isfinite(value) and value >= 0 else "must be a number of big blinds, 0 or more"


@dataclass(frozen=True, kw_only=True)
class HistorySettings(ServiceSettings):
    """The history service's keys on top of the shared ones."""

    ENV_PREFIX: ClassVar[str] = "POKER_HISTORY_"
    SERVICE: ClassVar[str] = "history"
    DEFAULT_PORT: ClassVar[int] = 50055

    cashier_address: str = setting(
        "127.0.0.1:50053", help="host:port of the cashier, whose statements ListBalanceChanges reads"
    )
    page_token_key: str = setting(
        DEV_PAGE_TOKEN_KEY,
        help="HMAC key that signs page tokens (at least 16 characters)",
        check=_long_enough,
        secret=True,
    )
    database_pool_size: int = setting(10, help="database connections kept open", check=positive)
    permitted_automation: str = setting(
        "",
        help="comma-separated player-id prefixes allowed to automate (the house's bots): the automation "
        "detector does not judge them (rules 17)",
    )

    auto_hold_min_score: float = setting(
        50.0,
        help="the chip-dumping score (net blatant gifts in big blinds) from which a case holds the "
        "withdrawals of its suspects and beneficiary automatically until an operator resolves it "
        "(docs/integrity.md); 0 turns automatic holds off",
        check=_score,
    )

    def permitted_automation_prefixes(self) -> tuple[str, ...]:
        return tuple(prefix.strip() for prefix in self.permitted_automation.split(",") if prefix.strip())

    def validate(self) -> list[str]:
        problems = super().validate()
        if self.environment == "production" and self.page_token_key == DEV_PAGE_TOKEN_KEY:
            problems.append(
                f"{self.ENV_PREFIX}PAGE_TOKEN_KEY: the development key is not allowed in production"
            )
        return problems
