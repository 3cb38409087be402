"""`make run` with TLS: given the POKER_TLS_* settings, the launcher starts all five services with
mutual TLS, checks their health over it, and prints how to call them with the run's certificate; the
services refuse plaintext, and the lobby reaches the one table shard over TLS."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from service_runtime.testing import auth_metadata
from service_runtime.testing_pki import TestAuthority, tls_environment
from service_runtime.tls import channel_credentials

from .test_cluster import _free_base_port, _read_until_banner, _start, processes  # noqa: F401


def test_make_run_with_tls_settings_runs_every_service_over_mutual_tls(
    tmp_path: Path,
    processes: list[subprocess.Popen[str]],  # noqa: F811
) -> None:
    authority = TestAuthority(tmp_path / "pki")
    files = authority.issue("services")
    base_port = _free_base_port()
    process = _start(tmp_path / "data", base_port, **tls_environment(files))
    processes.append(process)
    banner = "".join(_read_until_banner(process))
    assert f"grpcurl -cacert {files.ca_file} -cert {files.cert_file} -key {files.key_file}" in banner
    credentials = channel_credentials(authority.issue("client").read())
    for offset in range(5):
        target = f"127.0.0.1:{base_port + offset}"
        with grpc.secure_channel(target, credentials) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING, target
        with grpc.insecure_channel(target) as plaintext, pytest.raises(grpc.RpcError) as caught:
            health_pb2_grpc.HealthStub(plaintext).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE, target
    # The lobby lists a room's tables by asking the one table shard (ListShardTables) over TLS.
    with grpc.secure_channel(f"127.0.0.1:{base_port}", credentials) as channel:
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        joined = lobby.JoinTable(
            lobby_pb2.JoinTableRequest(room_id="nlhe-gram-classic", spectate=True),
            metadata=auth_metadata("alice"),
            timeout=20,
        )
    assert joined.address == f"127.0.0.1:{base_port + 1}"
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=60)
    assert process.returncode == 0, rest[-3000:]
    assert "Traceback" not in rest
