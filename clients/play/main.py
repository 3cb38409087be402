"""`poker-play`: the terminal client. Settings come from POKER_PLAY_* (docs/play.md); flags override."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

try:
    from clients.play.app import PokerPlayApp
except ModuleNotFoundError as missing:  # installed without the `play` extra (the service image)
    raise SystemExit(
        f"poker-play needs the 'play' extra ({missing.name} is missing): pip install 'poker-platform[play]'"
    ) from missing
from clients.play.identity import Identity, SignInError, development_identity, production_identity
from clients.play.settings import PlaySettings
from service_runtime.settings import SettingsError, load_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="poker-play",
        description="Play poker in the terminal against a running cluster (default: the local `make run`).",
    )
    parser.add_argument("--lobby", help="host:port of the lobby")
    parser.add_argument("--cashier", help="host:port of the cashier")
    parser.add_argument("--history", help="host:port of history")
    parser.add_argument("--fairness", help="host:port of fairness")
    parser.add_argument("--name", help="development: sign in as this name at once")
    parser.add_argument("--token", help="production: the bearer token to sign in with")
    return parser


def settings_from(argv: Sequence[str] | None) -> PlaySettings:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings(PlaySettings)
    except SettingsError as error:
        raise SystemExit(str(error)) from error
    overrides = {
        "lobby_address": args.lobby,
        "cashier_address": args.cashier,
        "history_address": args.history,
        "fairness_address": args.fairness,
        "player": args.name,
        "token": args.token,
    }
    return dataclasses.replace(settings, **{k: v for k, v in overrides.items() if v})


def identity_from(settings: PlaySettings) -> Identity | None:
    """The identity to start with, or None to ask on the sign-in screen."""
    try:
        if settings.token:
            return production_identity(settings.token)
        if settings.development and settings.player:
            return development_identity(settings.player, settings.auth_keys)
    except SignInError as error:
        raise SystemExit(f"poker-play: {error}") from error
    return None


def main(argv: Sequence[str] | None = None) -> None:
    settings = settings_from(argv)
    PokerPlayApp(settings, identity_from(settings)).run()


if __name__ == "__main__":
    main()
