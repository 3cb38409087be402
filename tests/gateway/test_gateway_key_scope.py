"""The gateway faces the internet, so it holds only a key that signs player tokens: taking it over never
yields an admin's or a service's token."""

from __future__ import annotations

import pytest

from service_runtime.settings import SettingsError, load_settings
from services.gateway.settings import GatewaySettings

FULL = "k1:" + "a" * 32
PLAYER_KEY = "gw1/player:" + "b" * 32
PRODUCTION = {
    "POKER_ENVIRONMENT": "production",
    "POKER_GATEWAY_SIGNAL_KEY": "s" * 32,
    "POKER_GATEWAY_PURCHASE_FLOW": "none",
}


def _key_problems(environ: dict[str, str]) -> list[str]:
    try:
        load_settings(GatewaySettings, environ)
    except SettingsError as caught:
        return [p for p in caught.problems if "AUTH_KEYS" in p or "PURCHASE_FLOW" in p]
    return []


@pytest.mark.parametrize("keys", [FULL, f"{PLAYER_KEY},{FULL}", f"{FULL},{PLAYER_KEY}"])
def test_production_refuses_a_gateway_holding_a_key_that_signs_more_than_player_tokens(keys: str) -> None:
    problems = _key_problems({**PRODUCTION, "POKER_GATEWAY_AUTH_KEYS": keys})
    assert any("player-scoped" in p for p in problems), problems


def test_production_accepts_a_gateway_with_its_own_player_scoped_key() -> None:
    assert _key_problems({**PRODUCTION, "POKER_GATEWAY_AUTH_KEYS": PLAYER_KEY}) == []


def test_the_gateways_own_setting_wins_over_the_services_shared_keys() -> None:
    environ = {**PRODUCTION, "POKER_AUTH_KEYS": FULL, "POKER_GATEWAY_AUTH_KEYS": PLAYER_KEY}
    assert _key_problems(environ) == []


def test_the_development_purchase_flow_needs_a_key_that_signs_the_payments_token() -> None:
    problems = _key_problems(
        {"POKER_GATEWAY_AUTH_KEYS": PLAYER_KEY, "POKER_GATEWAY_PURCHASE_FLOW": "development"}
    )
    assert any("PURCHASE_FLOW" in p for p in problems), problems
    assert _key_problems({"POKER_GATEWAY_AUTH_KEYS": PLAYER_KEY, "POKER_GATEWAY_PURCHASE_FLOW": "none"}) == []
