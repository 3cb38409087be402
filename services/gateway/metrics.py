"""The gateway's own figures for Prometheus: sign-ins and renewals by outcome, the calls each rate
limit refused, the requests refused at the HTTP edge and the connections open.

The calls the gateway serves are counted in the gRPC server families every service shares
(`grpc_server_*`, `call_telemetry.py`); these are what only the front door knows. Every label takes
its values from a fixed set below, never an address, a player or a name a client sent (a value
outside the set is counted as OTHER), and every series exists at 0 from the start, so Prometheus's
increase() sees the first refusal of its kind.
"""

from __future__ import annotations

from prometheus_client import REGISTRY, Counter, Gauge

OK = "ok"
OTHER = "OTHER"
SIGN_IN = "sign_in"
RENEWAL = "renewal"
# The catalogue reasons a sign-in (SignIn) or a renewal (RenewToken) can be refused with: the rate
# limits and the front door, the Telegram initData checks, the session's age and sign-out, a body
# the Connect library could not read, a dependency away.
_EITHER = (
    "GATEWAY_RATE_LIMITED",
    "FIELD_INVALID",
    "FIELD_REQUIRED",
    "REQUEST_MALFORMED",
    "REQUEST_TOO_LARGE",
    "UNAVAILABLE",
    "INTERNAL",
    OTHER,
)
OUTCOMES = {
    SIGN_IN: (
        OK,
        "SIGN_IN_METHOD_DISABLED",
        "INIT_DATA_INVALID",
        "INIT_DATA_EXPIRED",
        "INIT_DATA_REPLAYED",
        *_EITHER,
    ),
    RENEWAL: (
        OK,
        "TOKEN_MISSING",
        "TOKEN_MALFORMED",
        "TOKEN_INVALID_SIGNATURE",
        "TOKEN_EXPIRED",
        "TOKEN_KEY_SCOPE",
        "ROLE_REQUIRED",
        "SESSION_EXPIRED",
        "SESSION_REVOKED",
        *_EITHER,
    ),
}
# The token buckets of rate_limits.py, by what they are kept for.
ADDRESS, PLAYER = "address", "player"
LIMITS = (ADDRESS, PLAYER, SIGN_IN)
# HTTP edge refusals: the head checks of http_edge.py, a path under a served service that names no
# method of it, and connection_guard.py's closes.
METHOD_NOT_FOUND = "METHOD_NOT_FOUND"
HEAD_TIMEOUT, BODY_TIMEOUT, CONNECTION_LIMIT = "HEAD_TIMEOUT", "BODY_TIMEOUT", "CONNECTION_LIMIT"
EDGE_REASONS = (
    "HEADER_INVALID",
    "PROTOCOL_UNSUPPORTED",
    METHOD_NOT_FOUND,
    HEAD_TIMEOUT,
    BODY_TIMEOUT,
    CONNECTION_LIMIT,
    OTHER,
)

sign_ins = Counter(
    "poker_gateway_sign_ins_total",
    "Sign-ins (kind=sign_in, SignIn) and token renewals (kind=renewal, RenewToken), by outcome: ok, "
    "or the catalogue reason of the refusal.",
    ("kind", "outcome"),
    registry=REGISTRY,
)
rate_limited = Counter(
    "poker_gateway_rate_limited_total",
    "Calls refused with RESOURCE_EXHAUSTED GATEWAY_RATE_LIMITED, by the limit that refused them "
    "(address, player, sign_in).",
    ("limit",),
    registry=REGISTRY,
)
edge_refusals = Counter(
    "poker_gateway_edge_refusals_total",
    "Requests refused at the HTTP edge before any method served them (a bad head, an unknown method), "
    "and connections closed by the read deadlines or the cap per address, by reason.",
    ("reason",),
    registry=REGISTRY,
)
open_connections = Gauge(
    "poker_gateway_open_connections",
    "HTTP connections open now (a table stream holds one for its whole life).",
    registry=REGISTRY,
)

_SIGN_INS = {
    (kind, outcome): sign_ins.labels(kind, outcome) for kind in OUTCOMES for outcome in OUTCOMES[kind]
}
_RATE_LIMITED = {limit: rate_limited.labels(limit) for limit in LIMITS}
_EDGE_REFUSALS = {reason: edge_refusals.labels(reason) for reason in EDGE_REASONS}


def count_sign_in(kind: str, outcome: str) -> None:
    """One SignIn (`SIGN_IN`) or RenewToken (`RENEWAL`) ended: `OK` or the refusal's reason."""
    child = _SIGN_INS.get((kind, outcome)) or _SIGN_INS[(kind, OTHER)]
    child.inc()


def count_rate_limited(limit: str) -> None:
    _RATE_LIMITED[limit].inc()


def count_edge_refusal(reason: str) -> None:
    (_EDGE_REFUSALS.get(reason) or _EDGE_REFUSALS[OTHER]).inc()
