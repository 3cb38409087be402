"""Verified tokens kept until they expire (issue 28: the runtime's cost per call), never after."""

from __future__ import annotations

import pytest

from service_runtime import auth
from service_runtime.auth import Role, VerifiedTokens, mint_token
from service_runtime.errors import Unauthenticated
from service_runtime.testing import DEV_KEYS


def _count_verifications(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = auth.verify_token

    def counting(keys: auth.TokenKeys, token: str, *, now: int) -> auth.Caller:
        seen.append(token)
        return real(keys, token, now=now)

    monkeypatch.setattr(auth, "verify_token", counting)
    return seen


def test_a_token_is_verified_once_and_its_caller_kept_until_it_expires(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _count_verifications(monkeypatch)
    tokens = VerifiedTokens(DEV_KEYS)
    token = mint_token(DEV_KEYS, "alice", [Role.PLAYER], now=100, ttl_seconds=60)
    first = tokens.verify(token, now=100)
    assert tokens.verify(token, now=159) is first
    assert (first.subject, len(seen)) == ("alice", 1)
    # At its exp the kept caller is gone: verified again, which refuses it, and nothing is kept.
    with pytest.raises(Unauthenticated) as refused:
        tokens.verify(token, now=160)
    assert refused.value.reason == "TOKEN_EXPIRED"
    assert (len(seen), len(tokens)) == (2, 0)


def test_a_forged_token_is_refused_however_close_to_a_kept_one() -> None:
    tokens = VerifiedTokens(DEV_KEYS)
    token = mint_token(DEV_KEYS, "alice", [Role.PLAYER], now=100, ttl_seconds=60)
    tokens.verify(token, now=100)
    header, _claims, signature = token.split(".")
    admin = mint_token(DEV_KEYS, "alice", [Role.ADMIN], now=100, ttl_seconds=60).split(".")[1]
    for forged in (f"{header}.{admin}.{signature}", f"{token}x", token[:-1]):
        with pytest.raises(Unauthenticated):
            tokens.verify(forged, now=101)
    assert len(tokens) == 1


def test_the_kept_tokens_are_bounded_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _count_verifications(monkeypatch)
    tokens = VerifiedTokens(DEV_KEYS, capacity=3)
    minted = [mint_token(DEV_KEYS, f"p{n}", [Role.PLAYER], now=0, ttl_seconds=600) for n in range(4)]
    for token in minted:
        tokens.verify(token, now=1)
    assert len(tokens) == 3
    tokens.verify(minted[3], now=2)
    tokens.verify(minted[1], now=2)
    assert len(seen) == 4
    tokens.verify(minted[0], now=2)  # the oldest was dropped: verified again
    assert len(seen) == 5
