"""Signed bearer tokens: who the caller is (subject) and what they may do (roles).

Format: a compact JWS with HS256 (`base64url(header).base64url(claims).base64url(hmac)`), so any JWT
library can read one. Claims: `sub` (player id, or for the service role the name of the calling
service), `roles` (player / admin / service), `iat`, `exp`, and the header carries `kid` so keys can
rotate. A key may be limited to player tokens (`KEY_ID/player:SECRET`, the gateway's): every verifier
refuses a token signed with it that grants more (TOKEN_KEY_SCOPE). Two optional claims carry the sign-in's signals for fair play (rules 17: several accounts of one
person at a table): `dev`, an opaque device signal, and `net`, an opaque network signal, set only by
whoever issues the token (the gateway at sign-in), so a player cannot forge or drop them; each is 1-128
printable ASCII characters (the issuer sends digests, never raw addresses or device data). `sat`
(optional) is when the person signed in, which the gateway keeps through renewals to bound a session;
`sid` (optional, 1-128 printable ASCII) names the gateway session, which the gateway can revoke. `nm`
(optional, 1-64 characters, no control character) is the name the sign-in suggests for a player who
has no display name yet (Telegram's first name); the lobby's profile decides what others see. Verification is constant-time, bounded in size and nesting, and rejects missing, malformed,
expired, forged and unknown-key tokens with UNAUTHENTICATED; a known caller without the needed role
gets PERMISSION_DENIED.

A service token names one service (`ServiceName`): access policies grant RPCs to named services, so
a stolen token of one service cannot do another's job.
"""

from __future__ import annotations

import base64
import contextvars
import enum
import functools
import hashlib
import hmac
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from service_runtime.errors import PermissionDenied, Unauthenticated


class Role(enum.StrEnum):
    """A person's roles (a player, or staff by job) and the service role. Staff roles each grant only
    their job (docs/access.md): support reads players, their statements and hands and moderates
    chat; risk works the fair-play cases and holds; finance the ledger, the house bank and the audit;
    operations the rooms, tables and maintenance; admin the staff and the audit trail."""

    PLAYER = "player"
    SUPPORT = "support"
    RISK = "risk"
    FINANCE = "finance"
    OPERATIONS = "operations"
    ADMIN = "admin"
    SERVICE = "service"


# The roles of the operator's staff: any one of them reads as staff where a handler narrows what a
# caller sees (every room, every card of a hand); what each may call is its own grant.
STAFF_ROLES: frozenset[Role] = frozenset({Role.SUPPORT, Role.RISK, Role.FINANCE, Role.OPERATIONS, Role.ADMIN})


class ServiceName(enum.StrEnum):
    """The services that may hold a service token; the token's subject is one of these."""

    LOBBY = "lobby"
    TABLE = "table"
    CASHIER = "cashier"
    FAIRNESS = "fairness"
    HISTORY = "history"
    # The payments gateway: the only identity that records purchases and withdrawals.
    PAYMENTS = "payments"
    # The players' and staff's front door, as itself: only to record the staff's actions in the audit
    # trail (its own key scope, `KeyScope.GATEWAY`, signs this one token and nothing else).
    GATEWAY = "gateway"


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


MAX_SUGGESTED_NAME = 64


def valid_suggested_name(value: str) -> bool:
    """True for a name a token may suggest (1-64 printable characters of any script)."""
    return 0 < len(value) <= MAX_SUGGESTED_NAME and value.isprintable()


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
    # When the person signed in (`sat`, set by the gateway and kept through renewals; 0: not said):
    # a session is renewed only so long after it (POKER_GATEWAY_SESSION_MAX_SECONDS).
    signed_in_at: int = 0
    # The gateway session the token belongs to (`sid`, random, kept through renewals; empty: none),
    # which the gateway can revoke (SignOut): every token and stream of the session ends then.
    session: str = ""
    # The name the sign-in suggests (`nm`; empty: none): only a suggestion for the lobby's profile,
    # never shown as is, never an identity.
    suggested_name: str = ""

    def has(self, role: Role) -> bool:
        return role in self.roles

    @property
    def is_staff(self) -> bool:
        """The caller holds a staff role (any): reads narrowed for players are whole for staff."""
        return not self.roles.isdisjoint(STAFF_ROLES)

    # Both worked out once per caller (a verified token's caller serves every call it makes):
    # functools.cached_property keeps them in the instance's dict, beside the frozen fields.
    @functools.cached_property
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

    @functools.cached_property
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


class KeyScope(enum.StrEnum):
    """What tokens a key may sign. The internet-facing gateway gets a `player` key of its own, so
    whoever takes it over can mint player tokens at most, never an admin's or a service's."""

    ANY = "any"
    PLAYER = "player"
    # The staff's front door (the back office): staff roles only, and short-lived tokens
    # (`STAFF_TOKEN_MAX_SECONDS`), checked by every verifier.
    STAFF = "staff"
    # The gateway's own identity: the service token of `ServiceName.GATEWAY` only, short-lived like a
    # staff token (it records the staff's actions in the audit trail).
    GATEWAY = "gateway"


# The roles a token signed by a key of each scope may carry.
_SCOPE_ROLES: dict[KeyScope, frozenset[Role]] = {
    KeyScope.ANY: frozenset(Role),
    KeyScope.PLAYER: frozenset({Role.PLAYER}),
    KeyScope.STAFF: STAFF_ROLES,
    KeyScope.GATEWAY: frozenset({Role.SERVICE}),
}
# The one subject a gateway-scoped key signs.
_SCOPE_SUBJECTS: dict[KeyScope, str] = {KeyScope.GATEWAY: "gateway"}
# The longest a token signed by a staff-scoped key may live (issued to expiry).
STAFF_TOKEN_MAX_SECONDS = 3600
# The secret of an HMAC key: long enough that it cannot be guessed.
MIN_SECRET_LENGTH = 16


def parse_key_entry(entry: str) -> tuple[str, KeyScope, str]:
    """`KEY_ID:SECRET` (a key that signs any token) or `KEY_ID/SCOPE:SECRET` as (id, scope, secret);
    ValueError saying what is wrong otherwise. The secret may contain `:`."""
    name, sep, secret = entry.partition(":")
    kid, slash, scope_text = name.partition("/")
    if not sep or not kid or len(secret) < MIN_SECRET_LENGTH:
        raise ValueError(
            f"each key is KEY_ID:SECRET or KEY_ID/SCOPE:SECRET with a secret of at least "
            f"{MIN_SECRET_LENGTH} characters"
        )
    if not slash:
        return kid, KeyScope.ANY, secret
    scopes = {scope.value: scope for scope in (KeyScope.PLAYER, KeyScope.STAFF, KeyScope.GATEWAY)}
    if scope_text not in scopes:
        raise ValueError(
            f"a key's scope is {', '.join(repr(s) for s in scopes)} (or none: any token), not {scope_text!r}"
        )
    return kid, scopes[scope_text], secret


@dataclass(frozen=True)
class TokenKeys:
    """Verification keys by id with their scopes (a key not in `scopes` signs any token); the first
    one signs new tokens."""

    keys: dict[str, bytes]
    signing_key_id: str
    scopes: dict[str, KeyScope] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, entries: Sequence[str]) -> TokenKeys:
        keys: dict[str, bytes] = {}
        scopes: dict[str, KeyScope] = {}
        for entry in entries:
            kid, scope, secret = parse_key_entry(entry)
            keys[kid] = secret.encode()
            scopes[kid] = scope
        return cls(keys=keys, signing_key_id=parse_key_entry(entries[0])[0], scopes=scopes)

    def scope_of(self, kid: str) -> KeyScope:
        return self.scopes.get(kid, KeyScope.ANY)

    def may_sign(self, kid: str, roles: Iterable[Role], subject: str | None = None) -> bool:
        """The key may sign these roles (and, when given, for this subject: a gateway-scoped key signs
        only the gateway's own token)."""
        scope = self.scope_of(kid)
        if subject is not None and _SCOPE_SUBJECTS.get(scope, subject) != subject:
            return False
        return set(roles) <= _SCOPE_ROLES[scope]


def mint_token(
    keys: TokenKeys,
    subject: str,
    roles: Iterable[Role | str],
    *,
    now: int,
    ttl_seconds: int,
    device: str = "",
    network: str = "",
    signed_in_at: int = 0,
    session: str = "",
    suggested_name: str = "",
) -> str:
    """A token for `subject` with `roles`, valid from `now` for `ttl_seconds`, with the sign-in's
    device and network signals, its time, its session id and the name it suggests when given."""
    header = {"alg": "HS256", "typ": "JWT", "kid": keys.signing_key_id}
    granted = [Role(r) for r in roles]
    scope = keys.scope_of(keys.signing_key_id)
    if not keys.may_sign(keys.signing_key_id, granted, subject):
        raise ValueError(
            f"the signing key {keys.signing_key_id!r} may not sign these roles (its scope is {scope.value})"
        )
    if scope in (KeyScope.STAFF, KeyScope.GATEWAY) and ttl_seconds > STAFF_TOKEN_MAX_SECONDS:
        raise ValueError(f"a {scope.value} token lives at most an hour ({STAFF_TOKEN_MAX_SECONDS} s)")
    claims: dict[str, object] = {
        "sub": subject,
        "roles": sorted(r.value for r in granted),
        "iat": now,
        "exp": now + ttl_seconds,
    }
    for claim, value in (("dev", device), ("net", network), ("sid", session)):
        if value:
            if not valid_signal(value):
                raise ValueError(
                    f"the {claim} {'session id' if claim == 'sid' else 'signal'} must be 1-{MAX_SIGNAL_LENGTH}"
                    " printable ASCII characters"
                )
            claims[claim] = value
    if signed_in_at:
        claims["sat"] = signed_in_at
    if suggested_name:
        if not valid_suggested_name(suggested_name):
            raise ValueError(
                f"the suggested name must be 1-{MAX_SUGGESTED_NAME} characters, no control character"
            )
        claims["nm"] = suggested_name
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
    if not keys.may_sign(str(kid), parsed_roles, subject):
        # A key of limited scope (the gateway's) signed more than it may: a forgery by its holder.
        raise Unauthenticated("TOKEN_KEY_SCOPE", "the bearer token's key may not grant these roles")
    if keys.scope_of(str(kid)) in (KeyScope.STAFF, KeyScope.GATEWAY):
        issued = claims.get("iat")
        if (
            not isinstance(issued, int)
            or isinstance(issued, bool)
            or expires - issued > STAFF_TOKEN_MAX_SECONDS
        ):
            raise Unauthenticated(
                "TOKEN_KEY_SCOPE", "a staff token lives at most an hour: sign in to the back office again"
            )
    signals: dict[str, str] = {}
    for claim in ("dev", "net", "sid"):
        value = claims.get(claim, "")
        if not isinstance(value, str) or (value and not valid_signal(value)):
            raise Unauthenticated("TOKEN_MALFORMED", f"the bearer token's {claim} claim is not valid")
        signals[claim] = value
    signed_in_at = claims.get("sat", 0)
    if not isinstance(signed_in_at, int) or isinstance(signed_in_at, bool) or signed_in_at < 0:
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token's sat claim is not a time")
    suggested = claims.get("nm", "")
    if not isinstance(suggested, str) or (suggested and not valid_suggested_name(suggested)):
        raise Unauthenticated("TOKEN_MALFORMED", "the bearer token's nm claim is not a name")
    return Caller(
        subject=subject,
        roles=parsed_roles,
        expires_at=expires,
        device=signals["dev"],
        network=signals["net"],
        signed_in_at=signed_in_at,
        session=signals["sid"],
        suggested_name=suggested,
    )


class VerifiedTokens:
    """`verify_token` with the callers of tokens already verified kept until their tokens expire.

    A client sends the same token on every call until it renews it, and verifying one costs a
    base64 and JSON decoding of each part and an HMAC: a token verified once is answered from here
    while `now` is before its `exp` (the same rule `verify_token` applies), never after. Only tokens
    that verified are kept, by their exact text (another text, a forgery included, is verified in
    full), at most `capacity` of them, the oldest dropped first. The keys are fixed for the life of
    the cache (a server's keys are its settings' and change only with a restart)."""

    def __init__(self, keys: TokenKeys, capacity: int = 4096) -> None:
        self._keys = keys
        self._capacity = capacity
        self._callers: dict[str, Caller] = {}

    def verify(self, token: str, *, now: int) -> Caller:
        caller = self._callers.get(token)
        if caller is not None:
            if caller.expires_at > now:
                return caller
            del self._callers[token]
        caller = verify_token(self._keys, token, now=now)
        if len(self._callers) >= self._capacity:
            del self._callers[next(iter(self._callers))]
        self._callers[token] = caller
        return caller

    def __len__(self) -> int:
        return len(self._callers)


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
