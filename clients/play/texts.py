"""The language of the screens: every text a person reads is a catalogue entry (`clients/play/catalogue`),
a stable key with a Russian and an English text that may name parameters (`{amount}`), filled in by
`t`. Russian first: the operator's players read it.

The language is chosen once at start and kept here for the screens and the view model: `--lang`,
then POKER_PLAY_LANG, then the locale (LC_ALL, LC_MESSAGES, LANG, the first one set): one starting
with `ru` is Russian, any other English, and Russian when none is set or it is `C` or `POSIX`.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from clients.play.catalogue import CATALOGUE

LANGUAGES = ("ru", "en")
DEFAULT_LANGUAGE = "ru"
LOCALE_KEYS = ("LC_ALL", "LC_MESSAGES", "LANG")

_chosen = {"language": DEFAULT_LANGUAGE}


def set_language(language: str) -> None:
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {language!r}")
    _chosen["language"] = language


def language() -> str:
    return _chosen["language"]


@contextmanager
def using(language_: str) -> Iterator[None]:
    """The language for a while (tests), then the one before."""
    before = language()
    set_language(language_)
    try:
        yield
    finally:
        set_language(before)


def known(key: str) -> bool:
    return key in CATALOGUE


def text(language_: str, key: str, /, **params: object) -> str:
    """The entry in the language given, its parameters filled in."""
    return CATALOGUE[key][language_].format(**params)


def t(key: str, /, **params: object) -> str:
    """The entry in the chosen language, its parameters filled in."""
    return text(language(), key, **params)


def in_own_words(server_text: str, key: str) -> str:
    """The services write their messages in English: in English those words, in another language
    the catalogue's words for the stable code that came with them (`key`), when it has them."""
    if language() == "en" or not known(key):
        return server_text
    return t(key)


def parameters(template: str) -> frozenset[str]:
    """The parameter names a template fills in (`{amount}` names `amount`)."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name is not None)


def locale_language(environ: Mapping[str, str]) -> str:
    """Russian for a `ru` locale and for none (unset, `C`, `POSIX`); English for any other."""
    value = next((environ[key] for key in LOCALE_KEYS if environ.get(key)), "")
    name = value.split(".", 1)[0].split("@", 1)[0].lower()
    if name in ("", "c", "posix") or name.startswith("ru"):
        return "ru"
    return "en"


def choose_language(flag: str | None, setting: str, environ: Mapping[str, str]) -> str:
    """`--lang`, else POKER_PLAY_LANG, else the locale (a value that is no language is passed over)."""
    for chosen in (flag, setting):
        if chosen in LANGUAGES:
            return str(chosen)
    return locale_language(environ)
