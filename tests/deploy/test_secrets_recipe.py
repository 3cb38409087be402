"""docs/deploy.md's recipe for the Secrets makes a production gateway that starts with the staff door
the base manifest opens (an outside tester: the recipe gave the gateway only its player-scoped key,
and a production gateway with POKER_GATEWAY_STAFF_PORT set refuses to start without a staff-scoped
and a gateway-scoped key). The recipe is read from the document itself, so the two cannot drift."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import yaml

from service_runtime.auth import KeyScope, TokenKeys
from service_runtime.settings import load_settings
from service_runtime.testing_pki import TestAuthority, tls_environment
from services.gateway.settings import GatewaySettings

ROOT = Path(__file__).resolve().parents[2]


def recipe() -> dict[str, str]:
    """The `--from-literal` values of the recipe's shell block, its `$(openssl rand -hex 32)` and its
    `${VAR}` placeholders filled as an operator's shell would (the recipe's own variables first)."""
    text = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    block = next(
        b for b in re.findall(r"```\n(.*?)```", text, re.S) if "create secret generic poker-gateway" in b
    )
    block = block.replace("\\\n", " ")
    names: dict[str, str] = {
        "BOT_TOKEN": "123456789:recipe-test-bot-token",
        "BOT_USERNAME": "poker_staff_bot",
    }

    def filled(value: str) -> str:
        value = value.replace("$(openssl rand -hex 32)", secrets.token_hex(32))
        return re.sub(r"\$\{(\w+)\}", lambda m: names.get(m.group(1), "x" * 20), value)

    literals: dict[str, str] = {}
    for line in block.splitlines():
        assigned = re.match(r'(\w+)="([^"]*)"', line.strip())
        if assigned:
            names[assigned.group(1)] = filled(assigned.group(2))
        for name, value in re.findall(r'--from-literal=(\w+)="([^"]*)"', line):
            literals[name] = filled(value)
    return literals


def test_the_recipes_gateway_secret_starts_a_production_gateway_with_the_staff_door(tmp_path: Path) -> None:
    literals = recipe()
    manifest = yaml.safe_load_all((ROOT / "deploy/k8s/base/gateway.yaml").read_text(encoding="utf-8"))
    deployment = next(d for d in manifest if d and d.get("kind") == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    env = {item["name"]: str(item["value"]) for item in container["env"] if "value" in item}
    assert env["POKER_GATEWAY_STAFF_PORT"], "the base manifest opens the staff door"
    env.update(
        {
            "POKER_ENVIRONMENT": "production",
            **tls_environment(TestAuthority(tmp_path / "pki").issue("gateway")),
            **{k: v for k, v in literals.items() if k.startswith("POKER_GATEWAY_")},
        }
    )
    settings = load_settings(GatewaySettings, env)  # raises, listing every problem, if it would not start
    assert settings.staff_port == int(env["POKER_GATEWAY_STAFF_PORT"])
    # The services verify every token the gateway signs: each of its keys is in poker-auth too.
    services = TokenKeys.from_settings(literals["POKER_AUTH_KEYS"].split(","))
    gateway = TokenKeys.from_settings(literals["POKER_GATEWAY_AUTH_KEYS"].split(","))
    assert {gateway.scope_of(k) for k in gateway.keys} == {KeyScope.PLAYER, KeyScope.STAFF, KeyScope.GATEWAY}
    for key_id in gateway.keys:
        assert services.scope_of(key_id) == gateway.scope_of(key_id)
