"""Every line a service writes is one JSON record (issue 40 item 6), whoever wrote it.

gRPC core, the C library under grpcio, logs to stderr in its own plain format (`I1206 ... Handshake
failed`, `Got goaway`) at info level unless GRPC_VERBOSITY says otherwise, and it reads that variable
once, as grpc is first imported: each entry point sets it (to ERROR, unless the operator chose) before
anything imports grpc. Python-side records (library loggers, warnings, an exception nothing caught)
go through the structured logger's JSON renderer.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service_runtime.structured_logging import quiet_grpc_core
from service_runtime.testing_pki import TestAuthority, tls_environment
from service_runtime.tls import channel_credentials
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = ["lobby", "table", "cashier", "fairness", "history", "gateway"]
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
ENHANCE_YOUR_CALM = 0xB


SETTINGS, PING, GOAWAY, ACK = 4, 6, 7, 1


def _frame(kind: int, payload: bytes, flags: int = 0) -> bytes:
    """An HTTP/2 frame on stream 0."""
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", 0) + payload


def _until_pong(sock: socket.socket, data: bytes) -> None:
    """Read frames until the server acknowledges the PING carrying `data` or closes the connection:
    frames are handled in order, so either way it has handled (and logged) what came before."""
    sock.settimeout(20)
    buffer = b""
    while True:
        while len(buffer) >= 9:
            length = int.from_bytes(buffer[:3], "big")
            if len(buffer) < 9 + length:
                break
            kind, flags, payload = buffer[3], buffer[4], buffer[9 : 9 + length]
            buffer = buffer[9 + length :]
            if kind == PING and flags & ACK and payload == data:
                return
        received = sock.recv(65536)
        if not received:
            return
        buffer += received


def _until_closed(sock: socket.socket) -> None:
    """Read until the server closes the connection (it is done with it, and logged what it logs)."""
    sock.settimeout(20)
    while sock.recv(65536):
        pass


def _without_operator_verbosity() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "GRPC_VERBOSITY"}


def _not_json(lines: list[str]) -> list[str]:
    bad = []
    for line in lines:
        try:
            if not isinstance(json.loads(line), dict):
                bad.append(line)
        except json.JSONDecodeError:
            bad.append(line)
    return bad


def test_a_tls_service_writes_only_json_through_plaintext_attempts_a_goaway_and_its_drain(
    tmp_path: Path,
) -> None:
    files = TestAuthority(tmp_path / "pki").issue("lobby")
    env = {
        **_without_operator_verbosity(),
        **tls_environment(files),
        "POKER_DATA_DIR": str(tmp_path),
        "POKER_LOBBY_PORT": "0",
        "POKER_HEALTH_PORT": "0",
        "POKER_LOG_FORMAT": "json",
        "POKER_LOBBY_TABLE_SHARD_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "services.lobby"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert process.stdout is not None
        listening: dict[str, object] = {}
        for line in process.stdout:
            lines.append(line)
            if '"listening"' in line:
                listening = json.loads(line)
                break
        assert listening, f"the lobby exited with {process.wait()} before listening: {lines}"
        port = int(str(listening["address"]).rsplit(":", 1)[1])
        health_port = int(str(listening["health_port"]))
        # A client speaking plaintext to the TLS port: gRPC core logs "Handshake failed" at info.
        with socket.create_connection(("127.0.0.1", port)) as plaintext:
            plaintext.sendall(HTTP2_PREFACE + _frame(SETTINGS, b""))
            _until_closed(plaintext)
        # A peer that ends its connection with an error code: core logs "Got goaway" at info.
        with socket.create_connection(("127.0.0.1", health_port)) as peer:
            goaway = struct.pack(">II", 0, ENHANCE_YOUR_CALM) + b"too_many_pings"
            peer.sendall(
                HTTP2_PREFACE + _frame(SETTINGS, b"") + _frame(GOAWAY, goaway) + _frame(PING, b"goaway!")
            )
            _until_pong(peer, b"goaway!")
        # A TLS client with its connection still open while the server drains and stops (its GOAWAY).
        with grpc.secure_channel(f"127.0.0.1:{port}", channel_credentials(files.read())) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=20)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            process.send_signal(signal.SIGTERM)
            rest, _ = process.communicate(timeout=60)
        lines += rest.splitlines()
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert any('"stopped"' in line for line in lines)
    assert _not_json(lines) == []


# Run in a fresh interpreter: records the value of GRPC_VERBOSITY at the moment grpc is first imported.
_ENTRY_PROBE = textwrap.dedent(
    """
    import importlib, importlib.abc, json, os, sys

    seen = {}

    class WatchGrpc(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "grpc" and "at_import" not in seen:
                seen["at_import"] = os.environ.get("GRPC_VERBOSITY")
            return None

    sys.meta_path.insert(0, WatchGrpc())
    entry = importlib.import_module(sys.argv[1])
    seen["grpc_after_module_import"] = "grpc" in sys.modules
    try:
        entry.main()
    except SystemExit as stop:
        seen["exit"] = stop.code
    seen["after_main"] = os.environ.get("GRPC_VERBOSITY")
    print(json.dumps(seen))
    """
)


@pytest.mark.parametrize("service", ENTRY_POINTS)
def test_each_entry_point_quiets_grpc_core_before_grpc_is_imported(service: str) -> None:
    # A bad port setting: main() stops at the settings, after everything it imports first.
    env = {**_without_operator_verbosity(), f"POKER_{service.upper()}_PORT": "not-a-port"}
    done = subprocess.run(
        [sys.executable, "-c", _ENTRY_PROBE, f"services.{service}.__main__"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["grpc_after_module_import"] is False
    assert seen["exit"] == 2
    assert seen["after_main"] == "ERROR"
    if "at_import" in seen:
        assert seen["at_import"] == "ERROR"


def test_the_operators_grpc_verbosity_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRPC_VERBOSITY", "DEBUG")
    quiet_grpc_core()
    assert os.environ["GRPC_VERBOSITY"] == "DEBUG"
    monkeypatch.delenv("GRPC_VERBOSITY")
    quiet_grpc_core()
    assert os.environ["GRPC_VERBOSITY"] == "ERROR"


# Library loggers as the libraries name them, after the libraries themselves were imported (one that
# added a handler of its own would print a second, plain line), a warning, an exception in a thread,
# one raised in a destructor, and one that ends the program.
_PYTHON_SIDE = textwrap.dedent(
    """
    import logging, threading, warnings

    import alembic.command, grpc, redis, sqlalchemy, uvicorn
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    from service_runtime.structured_logging import configure_logging, log_uncaught_exceptions

    uvicorn.Config(app=None, log_config=None)
    configure_logging("probe", log_format="json")
    log_uncaught_exceptions()
    for name in LOGGERS:
        logging.getLogger(name).warning("from %s\\nsecond line", name)
    warnings.warn("a deprecated\\nthing", UserWarning, stacklevel=1)

    class Broken:
        def __del__(self):
            raise RuntimeError("raised in a destructor")

    Broken()
    thread = threading.Thread(target=lambda: 1 / 0, name="worker")
    thread.start()
    thread.join()
    raise RuntimeError("nothing caught this")
    """
)
LIBRARY_LOGGERS = [
    "grpc._server",
    "grpc._cython.cygrpc",
    "grpc.aio._call",
    "asyncio",
    "uvicorn.error",
    "opentelemetry.sdk.trace",
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "sqlalchemy.engine.Engine",
    "sqlalchemy.pool.impl.AsyncAdaptedQueuePool",
    "alembic.runtime.migration",
    "redis.connection",
]


def test_library_loggers_warnings_and_uncaught_exceptions_are_json_lines() -> None:
    script = f"LOGGERS = {LIBRARY_LOGGERS!r}\n" + _PYTHON_SIDE
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT, env=_without_operator_verbosity(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    lines = (done.stdout + done.stderr).splitlines()
    assert _not_json(lines) == []
    records = [json.loads(line) for line in lines]
    assert sorted(r["logger"] for r in records if str(r["event"]).startswith("from ")) == sorted(
        LIBRARY_LOGGERS
    )
    assert any(r.get("logger") == "py.warnings" and "a deprecated" in r["event"] for r in records)
    uncaught = {r["event"]: r for r in records if r["level"] in ("error", "critical")}
    assert "ZeroDivisionError" in uncaught["exception in thread"]["exception"]
    assert "raised in a destructor" in uncaught["exception ignored"]["exception"]
    assert "nothing caught this" in uncaught["uncaught exception"]["exception"]
