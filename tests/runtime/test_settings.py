"""Settings are read once, validated, and every bad key is reported in one error."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from service_runtime.service_settings import DEV_SIGNING_KEY, ServiceSettings
from service_runtime.settings import SettingsError, load_settings, setting
from service_runtime.testing_pki import TestAuthority, tls_environment


@dataclass(frozen=True, kw_only=True)
class ExampleSettings(ServiceSettings):
    ENV_PREFIX: ClassVar[str] = "POKER_EXAMPLE_"
    SERVICE: ClassVar[str] = "example"
    DEFAULT_PORT: ClassVar[int] = 50999

    table_count: int = setting(help="how many tables", check=lambda v: None if v > 0 else "must be positive")
    enable_stars: bool = setting(False, help="Telegram Stars purchases")


def test_defaults_fill_everything_but_required_keys() -> None:
    settings = load_settings(ExampleSettings, {"POKER_EXAMPLE_TABLE_COUNT": "3"})
    assert settings.port == 50999
    assert settings.table_count == 3
    assert settings.enable_stars is False
    assert settings.data_dir == Path("data")
    assert settings.resolved_database_url() == "sqlite+aiosqlite:///data/example.db"


def test_every_missing_or_bad_key_is_listed_in_one_error() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(
            ExampleSettings,
            {
                "POKER_EXAMPLE_PORT": "eighty",
                "POKER_EXAMPLE_ENABLE_STARS": "maybe",
                "POKER_LOG_FORMAT": "xml",
            },
        )
    keys = " ".join(caught.value.problems)
    assert "POKER_EXAMPLE_TABLE_COUNT" in keys
    assert "POKER_EXAMPLE_PORT" in keys
    assert "POKER_EXAMPLE_ENABLE_STARS" in keys
    assert len(caught.value.problems) == 3


def test_validators_run_on_every_field_and_report_together() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(
            ExampleSettings,
            {"POKER_EXAMPLE_TABLE_COUNT": "0", "POKER_LOG_FORMAT": "xml", "POKER_AUTH_KEYS": "k:short"},
        )
    text = "\n".join(caught.value.problems)
    assert "POKER_EXAMPLE_TABLE_COUNT: must be positive" in text
    assert "POKER_EXAMPLE_LOG_FORMAT" in text
    assert "POKER_EXAMPLE_AUTH_KEYS" in text


def test_shared_keys_are_read_without_the_service_prefix() -> None:
    settings = load_settings(
        ExampleSettings, {"POKER_EXAMPLE_TABLE_COUNT": "1", "POKER_AUTH_KEYS": "k1:0123456789abcdef0123"}
    )
    assert settings.auth_keys == ("k1:0123456789abcdef0123",)


def test_production_refuses_the_development_signing_key_and_embedded_database() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(ExampleSettings, {"POKER_EXAMPLE_TABLE_COUNT": "1", "POKER_ENVIRONMENT": "production"})
    text = "\n".join(caught.value.problems)
    assert "development signing key" in text
    assert "DATABASE_URL" in text
    assert DEV_SIGNING_KEY not in text, "the error must not print a secret"


def test_settings_are_frozen() -> None:
    settings = load_settings(ExampleSettings, {"POKER_EXAMPLE_TABLE_COUNT": "1"})
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]


def test_a_service_that_stores_nothing_needs_no_database_in_production(tmp_path: Path) -> None:
    """The table shard keeps no data of its own (hands live in Redis or memory, money in the cashier)."""
    from services.table.settings import TableSettings

    production = {
        "POKER_ENVIRONMENT": "production",
        "POKER_AUTH_KEYS": "k1:" + "x" * 32,
        **tls_environment(TestAuthority(tmp_path).issue("table")),
    }
    assert load_settings(TableSettings, production).validate() == []
    with pytest.raises(SettingsError) as caught:
        load_settings(ExampleSettings, {**production, "POKER_EXAMPLE_TABLE_COUNT": "1"})
    assert "POKER_EXAMPLE_DATABASE_URL: required in production" in caught.value.problems


def test_production_refuses_plaintext() -> None:
    production = {"POKER_ENVIRONMENT": "production", "POKER_AUTH_KEYS": "k1:" + "x" * 32}
    with pytest.raises(SettingsError) as caught:
        load_settings(ExampleSettings, {**production, "POKER_EXAMPLE_TABLE_COUNT": "1"})
    assert any(p.startswith("POKER_TLS_CERT_FILE: required in production") for p in caught.value.problems)
    # Development may run plaintext.
    assert load_settings(ExampleSettings, {"POKER_EXAMPLE_TABLE_COUNT": "1"}).tls_cert_file == ""


def test_tls_files_come_as_a_set_and_must_exist(tmp_path: Path) -> None:
    files = TestAuthority(tmp_path).issue("example")
    with pytest.raises(SettingsError) as caught:
        load_settings(
            ExampleSettings,
            {
                "POKER_EXAMPLE_TABLE_COUNT": "1",
                "POKER_TLS_CERT_FILE": str(files.cert_file),
                "POKER_TLS_CA_FILE": str(tmp_path / "missing.crt"),
            },
        )
    problems = "\n".join(caught.value.problems)
    assert "POKER_TLS_KEY_FILE: required with the other TLS files" in problems
    assert "POKER_TLS_CA_FILE: no such file" in problems
    settings = load_settings(ExampleSettings, {"POKER_EXAMPLE_TABLE_COUNT": "1", **tls_environment(files)})
    assert settings.tls_key_file == str(files.key_file)
