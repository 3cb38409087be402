"""`make run` with TLS: given the POKER_TLS_* settings, the launcher starts the five gRPC services with
mutual TLS and the gateway on HTTPS, checks their health over it, and prints how to call them with the
run's certificate; the services refuse plaintext, the lobby reaches the one table shard over TLS, and
the gateway forwards a player's call to the lobby over TLS."""

from __future__ import annotations

import json
import shutil
import signal
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from service_runtime.testing import auth_metadata
from service_runtime.testing_pki import TestAuthority, tls_environment
from service_runtime.tls import channel_credentials

from .test_cluster import _free_base_port, _read_until_banner, _start, processes  # noqa: F401


# A whole `make run` cluster: the whole-cluster tier (`make test-cluster`, which CI runs after `make test`).
@pytest.mark.cluster
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
    # The run's certificate is named for a client, with grpcurl's flags where grpcurl is installed.
    if shutil.which("grpcurl"):
        assert f"grpcurl -cacert {files.ca_file} -cert {files.cert_file} -key {files.key_file}" in banner
    else:
        assert f"CA {files.ca_file}, certificate {files.cert_file}, key {files.key_file}" in banner
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
    gateway = f"https://127.0.0.1:{base_port + 5}"
    # The gateway speaks only HTTPS here, and the banner says so (with the CA its certificate is from).
    assert f"Play in a browser: {gateway}/ (sign in with any name; development only)" in banner
    assert "http://" not in banner
    assert f"its certificate is from the CA in {files.ca_file}" in banner
    context = ssl.create_default_context(cafile=str(files.ca_file))
    assert urllib.request.urlopen(f"{gateway}/readyz", context=context, timeout=10).status == 200
    # A Connect call through the gateway (development sign-in, then the lobby's rooms) crosses TLS twice.
    signed = _connect(
        gateway,
        "poker.gateway.v1.GatewayService/SignIn",
        {"developmentName": "tls-alice", "deviceId": "tls-test-device"},
        context,
    )
    rooms = _connect(
        gateway, "poker.lobby.v1.LobbyService/ListRooms", {}, context, token=signed["session"]["token"]
    )
    assert any(room["roomId"] == "nlhe-gram-classic" for room in rooms["rooms"])
    with pytest.raises((urllib.error.URLError, ConnectionError)):  # plain HTTP to the HTTPS port
        urllib.request.urlopen(f"http://127.0.0.1:{base_port + 5}/readyz", timeout=5)
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=60)
    assert process.returncode == 0, rest[-3000:]
    assert "Traceback" not in rest


def _connect(base: str, method: str, body: dict[str, Any], context: ssl.SSLContext, token: str = "") -> Any:
    """One Connect unary call (JSON) to the gateway."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{base}/{method}", data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, context=context, timeout=20) as reply:
        return json.loads(reply.read())
