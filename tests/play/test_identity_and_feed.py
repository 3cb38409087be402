"""Signing in (development tokens, production tokens) and the stream that reconnects by itself."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from clients.play.feed import Link, LinkState, TableFeed, Update, reconnect_delay
from clients.play.gateway import PlayError
from clients.play.identity import SignInError, check_name, development_identity, production_identity
from clients.play.main import identity_from, settings_from
from poker.table.v1 import table_pb2
from service_runtime.auth import Role, ServiceName, verify_token
from service_runtime.service_settings import DEV_KEY_ID, DEV_SIGNING_KEY
from service_runtime.testing import DEV_KEYS, token_for

DEV_AUTH_KEYS = (f"{DEV_KEY_ID}:{DEV_SIGNING_KEY}",)


def test_a_development_sign_in_mints_a_player_token_and_a_payments_gateway_token() -> None:
    identity = development_identity("ann", DEV_AUTH_KEYS)
    player = verify_token(DEV_KEYS, identity.token(), now=int(time.time()))
    assert (player.subject, player.roles) == ("ann", frozenset({Role.PLAYER}))
    assert identity.payments_token is not None
    payments = verify_token(DEV_KEYS, identity.payments_token(), now=int(time.time()))
    assert payments.service is ServiceName.PAYMENTS
    assert identity.development


@pytest.mark.parametrize("name", ["", " ", "-ann", "a/b", "x" * 33, "payments", "House", "ann smith"])
def test_a_name_that_cannot_be_a_player_or_a_display_name_is_refused(name: str) -> None:
    with pytest.raises(SignInError):
        check_name(name)


def test_a_production_sign_in_takes_the_token_as_given_and_can_buy_no_chips() -> None:
    token = token_for("pat")
    identity = production_identity(token)
    assert identity.player_id == "pat"
    assert identity.token() == token
    assert identity.payments_token is None
    for bad in ("", "a.b", "a.!!!.c", "e30.e30.e30"):
        with pytest.raises(SignInError):
            production_identity(bad)


def test_flags_override_the_settings_and_a_name_signs_in_at_once() -> None:
    settings = settings_from(["--lobby", "10.0.0.1:1", "--name", "ann"])
    assert settings.lobby_address == "10.0.0.1:1"
    assert settings.cashier_address == "127.0.0.1:50053"
    identity = identity_from(settings)
    assert identity is not None
    assert identity.player_id == "ann"
    assert identity_from(settings_from([])) is None


def test_reconnect_delays_grow_and_stop_growing() -> None:
    delays = [reconnect_delay(n) for n in range(1, 12)]
    assert delays == sorted(delays)
    assert delays[0] == pytest.approx(0.2)
    assert max(delays) == pytest.approx(3.0)


def view(hand: str) -> table_pb2.TableView:
    return table_pb2.TableView(table_id="t.1", hand_id=hand)


class ScriptedStreams:
    """Each open plays one script: updates, then an error (or the end of the stream)."""

    def __init__(self, scripts: list[tuple[list[str], PlayError | None]]) -> None:
        self.scripts = scripts
        self.opened: list[str] = []
        self.located = 0

    async def open(self, address: str) -> AsyncIterator[Update]:
        self.opened.append(address)
        hands, error = self.scripts.pop(0)
        for hand in hands:
            yield (), view(hand)
        if error is not None:
            raise error

    async def locate(self) -> str:
        self.located += 1
        return f"shard-{self.located}:1"


async def run_feed(streams: ScriptedStreams) -> tuple[list[LinkState], list[str], TableFeed]:
    states: list[LinkState] = []
    hands: list[str] = []
    feed = TableFeed(
        streams.open,
        streams.locate,
        "shard-0:1",
        lambda update: hands.append(update[1].hand_id),
        states.append,
        delay=lambda attempt: 0,
    )
    await feed.run()
    return states, hands, feed


async def test_a_dropped_stream_is_reopened_at_the_address_the_lobby_gives_and_the_screen_is_told() -> None:
    dropped = PlayError("UNAVAILABLE", "", "connection reset")
    streams = ScriptedStreams(
        [
            (["h1", "h2"], dropped),
            ([], dropped),
            (["h2", "h3"], PlayError("NOT_FOUND", "TABLE_NOT_FOUND", "closed")),
        ]
    )
    states, hands, feed = await run_feed(streams)
    assert hands == ["h1", "h2", "h2", "h3"]
    assert streams.opened == ["shard-0:1", "shard-1:1", "shard-2:1"]
    assert [s.link for s in states] == [
        Link.CONNECTING,
        Link.LIVE,
        Link.RECONNECTING,
        Link.RECONNECTING,
        Link.LIVE,
        Link.FAILED,
    ]
    assert states[1].text == "connected"
    assert [s.attempts for s in states if s.link is Link.RECONNECTING] == [1, 2]
    assert "reconnecting" in states[2].text
    assert states[4].text == "reconnected - your seat was kept"
    assert "TABLE_NOT_FOUND" in states[5].text
    assert feed.reconnects == 1


async def test_a_stream_the_release_does_not_serve_is_reported_once_and_not_retried() -> None:
    streams = ScriptedStreams([([], PlayError("UNIMPLEMENTED", "NOT_IMPLEMENTED", "later"))])
    states, hands, _ = await run_feed(streams)
    assert hands == []
    assert [s.link for s in states] == [Link.CONNECTING, Link.UNSUPPORTED]
    assert "UNIMPLEMENTED" in states[-1].text
    assert streams.located == 0


async def test_a_stream_ended_by_its_expired_token_is_reopened_at_once_without_a_visible_break() -> None:
    expired = PlayError("UNAUTHENTICATED", "TOKEN_EXPIRED", "the bearer token has expired")
    streams = ScriptedStreams(
        [
            (["h1", "h2"], expired),
            (["h2", "h3"], expired),
            (["h3"], PlayError("NOT_FOUND", "TABLE_NOT_FOUND", "closed")),
        ]
    )
    states, hands, _ = await run_feed(streams)
    assert hands == ["h1", "h2", "h2", "h3", "h3"]
    # Re-opened at the same shard, with no reconnecting state shown in between.
    assert streams.opened == ["shard-0:1"] * 3
    assert [s.link for s in states] == [Link.CONNECTING, Link.LIVE, Link.FAILED]


async def test_a_token_already_expired_when_the_stream_opens_is_a_refusal_not_a_loop() -> None:
    expired = PlayError("UNAUTHENTICATED", "TOKEN_EXPIRED", "the bearer token has expired")
    streams = ScriptedStreams([([], expired)])
    states, _, _ = await run_feed(streams)
    assert [s.link for s in states] == [Link.CONNECTING, Link.FAILED]
    assert "TOKEN_EXPIRED" in states[-1].text
