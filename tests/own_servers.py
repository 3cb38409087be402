"""PostgreSQL and Redis servers of a test's own, which the test may stop, kill and start again.

The machine's shared servers (POKER_TEST_DATABASE_URL / POKER_TEST_REDIS_URL) serve every engineer's
tests at once: a fault test must never stop them. These run from the same binaries in a folder of
the test, on a free loopback port that stays the same across restarts (clients reconnect to it), and
are stopped by the PID the test started.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

from tests.ports import free_port


def _postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return candidates[-1].parent if candidates else None


def have_postgres_binaries() -> bool:
    return _postgres_bin() is not None


def have_redis_binary() -> bool:
    return shutil.which("redis-server") is not None


class OwnPostgres:
    """initdb in a folder of its own; `start()` / `stop()` (immediate: as a crash, no checkpoint) any
    number of times; `remove()` deletes the folder once stopped."""

    def __init__(self) -> None:
        bin_dir = _postgres_bin()
        if bin_dir is None:
            raise RuntimeError("no PostgreSQL binaries on this machine")
        self._bin = bin_dir
        # Not under pytest's tmp_path: its parents are private to root, and the server cannot run as root.
        self.folder = Path(tempfile.mkdtemp(prefix="poker-own-pg-"))
        self.port = free_port()
        # initdb and the server refuse to run as root: as the postgres user then.
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.folder, "postgres")
        subprocess.run(
            [*self._as, str(bin_dir / "initdb"), "-D", str(self._data), "-A", "trust", "-U", "postgres"],
            check=True,
            capture_output=True,
        )

    @property
    def _data(self) -> Path:
        return self.folder / "db"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [
                *self._as,
                str(self._bin / "pg_ctl"),
                "-D",
                str(self._data),
                "-o",
                options,
                "-l",
                str(self.folder / "server.log"),
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self, mode: str = "immediate") -> None:
        subprocess.run(
            [*self._as, str(self._bin / "pg_ctl"), "-D", str(self._data), "-m", mode, "-w", "stop"],
            check=False,
            capture_output=True,
        )

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class OwnRedis:
    """redis-server in `folder` with its append-only file (fsync every write), so a kill and a start
    find every key as it was, as a production Redis with persistence does. It listens on loopback and
    on `host` too when that is another address of this machine (the URL names `host`)."""

    def __init__(self, folder: Path, host: str = "127.0.0.1") -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("no redis-server on this machine")
        self._binary = binary
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.host = host
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self._binary,
                "--port",
                str(self.port),
                "--bind",
                *sorted({"127.0.0.1", self.host}),
                # Protected mode refuses every address but loopback without a password; the other
                # address is the test's own (a veth pair to a namespace of the test), bound by name.
                "--protected-mode",
                "yes" if self.host == "127.0.0.1" else "no",
                "--dir",
                str(self.folder),
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
