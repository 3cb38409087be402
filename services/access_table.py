"""The table of which identity may call which RPC, generated from the services' access policies.

`python -m services.access_table` prints it as Markdown; `docs/access.md` holds the output and a test
keeps the two equal, so the documented table is always the one the code enforces.
"""

from __future__ import annotations

import importlib

from service_runtime.access import AccessPolicy, describe

SERVICES = ("lobby", "table", "cashier", "fairness", "history")

HEADER = """# Who may call what

Generated from the access policies in `services/<name>/assembly.py` by `python -m services.access_table`;
`tests/security/test_access_table.py` fails when this file and the code disagree.

Identities: `player` and `admin` are roles of a person's token; `service:<name>` is a service token
whose subject names the calling service (`payments` is the payments gateway). No rule grants "any
service". Health (`grpc.health.v1.Health/Check`, `Watch`, `List`) and server reflection need no
token. Handlers narrow some rules further: a player reads and moves only their own chips, hands and
seats.
"""


def policy_of(service: str) -> AccessPolicy:
    module = importlib.import_module(f"services.{service}.assembly")
    policy: AccessPolicy = module.ACCESS
    return policy


def render() -> str:
    lines = [HEADER]
    for service in SERVICES:
        policy = policy_of(service)
        lines += [f"## {service}", "", "| RPC | who may call it |", "|---|---|"]
        for method in sorted(policy.roles):
            lines.append(f"| `{method.rsplit('/', 1)[1]}` | {describe(policy.roles[method])} |")
        for method in sorted(policy.public - set(policy.roles)):
            if not method.startswith("/grpc."):
                lines.append(f"| `{method.rsplit('/', 1)[1]}` | anyone, without a token |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    print(render(), end="")


if __name__ == "__main__":
    main()
