"""Which roles may call which RPC: declared once per service, checked before any handler runs.

A policy must name every method of the services it guards (checked at start-up against the proto
descriptors), so a new RPC cannot ship without a decision about who may call it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from google.protobuf import descriptor_pool

from service_runtime.auth import Role

ANY_ROLE = frozenset(Role)
SERVICE_ONLY = frozenset({Role.SERVICE})
ADMIN_ONLY = frozenset({Role.ADMIN})

# Infrastructure endpoints that load balancers, probes and grpcurl call without a token.
PUBLIC_INFRASTRUCTURE = frozenset(
    {
        "/grpc.health.v1.Health/Check",
        "/grpc.health.v1.Health/Watch",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    }
)


@dataclass(frozen=True)
class AccessPolicy:
    """Full method name (`/pkg.Service/Method`) to the roles allowed to call it."""

    roles: Mapping[str, frozenset[Role]]
    public: frozenset[str] = field(default=PUBLIC_INFRASTRUCTURE)

    @classmethod
    def for_service(
        cls, service_full_name: str, rules: Mapping[str, frozenset[Role]], *, public: Iterable[str] = ()
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

    def allowed_roles(self, method: str) -> frozenset[Role]:
        """Roles for a method; unknown methods get none, so nothing unlisted is ever callable."""
        return self.roles.get(method, frozenset())
