"""A production gateway (a real process, HTTPS, its own player-scoped key) never offers or accepts the
development sign-in by name, whatever DEVELOPMENT_SIGN_IN says, and never sells development chips: its
default purchase flow is `none`, and it refuses to start with the development flow. Telegram sign-in
without a bot token is refused with SIGN_IN_METHOD_DISABLED (issue 27)."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.rpc import error_details_pb2

from service_runtime.auth import Role, TokenKeys, mint_token, verify_token
from service_runtime.service_settings import DEV_KEY_ID, DEV_SIGNING_KEY
from service_runtime.testing import DEV_KEYS
from service_runtime.testing_pki import TestAuthority, tls_environment
from tests.gateway.gateway_process import running_gateway
from tests.gateway.telegram_signing import init_data
from tests.security.service_processes import ServiceProcess

BOT_TOKEN = "123456789:TEST-bot-token-for-the-production-gateway-test"
PLAYER_KEY = "gw1/player:" + "p" * 40
GATEWAY = "poker.gateway.v1.GatewayService"


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]

    @property
    def refusal(self) -> tuple[str, str]:
        """The Connect code and the catalogue reason of an error answer."""
        reason = ""
        for detail in self.body.get("details", []):
            if detail.get("type") == "google.rpc.ErrorInfo":
                raw = str(detail["value"])
                info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
                reason = info.reason
        return str(self.body.get("code", "")), reason


def _call(
    base: str, method: str, body: dict[str, Any], context: ssl.SSLContext | None, token: str = ""
) -> Answer:
    """One Connect unary call in JSON (what a browser sends)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{base}/{method}", data=json.dumps(body).encode(), headers=headers)
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
    )
    try:
        with opener.open(request, timeout=20) as reply:
            return Answer(reply.status, json.loads(reply.read()))
    except urllib.error.HTTPError as error:
        return Answer(error.code, json.loads(error.read()))


@dataclass(frozen=True)
class Production:
    url: str
    context: ssl.SSLContext
    process: ServiceProcess


def _production_env(tmp_path: Path) -> dict[str, str]:
    files = TestAuthority(tmp_path / "pki").issue("gateway")
    return {
        "POKER_ENVIRONMENT": "production",
        **tls_environment(files),
        "POKER_GATEWAY_AUTH_KEYS": PLAYER_KEY,
        "POKER_GATEWAY_SIGNAL_KEY": "production-signal-key-" + "s" * 20,
        "POKER_GATEWAY_TELEGRAM_BOT_TOKEN": BOT_TOKEN,
    }


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Production]:
    env = _production_env(tmp_path_factory.mktemp("production-gateway"))
    # Asked for, and still never offered in production.
    env["POKER_GATEWAY_DEVELOPMENT_SIGN_IN"] = "true"
    context = ssl.create_default_context(cafile=env["POKER_TLS_CA_FILE"])
    with running_gateway({}, env) as gateway:
        yield Production(f"https://{gateway.address}", context, gateway)


def test_a_production_gateway_never_offers_or_accepts_the_sign_in_by_name(production: Production) -> None:
    options = _call(production.url, f"{GATEWAY}/GetSignInOptions", {}, production.context)
    assert options.status == 200
    assert options.body.get("telegram") is True
    assert not options.body.get("development")
    by_name = _call(
        production.url,
        f"{GATEWAY}/SignIn",
        {"developmentName": "alice", "deviceId": "device-1"},
        production.context,
    )
    assert by_name.refusal == ("failed_precondition", "SIGN_IN_METHOD_DISABLED")
    assert "token" not in json.dumps(by_name.body)
    # Telegram's sign-in works, with a player token signed by the gateway's own player-scoped key.
    signed = _call(
        production.url,
        f"{GATEWAY}/SignIn",
        {"telegramInitData": init_data(BOT_TOKEN, 9001), "deviceId": "device-1"},
        production.context,
    )
    assert signed.status == 200, signed.body
    caller = verify_token(
        TokenKeys.from_settings((PLAYER_KEY,)), signed.body["session"]["token"], now=int(time.time())
    )
    assert (caller.subject, caller.roles) == ("tg:9001", frozenset({Role.PLAYER}))


def test_a_production_gateway_sells_no_development_chips(production: Production) -> None:
    token = _call(
        production.url,
        f"{GATEWAY}/SignIn",
        {"telegramInitData": init_data(BOT_TOKEN, 9002), "deviceId": "device-1"},
        production.context,
    ).body["session"]["token"]
    options = _call(production.url, f"{GATEWAY}/ListPurchaseOptions", {}, production.context, token)
    assert options.status == 200, options.body
    methods = {o.get("method") for o in options.body.get("options", [])}
    assert "PURCHASE_METHOD_DEVELOPMENT" not in methods
    assert not any(o.get("available") for o in options.body.get("options", []))
    buy = {
        "requestId": "prod-buy-1",
        "method": "PURCHASE_METHOD_DEVELOPMENT",
        "pool": "CHIP_POOL_GRAM",
        "chips": 1000,
    }
    refused = _call(production.url, f"{GATEWAY}/StartPurchase", buy, production.context, token)
    assert refused.refusal == ("failed_precondition", "PURCHASES_NOT_CONFIGURED")


def test_a_production_gateway_refuses_to_start_with_the_development_purchase_flow(tmp_path: Path) -> None:
    env = {**os.environ, **_production_env(tmp_path), "POKER_GATEWAY_PURCHASE_FLOW": "development"}
    done = subprocess.run(
        [sys.executable, "-m", "services.gateway"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "POKER_GATEWAY_PURCHASE_FLOW: the development flow is not allowed in production" in done.stderr
    assert "listening" not in done.stdout


def test_without_a_bot_token_telegram_sign_in_is_disabled_and_so_is_the_name_when_switched_off() -> None:
    with running_gateway({}, {"POKER_GATEWAY_DEVELOPMENT_SIGN_IN": "false"}) as gateway:
        url = f"http://{gateway.address}"
        options = _call(url, f"{GATEWAY}/GetSignInOptions", {}, None)
        assert options.status == 200
        assert not options.body.get("telegram")
        assert not options.body.get("development")
        telegram = _call(
            url, f"{GATEWAY}/SignIn", {"telegramInitData": init_data(BOT_TOKEN, 1), "deviceId": "d"}, None
        )
        assert telegram.refusal == ("failed_precondition", "SIGN_IN_METHOD_DISABLED")
        by_name = _call(url, f"{GATEWAY}/SignIn", {"developmentName": "alice", "deviceId": "d"}, None)
        assert by_name.refusal == ("failed_precondition", "SIGN_IN_METHOD_DISABLED")


def test_a_production_gateway_refuses_a_token_signed_with_the_development_key(production: Production) -> None:
    """In development the gateway takes any dev-key player token (for `tg:<anyone>` too); production
    holds only its own player-scoped key, so a dev-key token is no token (issue 41)."""
    forged = mint_token(DEV_KEYS, "tg:9003", (Role.PLAYER,), now=int(time.time()), ttl_seconds=600)
    refused = _call(production.url, f"{GATEWAY}/ListPurchaseOptions", {}, production.context, forged)
    assert refused.status == 401
    assert refused.refusal[0] == "unauthenticated"


def test_a_production_gateway_refuses_to_start_with_the_development_signing_key(tmp_path: Path) -> None:
    dev_key = f"{DEV_KEY_ID}:{DEV_SIGNING_KEY}"
    for variable in ("POKER_GATEWAY_AUTH_KEYS", "POKER_AUTH_KEYS"):
        env = {**os.environ, **_production_env(tmp_path), variable: dev_key}
        if variable == "POKER_AUTH_KEYS":
            env.pop("POKER_GATEWAY_AUTH_KEYS")
        done = subprocess.run(
            [sys.executable, "-m", "services.gateway"], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
        assert "the development signing key is not allowed in production" in done.stderr
        assert "listening" not in done.stdout


def test_with_tls_ending_at_the_gateway_every_answer_carries_hsts_and_api_answers_are_not_stored(
    production: Production,
) -> None:
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=production.context)
    )
    api = urllib.request.Request(
        f"{production.url}/{GATEWAY}/GetSignInOptions",
        data=b"{}",
        headers={"Content-Type": "application/json"},
    )
    with opener.open(api, timeout=20) as reply:
        assert reply.headers["Strict-Transport-Security"] == "max-age=31536000"
        assert reply.headers["Cache-Control"] == "no-store"
    with opener.open(f"{production.url}/healthz", timeout=20) as reply:
        assert reply.headers["Strict-Transport-Security"] == "max-age=31536000"
