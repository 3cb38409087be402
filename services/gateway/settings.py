"""Settings of the gateway (POKER_GATEWAY_* environment keys, and the shared POKER_* ones)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from service_runtime.auth import STAFF_TOKEN_MAX_SECONDS, KeyScope, TokenKeys
from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import positive, setting

# Known to everybody, so production refuses it: the device and network signals would be forgeable.
DEV_SIGNAL_KEY = "dev-gateway-signal-key-for-local-runs-only"


def _address(value: str) -> str | None:
    host, colon, port = value.rpartition(":")
    return None if colon and host and port.isdigit() else "host:port"


def _non_negative(value: int) -> str | None:
    return None if value >= 0 else "must be 0 or more"


def _staff_list(value: str) -> str | None:
    from services.gateway.staff_list import StaffListError, parse_staff_list

    try:
        parse_staff_list(value)
    except StaffListError as error:
        return str(error)
    return None


def _bot_token(value: str) -> str | None:
    # A bot token is `<bot id>:<secret>`; the value is never echoed back in the error.
    bot_id, colon, secret = value.partition(":")
    return None if not value or (colon and bot_id.isdigit() and len(secret) >= 20) else "is not a bot token"


@dataclass(frozen=True, kw_only=True)
class GatewaySettings(ServiceSettings):
    ENV_PREFIX: ClassVar[str] = "POKER_GATEWAY_"
    SERVICE: ClassVar[str] = "gateway"
    DEFAULT_PORT: ClassVar[int] = 50056
    STORES_DATA: ClassVar[bool] = False

    lobby_address: str = setting("127.0.0.1:50051", help="the lobby's gRPC address", check=_address)
    cashier_address: str = setting("127.0.0.1:50053", help="the cashier's gRPC address", check=_address)
    fairness_address: str = setting("127.0.0.1:50054", help="the fairness gRPC address", check=_address)
    history_address: str = setting("127.0.0.1:50055", help="the history gRPC address", check=_address)
    telegram_bot_token: str = setting(
        "",
        help="the Telegram bot's token: Web App sign-in verifies initData with a key derived from it "
        "(empty: no Telegram sign-in)",
        check=_bot_token,
        secret=True,
    )
    init_data_max_age_seconds: int = setting(
        600, help="the oldest Telegram initData (auth_date) a sign-in accepts", check=positive
    )
    token_ttl_seconds: int = setting(900, help="lifetime of an issued player token", check=positive)
    session_max_seconds: int = setting(
        86_400,
        help="how long after a sign-in its tokens are still renewed (then: SESSION_EXPIRED, sign in again)",
        check=positive,
    )
    development_sign_in: bool = setting(
        True, help="offer the development sign-in by name outside production (never offered in production)"
    )
    signal_key: str = setting(
        DEV_SIGNAL_KEY,
        help="secret that keys the device and network digests put in tokens (at least 16 characters)",
        secret=True,
    )
    purchase_flow: str = setting(
        "",
        help="`development` (chips recorded as bought, for test players; refused in production), "
        "`none`, or `package.module:factory` of the operator's payments flow (docs/gateway.md); "
        "empty: development outside production, none in production",
    )
    forwarded_hops: int = setting(
        0,
        help="proxies in front of the gateway whose X-Forwarded-For entries are trusted (the ingress: 1)",
        check=_non_negative,
    )
    calls_per_second_per_user: float = setting(20.0, help="sustained calls per player", check=positive)
    call_burst_per_user: int = setting(60, help="calls a player may make at once", check=positive)
    calls_per_second_per_address: float = setting(
        40.0, help="sustained calls per client address", check=positive
    )
    call_burst_per_address: int = setting(120, help="calls one address may make at once", check=positive)
    sign_ins_per_minute_per_address: float = setting(
        20.0, help="sign-ins per client address and minute", check=positive
    )
    max_request_bytes: int = setting(65536, help="the largest request message accepted", check=positive)
    head_timeout_seconds: float = setting(
        10.0,
        help="a request's head must arrive within this of its connection (or first byte); else closed",
        check=positive,
    )
    body_timeout_seconds: float = setting(
        30.0, help="a request's body must arrive within this of its head; else closed", check=positive
    )
    connections_per_address: int = setting(
        64,
        help="open connections one client address may hold (0: no cap; not applied behind trusted "
        "proxies, which limit their clients themselves)",
        check=_non_negative,
    )
    redis_prefix: str = setting(
        "", help="prefix of the gateway's Redis keys (used initData); empty: the shard registry's prefix"
    )
    web_root: Path = setting(
        Path("web/dist"), help="the built web client (make web) served at /; empty folder: no page"
    )
    # The staff's front door (the back office, docs/backoffice.md): its own listener, never the
    # players' address.
    staff_port: int = setting(
        -1,
        help="the staff door's port (the back-office console and the staff's calls; 0: any free port; "
        "-1: no staff door). Never expose it where players reach the gateway",
        check=lambda value: None if value >= -1 else "is -1 (off), 0 (any free port) or a port",
    )
    staff_host: str = setting("", help="the staff door's listen address (empty: the gateway's host)")
    staff_allow_list: str = setting(
        "",
        help="who may sign in to the back office: `<telegram id>=<name>:<role>+<role>` entries "
        "separated by `;` (roles: support, risk, finance, operations, admin)",
        check=_staff_list,
    )
    staff_bot_username: str = setting(
        "", help="the bot's username for the staff's Telegram Login Widget (its token: TELEGRAM_BOT_TOKEN)"
    )
    staff_token_ttl_seconds: int = setting(
        900, help="lifetime of an issued staff token (at most an hour)", check=positive
    )
    staff_session_max_seconds: int = setting(
        8 * 3600, help="how long after a staff sign-in its tokens are still renewed", check=positive
    )
    staff_login_max_age_seconds: int = setting(
        300, help="the oldest Telegram Login Widget data (auth_date) a staff sign-in accepts", check=positive
    )
    prometheus_url: str = setting(
        "", help="the operator's Prometheus (http://host:9090) whose firing alerts the console shows"
    )

    def validate(self) -> list[str]:
        problems = super().validate()
        if self.staff_token_ttl_seconds > STAFF_TOKEN_MAX_SECONDS:
            problems.append(f"{self.ENV_PREFIX}STAFF_TOKEN_TTL_SECONDS: at most {STAFF_TOKEN_MAX_SECONDS}")
        if self.staff_session_max_seconds < self.staff_token_ttl_seconds:
            problems.append(f"{self.ENV_PREFIX}STAFF_SESSION_MAX_SECONDS: at least STAFF_TOKEN_TTL_SECONDS")
        if self.session_max_seconds < self.token_ttl_seconds:
            problems.append(f"{self.ENV_PREFIX}SESSION_MAX_SECONDS: at least TOKEN_TTL_SECONDS")
        if len(self.signal_key) < 16:
            problems.append(f"{self.ENV_PREFIX}SIGNAL_KEY: at least 16 characters")
        if self.environment == "production":
            if self.signal_key == DEV_SIGNAL_KEY:
                problems.append(
                    f"{self.ENV_PREFIX}SIGNAL_KEY: the development key is not allowed in production"
                )
            if self.purchase_flow == "development":
                problems.append(
                    f"{self.ENV_PREFIX}PURCHASE_FLOW: the development flow is not allowed in production"
                )
            problems.extend(self._key_scope_problems())
        elif self.resolved_purchase_flow == "development" and self._signing_scope() is not KeyScope.ANY:
            problems.append(
                f"{self.ENV_PREFIX}PURCHASE_FLOW: the development flow mints the payments identity's"
                " tokens, which a player-scoped signing key cannot sign"
            )
        flow = self.purchase_flow
        if flow not in ("", "development", "none") and not _factory_path(flow):
            problems.append(f"{self.ENV_PREFIX}PURCHASE_FLOW: development, none or package.module:factory")
        return problems

    def _signing_scope(self) -> KeyScope | None:
        try:
            keys = TokenKeys.from_settings(self.auth_keys)
        except (ValueError, IndexError):
            return None  # the shared check has already said what is wrong with the keys
        return keys.scope_of(keys.signing_key_id)

    def _key_scope_problems(self) -> list[str]:
        """The gateway faces the internet: in production it holds only keys that sign player tokens,
        so whoever takes it over cannot mint an admin's or a service's token (docs/gateway.md)."""
        try:
            keys = TokenKeys.from_settings(self.auth_keys)
        except (ValueError, IndexError):
            return []
        problems: list[str] = []
        own = (KeyScope.PLAYER, KeyScope.STAFF, KeyScope.GATEWAY)
        if (
            not all(keys.scope_of(kid) in own for kid in keys.keys)
            or keys.scope_of(keys.signing_key_id) is not KeyScope.PLAYER
        ):
            problems.append(
                f"{self.ENV_PREFIX}AUTH_KEYS: in production the gateway holds only keys of its own scopes,"
                " a player-scoped one first (KEY_ID/player:SECRET; the staff door's KEY_ID/staff:SECRET and"
                " KEY_ID/gateway:SECRET), never the services' keys"
            )
        if self.staff_port >= 0:
            for scope in (KeyScope.STAFF, KeyScope.GATEWAY):
                if not any(keys.scope_of(kid) is scope for kid in keys.keys):
                    problems.append(
                        f"{self.ENV_PREFIX}AUTH_KEYS: the staff door needs a {scope.value}-scoped key"
                        f" (KEY_ID/{scope.value}:SECRET) in production"
                    )
        return problems

    @property
    def development(self) -> bool:
        return self.environment != "production"

    @property
    def offers_development_sign_in(self) -> bool:
        return self.development and self.development_sign_in

    @property
    def resolved_purchase_flow(self) -> str:
        return self.purchase_flow or ("development" if self.development else "none")


def _factory_path(value: str) -> bool:
    module, colon, name = value.partition(":")
    return bool(colon and module and name.isidentifier() and all(p.isidentifier() for p in module.split(".")))
