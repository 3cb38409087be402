"""Every error reason the code can raise is in the published catalogue (common.proto ErrorReason)."""

from __future__ import annotations

import ast
import re
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


# ---------------------------------------------------------------- one code per reason (issue 25 item 4d)

_KINDS = {
    "DomainError": "FAILED_PRECONDITION", "InvalidArgument": "INVALID_ARGUMENT", "NotFound": "NOT_FOUND",
    "FailedPrecondition": "FAILED_PRECONDITION", "AlreadyExists": "ALREADY_EXISTS", "Aborted": "ABORTED",
    "PermissionDenied": "PERMISSION_DENIED", "Unauthenticated": "UNAUTHENTICATED", "Unavailable": "UNAVAILABLE",
    "ResourceExhausted": "RESOURCE_EXHAUSTED", "Unimplemented": "UNIMPLEMENTED",
}  # fmt: skip
_CODES = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}  # fmt: skip


def catalogue_codes() -> dict[str, str]:
    """Reason -> the status code its comment in common.proto gives ("// FAILED_PRECONDITION: ...")."""
    codes: dict[str, str] = {}
    comment: list[str] = []
    for line in (ROOT / "protos/poker/common/v1/common.proto").read_text().splitlines():
        text = line.strip()
        if text.startswith("//"):
            comment.append(text.removeprefix("//").strip())
            continue
        match = re.match(r"ERROR_REASON_([A-Z0-9_]+) = \d+;", text)
        if match and match.group(1) != "UNSPECIFIED":
            stated = [c.split(":")[0] for c in comment if c.split(":")[0] in _CODES]
            assert stated, f"{match.group(1)}: its comment must start with the status code"
            codes[match.group(1)] = stated[-1]
        comment = []
    return codes


def raised_with_codes() -> dict[str, set[tuple[str, str]]]:
    """Reason -> {(status code, where)} of every `SomeKind("REASON", ...)` in the services."""
    found: dict[str, set[tuple[str, str]]] = {}
    for path in [*ROOT.glob("libs/service_runtime/**/*.py"), *ROOT.glob("services/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in _KINDS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.setdefault(node.args[0].value, set()).add((_KINDS[node.func.id], where))
    return found


def test_every_reason_the_services_raise_has_the_code_the_catalogue_gives_it() -> None:
    codes = catalogue_codes()
    raised = raised_with_codes()
    assert "NOT_SEATED" in raised, "the scan must see the services"
    wrong = {
        reason: sorted(f"{code} at {where}" for code, where in places if code != codes.get(reason))
        for reason, places in raised.items()
        if any(code != codes.get(reason) for code, _ in places)
    }
    assert not wrong, f"raised with another code than common.proto gives: {wrong}"


def library_errors() -> list[Exception]:
    """One instance of every refusal the pure game libraries raise, with its own reason."""
    import poker_engine.errors as engine_errors
    from house_games import errors as house_errors

    made: list[Exception] = []
    for package, module in (("libs/poker_engine", engine_errors), ("libs/house_games", house_errors)):
        for path in (ROOT / package).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                    continue
                cls = getattr(module, node.func.id, None)
                if not (isinstance(cls, type) and issubclass(cls, Exception)):
                    continue
                reason = node.args[1] if len(node.args) >= 2 else None
                reason = reason or next((k.value for k in node.keywords if k.arg == "reason"), None)
                if isinstance(reason, ast.Constant) and isinstance(reason.value, str):
                    made.append(cls("refused", reason.value))
                elif isinstance(reason, ast.JoinedStr):  # f"{kind.value}_TOO_SMALL"
                    suffix = "".join(v.value for v in reason.values if isinstance(v, ast.Constant))
                    made += [cls("refused", f"{kind}{suffix}") for kind in ("BET", "RAISE")]
                elif reason is None and len(node.args) <= 1:
                    made.append(cls("refused"))
    return made


def test_every_library_refusal_the_table_passes_on_has_the_code_the_catalogue_gives_it() -> None:
    from house_games.errors import HouseGameError
    from poker_engine.errors import IllegalActionError, SeatingError
    from services.table.house.house_table import house_room_error
    from services.table.ports.library_errors import engine_refusal

    codes = catalogue_codes()
    errors = library_errors()
    reasons = {getattr(e, "reason", "") for e in errors}
    assert {"BET_TOO_SMALL", "RAISE_TOO_SMALL", "SEAT_EMPTY", "UNEQUAL_LIGHT_ANTES"} <= reasons
    wrong = {}
    for error in errors:
        if isinstance(error, (IllegalActionError, SeatingError)):
            answer = engine_refusal(error)
        elif isinstance(error, HouseGameError):
            answer = house_room_error(error)
        else:
            continue  # config, card and deck errors are the services' own bugs, never passed on
        if answer.kind.value != codes.get(answer.reason):
            wrong[answer.reason] = (answer.kind.value, codes.get(answer.reason))
    assert not wrong, f"(passed on as, catalogue says): {wrong}"
