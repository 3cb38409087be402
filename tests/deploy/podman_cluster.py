"""The whole cluster in containers for the container tier: one podman container per service.

Every container uses the host's network namespace and listens on loopback only, so the services
reach each other and this machine's PostgreSQL and Redis over 127.0.0.1 and no bridge network
address is involved. Containers run the way the Kubernetes manifests run them: read-only root,
every capability dropped, no privilege escalation, the image's non-root user, and mutual TLS between
the services: each container gets its own certificate (made for the run by a throwaway CA) mounted
read-only where a cert-manager Secret would be, and the test talks to them with a client certificate.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service_runtime.testing_pki import TestAuthority
from service_runtime.tls import TlsFiles, channel_credentials
from tests.ports import free_port

REPO = Path(__file__).resolve().parents[2]
CONTAINERS_CONF = REPO / "deploy" / "podman" / "containers.conf"
BUILD_SCRIPT = REPO / "deploy" / "image" / "build.sh"
SERVICES = ("lobby", "table", "cashier", "fairness", "history")
# Where a container finds its certificate, key and CA (as the Kubernetes overlay mounts its Secret).
TLS_MOUNT = "/etc/poker/tls"


def podman_env() -> dict[str, str]:
    """As root (CI, VMs) podman needs the project's settings; rootless podman keeps the user's own."""
    if os.geteuid() != 0:
        return dict(os.environ)
    return {**os.environ, "CONTAINERS_CONF": os.environ.get("CONTAINERS_CONF", str(CONTAINERS_CONF))}


def podman(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        ["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)} exited {result.returncode}:\n{result.stderr[-3000:]}")
    return result


def why_no_container_tier() -> str | None:
    """None when this machine can build and run the image, else the precise reason it cannot."""
    if shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman runc mmdebstrap; .ci/run does)"
    if os.environ.get("POKER_IMAGE_BASE", "debian") == "debian" and shutil.which("mmdebstrap") is None:
        return "mmdebstrap is not installed, so the Debian base cannot be built (or set POKER_IMAGE_BASE=registry)"
    return None


def build_image(tag: str) -> float:
    """Build the image under `tag` with `make image`'s script; returns the seconds it took."""
    started = time.monotonic()
    result = subprocess.run(
        [str(BUILD_SCRIPT)],
        # This interpreter has pip and tomllib, whatever `python3` is on the PATH.
        env={**podman_env(), "POKER_IMAGE": tag, "PYTHON": sys.executable},
        capture_output=True, text=True, timeout=1500, check=False, cwd=REPO,
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(
            f"image build failed ({result.returncode}):\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
        )
    return time.monotonic() - started


def issue_certificates(folder: Path) -> tuple[dict[str, Path], TlsFiles]:
    """A folder per service with its certificate (loopback names: the containers share the host's
    network), readable by the image's user; and a client certificate for the test itself."""
    authority = TestAuthority(folder / "ca")
    folders = {}
    for service in SERVICES:
        authority.issue(service, folder=folder / service)
        folders[service] = folder / service
    client = authority.issue("tier-test-client", folder=folder / "client")
    for path in folder.rglob("*"):
        # The services run as uid 10001 in the containers; these are throwaway test keys.
        path.chmod(0o755 if path.is_dir() else 0o644)
    folder.chmod(0o755)
    return folders, client


@dataclass
class ContainerCluster:
    image: str
    run_id: str
    environment: Mapping[str, str]
    # Each service's certificate folder, and the test's client certificate.
    tls_folders: Mapping[str, Path]
    client_tls: TlsFiles
    ports: dict[str, int] = field(default_factory=lambda: {s: free_port() for s in SERVICES})

    def name(self, service: str) -> str:
        return f"poker-tier-{self.run_id}-{service}"

    def address(self, service: str) -> str:
        return f"127.0.0.1:{self.ports[service]}"

    def credentials(self) -> grpc.ChannelCredentials:
        return channel_credentials(self.client_tls.read())

    def channel(self, service: str) -> grpc.aio.Channel:
        """An asyncio channel to `service` over mutual TLS with the test's client certificate."""
        return grpc.aio.secure_channel(self.address(service), self.credentials())

    def peer_addresses(self) -> dict[str, str]:
        """Where each service finds the others: this run's loopback ports, not the well-known ones.

        Keys a service does not (yet) read are ignored by its settings loader.
        """
        return {
            "POKER_TABLE_LOBBY_ADDRESS": self.address("lobby"),
            "POKER_TABLE_CASHIER_ADDRESS": self.address("cashier"),
            "POKER_TABLE_FAIRNESS_ADDRESS": self.address("fairness"),
            "POKER_TABLE_HISTORY_ADDRESS": self.address("history"),
            "POKER_HISTORY_CASHIER_ADDRESS": self.address("cashier"),
            "POKER_LOBBY_TABLE_SHARD_ADDRESS": self.address("table"),
        }

    def start(self, service: str) -> None:
        env = {
            **self.environment,
            **self.peer_addresses(),
            f"POKER_{service.upper()}_HOST": "127.0.0.1",
            f"POKER_{service.upper()}_PORT": str(self.ports[service]),
            "POKER_TLS_CERT_FILE": f"{TLS_MOUNT}/tls.crt",
            "POKER_TLS_KEY_FILE": f"{TLS_MOUNT}/tls.key",
            "POKER_TLS_CA_FILE": f"{TLS_MOUNT}/ca.crt",
        }
        env_args = [arg for key, value in sorted(env.items()) for arg in ("--env", f"{key}={value}")]
        podman(
            "run", "--detach", "--name", self.name(service), "--network=host",
            "--read-only", "--cap-drop=ALL", "--security-opt=no-new-privileges",
            "--stop-timeout=20", "--volume", f"{self.tls_folders[service]}:{TLS_MOUNT}:ro",
            *env_args, self.image, "python3", "-m", f"services.{service}",
        )  # fmt: skip

    def start_all(self) -> None:
        for service in SERVICES:
            self.start(service)
        for service in SERVICES:
            for _ in range(3):
                if not self._lost_its_port(service):
                    break
                # Another process took the free port between our pick and the bind: pick another.
                podman("rm", "--force", self.name(service), check=False)
                self.ports[service] = free_port()
                self.start(service)
            self.wait_serving(service)

    def _lost_its_port(self, service: str, timeout: float = 90) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            logs = self.logs(service)
            if '"event": "listening"' in logs:
                return False
            if self._state(service) == "exited":
                return "bind" in logs.lower()
            time.sleep(0.2)
        return False

    def _state(self, service: str) -> str:
        return podman(
            "inspect", "--format", "{{.State.Status}}", self.name(service), check=False
        ).stdout.strip()

    def kill(self, service: str) -> None:
        podman("kill", "--signal", "KILL", self.name(service))
        podman("wait", self.name(service))

    def restart(self, service: str) -> None:
        podman("start", self.name(service))

    def wait_serving(self, service: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            state = self._state(service)
            if state == "exited":
                raise AssertionError(f"{service} exited:\n{self.logs(service)}")
            if state != "running":
                time.sleep(0.3)
                continue
            try:
                with grpc.secure_channel(self.address(service), self.credentials()) as channel:
                    reply = health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(), timeout=2
                    )
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                last = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except grpc.RpcError as error:
                last = error.code().name
            time.sleep(0.3)
        raise AssertionError(f"{service} not SERVING after {timeout}s ({last}):\n{self.logs(service)}")

    def image_healthcheck(self, service: str) -> subprocess.CompletedProcess[str]:
        return podman("healthcheck", "run", self.name(service), check=False)

    def logs(self, service: str) -> str:
        result = podman("logs", self.name(service), check=False)
        return result.stdout + result.stderr

    def remove(self) -> None:
        podman("rm", "--force", "--time", "3", *(self.name(s) for s in SERVICES), check=False)
