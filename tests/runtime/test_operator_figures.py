"""The runtime's figures an operator's alerts and dashboards rely on (issue 40).

- Every status code of every method a server registers is a series at 0 before the first call, so
  the first INTERNAL is an increase Prometheus sees (a series born at 1 has no increase).
- In-flight calls carry the method, as the docs list.
- `poker_build_info` names the version a process runs (rollouts), `poker_tls_certificate_expiry_
  timestamp_seconds` when its certificate and CA end (the 14-day alert), the database pool's
  connections in use against its bound (saturation), and Redis commands that failed.
"""

from __future__ import annotations

import datetime
import gc
import socket
import urllib.request
from pathlib import Path

import grpc
import pytest
import redis.exceptions
from cryptography import x509
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from service_runtime import metrics
from service_runtime.clients import create_channel
from service_runtime.database import create_engine
from service_runtime.redis_client import create_redis
from service_runtime.storage_metrics import TimedRedis
from service_runtime.testing import running_server, token_for
from service_runtime.testing_pki import TestAuthority

from .probe_service import PROBE_ACCESS, SERVICE, probe_handler

HEALTH = "grpc.health.v1.Health"


def _sample(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


async def test_every_code_of_every_registered_method_is_a_series_at_zero_before_any_call() -> None:
    async with running_server([], PROBE_ACCESS):
        for code in grpc.StatusCode:
            value = _sample(
                "grpc_server_handled_total",
                grpc_type="unary",
                grpc_service=HEALTH,
                grpc_method="Check",
                grpc_code=code.name,
            )
            assert value is not None, code.name
        assert (
            _sample(
                "grpc_server_handled_total",
                grpc_type="server_stream",
                grpc_service=HEALTH,
                grpc_method="Watch",
                grpc_code="INTERNAL",
            )
            is not None
        )


def test_the_status_codes_are_grpcs() -> None:
    assert tuple(code.name for code in grpc.StatusCode) == metrics.STATUS_CODES


def test_a_method_first_seen_on_a_call_gets_every_code_at_once() -> None:
    figures = metrics.SERVER_FIGURES.for_method("/poker.test.v1.Figures/FirstSeen", metrics.UNARY)
    figures.handled("OK").inc()
    labels = {"grpc_type": "unary", "grpc_service": "poker.test.v1.Figures", "grpc_method": "FirstSeen"}
    assert _sample("grpc_server_handled_total", **labels, grpc_code="INTERNAL") == 0
    assert _sample("grpc_server_handled_total", **labels, grpc_code="UNKNOWN") == 0
    assert _sample("grpc_server_handled_total", **labels, grpc_code="OK") == 1


async def test_calls_in_flight_are_counted_by_method() -> None:
    labels = {"grpc_type": "server_stream", "grpc_service": SERVICE, "grpc_method": "Count"}
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()]) as (server, _),
        create_channel(f"127.0.0.1:{server.port}", token=lambda: token_for("table", "service")) as channel,
    ):
        stream = channel.unary_stream(f"/{SERVICE}/Count")(b"1000000")
        await stream.read()
        assert _sample("grpc_server_in_flight", **labels) == 1
        assert _sample("grpc_client_in_flight", **labels) == 1
        stream.cancel()


def _scrape(port: int) -> dict[str, list[tuple[dict[str, str], float]]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        body = answer.read().decode()
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def test_build_info_names_the_version_and_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POKER_BUILD_VERSION", "1.4.2")
    monkeypatch.setenv("POKER_BUILD_REVISION", "c62a7d6")
    endpoint = metrics.start_metrics_endpoint("127.0.0.1", 0, "figures-probe")
    try:
        scraped = _scrape(endpoint.port)
    finally:
        endpoint.stop()
    assert ({"service": "figures-probe", "version": "1.4.2", "revision": "c62a7d6"}, 1.0) in scraped[
        "poker_build_info"
    ]


def test_build_info_without_a_build_says_the_package_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POKER_BUILD_VERSION", raising=False)
    monkeypatch.delenv("POKER_BUILD_REVISION", raising=False)
    version, revision = metrics.build_version()
    assert version == "0.1.0"
    assert revision == "unknown"


async def test_certificate_expiry_is_exported_for_the_served_certificate_and_its_ca(tmp_path: Path) -> None:
    authority = TestAuthority(tmp_path / "pki")
    files = authority.issue("figures", valid_days=9)
    leaf = x509.load_pem_x509_certificate(files.cert_file.read_bytes())
    async with running_server([], PROBE_ACCESS, tls=files):
        own = _sample(
            "poker_tls_certificate_expiry_timestamp_seconds", certificate="own", path=str(files.cert_file)
        )
        ca = _sample(
            "poker_tls_certificate_expiry_timestamp_seconds", certificate="ca", path=str(files.ca_file)
        )
    assert own == leaf.not_valid_after_utc.timestamp()
    assert ca == authority.certificate.not_valid_after_utc.timestamp()
    days_left = (own - datetime.datetime.now(datetime.UTC).timestamp()) / 86400
    assert 8.9 < days_left <= 9


async def test_certificate_expiry_follows_a_renewal_on_disk(tmp_path: Path) -> None:
    authority = TestAuthority(tmp_path / "pki")
    files = authority.issue("renewed", valid_days=3)
    async with running_server([], PROBE_ACCESS, tls=files):
        before = _sample(
            "poker_tls_certificate_expiry_timestamp_seconds", certificate="own", path=str(files.cert_file)
        )
        authority.issue("renewed", valid_days=30, folder=files.cert_file.parent)
        after = _sample(
            "poker_tls_certificate_expiry_timestamp_seconds", certificate="own", path=str(files.cert_file)
        )
    assert before is not None
    assert after is not None
    assert round((after - before) / 86400) == 27


async def test_the_database_pool_reports_connections_in_use_against_its_bound(tmp_path: Path) -> None:
    labels = {"backend": "sqlite"}
    gc.collect()  # engines of earlier tests in this process that nothing holds any more
    bound_before = metrics.sample_value("poker_db_pool_max_connections", labels)
    used_before = metrics.sample_value("poker_db_pool_connections_in_use", labels)
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'pool.db'}")
    assert metrics.sample_value("poker_db_pool_max_connections", labels) == bound_before + 1
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))
        assert metrics.sample_value("poker_db_pool_connections_in_use", labels) == used_before + 1
    assert metrics.sample_value("poker_db_pool_connections_in_use", labels) == used_before
    await engine.dispose()
    del engine, connection
    gc.collect()
    assert metrics.sample_value("poker_db_pool_max_connections", labels) == bound_before


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_redis_commands_that_fail_are_counted_by_command() -> None:
    client = TimedRedis(host="127.0.0.1", port=_closed_port(), socket_connect_timeout=1)
    before = metrics.sample_value("poker_redis_command_errors_total", {"command": "GET"})
    with pytest.raises(redis.exceptions.ConnectionError):
        await client.get("figures:absent")
    await client.aclose()
    assert metrics.sample_value("poker_redis_command_errors_total", {"command": "GET"}) == before + 1


async def test_a_redis_error_reply_is_counted_too(redis_server_url: str, redis_prefix: str) -> None:
    client = create_redis(redis_server_url)
    key = f"{redis_prefix}text"
    try:
        await client.set(key, "text")
        before = metrics.sample_value("poker_redis_command_errors_total", {"command": "INCRBY"})
        with pytest.raises(redis.exceptions.ResponseError):
            await client.incr(key)
        assert metrics.sample_value("poker_redis_command_errors_total", {"command": "INCRBY"}) == before + 1
    finally:
        await client.aclose()
