"""The optional fair-play claims of a token: the issuer's device and network signals."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys

import pytest

from service_runtime.auth import Role, mint_token, verify_token
from service_runtime.errors import Unauthenticated
from service_runtime.testing import DEV_KEYS


def test_a_token_carries_the_issuers_device_and_network_signals() -> None:
    token = mint_token(
        DEV_KEYS, "alice", [Role.PLAYER], now=100, ttl_seconds=60, device="d" * 64, network="n0f3"
    )
    caller = verify_token(DEV_KEYS, token, now=120)
    assert (caller.device, caller.network) == ("d" * 64, "n0f3")


def test_a_token_without_signals_has_empty_ones() -> None:
    caller = verify_token(DEV_KEYS, mint_token(DEV_KEYS, "bob", [Role.PLAYER], now=0, ttl_seconds=60), now=1)
    assert (caller.device, caller.network) == ("", "")


@pytest.mark.parametrize("bad", ["x" * 129, "two words", "ünï", "tab\there"])
def test_minting_refuses_a_signal_that_is_not_one(bad: str) -> None:
    with pytest.raises(ValueError, match="signal"):
        mint_token(DEV_KEYS, "alice", [Role.PLAYER], now=0, ttl_seconds=60, device=bad)


def _signed(claims: dict[str, object]) -> str:
    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "kid": DEV_KEYS.signing_key_id}).encode())
    body = b64(json.dumps(claims).encode())
    key = DEV_KEYS.keys[DEV_KEYS.signing_key_id]
    return f"{header}.{body}.{b64(hmac.new(key, f'{header}.{body}'.encode(), hashlib.sha256).digest())}"


@pytest.mark.parametrize("value", [7, ["a"], "x" * 200, "has space", "\u202e"])
def test_a_signed_token_with_a_malformed_signal_is_refused(value: object) -> None:
    token = _signed({"sub": "alice", "roles": ["player"], "exp": 10**10, "dev": value})
    with pytest.raises(Unauthenticated) as refused:
        verify_token(DEV_KEYS, token, now=0)
    assert refused.value.reason == "TOKEN_MALFORMED"


def test_a_token_carries_the_sign_ins_name_suggestion_in_any_script() -> None:
    token = mint_token(DEV_KEYS, "tg:1", [Role.PLAYER], now=0, ttl_seconds=60, suggested_name="Анна 🃏")
    assert verify_token(DEV_KEYS, token, now=1).suggested_name == "Анна 🃏"
    plain = mint_token(DEV_KEYS, "tg:1", [Role.PLAYER], now=0, ttl_seconds=60)
    assert verify_token(DEV_KEYS, plain, now=1).suggested_name == ""
    with pytest.raises(ValueError, match="name"):
        mint_token(DEV_KEYS, "tg:1", [Role.PLAYER], now=0, ttl_seconds=60, suggested_name="a\nb")


@pytest.mark.parametrize("value", [7, ["a"], "x" * 65, "line\nbreak", "\u202e"])
def test_a_signed_token_with_a_malformed_name_suggestion_is_refused(value: object) -> None:
    token = _signed({"sub": "alice", "roles": ["player"], "exp": 10**10, "nm": value})
    with pytest.raises(Unauthenticated) as refused:
        verify_token(DEV_KEYS, token, now=0)
    assert refused.value.reason == "TOKEN_MALFORMED"


def test_mint_token_command_sets_the_signals() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "service_runtime.mint_token", "--subject", "alice", "--device", "dev1", "--network", "net1"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    caller = verify_token(DEV_KEYS, out.stdout.strip(), now=0)
    assert (caller.device, caller.network) == ("dev1", "net1")
