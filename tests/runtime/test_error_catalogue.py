"""Every error reason the code can raise is in the published catalogue (common.proto ErrorReason)."""

from __future__ import annotations

import ast
from pathlib import Path

from poker.common.v1 import common_pb2

ROOT = Path(__file__).resolve().parents[2]
ERROR_CLASSES = {
    "DomainError", "InvalidArgument", "NotFound", "FailedPrecondition", "AlreadyExists", "Aborted",
    "PermissionDenied", "Unauthenticated", "Unavailable", "ResourceExhausted", "Unimplemented",
}  # fmt: skip


def catalogue() -> set[str]:
    prefix = "ERROR_REASON_"
    return {
        name.removeprefix(prefix)
        for name in common_pb2.ErrorReason.keys()  # noqa: SIM118 - enum wrapper, not a dict
        if name != f"{prefix}UNSPECIFIED"
    }


def raised_reasons() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in [*ROOT.glob("libs/service_runtime/**/*.py"), *ROOT.glob("services/**/*.py")]:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ERROR_CLASSES
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.setdefault(node.args[0].value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_raised_reason_is_in_the_catalogue() -> None:
    missing = {reason: where for reason, where in raised_reasons().items() if reason not in catalogue()}
    assert not missing, f"add these reasons to ErrorReason in common.proto: {missing}"


def test_catalogue_reasons_are_upper_snake() -> None:
    for reason in catalogue():
        assert reason == reason.upper()
        assert " " not in reason
