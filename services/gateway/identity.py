"""Who a signed-in browser is to the platform: its player id, the name to show, and the fair-play
signals its token carries (no I/O).

Player ids live in their own name space: a Telegram user is `tg:<telegram user id>`, a development
name is itself (letters, digits, `.`, `_`, `-`: never a `:`, so never a Telegram id), and neither can
name a system account (those belong to owners under `system/`, and `/` is in neither form) or a
service (service names and the cashier's reserved names are refused as development names).

The signals are keyed digests (HMAC-SHA256 with the gateway's secret), so the table can tell two
seats from one device or network apart from others without anyone learning the device id, the user
agent or the address: the device signal digests the random id the page keeps in its local storage
with the user agent; the network signal digests the client address's prefix (/24 for IPv4, /48 for
IPv6), so one household or office shows as one network.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
import unicodedata

from service_runtime.auth import ServiceName
from service_runtime.errors import InvalidArgument
from service_runtime.validation import RESERVED_PLAYER_IDS

TELEGRAM_PREFIX = "tg:"
_DEVELOPMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
_DEVICE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_RESERVED = frozenset(RESERVED_PLAYER_IDS | {s.value for s in ServiceName})
MAX_DISPLAY_NAME = 32
MAX_USER_AGENT = 512


def telegram_player_id(user_id: int) -> str:
    return f"{TELEGRAM_PREFIX}{user_id}"


def development_player_id(name: str) -> str:
    """The player id of a development sign-in, or INVALID_ARGUMENT FIELD_INVALID."""
    if not _DEVELOPMENT_NAME.fullmatch(name) or name.lower() in _RESERVED:
        raise InvalidArgument(
            "FIELD_INVALID",
            "a name is 1 to 32 letters, digits, `.`, `_` or `-`, starting with a letter or digit, "
            "and not a service or system name",
            {"field": "development_name"},
        )
    return name


def display_name(first_name: str, fallback: str) -> str:
    """A printable name of at most 32 characters (Telegram names may hold anything)."""
    kept = "".join(c for c in first_name if unicodedata.category(c)[0] != "C").strip()
    return kept[:MAX_DISPLAY_NAME] or fallback


def check_device_id(device_id: str) -> str:
    if not _DEVICE_ID.fullmatch(device_id):
        raise InvalidArgument(
            "FIELD_INVALID", "device_id is 1 to 64 letters, digits, `_` or `-`", {"field": "device_id"}
        )
    return device_id


def _digest(key: bytes, kind: str, *parts: str) -> str:
    mac = hmac.new(key, "\0".join((kind, *parts)).encode(), hashlib.sha256).digest()
    return f"{kind[0]}1.{base64.urlsafe_b64encode(mac[:24]).decode('ascii')}"


def device_signal(key: bytes, device_id: str, user_agent: str) -> str:
    """The token's `dev` claim: a digest of the page's device id and the user agent."""
    return _digest(key, "device", device_id, user_agent[:MAX_USER_AGENT])


def network_prefix(address: str) -> str:
    """The client address's network (/24 or /48) in text, or `unknown` when it is not an address."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return "unknown"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    bits = 24 if ip.version == 4 else 48
    return str(ipaddress.ip_network(f"{ip}/{bits}", strict=False))


def network_signal(key: bytes, address: str) -> str:
    """The token's `net` claim: a digest of the client address's network prefix."""
    return _digest(key, "network", network_prefix(address))
