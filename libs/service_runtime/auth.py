"""Signed bearer tokens: who the caller is (subject) and what they may do (roles).

Format: a compact JWS with HS256 (`base64url(header).base64url(claims).base64url(hmac)`), so any JWT
library can read one. Claims: `sub` (player id, or for the service role the name of the calling
service), `roles` (player / admin / service), `iat`, `exp`, and the header carries `kid` so keys can
rotate. Two optional claims carry the sign-in's signals for fair play (rules 17: several accounts of one
person at a table): `dev`, an opaque device signal, and `net`, an opaque network signal, set only by
whoever issues the token (the gateway at sign-in), so a player cannot forge or drop them; each is 1-128
printable ASCII characters (the issuer sends digests, never raw addresses or device data). Verification is constant-time, bounded in size and nesting, and rejects missing, malformed,
expired, forged and unknown-key tokens with UNAUTHENTICATED; a known caller without the needed role
gets PERMISSION_DENIED.

A service token names one service (`ServiceName`): access policies grant RPCs to named services, so
a stolen token of one service cannot do another's job.
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


class ServiceName(enum.StrEnum):
    """The services that may hold a service token; the token's subject is one of these."""

    LOBBY = "lobby"
    TABLE = "table"
    CASHIER = "cashier"
    FAIRNESS = "fairness"
    HISTORY = "history"
    # The payments gateway: the only identity that records purchases and withdrawals.
    PAYMENTS = "payments"


# Whom an access rule may name: a person's role, or one named service (never "any service").
Principal = Role | ServiceName

# Tokens are small; anything bigger is refused before any decoding (no parser sees attacker-sized input).
MAX_TOKEN_LENGTH = 4096
# The optional `dev` / `net` claims: opaque signals of at most this many printable ASCII characters.
MAX_SIGNAL_LENGTH = 128


def valid_signal(value: str) -> bool:
    """True for a device or network signal a token may carry (1-128 printable ASCII, no spaces)."""
    return (
        0 < len(value) <= MAX_SIGNAL_LENGTH and value.isascii() and value.isprintable() and " " not in value
    )


@dataclass(frozen=True)
class Caller:
    """The authenticated identity behind one RPC."""

    subject: str
    roles: frozenset[Role]
    expires_at: int
    # The issuer's fair-play signals (empty when the token carries none): opaque digests, never shown
    # to other players.
    device: str = ""
    network: str = ""

    def has(self, role: Role) -> bool:
        return role in self.roles

    @property
    def service(self) -> ServiceName | None:
        """The service this caller is, for a service token naming a known service."""
        if Role.SERVICE not in self.roles:
            return None
        try:
            return ServiceName(self.subject)
        except ValueError:
            return None

    def is_service(self, *names: ServiceName) -> bool:
        return self.service is not None and self.service in names

    @property
    def principals(self) -> frozenset[Principal]:
        """What access rules match: the person roles held, plus the named service if any."""
        held: set[Principal] = {r for r in self.roles if r is not Role.SERVICE}
        if self.service is not None:
            held.add(self.service)
        return frozenset(held)

    def require(self, *principals: Principal) -> None:
        """PERMISSION_DENIED unless the caller is one of `principals` (a role or a named service)."""
        if not self.principals.intersection(principals):
            raise PermissionDenied(
                "ROLE_REQUIRED", f"this call needs the role {' or '.join(p.value for p in principals)}"
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
    keys: TokenKeys,
    subject: str,
    roles: Iterable[Role | str],
    *,
    now: int,
    ttl_seconds: int,
    device: str = "",
    network: str = "",
) -> str:
    """A token for `subject` with `roles`, valid from `now` for `ttl_seconds`, with the sign-in's
    device and network signals when given."""
    header = {"alg": "HS256", "typ": "JWT", "kid": keys.signing_key_id}
    claims: dict[str, object] = {
        "sub": subject,
        "roles": sorted(Role(r).value for r in roles),
        "iat": now,
        "exp": now + ttl_seconds,
    }
    for claim, value in (("dev", device), ("net", network)):
        if value:
            if not valid_signal(value):
                raise ValueError(
                    f"the {claim} signal must be 1-{MAX_SIGNAL_LENGTH} printable ASCII characters"
                )
            claims[claim] = value
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = hmac.new(keys.keys[keys.signing_key_id], signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


def verify_token(keys: TokenKeys, token: str, *, now: int) -> Caller:
    """The caller a token names, or Unauthenticated with a reason saying what is wrong with it.

    The signature is checked before the claims are parsed, so only a key holder's JSON is ever
    decoded past the header; the header itself is bounded by the token size and must be a flat object.
    """
    if len(token) > MAX_TOKEN_LENGTH or not token.isascii():
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token is not a signed token")
    parts = token.split(".")
    if len(parts) != 3:
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token is not a signed token")
    header = _json_object(parts[0], "header")
    if header.get("alg") != "HS256":
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token must be signed with HS256")
    kid = header.get("kid")
    secret = keys.keys.get(kid) if isinstance(kid, str) else None
    if secret is None:
        raise Unauthenticated("TOKEN_INVALID_SIGNATURE", "the bearer token was signed with an unknown key")
    try:
        signature = _unb64(parts[2])
    except ValueError as exc:
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token cannot be decoded") from exc
    expected = hmac.new(secret, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, signature):
        raise Unauthenticated("TOKEN_INVALID_SIGNATURE", "the bearer token signature does not verify")
    claims = _json_object(parts[1], "claims")
    subject, roles, expires = claims.get("sub"), claims.get("roles"), claims.get("exp")
    if (
        not isinstance(subject, str)
        or not subject
        or not isinstance(expires, int)
        or isinstance(expires, bool)
        or not isinstance(roles, list)
    ):
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token lacks sub, roles or exp")
    if expires <= now:
        raise Unauthenticated("TOKEN_EXPIRED", "the bearer token has expired")
    try:
        parsed_roles = frozenset(Role(r) for r in roles)
    except (ValueError, TypeError) as exc:
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token names an unknown role") from exc
    signals: dict[str, str] = {}
    for claim in ("dev", "net"):
        value = claims.get(claim, "")
        if not isinstance(value, str) or (value and not valid_signal(value)):
            raise Unauthenticated("TOKEN_MALFORMED", f"the bearer token's {claim} claim is not a signal")
        signals[claim] = value
    return Caller(
        subject=subject,
        roles=parsed_roles,
        expires_at=expires,
        device=signals["dev"],
        network=signals["net"],
    )


def _json_object(part: str, what: str) -> dict[str, object]:
    """One base64url JSON object of a token; anything else (including deep nesting) is malformed."""
    try:
        value = json.loads(_unb64(part))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise Unauthenticated("TOKEN_MALFORMED", f"the bearer token {what} cannot be decoded") from exc
    if not isinstance(value, dict):
        raise Unauthenticated("TOKEN_MALFORMED", f"the bearer token {what} is not an object")
    return value


def bearer_from_metadata(metadata: Iterable[tuple[str, str | bytes]]) -> str | None:
    """The token in an `authorization: Bearer ...` metadata entry, if any."""
    for key, value in metadata:
        if key.lower() == "authorization":
            if isinstance(value, bytes):
                raise Unauthenticated("TOKEN_MALFORMED", "authorization metadata must be 'Bearer <token>'")
            text = value
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            raise Unauthenticated("TOKEN_MALFORMED", "authorization metadata must be 'Bearer <token>'")
    return None
