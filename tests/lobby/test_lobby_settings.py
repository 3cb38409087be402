"""The lobby's settings: defaults, and every bad key listed in one error."""

from __future__ import annotations

import pytest

from service_runtime.settings import SettingsError, load_settings
from services.lobby.settings import LobbySettings


def test_defaults_route_to_one_local_shard_with_open_access() -> None:
    settings = load_settings(LobbySettings, {})
    assert (settings.port, settings.closed_access, settings.redis_url) == (50051, False, "")
    assert (settings.table_shard_id, settings.table_shard_address, settings.redis_prefix) == (
        "table-0", "127.0.0.1:50052", "poker:",
    )  # fmt: skip


def test_closed_access_and_bad_shard_keys_are_read_and_checked() -> None:
    assert load_settings(LobbySettings, {"POKER_LOBBY_CLOSED_ACCESS": "true"}).closed_access
    with pytest.raises(SettingsError) as error:
        load_settings(
            LobbySettings,
            {"POKER_LOBBY_TABLE_SHARD_ID": "bad id!", "POKER_LOBBY_TABLE_SHARD_ADDRESS": "nowhere"},
        )
    assert len(error.value.problems) == 2
