"""A unary call whose client leaves (a cancel, a passed deadline) ends for the client at once, but the
handler's work is never cut halfway: it runs to its end, still counted against the server's bound and
the caller's share, and a server that stops gives it the grace to finish.

Found by the CI run of 2026-12-06 (`test_history_auto_holds`, a release that did not stick): a
cancellation that reached a handler inside a SQLite transaction left the embedded default's single
pooled connection checked out, and every later call of that service waited for it until its own
deadline (4 of 10 runs of 60 holds with cancelled first tries hung; 0 of 12 with handlers that run
to their end)."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from service_runtime.access import ANY_CALLER, AccessPolicy
from service_runtime.auth import Role
from service_runtime.interceptors import Limits
from service_runtime.testing import auth_metadata, reason_of, running_server

SERVICE = "test.Work"
ACCESS = AccessPolicy(roles={f"/{SERVICE}/Commit": ANY_CALLER})


class Work:
    """A handler that starts, waits to be let go, then records that it finished."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.finished: list[bytes] = []

    async def commit(self, request: bytes, context: Any) -> bytes:
        self.started.set()
        await self.release.wait()
        self.finished.append(request)
        return b"committed"

    def handler(self) -> grpc.GenericRpcHandler:
        return grpc.method_handlers_generic_handler(
            SERVICE, {"Commit": grpc.unary_unary_rpc_method_handler(self.commit)}
        )


async def _outcome(call: Any) -> str:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return f"{error.code().name}:{reason_of(error) or ''}"
    return "OK"


async def test_a_call_whose_client_leaves_finishes_its_work_and_holds_its_share_until_then() -> None:
    work = Work()
    limits = Limits(player_concurrent_calls=1)
    async with running_server([], ACCESS, extra_handlers=[work.handler()], limits=limits) as (_, channel):
        commit = channel.unary_unary(f"/{SERVICE}/Commit")
        alice = auth_metadata("alice", Role.PLAYER)
        call = commit(b"first", metadata=alice, timeout=30)
        await work.started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The work goes on: it still holds alice's one call, and nobody else's.
        assert await _outcome(commit(b"second", metadata=alice, timeout=5)) == (
            "RESOURCE_EXHAUSTED:CALLER_QUOTA_EXCEEDED"
        )
        bob = commit(b"bob", metadata=auth_metadata("bob", Role.PLAYER), timeout=30)
        work.release.set()
        assert await _outcome(bob) == "OK"
        # The abandoned call finished its work, and gave alice's share back when it did.
        assert await commit(b"third", metadata=alice, timeout=5) == b"committed"
        assert sorted(work.finished) == [b"bob", b"first", b"third"]


async def test_a_passed_deadline_does_not_cut_the_work_either() -> None:
    work = Work()
    async with running_server([], ACCESS, extra_handlers=[work.handler()]) as (_, channel):
        commit = channel.unary_unary(f"/{SERVICE}/Commit")
        call = commit(b"late", metadata=auth_metadata("alice"), timeout=0.2)
        await work.started.wait()
        assert await _outcome(call) == "DEADLINE_EXCEEDED:"
        work.release.set()
        assert await commit(b"next", metadata=auth_metadata("alice"), timeout=5) == b"committed"
        assert b"late" in work.finished


async def test_a_stopping_server_gives_an_abandoned_call_the_grace_to_finish() -> None:
    work = Work()
    async with running_server([], ACCESS, extra_handlers=[work.handler()]) as (_, channel):
        call = channel.unary_unary(f"/{SERVICE}/Commit")(b"draining", metadata=auth_metadata("a"), timeout=30)
        await work.started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # Let go while the server stops (running_server stops it with half a second of grace).
        asyncio.get_running_loop().call_later(0.3, work.release.set)
    assert work.finished == [b"draining"]
