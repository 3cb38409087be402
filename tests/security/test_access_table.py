"""The documented access table is the one the code enforces, and it names every RPC of every service."""

from __future__ import annotations

from pathlib import Path

from google.protobuf import descriptor_pool

from services.access_table import SERVICES, policy_of, render

from .service_processes import FULL_NAMES

DOC = Path(__file__).resolve().parents[2] / "docs" / "access.md"


def test_docs_access_table_is_generated_from_the_code() -> None:
    assert DOC.read_text() == render(), "run: .venv/bin/python -m services.access_table > docs/access.md"


def test_every_rpc_of_every_service_is_in_the_table() -> None:
    text = DOC.read_text()
    for service in SERVICES:
        descriptor = descriptor_pool.Default().FindServiceByName(FULL_NAMES[service])
        policy = policy_of(service)
        for method in descriptor.methods:
            path = f"/{descriptor.full_name}/{method.name}"
            assert path in policy.roles or path in policy.public, path
            # The gateway's table spans several services, so it names each `Service/Method`.
            assert f"| `{method.name}` |" in text or f"/{method.name}` |" in text, method.name
