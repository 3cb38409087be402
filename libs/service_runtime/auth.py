"""Signed bearer tokens: who the caller is (subject) and what they may do (roles).

Format: a compact JWS with HS256 (`base64url(header).base64url(claims).base64url(hmac)`), so any JWT
library can read one. Claims: `sub` (player or service id), `roles` (player / admin / service), `iat`,
`exp`, and the header carries `kid` so keys can rotate. Verification is constant-time and rejects
missing, malformed, expired, forged and unknown-key tokens with UNAUTHENTICATED; a known caller
without the needed role gets PERMISSION_DENIED.
"""

from __future__ import annotations

import base64
import contextvars
import enum
import hashlib
import hmac
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from service_runtime.errors import PermissionDenied, Unauthenticated


class Role(enum.StrEnum):
    PLAYER = "player"
    ADMIN = "admin"
    SERVICE = "service"


@dataclass(frozen=True)
class Caller:
    """The authenticated identity behind one RPC."""

    subject: str
    roles: frozenset[Role]
    expires_at: int

    def has(self, role: Role) -> bool:
        return role in self.roles

    def require(self, *roles: Role) -> None:
        """PERMISSION_DENIED unless the caller holds at least one of `roles`."""
        if not self.roles.intersection(roles):
            raise PermissionDenied(
                "ROLE_REQUIRED", f"this call needs the role {' or '.join(r.value for r in roles)}"
            )


_current_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("caller", default=None)


def current_caller() -> Caller:
    """The caller of the RPC being served; UNAUTHENTICATED outside an authenticated call."""
    caller = _current_caller.get()
    if caller is None:
        raise Unauthenticated("TOKEN_MISSING", "this call needs a bearer token")
    return caller


def set_current_caller(caller: Caller | None) -> contextvars.Token[Caller | None]:
    return _current_caller.set(caller)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class TokenKeys:
    """Verification keys by id; the first one signs new tokens."""

    keys: dict[str, bytes]
    signing_key_id: str

    @classmethod
    def from_settings(cls, pairs: Sequence[str]) -> TokenKeys:
        keys: dict[str, bytes] = {}
        for pair in pairs:
            kid, _, secret = pair.partition(":")
            keys[kid] = secret.encode()
        return cls(keys=keys, signing_key_id=pairs[0].partition(":")[0])


def mint_token(
    keys: TokenKeys, subject: str, roles: Iterable[Role | str], *, now: int, ttl_seconds: int
) -> str:
    """A token for `subject` with `roles`, valid from `now` for `ttl_seconds`."""
    header = {"alg": "HS256", "typ": "JWT", "kid": keys.signing_key_id}
    claims = {
        "sub": subject,
        "roles": sorted(Role(r).value for r in roles),
        "iat": now,
        "exp": now + ttl_seconds,
    }
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = hmac.new(keys.keys[keys.signing_key_id], signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


def verify_token(keys: TokenKeys, token: str, *, now: int) -> Caller:
    """The caller a token names, or Unauthenticated with a reason saying what is wrong with it."""
    parts = token.split(".")
    if len(parts) != 3:
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token is not a signed token")
    try:
        header = json.loads(_unb64(parts[0]))
        claims = json.loads(_unb64(parts[1]))
        signature = _unb64(parts[2])
    except (ValueError, UnicodeDecodeError) as exc:
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token cannot be decoded") from exc
    if not isinstance(header, dict) or header.get("alg") != "HS256":
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token must be signed with HS256")
    secret = keys.keys.get(str(header.get("kid")))
    if secret is None:
        raise Unauthenticated("TOKEN_INVALID_SIGNATURE", "the bearer token was signed with an unknown key")
    expected = hmac.new(secret, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, signature):
        raise Unauthenticated("TOKEN_INVALID_SIGNATURE", "the bearer token signature does not verify")
    if not isinstance(claims, dict):
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token claims are not an object")
    subject, roles, expires = claims.get("sub"), claims.get("roles"), claims.get("exp")
    if (
        not isinstance(subject, str)
        or not subject
        or not isinstance(expires, int)
        or not isinstance(roles, list)
    ):
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token lacks sub, roles or exp")
    if expires <= now:
        raise Unauthenticated("TOKEN_EXPIRED", "the bearer token has expired")
    try:
        parsed_roles = frozenset(Role(r) for r in roles)
    except ValueError as exc:
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token names an unknown role") from exc
    return Caller(subject=subject, roles=parsed_roles, expires_at=expires)


def bearer_from_metadata(metadata: Iterable[tuple[str, str | bytes]]) -> str | None:
    """The token in an `authorization: Bearer ...` metadata entry, if any."""
    for key, value in metadata:
        if key.lower() == "authorization":
            text = value.decode() if isinstance(value, bytes) else value
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            raise Unauthenticated("TOKEN_MALFORMED", "authorization metadata must be 'Bearer <token>'")
    return None
