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


def game_library_reasons() -> dict[str, list[str]]:
    """Reasons of the pure engine and house-game errors: `SomeError(message, "REASON")`, a `reason=`
    keyword, or a class's `reason` / `default_reason`. The table service passes them to clients."""
    found: dict[str, list[str]] = {}
    for path in [*ROOT.glob("libs/poker_engine/*.py"), *ROOT.glob("libs/house_games/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            reasons: list[object] = []
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name.endswith("Error"):
                    if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                        reasons.append(node.args[1].value)
                    reasons += [
                        k.value.value
                        for k in node.keywords
                        if k.arg == "reason" and isinstance(k.value, ast.Constant)
                    ]
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("reason", "default_reason")
                and isinstance(node.value, ast.Constant)
            ):
                reasons.append(node.value.value)
            for reason in reasons:
                if isinstance(reason, str):
                    found.setdefault(reason, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_game_library_reasons_are_in_the_catalogue() -> None:
    reasons = game_library_reasons()
    assert "NOT_YOUR_TURN" in reasons, "the scan must see the engine's reasons, or it proves nothing"
    missing = {reason: where for reason, where in reasons.items() if reason not in catalogue()}
    assert not missing, f"add these reasons to ErrorReason in common.proto: {missing}"


def test_every_raised_reason_is_in_the_catalogue() -> None:
    missing = {reason: where for reason, where in raised_reasons().items() if reason not in catalogue()}
    assert not missing, f"add these reasons to ErrorReason in common.proto: {missing}"


def test_catalogue_reasons_are_upper_snake() -> None:
    for reason in catalogue():
        assert reason == reason.upper()
        assert " " not in reason
