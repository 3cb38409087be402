"""The table of which identity may call which RPC, generated from the services' access policies.

`python -m services.access_table` prints it as Markdown; `docs/access.md` holds the output and a test
keeps the two equal, so the documented table is always the one the code enforces.
"""

from __future__ import annotations

import importlib

from service_runtime.access import AccessPolicy, describe

SERVICES = ("lobby", "table", "cashier", "fairness", "history", "gateway")

HEADER = """# Who may call what

Generated from the access policies in `services/<name>/assembly.py` by `python -m services.access_table`;
`tests/security/test_access_table.py` fails when this file and the code disagree.

Identities: `player` and `admin` are roles of a person's token; `service:<name>` is a service token
whose subject names the calling service (`payments` is the payments gateway). No rule grants "any
service". Health (`grpc.health.v1.Health/Check`, `Watch`, `List`) and server reflection need no
token. Handlers narrow some rules further: a player reads and moves only their own chips, hands and
seats.
"""


GATEWAY_NOTE = """The gateway serves browsers over Connect (HTTP): its own sign-in service, and the player's share
of the others, forwarded with the player's own token (so the service behind checks the player again).
It admits player tokens only; "nobody" marks a method it never forwards."""


def policy_of(service: str) -> AccessPolicy:
    module = importlib.import_module(f"services.{service}.assembly")
    policy: AccessPolicy = module.ACCESS
    return policy


def _name(method: str, policy: AccessPolicy) -> str:
    """`Method`, or `Service/Method` for a policy over several services (the gateway's)."""
    services = {m.rsplit("/", 1)[0] for m in policy.roles}
    service, name = method.rsplit("/", 1)
    return f"{service.rsplit('.', 1)[1]}/{name}" if len(services) > 1 else name


def render() -> str:
    lines = [HEADER]
    for service in SERVICES:
        policy = policy_of(service)
        lines += [f"## {service}", "", "| RPC | who may call it |", "|---|---|"]
        if service == "gateway":
            lines[-2:-2] = [GATEWAY_NOTE, ""]
        for method in sorted(policy.roles):
            lines.append(f"| `{_name(method, policy)}` | {describe(policy.roles[method])} |")
        for method in sorted(policy.public - set(policy.roles)):
            if not method.startswith("/grpc."):
                lines.append(f"| `{_name(method, policy)}` | anyone, without a token |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    print(render(), end="")


if __name__ == "__main__":
    main()
