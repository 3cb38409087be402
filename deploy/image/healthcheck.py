"""The image's HEALTHCHECK: asks the gRPC health service of the one service running in the container.

Kubernetes uses its native gRPC probes instead; this is for podman, docker and compose. The
service is found from the container's process list (`python -m services.<name>`), and its port from
the same settings the service read (POKER_<SERVICE>_PORT, else its well-known port), so one image
and one HEALTHCHECK serve every service. Exit 0 when SERVING, 1 otherwise. It asks on the plaintext
health port when the service has one (POKER_HEALTH_PORT), else on the service's port, with the
service's own certificate when it speaks TLS (its certificate names the loopback address too).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import load_settings
from service_runtime.tls import TlsFiles, channel_credentials


def running_service() -> str | None:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        for flag, module in zip(argv, argv[1:], strict=False):
            if flag == b"-m" and module.startswith(b"services."):
                return module.decode().split(".")[1]
    return None


def settings_of(service: str) -> ServiceSettings:
    module = importlib.import_module(f"services.{service}.settings")
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, ServiceSettings) and value.SERVICE == service:
            return load_settings(value)
    raise LookupError(f"no settings class in services.{service}.settings")


def http_ready(host: str, port: int) -> int:
    """The gateway speaks HTTP: GET /readyz answers 200 while it serves."""
    import http.client

    connection = http.client.HTTPConnection(host, port, timeout=3)
    try:
        connection.request("GET", "/readyz")
        status = connection.getresponse().status
    except OSError as error:
        print(f"healthcheck: gateway at {host}:{port}: {error}", file=sys.stderr)
        return 1
    finally:
        connection.close()
    print(f"healthcheck: gateway at {host}:{port}: HTTP {status}")
    return 0 if status == 200 else 1


def main() -> int:
    service = sys.argv[1] if len(sys.argv) > 1 else running_service()
    if service is None:
        print("healthcheck: no `python -m services.<name>` process in this container", file=sys.stderr)
        return 1
    settings = settings_of(service)
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    if service == "gateway":
        return http_ready(host, settings.port)
    tls = TlsFiles.from_settings(settings)
    port = settings.port
    if settings.health_port >= 0:
        port, tls = settings.health_port, None
    target = f"{host}:{port}"
    try:
        channel = (
            grpc.insecure_channel(target)
            if tls is None
            else grpc.secure_channel(target, channel_credentials(tls.read()))
        )
        with channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3)
    except grpc.RpcError as error:
        print(f"healthcheck: {service} at {target}: {error.code().name}", file=sys.stderr)
        return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"healthcheck: {service} at {target}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    sys.exit(main())
