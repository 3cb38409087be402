"""Fairness settings: the seed-encryption key is validated and the development key is refused in production."""

from __future__ import annotations

from pathlib import Path

import pytest

from service_runtime.settings import SettingsError, describe, load_settings
from service_runtime.testing_pki import TestAuthority, tls_environment
from services.fairness.seed_vault import SeedVault
from services.fairness.settings import DEV_SEED_KEY_HEX, FairnessSettings

PRODUCTION_AUTH = "prod:" + "s" * 32


def test_defaults_run_locally_on_the_well_known_port() -> None:
    settings = load_settings(FairnessSettings, {})
    assert settings.port == 50054
    assert SeedVault.from_settings(settings.seed_encryption_keys).active_key_id == "dev"


def test_production_refuses_the_development_seed_key(tmp_path: Path) -> None:
    environ = {
        "POKER_ENVIRONMENT": "production",
        "POKER_AUTH_KEYS": PRODUCTION_AUTH,
        "POKER_FAIRNESS_DATABASE_URL": "postgresql://x/y",
        **tls_environment(TestAuthority(tmp_path).issue("fairness")),
    }
    with pytest.raises(SettingsError) as error:
        load_settings(FairnessSettings, environ)
    assert any(p.startswith("POKER_FAIRNESS_SEED_ENCRYPTION_KEYS") for p in error.value.problems)
    settings = load_settings(
        FairnessSettings, {**environ, "POKER_FAIRNESS_SEED_ENCRYPTION_KEYS": "k1:" + "ab" * 32}
    )
    assert settings.seed_encryption_keys == ("k1:" + "ab" * 32,)


@pytest.mark.parametrize("value", ["nokey", "k1:abcd", "k1:" + "zz" * 32, ":" + "ab" * 32])
def test_malformed_seed_keys_are_listed(value: str) -> None:
    with pytest.raises(SettingsError) as error:
        load_settings(FairnessSettings, {"POKER_FAIRNESS_SEED_ENCRYPTION_KEYS": value})
    assert any(p.startswith("POKER_FAIRNESS_SEED_ENCRYPTION_KEYS") for p in error.value.problems)


def test_seed_keys_are_masked_when_settings_are_described() -> None:
    rows = describe(load_settings(FairnessSettings, {}))
    shown = {key: value for key, value, _ in rows}
    assert shown["POKER_FAIRNESS_SEED_ENCRYPTION_KEYS"] == "***"
    assert DEV_SEED_KEY_HEX not in repr(rows)


def test_rotated_keys_still_decrypt_seeds_written_under_the_old_key() -> None:
    old = SeedVault.from_settings(["k1:" + "11" * 32])
    key_id, blob = old.encrypt("hand-1", b"s" * 32)
    rotated = SeedVault.from_settings(["k2:" + "22" * 32, "k1:" + "11" * 32])
    assert rotated.active_key_id == "k2"
    assert rotated.decrypt("hand-1", key_id, blob) == b"s" * 32
