"""The avatar rules (services/lobby/avatars.py), pure: only Telegram's own profile photo URLs of
bounded length are kept, anything else is dropped (no page loads an image from a host a player chose),
and a player's switch decides whether the seats show the photo."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from services.gateway.web_assets import CONTENT_SECURITY_POLICY, TELEGRAM_USER_PHOTOS
from services.lobby.avatars import (
    AVATAR_URL_PREFIX,
    MAX_AVATAR_URL_LENGTH,
    accepted_avatar_url,
    shown_avatar_url,
)

TELEGRAM_PHOTO = "https://t.me/i/userpic/320/0HsMKYOWlgnBA2Httlfb3NBMp50KmdI4fD8tsNZu2js.jpg"


def test_telegrams_own_photo_urls_are_kept() -> None:
    for url in (
        TELEGRAM_PHOTO,
        "https://t.me/i/userpic/320/cm409T17pD0hEWX5m_tmMBGNTbHnhP0b6tZG6o887b0.svg",
        "https://t.me/i/userpic/160/Mo-wVDly9r8BKl7yBK0EmKseU3gGBlReuKN091gFq8o.jpeg",
        "https://t.me/i/userpic/320/a.png",
    ):
        assert accepted_avatar_url(url) == url, url


def test_anything_else_is_dropped() -> None:
    for url in (
        "",
        "http://t.me/i/userpic/320/abc.jpg",  # not https
        "https://T.me/i/userpic/320/abc.jpg",
        "https://t.me.evil.example/i/userpic/320/abc.jpg",
        "https://evil.example/i/userpic/320/abc.jpg",
        "https://evil.example/https://t.me/i/userpic/320/abc.jpg",
        "https://t.me@evil.example/i/userpic/320/abc.jpg",  # credentials
        "https://user@t.me/i/userpic/320/abc.jpg",
        "https://t.me:8443/i/userpic/320/abc.jpg",  # a port
        "https://t.me/i/userpic/320/abc.jpg?track=1",  # a query
        "https://t.me/i/userpic/320/abc.jpg#x",
        "https://t.me/i/userpic/320/../../../evil.jpg",
        "https://t.me/i/userpic/320/%2e%2e.jpg",  # escapes
        "https://t.me/i/userpic/320/abc.gif",
        "https://t.me/i/userpic/320/abc.jpg\n",
        "https://t.me/i/userpic/320/abc.jpg ",
        "https://t.me/i/userpic/abc.jpg",  # no size
        "https://t.me/i/userpic/320/abc",  # no image kind
        "https://t.me/i/userpic/320/a/b.jpg",
        "https://t.me/evil/i/userpic/320/abc.jpg",
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "//t.me/i/userpic/320/abc.jpg",
        "https://cdn1.telesco.pe/file/abc.jpg",  # not documented as a photo host: not taken
        "https://t.me/i/userpic/320/абв.jpg",
    ):
        assert accepted_avatar_url(url) == "", url


def test_the_length_is_bounded() -> None:
    stem = f"{AVATAR_URL_PREFIX}320/"
    longest = stem + "a" * (MAX_AVATAR_URL_LENGTH - len(stem) - len(".jpg")) + ".jpg"
    assert len(longest) == MAX_AVATAR_URL_LENGTH
    assert accepted_avatar_url(longest) == ""  # the name is at most 160 characters as well
    fits = stem + "a" * 160 + ".jpg"
    assert len(fits) <= MAX_AVATAR_URL_LENGTH
    assert accepted_avatar_url(fits) == fits
    assert accepted_avatar_url(stem + "a" * 161 + ".jpg") == ""
    assert accepted_avatar_url(TELEGRAM_PHOTO + "x" * MAX_AVATAR_URL_LENGTH) == ""


@given(st.text(max_size=300))
def test_whatever_is_kept_is_a_telegram_photo_url_within_the_bound(url: str) -> None:
    kept = accepted_avatar_url(url)
    assert kept in ("", url)
    if kept:
        assert kept.startswith(AVATAR_URL_PREFIX)
        assert len(kept) <= MAX_AVATAR_URL_LENGTH
        rest = kept.removeprefix(AVATAR_URL_PREFIX)
        assert set(rest) <= set(string.ascii_letters + string.digits + "_-./"), rest
        assert ".." not in rest


@given(st.from_regex(r"https://t\.me/i/userpic/[0-9]{1,4}/[A-Za-z0-9_-]{1,160}\.(jpg|svg)", fullmatch=True))
def test_every_url_of_telegrams_shape_is_kept(url: str) -> None:
    assert accepted_avatar_url(url) == url


def test_the_switch_decides_what_the_seats_show() -> None:
    assert shown_avatar_url(TELEGRAM_PHOTO, True) == TELEGRAM_PHOTO
    assert shown_avatar_url(TELEGRAM_PHOTO, False) == ""
    assert shown_avatar_url("", True) == ""


def test_the_pages_policy_admits_images_from_exactly_that_place() -> None:
    """The gateway's Content-Security-Policy names the same prefix the lobby keeps, and nothing else
    outside the page's own origin and data: URIs (the initials need no image)."""
    assert TELEGRAM_USER_PHOTOS == AVATAR_URL_PREFIX
    directives = {
        name: value.split()
        for name, _, value in (d.strip().partition(" ") for d in CONTENT_SECURITY_POLICY.split(";"))
    }
    assert directives["img-src"] == ["'self'", "data:", AVATAR_URL_PREFIX]
