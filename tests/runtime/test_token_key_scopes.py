"""Key scopes: a signing key given only to the internet-facing gateway may sign player tokens, never an
admin's or a service's, so whoever takes the gateway over cannot mint themselves more than a player."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from service_runtime.auth import KeyScope, Role, TokenKeys, mint_token, verify_token
from service_runtime.errors import Unauthenticated
from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import SettingsError, load_settings

FULL = "k1:" + "a" * 32
GATEWAY = "gw1/player:" + "b" * 32


def _forged_with_secret(kid: str, secret: str, claims: dict[str, object]) -> str:
    """What an attacker holding the gateway's secret signs by hand, bypassing mint_token's check."""

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    body = b64(json.dumps(claims).encode())
    signature = hmac.new(secret.encode(), f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64(signature)}"


def test_a_key_entry_may_name_its_scope() -> None:
    keys = TokenKeys.from_settings([FULL, GATEWAY])
    assert keys.scope_of("k1") is KeyScope.ANY
    assert keys.scope_of("gw1") is KeyScope.PLAYER
    assert keys.keys["gw1"] == b"b" * 32
    assert keys.signing_key_id == "k1"


def test_a_player_scoped_key_signs_player_tokens_that_every_service_accepts() -> None:
    gateway = TokenKeys.from_settings([GATEWAY])
    services = TokenKeys.from_settings([FULL, GATEWAY])
    token = mint_token(gateway, "alice", [Role.PLAYER], now=0, ttl_seconds=60)
    caller = verify_token(services, token, now=1)
    assert (caller.subject, caller.roles) == ("alice", frozenset({Role.PLAYER}))


@pytest.mark.parametrize("roles", [[Role.ADMIN], [Role.SERVICE], [Role.PLAYER, Role.ADMIN]])
def test_a_player_scoped_key_refuses_to_mint_more(roles: list[Role]) -> None:
    with pytest.raises(ValueError, match="may not sign these roles"):
        mint_token(TokenKeys.from_settings([GATEWAY]), "cashier", roles, now=0, ttl_seconds=60)


@pytest.mark.parametrize("roles", [["admin"], ["service"], ["player", "admin"]])
def test_a_token_beyond_its_keys_scope_is_refused_by_every_verifier(roles: list[str]) -> None:
    services = TokenKeys.from_settings([FULL, GATEWAY])
    token = _forged_with_secret("gw1", "b" * 32, {"sub": "cashier", "roles": roles, "exp": 10**10})
    with pytest.raises(Unauthenticated) as refused:
        verify_token(services, token, now=0)
    assert refused.value.reason == "TOKEN_KEY_SCOPE"


def test_the_full_key_still_signs_every_role() -> None:
    keys = TokenKeys.from_settings([FULL, GATEWAY])
    token = mint_token(keys, "ops", [Role.ADMIN], now=0, ttl_seconds=60)
    assert verify_token(keys, token, now=1).roles == frozenset({Role.ADMIN})


@pytest.mark.parametrize(
    "entry", ["gw1/admin:" + "b" * 32, "gw1/:" + "b" * 32, "/player:" + "b" * 32, "gw1/player:short"]
)
def test_settings_refuse_an_unknown_scope_or_a_bad_entry(entry: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(ServiceSettings, {"POKER_AUTH_KEYS": f"{FULL},{entry}"})
    assert "POKER_AUTH_KEYS" in "\n".join(caught.value.problems)


def test_settings_accept_a_scoped_key() -> None:
    settings = load_settings(ServiceSettings, {"POKER_AUTH_KEYS": f"{FULL},{GATEWAY}"})
    assert TokenKeys.from_settings(settings.auth_keys).scope_of("gw1") is KeyScope.PLAYER


def test_production_refuses_the_development_key_under_any_scope() -> None:
    from service_runtime.testing import DEV_KEY_ID, DEV_SIGNING_KEY

    with pytest.raises(SettingsError) as caught:
        load_settings(
            ServiceSettings,
            {
                "POKER_ENVIRONMENT": "production",
                "POKER_AUTH_KEYS": f"{FULL},{DEV_KEY_ID}/player:{DEV_SIGNING_KEY}",
                "POKER_TLS_CERT_FILE": "/nonexistent",
            },
        )
    assert "development signing key" in "\n".join(caught.value.problems)


# Issue 38: the staff's front door signs with a key of its own scope, `staff`: staff roles only (never a
# player's or a service's token), and for at most an hour, so a staff token is short-lived wherever
# it is presented and whoever holds the key cannot mint a long-lived one.
STAFF = "bo1/staff:" + "c" * 32


def test_a_staff_scoped_key_signs_staff_tokens_only_and_short_ones() -> None:
    keys = TokenKeys.from_settings([STAFF, FULL])
    every = TokenKeys.from_settings([FULL, STAFF])
    assert keys.scope_of("bo1") is KeyScope.STAFF
    token = mint_token(keys, "tg:77", [Role.RISK, Role.SUPPORT], now=0, ttl_seconds=900)
    assert verify_token(every, token, now=1).roles == frozenset({Role.RISK, Role.SUPPORT})
    for roles in ([Role.PLAYER], [Role.SERVICE], [Role.RISK, Role.PLAYER]):
        with pytest.raises(ValueError, match="may not sign these roles"):
            mint_token(keys, "x", roles, now=0, ttl_seconds=900)
    with pytest.raises(ValueError, match="hour"):
        mint_token(keys, "tg:77", [Role.FINANCE], now=0, ttl_seconds=3601)


@pytest.mark.parametrize(
    ("roles", "lifetime"), [(["player"], 60), (["service"], 60), (["finance"], 3601), (["admin"], 10**6)]
)
def test_a_staff_keys_forgery_beyond_its_scope_or_an_hour_is_refused(roles: list[str], lifetime: int) -> None:
    keys = TokenKeys.from_settings([FULL, STAFF])
    forged = _forged_with_secret("bo1", "c" * 32, {"sub": "x", "roles": roles, "iat": 0, "exp": lifetime})
    with pytest.raises(Unauthenticated) as caught:
        verify_token(keys, forged, now=1)
    assert caught.value.reason == "TOKEN_KEY_SCOPE"


# The gateway's own identity (it records the staff's actions in the audit trail): a `gateway`-scoped
# key signs the gateway's service token and nothing else, for at most an hour.
OWN_IDENTITY = "gs1/gateway:" + "d" * 32


def test_a_gateway_scoped_key_signs_only_the_gateways_own_short_service_token() -> None:
    keys = TokenKeys.from_settings([OWN_IDENTITY, FULL])
    every = TokenKeys.from_settings([FULL, OWN_IDENTITY])
    token = mint_token(keys, "gateway", [Role.SERVICE], now=0, ttl_seconds=900)
    caller = verify_token(every, token, now=1)
    assert (caller.subject, caller.roles) == ("gateway", frozenset({Role.SERVICE}))
    for subject, roles in (("table", [Role.SERVICE]), ("gateway", [Role.PLAYER]), ("anna", [Role.FINANCE])):
        with pytest.raises(ValueError, match="may not sign"):
            mint_token(keys, subject, roles, now=0, ttl_seconds=900)
    with pytest.raises(ValueError, match="hour"):
        mint_token(keys, "gateway", [Role.SERVICE], now=0, ttl_seconds=3601)


@pytest.mark.parametrize(
    ("subject", "roles", "lifetime"),
    [
        ("cashier", ["service"], 60),
        ("payments", ["service"], 60),
        ("gateway", ["service"], 3601),
        ("g", ["risk"], 60),
    ],
)
def test_a_gateway_keys_forgery_of_another_identity_is_refused(
    subject: str, roles: list[str], lifetime: int
) -> None:
    keys = TokenKeys.from_settings([FULL, OWN_IDENTITY])
    forged = _forged_with_secret("gs1", "d" * 32, {"sub": subject, "roles": roles, "iat": 0, "exp": lifetime})
    with pytest.raises(Unauthenticated) as caught:
        verify_token(keys, forged, now=1)
    assert caught.value.reason == "TOKEN_KEY_SCOPE"
