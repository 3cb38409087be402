"""Settings of the terminal client (POKER_PLAY_* keys; the auth keys and environment are shared)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from service_runtime.service_settings import DEV_KEY_ID, DEV_SIGNING_KEY
from service_runtime.settings import one_of, positive, setting


def language_setting(value: str) -> str | None:
    return None if value in ("", "ru", "en") else "must be ru or en (or empty: the locale's)"


@dataclass(frozen=True, kw_only=True)
class PlaySettings:
    """Where the services are (the `make run` ports by default) and how the client signs in."""

    ENV_PREFIX: ClassVar[str] = "POKER_PLAY_"

    environment: str = setting(
        "development",
        help="development mints tokens with the configured key; production takes a token",
        check=one_of("development", "production"),
        shared=True,
    )
    auth_keys: tuple[str, ...] = setting(
        (f"{DEV_KEY_ID}:{DEV_SIGNING_KEY}",),
        help="development only: KEY_ID:SECRET keys; the first signs the tokens this client mints",
        secret=True,
        shared=True,
    )
    lobby_address: str = setting("127.0.0.1:50051", help="host:port of the lobby")
    cashier_address: str = setting("127.0.0.1:50053", help="host:port of the cashier (balances, purchases)")
    history_address: str = setting("127.0.0.1:50055", help="host:port of history (my hands, statement)")
    fairness_address: str = setting("127.0.0.1:50054", help="host:port of fairness (reveals)")
    player: str = setting("", help="development: the player name to sign in as (asked if empty)")
    token: str = setting("", help="production: the bearer token the gateway gave you", secret=True)
    lang: str = setting(
        "",
        help="language of the screens, ru or en (--lang overrides); empty: the locale's "
        "(LC_ALL, LC_MESSAGES, LANG: ru... Russian, another English; unset, C or POSIX: Russian)",
        check=language_setting,
    )
    request_timeout_seconds: float = setting(5.0, help="deadline of each call", check=positive, shared=True)
    # Mutual TLS where the services require it (docs/deploy.md): this client's certificate, key, CA.
    tls_cert_file: str = setting(
        "", help="PEM certificate to call the services with; empty: plaintext", shared=True
    )
    tls_key_file: str = setting("", help="PEM private key of tls_cert_file", shared=True)
    tls_ca_file: str = setting("", help="PEM CA bundle the services' certificates chain to", shared=True)

    @property
    def development(self) -> bool:
        return self.environment == "development"
