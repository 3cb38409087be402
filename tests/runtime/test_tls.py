"""Mutual TLS between services: real certificates made in the test, refusals, and rotation.

A TLS server serves only clients whose certificate chains to its CA; a client verifies the server
against the same CA and the name it dialled; plaintext and strangers are refused at the handshake.
Certificates renewed on disk are used without a restart: by the server for new connections, and by
a `create_channel` channel (and the stubs made on it) for the calls after the change.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import grpc
import pytest

from service_runtime.clients import create_channel
from service_runtime.server import RunningServer, create_server
from service_runtime.testing import DEV_KEYS, running_server, token_for
from service_runtime.testing_pki import TestAuthority
from service_runtime.tls import TlsFiles, channel_credentials

from .probe_service import PROBE_ACCESS, probe_handler

WHOAMI = "/test.Probe/Whoami"


def _token() -> str:
    return token_for("table", "service")


async def _whoami(channel: grpc.aio.Channel) -> bytes:
    result: bytes = await channel.unary_unary(WHOAMI)(
        b"", metadata=(("authorization", f"Bearer {_token()}"),), timeout=5
    )
    return result


async def test_a_tls_server_serves_a_client_with_a_certificate_of_its_ca(tmp_path: Path) -> None:
    authority = TestAuthority(tmp_path / "ca")
    server_files = authority.issue("cashier")
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()], tls=server_files) as (server, raw),
        create_channel(f"127.0.0.1:{server.port}", token=_token, tls=authority.issue("table")) as channel,
    ):
        assert await _whoami(raw) == b"table"
        assert await channel.unary_unary(WHOAMI)(b"") == b"table"
        replies = [r async for r in channel.unary_stream("/test.Probe/WhoamiStream")(b"")]
        assert replies == [b"table"]


async def test_plaintext_clients_without_certificate_and_strangers_are_refused(tmp_path: Path) -> None:
    authority = TestAuthority(tmp_path / "ca")
    stranger = TestAuthority(tmp_path / "other-ca", name="someone else's CA")
    server_files = authority.issue("cashier")
    async with running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()], tls=server_files) as (
        server,
        _,
    ):
        target = f"127.0.0.1:{server.port}"
        cert, key, ca = authority.issue("table").read()
        refused = {
            "plaintext": grpc.aio.insecure_channel(target),
            "no client certificate": grpc.aio.secure_channel(target, grpc.ssl_channel_credentials(ca)),
            "a certificate of another CA": grpc.aio.secure_channel(
                target, channel_credentials((*stranger.issue("table").read()[:2], ca))
            ),
        }
        for what, channel in refused.items():
            async with channel:
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await _whoami(channel)
                assert caught.value.code() == grpc.StatusCode.UNAVAILABLE, what
        # A client that does not trust the server's CA refuses the server.
        distrustful = grpc.aio.secure_channel(
            target, channel_credentials((cert, key, stranger.ca_file.read_bytes()))
        )
        async with distrustful:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await _whoami(distrustful)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_the_server_name_must_match_the_certificate(tmp_path: Path) -> None:
    authority = TestAuthority(tmp_path / "ca")
    # Valid for the name "cashier" only, not for the loopback address the client dials.
    server_files = authority.issue("cashier", hosts=("cashier",))
    async with (
        running_server([], PROBE_ACCESS, extra_handlers=[probe_handler()], tls=server_files) as (server, _),
        create_channel(f"127.0.0.1:{server.port}", token=_token, tls=authority.issue("table")) as channel,
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await channel.unary_unary(WHOAMI)(b"", timeout=5)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


def _replace(files: TlsFiles, new: TlsFiles) -> None:
    """Renew in place, as a mounted Secret does: new contents under the same paths."""
    for source, target in zip(
        (new.key_file, new.cert_file, new.ca_file),
        (files.key_file, files.cert_file, files.ca_file),
        strict=True,
    ):
        shutil.copyfile(source, target.with_suffix(".new"))
        target.with_suffix(".new").replace(target)


async def test_a_server_takes_renewed_certificates_without_a_restart(tmp_path: Path) -> None:
    """The whole chain is replaced (a new CA, as a CA rotation does): before the change only the old
    CA's clients are served; after it, only the new one's, by the same running server."""
    old, new = TestAuthority(tmp_path / "old"), TestAuthority(tmp_path / "new", name="new CA")
    server_files = old.issue("cashier", folder=tmp_path / "server")
    async with running_server(
        [], PROBE_ACCESS, extra_handlers=[probe_handler()], tls=server_files, tls_check_seconds=0.01
    ) as (server, _):
        target = f"127.0.0.1:{server.port}"

        def client(authority: TestAuthority) -> grpc.aio.Channel:
            return grpc.aio.secure_channel(target, channel_credentials(authority.issue("table").read()))

        async with client(old) as before:
            assert await _whoami(before) == b"table"
        async with client(new) as early:
            with pytest.raises(grpc.aio.AioRpcError):
                await _whoami(early)
        _replace(server_files, new.issue("cashier"))
        await asyncio.sleep(0.05)
        async with client(new) as after:
            assert await _whoami(after) == b"table"
        async with client(old) as stale:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await _whoami(stale)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


async def _serve(address: str, files: TlsFiles) -> RunningServer:
    running, _ = await create_server(
        address,
        services=[],
        access=PROBE_ACCESS,
        token_keys=DEV_KEYS,
        extra_handlers=[probe_handler()],
        tls=files,
    )
    await running.start()
    return running


async def test_a_client_channel_and_its_stubs_take_renewed_certificates_without_a_restart(
    tmp_path: Path,
) -> None:
    """A long-lived channel made by create_channel moves to renewed files: after the change (and a
    restart of the server with the new CA only, so no old connection can carry the call) the same
    multi-callable still works, which it could only do with the new certificate."""
    old, new = TestAuthority(tmp_path / "old"), TestAuthority(tmp_path / "new", name="new CA")
    client_files = old.issue("table", folder=tmp_path / "client")
    first = await _serve("127.0.0.1:0", old.issue("cashier"))
    address = f"127.0.0.1:{first.port}"
    channel = create_channel(address, token=_token, tls=client_files, tls_check_seconds=0.01)
    second = None
    try:
        call = channel.unary_unary(WHOAMI)
        assert await call(b"") == b"table"
        await first.stop(grace_seconds=0)
        second = await _serve(address, new.issue("cashier"))
        with pytest.raises(grpc.aio.AioRpcError):
            await call(b"", timeout=3)  # still the old certificate: the new server refuses it
        _replace(client_files, new.issue("table"))
        await asyncio.sleep(0.05)
        assert await call(b"", timeout=5) == b"table"
    finally:
        await channel.close()
        if second is not None:
            await second.stop(grace_seconds=0)
