"""Frozen, validated settings read once from the environment, with one error listing every bad key.

A service declares a frozen dataclass whose fields carry `setting(...)` metadata; `load_settings`
reads `POKER_<SERVICE>_<FIELD>` (falling back to `POKER_<FIELD>` for keys the services share, such as
the auth keys), converts by the field's type, runs each field's validator and then the class's
`validate()` method, and raises `SettingsError` naming every problem at once. Nothing else in the
code base reads `os.environ`.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_MISSING = object()


class SettingsError(Exception):
    """Every missing or bad setting, one per line, so an operator fixes them all in one go."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid settings:\n  " + "\n  ".join(problems))
        self.problems = problems


def setting(
    default: Any = _MISSING,
    *,
    help: str,
    check: Callable[[Any], str | None] | None = None,
    secret: bool = False,
    shared: bool = False,
) -> Any:
    """Declare one setting: its default (absent means required), a description and a validator.

    `check` returns an error sentence or None. `secret` hides the value from `describe()`. `shared`
    marks keys every service reads from the unprefixed `POKER_<FIELD>` as well.
    """
    meta = {"help": help, "check": check, "secret": secret, "shared": shared}
    if default is _MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def port_number(value: int) -> str | None:
    """Port 0 asks the OS for a free port, which tests use."""
    return None if 0 <= value <= 65535 else "must be between 0 and 65535"


def positive(value: float) -> str | None:
    return None if value > 0 else "must be positive"


def not_negative(value: float) -> str | None:
    return None if value >= 0 else "must not be negative"


def one_of(*choices: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)}"

    return check


def _convert(raw: str, annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        if raw == "":
            return None
        return _convert(raw, inner[0])
    if origin is tuple:
        (item,) = typing.get_args(annotation)[:1]
        return tuple(_convert(part.strip(), item) for part in raw.split(",") if part.strip())
    if annotation is bool:
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ValueError("must be true or false")
    if annotation is int:
        return int(raw.strip())
    if annotation is float:
        return float(raw.strip())
    if annotation is Path:
        return Path(raw)
    if annotation is str:
        return raw
    raise TypeError(f"unsupported setting type {annotation!r}")


def env_keys(cls: type[Any], field: dataclasses.Field[Any]) -> list[str]:
    """The environment keys a field is read from, most specific first."""
    prefix: str = cls.ENV_PREFIX
    keys = [f"{prefix}{field.name.upper()}"]
    if field.metadata.get("shared"):
        keys.append(f"POKER_{field.name.upper()}")
    return keys


def load_settings(cls: type[T], environ: Mapping[str, str] | None = None) -> T:
    """Build `cls` from the environment, or raise SettingsError listing every problem."""
    env = os.environ if environ is None else environ
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    problems: list[str] = []
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        keys = env_keys(cls, field)
        raw = next((env[k] for k in keys if k in env), None)
        if raw is None:
            if field.default is dataclasses.MISSING:
                problems.append(f"{keys[0]}: required ({field.metadata.get('help', '')})")
            continue
        try:
            value = _convert(raw, hints[field.name])
        except (ValueError, TypeError) as exc:
            problems.append(f"{keys[0]}: cannot read {raw!r} as {hints[field.name]}: {exc}")
            continue
        values[field.name] = value
    if not problems:
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            check = field.metadata.get("check")
            value = values.get(field.name, field.default)
            if check is not None and value is not None:
                message = check(value)
                if message:
                    problems.append(f"{env_keys(cls, field)[0]}: {message}")
    if problems:
        raise SettingsError(problems)
    instance = cls(**values)
    validate = getattr(instance, "validate", None)
    if validate is not None:
        extra: list[str] = validate()
        if extra:
            raise SettingsError(extra)
    return instance


def describe(settings: Any) -> list[tuple[str, str, str]]:
    """(key, value, help) rows for docs and start-up logs; secret values are masked."""
    rows = []
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        shown = "***" if field.metadata.get("secret") and value else str(value)
        rows.append((env_keys(type(settings), field)[0], shown, field.metadata.get("help", "")))
    return rows
