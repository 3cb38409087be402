"""Players' avatars: the Telegram profile photo a player's seat shows, where they allow it. Pure: no
I/O, no clock.

Telegram's Mini App sign-in (initData's `user.photo_url`) names the photo by a URL of Telegram's own,
`https://t.me/i/userpic/<size>/<name>.<jpg|svg>` (Telegram documents only that the photo is a JPEG
or an SVG; it documents no other host for it, so no other is taken). Only such a URL of bounded
length is kept: anything else (another host or scheme, a query, a fragment, credentials, a port,
`..`, escapes) is dropped, so no page ever loads an image, a tracking pixel say, from a host a
player chose. A player shows their photo unless they turned it off (`show_avatar`); the seats then
show the initials of their display name.
"""

from __future__ import annotations

import re

# The longest URL kept: Telegram's are about 100 characters (a 43-character name).
MAX_AVATAR_URL_LENGTH = 256
# Telegram's own host and path of profile photos, as the page's Content-Security-Policy admits them
# (services/gateway/web_assets.py).
AVATAR_URL_PREFIX = "https://t.me/i/userpic/"
_AVATAR_URL = re.compile(
    r"https://t\.me/i/userpic/[0-9]{1,4}/[A-Za-z0-9_-]{1,160}\.(?:jpg|jpeg|svg|png|webp)"
)


def accepted_avatar_url(url: str) -> str:
    """`url` when it is a Telegram profile photo's URL the seats may show, else "" (dropped)."""
    if len(url) > MAX_AVATAR_URL_LENGTH or not _AVATAR_URL.fullmatch(url):
        return ""
    return url


def shown_avatar_url(avatar_url: str, show_avatar: bool) -> str:
    """What other players are shown of a player's photo: the photo when the player shows it, else ""
    (their seat shows their initials)."""
    return avatar_url if show_avatar else ""
