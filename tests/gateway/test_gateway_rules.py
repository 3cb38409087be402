"""The gateway's pure parts: what it serves to whom, Telegram's signature check, player-id spaces,
signals, rate limits and replay refusal."""

from __future__ import annotations

import asyncio
import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service_runtime.auth import Role, valid_signal
from service_runtime.errors import InvalidArgument, ResourceExhausted, Unauthenticated
from services.cashier.ledger import check_player_id
from services.gateway import identity
from services.gateway.access import ACCESS, FORWARDED
from services.gateway.rate_limits import Rate, RateLimiter
from services.gateway.replay import MemoryReplayGuard
from services.gateway.telegram import verify_init_data
from tests.gateway.telegram_signing import init_data

BOT = "42:abcdefghijklmnopqrstuvwxyz"
BACKENDS = {
    "poker.lobby.v1.LobbyService": "lobby",
    "poker.table.v1.TableService": "table",
    "poker.cashier.v1.CashierService": "cashier",
    "poker.history.v1.HistoryService": "history",
    "poker.fairness.v1.FairnessService": "fairness",
}


def test_the_gateway_serves_no_method_the_service_behind_does_not_grant_players() -> None:
    for service, name in BACKENDS.items():
        backend = importlib.import_module(f"services.{name}.assembly").ACCESS
        for method in FORWARDED[service]:
            assert Role.PLAYER in backend.allowed_roles(f"/{service}/{method}"), (service, method)
        served = {m for m, who in ACCESS.roles.items() if m.startswith(f"/{service}/") and who}
        assert served == {f"/{service}/{m}" for m in FORWARDED[service]}
    # Withdrawals go through the payments service; the gateway only reads the cashier.
    assert not ACCESS.allowed_roles("/poker.cashier.v1.CashierService/Withdraw")
    assert ACCESS.is_public("/poker.gateway.v1.GatewayService/SignIn")


def test_init_data_signed_as_telegram_documents_verifies_and_anything_else_does_not() -> None:
    now = 1_800_000_000
    user = verify_init_data(
        init_data(BOT, 77, first_name="Bo", auth_date=now), BOT, now=now, max_age_seconds=60
    )
    assert (user.user_id, user.first_name, user.auth_date) == (77, "Bo", now)
    with pytest.raises(Unauthenticated) as wrong_bot:
        verify_init_data(
            init_data("43:abcdefghijklmnopqrstuvwxyz", 77, auth_date=now), BOT, now=now, max_age_seconds=60
        )
    assert wrong_bot.value.reason == "INIT_DATA_INVALID"
    with pytest.raises(Unauthenticated) as old:
        verify_init_data(init_data(BOT, 77, auth_date=now - 61), BOT, now=now, max_age_seconds=60)
    assert old.value.reason == "INIT_DATA_EXPIRED"


@given(st.text(max_size=300))
def test_no_string_crashes_the_init_data_check(text: str) -> None:
    with pytest.raises(Unauthenticated):
        verify_init_data(text, BOT, now=1_800_000_000, max_age_seconds=60)


@given(
    st.integers(min_value=1, max_value=2**52 - 1),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}", fullmatch=True),
)
def test_telegram_and_development_ids_never_collide_and_never_name_a_system_owner(
    user_id: int, name: str
) -> None:
    telegram = identity.telegram_player_id(user_id)
    check_player_id(telegram)
    assert "/" not in telegram
    try:
        development = identity.development_player_id(name)
    except InvalidArgument:
        return
    check_player_id(development)
    assert development != telegram
    assert ":" not in development
    assert "/" not in development


@given(st.text(max_size=80), st.text(max_size=600), st.text(max_size=60))
def test_signals_are_always_valid_token_claims(device_id: str, user_agent: str, address: str) -> None:
    key = b"k" * 32
    assert valid_signal(identity.device_signal(key, device_id, user_agent))
    assert valid_signal(identity.network_signal(key, address))


def test_one_network_prefix_is_one_signal_and_the_address_itself_is_not_in_it() -> None:
    key = b"k" * 32
    assert identity.network_signal(key, "203.0.113.7") == identity.network_signal(key, "203.0.113.200")
    assert identity.network_signal(key, "203.0.113.7") != identity.network_signal(key, "203.0.114.7")
    assert identity.network_signal(key, "::ffff:203.0.113.7") == identity.network_signal(key, "203.0.113.9")
    assert "203" not in identity.network_signal(key, "203.0.113.7")
    assert identity.network_signal(key, "203.0.113.7") != identity.network_signal(b"x" * 32, "203.0.113.7")


def test_a_bucket_refuses_past_its_burst_and_refills_at_its_rate() -> None:
    now = [0.0]
    limiter = RateLimiter(Rate(per_second=2.0, burst=3), "player", clock=lambda: now[0])
    for _ in range(3):
        limiter.take("p")
    with pytest.raises(ResourceExhausted) as refused:
        limiter.take("p")
    assert refused.value.reason == "GATEWAY_RATE_LIMITED"
    assert refused.value.metadata["retry_after_seconds"] == "1"
    limiter.take("q")  # another key has its own bucket
    now[0] = 0.5
    limiter.take("p")
    with pytest.raises(ResourceExhausted):
        limiter.take("p")


def test_replay_guard_refuses_a_second_claim_until_it_expires() -> None:
    now = [0.0]
    guard = MemoryReplayGuard(clock=lambda: now[0])

    async def run() -> None:
        await guard.claim("h", 10)
        with pytest.raises(Unauthenticated) as again:
            await guard.claim("h", 10)
        assert again.value.reason == "INIT_DATA_REPLAYED"
        now[0] = 11
        await guard.claim("h", 10)

    asyncio.run(run())
