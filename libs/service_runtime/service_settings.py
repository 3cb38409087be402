"""Settings every service shares (address, storage, auth, logging); each service subclasses it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from service_runtime.auth import parse_key_entry
from service_runtime.settings import not_negative, one_of, port_number, positive, setting

DEV_KEY_ID = "dev"
# Known to everybody, so it must never verify a token in production: `validate` refuses it there.
DEV_SIGNING_KEY = "dev-signing-key-for-local-runs-and-tests-only"


def _port_or_off(value: int) -> str | None:
    return None if -1 <= value <= 65535 else "must be -1 (off) or a port between 0 and 65535"


def _ratio(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else "must be between 0 and 1"


def _key_pairs(value: tuple[str, ...]) -> str | None:
    if not value:
        return "at least one key is required"
    for item in value:
        try:
            parse_key_entry(item)
        except ValueError as exc:
            return str(exc)
    return None


@dataclass(frozen=True, kw_only=True)
class ServiceSettings:
    """Keys shared by all services; read as POKER_<SERVICE>_<KEY>, shared ones also as POKER_<KEY>."""

    ENV_PREFIX: ClassVar[str] = "POKER_"
    SERVICE: ClassVar[str] = "service"
    DEFAULT_PORT: ClassVar[int] = 0
    # False for a service that keeps no data of its own: production then needs no database URL.
    STORES_DATA: ClassVar[bool] = True

    environment: str = setting(
        "development",
        help="development or production; production refuses the development signing key",
        check=one_of("development", "production"),
        shared=True,
    )
    host: str = setting("127.0.0.1", help="address to listen on")
    port: int = setting(-1, help="gRPC port; 0 picks a free one; unset uses the service default")
    data_dir: Path = setting(Path("data"), help="folder for embedded SQLite files", shared=True)
    database_url: str = setting(
        "", help="SQLAlchemy async URL; empty means a SQLite file in data_dir", secret=True
    )
    redis_url: str = setting("", help="Redis URL; empty means no Redis (single shard)", shared=True)
    log_format: str = setting(
        "auto",
        help="json, console, or auto (console on a terminal)",
        check=one_of("auto", "json", "console"),
        shared=True,
    )
    log_level: str = setting(
        "info",
        help="debug, info, warning or error",
        check=one_of("debug", "info", "warning", "error"),
        shared=True,
    )
    log_calls: bool = setting(
        False,
        help="a log line for every successful call too (off: only refused and failed calls are logged;"
        " every call is counted in grpc_server_handled_total either way)",
        shared=True,
    )
    auth_keys: tuple[str, ...] = setting(
        (f"{DEV_KEY_ID}:{DEV_SIGNING_KEY}",),
        help="HMAC keys that verify bearer tokens, KEY_ID:SECRET (or KEY_ID/player:SECRET, a key that"
        " signs player tokens only) comma-separated; the first signs",
        check=_key_pairs,
        secret=True,
        shared=True,
    )
    shutdown_grace_seconds: float = setting(
        10.0, help="how long in-flight RPCs may run after SIGTERM", check=positive, shared=True
    )
    shutdown_drain_seconds: float = setting(
        1.0,
        help="after SIGTERM, how long the service reports NOT_SERVING and still serves before it refuses"
        " new RPCs (for load balancers to take it out; 0 where there is none, as in `make run`)",
        check=not_negative,
        shared=True,
    )
    max_concurrent_rpcs: int = setting(
        1000, help="unary calls served at once; more are refused with RESOURCE_EXHAUSTED", check=positive
    )
    max_concurrent_streams: int = setting(
        1000, help="server streams served at once; more are refused with RESOURCE_EXHAUSTED", check=positive
    )
    player_concurrent_calls: int = setting(
        32,
        help="unary calls one player (token subject) has served at once; more: CALLER_QUOTA_EXCEEDED",
        check=positive,
    )
    player_concurrent_streams: int = setting(
        16,
        help="server streams one player (token subject) holds open at once; more: CALLER_QUOTA_EXCEEDED",
        check=positive,
    )
    request_timeout_seconds: float = setting(
        5.0, help="deadline on calls this service makes to others", check=positive, shared=True
    )

    # Observability (docs/deploy.md "Metrics, traces and alerts").
    metrics_port: int = setting(
        -1,
        help="HTTP port of the Prometheus metrics (/metrics); -1 off, 0 picks a free one",
        check=_port_or_off,
        shared=True,
    )
    otlp_endpoint: str = setting(
        "",
        help="OpenTelemetry collector to export spans to (http://host:4317 plaintext, https:// TLS); empty: off",
        shared=True,
    )
    trace_sample_ratio: float = setting(
        1.0, help="share of new traces recorded when exporting (0 to 1)", check=_ratio, shared=True
    )
    # Transport security: mutual TLS between the services; plaintext only in development.
    tls_cert_file: str = setting(
        "", help="PEM certificate chain this process serves and calls with; empty: plaintext", shared=True
    )
    tls_key_file: str = setting("", help="PEM private key of tls_cert_file", shared=True)
    tls_ca_file: str = setting("", help="PEM CA bundle that peers' certificates must chain to", shared=True)
    tls_reload_seconds: float = setting(
        30.0,
        help="how often the TLS files are checked for a renewed certificate",
        check=positive,
        shared=True,
    )
    health_port: int = setting(
        -1,
        help="plaintext port serving only the gRPC health service (kubelet probes cannot speak TLS); -1 off",
        check=_port_or_off,
        shared=True,
    )

    def __post_init__(self) -> None:
        # A frozen dataclass cannot assign normally; -1 means "the service's well-known port".
        if self.port == -1:
            object.__setattr__(self, "port", self.DEFAULT_PORT)

    def validate(self) -> list[str]:
        problems = []
        if port_number(self.port):
            problems.append(f"{self.ENV_PREFIX}PORT: must be between 0 and 65535")
        if self.environment == "production":
            if any(k.partition(":")[2] == DEV_SIGNING_KEY for k in self.auth_keys):
                problems.append("POKER_AUTH_KEYS: the development signing key is not allowed in production")
            if self.STORES_DATA and not self.database_url:
                problems.append(f"{self.ENV_PREFIX}DATABASE_URL: required in production")
            if not self.tls_cert_file:
                problems.append(
                    "POKER_TLS_CERT_FILE: required in production (plaintext is for development only)"
                )
        problems.extend(self._tls_problems())
        return problems

    def _tls_problems(self) -> list[str]:
        files = {
            "POKER_TLS_CERT_FILE": self.tls_cert_file,
            "POKER_TLS_KEY_FILE": self.tls_key_file,
            "POKER_TLS_CA_FILE": self.tls_ca_file,
        }
        if not any(files.values()):
            return []
        problems = []
        for key, value in files.items():
            if not value:
                problems.append(f"{key}: required with the other TLS files (certificate, key and CA)")
            elif not Path(value).is_file():
                problems.append(f"{key}: no such file: {value}")
        return problems

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def resolved_database_url(self) -> str:
        """The configured URL, or the embedded SQLite file of this service."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / f'{self.SERVICE}.db').as_posix()}"
