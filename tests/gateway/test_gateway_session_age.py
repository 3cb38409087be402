"""A gateway session ends a fixed time after its sign-in: a stolen token cannot be renewed for ever."""

from __future__ import annotations

import time

import pytest

from poker.gateway.v1 import gateway_pb2
from service_runtime.auth import Caller, Role, TokenKeys, verify_token
from service_runtime.errors import Unauthenticated
from service_runtime.testing import DEV_KEYS, token_for
from services.gateway.replay import MemoryReplayGuard
from services.gateway.sessions import Client, Sessions, SignInPolicy

TTL = 900
MAX_AGE = 3_600
T0 = 1_800_000_000
CLIENT = Client(address="203.0.113.7", user_agent="test")


def _sessions(keys: TokenKeys = DEV_KEYS) -> Sessions:
    policy = SignInPolicy(
        bot_token="",
        init_data_max_age_seconds=300,
        token_ttl_seconds=TTL,
        development_sign_in=True,
        signal_key=b"k" * 32,
        session_max_seconds=MAX_AGE,
    )
    return Sessions(keys, policy, MemoryReplayGuard())


async def _signed_in(sessions: Sessions) -> gateway_pb2.Session:
    request = gateway_pb2.SignInRequest(development_name="gina", device_id="device-1")
    return await sessions.sign_in(request, CLIENT, now=T0)


def _renew(sessions: Sessions, token: str, now: int) -> gateway_pb2.Session:
    caller = verify_token(DEV_KEYS, token, now=now)
    return sessions.renew(caller, gateway_pb2.RenewTokenRequest(device_id="device-1"), CLIENT, now=now)


async def test_renewals_keep_the_sign_in_time_and_stop_at_the_sessions_end() -> None:
    sessions = _sessions()
    token = (await _signed_in(sessions)).token
    now = T0
    # Renewed at each half-life, as the page does, until the session's hour is up.
    while now + TTL // 2 < T0 + MAX_AGE:
        now += TTL // 2
        renewed = _renew(sessions, token, now)
        assert verify_token(DEV_KEYS, renewed.token, now=now).signed_in_at == T0
        # No token outlives its session.
        assert renewed.expire_time.seconds <= T0 + MAX_AGE
        token = renewed.token
    # The session's last token ends with it: nothing is left to renew.
    with pytest.raises(Unauthenticated) as refused:
        _renew(sessions, token, T0 + MAX_AGE)
    assert refused.value.reason == "TOKEN_EXPIRED"


def test_a_token_still_valid_past_its_sessions_end_is_not_renewed() -> None:
    """(A token of a gateway with a longer maximum age, say, before the setting was lowered.)"""
    caller = Caller(subject="gina", roles=frozenset({Role.PLAYER}), expires_at=T0 + 10**6, signed_in_at=T0)
    with pytest.raises(Unauthenticated) as refused:
        _sessions().renew(caller, gateway_pb2.RenewTokenRequest(device_id="d"), CLIENT, now=T0 + MAX_AGE)
    assert refused.value.reason == "SESSION_EXPIRED"


def test_the_last_token_of_a_session_expires_with_it() -> None:
    now = T0 + MAX_AGE - 100
    caller = Caller(subject="gina", roles=frozenset({Role.PLAYER}), expires_at=now + 400, signed_in_at=T0)
    late = _sessions().renew(caller, gateway_pb2.RenewTokenRequest(device_id="d"), CLIENT, now=now)
    assert late.expire_time.seconds == T0 + MAX_AGE
    with pytest.raises(Unauthenticated) as expired:
        verify_token(DEV_KEYS, late.token, now=T0 + MAX_AGE)
    assert expired.value.reason == "TOKEN_EXPIRED"


def test_a_player_token_that_is_no_gateway_session_is_not_renewed() -> None:
    with pytest.raises(Unauthenticated) as refused:
        _renew(_sessions(), token_for("gina"), now=int(time.time()))
    assert refused.value.reason == "SESSION_EXPIRED"
