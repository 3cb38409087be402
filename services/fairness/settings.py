"""Settings of the fairness process, read once from POKER_FAIRNESS_* (and shared POKER_*) variables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import positive, setting

DEV_SEED_KEY_ID = "dev"
# Known to everybody, so it protects nothing: `validate` refuses it in production.
DEV_SEED_KEY_HEX = "00112233445566778899aabbccddeeff" * 2


def _seed_key_pairs(value: tuple[str, ...]) -> str | None:
    if not value:
        return "at least one key is needed"
    for item in value:
        key_id, sep, secret = item.partition(":")
        try:
            ok = bool(sep and key_id) and len(bytes.fromhex(secret)) == 32
        except ValueError:
            ok = False
        if not ok:
            return "each key is KEY_ID:SECRET with a secret of 64 hex digits (AES-256)"
    return None


@dataclass(frozen=True, kw_only=True)
class FairnessSettings(ServiceSettings):
    """The fairness service's keys on top of the shared ones."""

    ENV_PREFIX: ClassVar[str] = "POKER_FAIRNESS_"
    SERVICE: ClassVar[str] = "fairness"
    DEFAULT_PORT: ClassVar[int] = 50054

    seed_encryption_keys: tuple[str, ...] = setting(
        (f"{DEV_SEED_KEY_ID}:{DEV_SEED_KEY_HEX}",),
        help="AES-256-GCM keys that encrypt the seeds of unrevealed hands, KEY_ID:HEX64 comma-separated; "
        "the first encrypts, all decrypt (rotation)",
        check=_seed_key_pairs,
        secret=True,
    )
    database_pool_size: int = setting(10, help="database connections kept open", check=positive)

    def validate(self) -> list[str]:
        problems = super().validate()
        if self.environment == "production" and any(
            k.partition(":")[2].lower() == DEV_SEED_KEY_HEX for k in self.seed_encryption_keys
        ):
            problems.append(
                f"{self.ENV_PREFIX}SEED_ENCRYPTION_KEYS: the development seed key is not allowed in production"
            )
        return problems
