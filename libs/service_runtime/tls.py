"""Mutual TLS between the services, with certificates that rotate without a restart.

Each process has a certificate and key (its identity, for serving and for calling) and the CA that
signed its peers' (cert-manager writes all three into a mounted Secret and renews them in place).
A server asks for and verifies the client's certificate; a client verifies the server's against
the same CA and the name it dialled.

Rotation: the files are read again once their size, inode or modification time changed (checked
at most every `check_seconds`). The server side uses gRPC's dynamic server credentials, whose
fetcher the gRPC core calls before each new handshake; an established connection keeps the
certificate it was made with, as TLS does. A client channel's credentials are fixed when it is
made, so `ReloadingChannel` makes a new channel with the new files and moves every later call to it
(stubs made on it keep working), closing the old one once its calls had time to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from service_runtime.certificate_expiry import watch_certificates
from service_runtime.structured_logging import get_logger

log = get_logger("tls")

# How long calls already running on a channel whose certificate was replaced may go on.
OLD_CHANNEL_GRACE_SECONDS = 120.0


@dataclass(frozen=True)
class TlsFiles:
    """Paths of this process's certificate chain, its private key and the CA that signs peers."""

    cert_file: Path
    key_file: Path
    ca_file: Path

    @classmethod
    def from_settings(cls, settings: Any) -> TlsFiles | None:
        """The settings' TLS files, or None for plaintext (development only)."""
        if not settings.tls_cert_file:
            return None
        return cls(Path(settings.tls_cert_file), Path(settings.tls_key_file), Path(settings.tls_ca_file))

    def read(self) -> tuple[bytes, bytes, bytes]:
        """(certificate chain, private key, CA bundle) as PEM bytes."""
        return self.cert_file.read_bytes(), self.key_file.read_bytes(), self.ca_file.read_bytes()


def _stamp(files: TlsFiles) -> tuple[tuple[int, int, int], ...]:
    stamps = []
    for path in (files.cert_file, files.key_file, files.ca_file):
        # stat follows the symlinks a Kubernetes Secret volume swaps atomically on renewal.
        info = os.stat(path)
        stamps.append((info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(stamps)


class WatchedFiles:
    """The TLS files' contents, read again after they change; thread-safe (the gRPC core calls the
    server's fetcher from its own threads)."""

    def __init__(self, files: TlsFiles, check_seconds: float) -> None:
        self.files = files
        watch_certificates(files.cert_file, files.ca_file)
        self._check_seconds = check_seconds
        self._lock = threading.Lock()
        self._stamp = _stamp(files)
        self.contents = files.read()
        self._checked_at = time.monotonic()
        self.generation = 0

    def changed(self) -> bool:
        """True once after the files changed on disk (and were read again and hang together)."""
        now = time.monotonic()
        if now - self._checked_at < self._check_seconds:
            return False
        with self._lock:
            if now - self._checked_at < self._check_seconds:
                return False
            self._checked_at = now
            try:
                stamp = _stamp(self.files)
                if stamp == self._stamp:
                    return False
                contents = self.files.read()
            except OSError as error:
                # Half-written during a renewal: keep serving with what we have, look again later.
                log.warning("tls files unreadable; keeping the current ones", error=str(error))
                return False
            self._stamp = stamp
            if contents == self.contents:
                return False
            self.contents = contents
            self.generation += 1
            log.info("tls certificate reloaded", cert_file=str(self.files.cert_file))
            return True


def server_credentials(files: TlsFiles, *, check_seconds: float = 30.0) -> grpc.ServerCredentials:
    """Server credentials that require and verify a client certificate, reloaded when files change."""
    watched = WatchedFiles(files, check_seconds)

    def configuration() -> Any:
        cert, key, ca = watched.contents
        return grpc.ssl_server_certificate_configuration([(key, cert)], root_certificates=ca)

    def fetch() -> Any:
        # Called by the gRPC core before each handshake: None keeps the current configuration.
        return configuration() if watched.changed() else None

    return grpc.dynamic_ssl_server_credentials(configuration(), fetch, require_client_authentication=True)


def channel_credentials(contents: tuple[bytes, bytes, bytes]) -> grpc.ChannelCredentials:
    cert, key, ca = contents
    return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)


class _Rebound:
    """A multi-callable that always calls on the channel's current generation."""

    __slots__ = ("_bound", "_callable", "_kind", "_method", "_options", "_owner")

    def __init__(self, owner: ReloadingChannel, kind: str, method: str, options: dict[str, Any]) -> None:
        self._owner = owner
        self._kind = kind
        self._method = method
        self._options = options
        self._bound: grpc.aio.Channel | None = None
        self._callable: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        channel = self._owner.current()
        if channel is not self._bound:
            self._callable = getattr(channel, self._kind)(self._method, **self._options)
            self._bound = channel
        return self._callable(*args, **kwargs)


class ReloadingChannel(grpc.aio.Channel):  # type: ignore[misc]
    """A TLS channel that follows its certificate files: see the module docstring."""

    def __init__(
        self,
        target: str,
        files: TlsFiles,
        *,
        options: Sequence[tuple[str, Any]] = (),
        interceptors: Sequence[Any] = (),
        check_seconds: float = 30.0,
    ) -> None:
        self._target = target
        self._options = list(options)
        self._interceptors = list(interceptors)
        self._watched = WatchedFiles(files, check_seconds)
        self._channel = self._open()
        self._retired: set[asyncio.Task[None]] = set()

    def _open(self) -> grpc.aio.Channel:
        return grpc.aio.secure_channel(
            self._target,
            channel_credentials(self._watched.contents),
            options=self._options,
            interceptors=self._interceptors,
        )

    def current(self) -> grpc.aio.Channel:
        if self._watched.changed():
            old, self._channel = self._channel, self._open()
            with contextlib.suppress(RuntimeError):  # no running loop: closed with the process
                task = asyncio.get_running_loop().create_task(old.close(OLD_CHANNEL_GRACE_SECONDS))
                self._retired.add(task)
                task.add_done_callback(self._retired.discard)
        return self._channel

    def unary_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Rebound(self, "unary_unary", method, _keywords(args, kwargs))

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Rebound(self, "unary_stream", method, _keywords(args, kwargs))

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Rebound(self, "stream_unary", method, _keywords(args, kwargs))

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Rebound(self, "stream_stream", method, _keywords(args, kwargs))

    async def close(self, grace: float | None = None) -> None:
        for task in list(self._retired):
            task.cancel()
        await self._channel.close(grace)

    async def __aenter__(self) -> ReloadingChannel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        return self.current().get_state(try_to_connect)

    async def wait_for_state_change(self, last_observed_state: grpc.ChannelConnectivity) -> None:
        await self.current().wait_for_state_change(last_observed_state)

    async def channel_ready(self) -> None:
        await self.current().channel_ready()


def _keywords(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    names = ("request_serializer", "response_deserializer")
    return {**dict(zip(names, args, strict=False)), **kwargs}
