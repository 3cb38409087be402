"""`poker-play`: the terminal client. Settings come from POKER_PLAY_* (docs/play.md); flags override.

The screens speak Russian or English (`clients.play.texts`): `--lang`, else POKER_PLAY_LANG, else the
locale; `--help` already speaks the language those choose.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Iterable, Mapping, Sequence

try:
    from clients.play.app import PokerPlayApp
except ModuleNotFoundError as missing:  # installed without the `play` extra (the service image)
    raise SystemExit(
        f"poker-play needs the 'play' extra ({missing.name} is missing): pip install 'poker-platform[play]'"
    ) from missing
from clients.play import texts
from clients.play.identity import Identity, SignInError, development_identity, production_identity
from clients.play.settings import PlaySettings
from service_runtime.settings import SettingsError, env_keys, load_settings

# Where POKER_PLAY_LANG is read from, as the settings read it.
_LANG_KEYS = env_keys(PlaySettings, next(f for f in dataclasses.fields(PlaySettings) if f.name == "lang"))


def build_parser(language: str = texts.DEFAULT_LANGUAGE) -> argparse.ArgumentParser:
    def say(key: str) -> str:
        return texts.text(language, key)

    class Formatter(argparse.HelpFormatter):
        def add_usage(
            self,
            usage: str | None,
            actions: Iterable[argparse.Action],
            groups: Iterable[argparse._MutuallyExclusiveGroup],
            prefix: str | None = None,
        ) -> None:
            super().add_usage(usage, actions, groups, say("cli.usage") if prefix is None else prefix)

    parser = argparse.ArgumentParser(
        prog="poker-play", description=say("cli.description"), add_help=False, formatter_class=Formatter
    )
    # One group with the heading in the language (argparse's own `options:` is left empty, so unshown).
    options = parser.add_argument_group(say("cli.options"))
    options.add_argument("-h", "--help", action="help", help=say("cli.help"))
    options.add_argument("--lobby", help=say("cli.lobby"))
    options.add_argument("--cashier", help=say("cli.cashier"))
    options.add_argument("--history", help=say("cli.history"))
    options.add_argument("--fairness", help=say("cli.fairness"))
    options.add_argument("--name", help=say("cli.name"))
    options.add_argument("--token", help=say("cli.token"))
    options.add_argument("--lang", choices=texts.LANGUAGES, help=say("cli.lang"))
    return parser


def flag_language(argv: Sequence[str]) -> str:
    """`--lang` as typed, read before the arguments are parsed (so that `--help` speaks it)."""
    for at, arg in enumerate(argv):
        if arg.startswith("--lang="):
            return arg.removeprefix("--lang=")
        if arg == "--lang" and at + 1 < len(argv):
            return argv[at + 1]
    return ""


def settings_from(argv: Sequence[str] | None, environ: Mapping[str, str] | None = None) -> PlaySettings:
    """The settings with the flags over them, and the language chosen (`lang` is `ru` or `en`)."""
    env = os.environ if environ is None else environ
    given = list(sys.argv[1:] if argv is None else argv)
    setting = next((env[key] for key in _LANG_KEYS if key in env), "")
    first_guess = texts.choose_language(flag_language(given), setting, env)
    args = build_parser(first_guess).parse_args(given)
    try:
        settings = load_settings(PlaySettings, env)
    except SettingsError as error:
        raise SystemExit(str(error)) from error
    overrides = {
        "lobby_address": args.lobby,
        "cashier_address": args.cashier,
        "history_address": args.history,
        "fairness_address": args.fairness,
        "player": args.name,
        "token": args.token,
        "lang": texts.choose_language(args.lang, settings.lang, env),
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
    texts.set_language(settings.lang)
    PokerPlayApp(settings, identity_from(settings)).run()


if __name__ == "__main__":
    main()
