"""Who may call which RPC: declared once per service, checked before any request is parsed.

A rule names principals: the person roles (`player`, and the staff's jobs `support`, `risk`,
`finance`, `operations`, `admin`), and individual services by name
(`ServiceName`). There is no "any service" grant: a service token names its service, and each RPC
lists the services whose job needs it, so a stolen token of one service cannot do another's job.

A policy must name every method of the services it guards (checked at start-up against the proto
descriptors), so a new RPC cannot ship without a decision about who may call it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from google.protobuf import descriptor_pool

from service_runtime.auth import STAFF_ROLES, Principal, Role, ServiceName

PLAYERS: frozenset[Principal] = frozenset({Role.PLAYER})
# Staff by job (auth.Role): each grant names the jobs that need the call, never "all staff" by default.
SUPPORT: frozenset[Principal] = frozenset({Role.SUPPORT})
RISK: frozenset[Principal] = frozenset({Role.RISK})
FINANCE: frozenset[Principal] = frozenset({Role.FINANCE})
OPERATIONS: frozenset[Principal] = frozenset({Role.OPERATIONS})
STAFF_ADMIN: frozenset[Principal] = frozenset({Role.ADMIN})
EVERY_STAFF_ROLE: frozenset[Principal] = frozenset(STAFF_ROLES)
# Read-only RPCs any authenticated caller may use (each named service included).
ANY_CALLER: frozenset[Principal] = frozenset({Role.PLAYER, *STAFF_ROLES, *ServiceName})


def services(*names: ServiceName) -> frozenset[Principal]:
    """A grant to exactly these services."""
    return frozenset(names)


# Infrastructure endpoints that load balancers, probes and grpcurl call without a token; they pass
# through the interceptor untouched, as the standard health and reflection protocols expect.
PUBLIC_INFRASTRUCTURE = frozenset(
    {
        "/grpc.health.v1.Health/Check",
        "/grpc.health.v1.Health/Watch",
        "/grpc.health.v1.Health/List",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    }
)


@dataclass(frozen=True)
class AccessPolicy:
    """Full method name (`/pkg.Service/Method`) to the principals allowed to call it."""

    roles: Mapping[str, frozenset[Principal]]
    public: frozenset[str] = field(default=PUBLIC_INFRASTRUCTURE)

    def __post_init__(self) -> None:
        for method, allowed in self.roles.items():
            if Role.SERVICE in allowed:
                raise ValueError(f"{method}: grant named services, not the service role as a whole")

    @classmethod
    def for_service(
        cls, service_full_name: str, rules: Mapping[str, frozenset[Principal]], *, public: Iterable[str] = ()
    ) -> AccessPolicy:
        """Build a policy from short method names; every method of the service must be listed."""
        service = descriptor_pool.Default().FindServiceByName(service_full_name)
        names = {m.name for m in service.methods}
        listed = set(rules) | set(public)
        if names != listed:
            missing, unknown = sorted(names - listed), sorted(listed - names)
            raise ValueError(f"access policy for {service_full_name}: missing {missing}, unknown {unknown}")
        prefix = f"/{service_full_name}/"
        return cls(
            roles={prefix + name: roles for name, roles in rules.items()},
            public=PUBLIC_INFRASTRUCTURE | {prefix + name for name in public},
        )

    def merged(self, other: AccessPolicy) -> AccessPolicy:
        return AccessPolicy(roles={**self.roles, **other.roles}, public=self.public | other.public)

    def is_public(self, method: str) -> bool:
        return method in self.public

    def allowed_roles(self, method: str) -> frozenset[Principal]:
        """Principals for a method; unknown methods get none, so nothing unlisted is ever callable."""
        return self.roles.get(method, frozenset())


def describe(allowed: frozenset[Principal]) -> str:
    """A grant in words, for error messages and the generated access table."""
    if allowed == ANY_CALLER:
        return "any authenticated caller"
    people = [p.value for p in Role if p is not Role.SERVICE and p in allowed]
    named = [f"service:{s.value}" for s in ServiceName if s in allowed]
    return ", ".join(people + named) or "nobody"
