"""The gateway follows the lobby's routing and a table that moves: SHARD_NOT_OWNER names the owner,
a stopped table (UNAVAILABLE TABLE_CLOSED) sends it back to the lobby, and a retried call keeps its
request id. A real gateway process in front of a stand-in lobby and stand-in shards (gRPC servers in
this test) that say exactly that."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc

from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.errors import FailedPrecondition, Unavailable
from service_runtime.interceptors import status_for
from service_runtime.testing import token_for
from tests.gateway.connect_http import call
from tests.gateway.gateway_process import start_gateway, stop


class Lobby(lobby_pb2_grpc.LobbyServiceServicer):
    def __init__(self) -> None:
        self.answers: list[str] = []
        self.asked = 0

    async def JoinTable(self, request: Any, context: Any) -> lobby_pb2.JoinTableResponse:  # noqa: N802
        self.asked += 1
        return lobby_pb2.JoinTableResponse(
            table_id=request.table_id, shard_id="s", address=self.answers.pop(0)
        )


class Shard(table_pb2_grpc.TableServiceServicer):
    def __init__(self) -> None:
        self.moved_to = ""
        self.closed = False
        self.seen: list[str] = []

    async def _refuse(self, context: Any) -> None:
        if self.moved_to:
            error = FailedPrecondition("SHARD_NOT_OWNER", "another shard", {"address": self.moved_to})
            await context.abort_with_status(status_for(error))
        if self.closed:
            await context.abort_with_status(status_for(Unavailable("TABLE_CLOSED", "closed here")))

    async def SitDown(self, request: Any, context: Any) -> table_pb2.SitDownResponse:  # noqa: N802
        self.seen.append(request.request_id)
        await self._refuse(context)
        return table_pb2.SitDownResponse(seat=3)

    async def WatchTable(self, request: Any, context: Any) -> AsyncIterator[table_pb2.WatchTableResponse]:  # noqa: N802
        self.seen.append("watch")
        await self._refuse(context)
        yield table_pb2.WatchTableResponse(view=table_pb2.TableView(table_id=request.table_id))
        await context.abort_with_status(status_for(Unavailable("TABLE_CLOSED", "stopped")))


async def _server(servicer: Any, add: Any) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server()
    add(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


async def test_calls_follow_a_table_that_moved_and_keep_their_request_id() -> None:
    lobby = Lobby()
    shards = [Shard(), Shard(), Shard()]
    servers = [await _server(lobby, lobby_pb2_grpc.add_LobbyServiceServicer_to_server)]
    servers += [await _server(s, table_pb2_grpc.add_TableServiceServicer_to_server) for s in shards]
    (_, lobby_address), (_, a), (_, b), (_, c) = servers
    shards[0].moved_to = b
    lobby.answers = [a, c, c]
    gateway = start_gateway({}, {"POKER_GATEWAY_LOBBY_ADDRESS": lobby_address})
    token = token_for("alice")
    sit = table_pb2.SitDownRequest(request_id="sit-1", table_id="room-x.1", buy_in=100).SerializeToString()
    path = "/poker.table.v1.TableService/SitDown"
    watch = table_pb2.WatchTableRequest(table_id="room-x.1").SerializeToString()
    try:
        first = await asyncio.to_thread(call, gateway.address, path, sit, token=token)
        assert first.code == "ok"
        assert table_pb2.SitDownResponse.FromString(first.body).seat == 3
        # The lobby named A; A named B; B answered. The retry carried the same request id.
        assert (lobby.asked, shards[0].seen, shards[1].seen) == (1, ["sit-1"], ["sit-1"])
        # The route is remembered: straight to B.
        assert (await asyncio.to_thread(call, gateway.address, path, sit, token=token)).code == "ok"
        assert (lobby.asked, shards[0].seen, shards[1].seen) == (1, ["sit-1"], ["sit-1", "sit-1"])
        # B stops the table: back to the lobby, which now names C.
        shards[1].closed = True
        assert (await asyncio.to_thread(call, gateway.address, path, sit, token=token)).code == "ok"
        assert lobby.asked == 2
        assert shards[2].seen == ["sit-1"]
        # A stream that breaks after its first update ends with UNAVAILABLE and its reason; the page
        # re-opens it, and the gateway asks the lobby again.
        watch_path = "/poker.table.v1.TableService/WatchTable"
        broken = await asyncio.to_thread(
            call, gateway.address, watch_path, watch, token=token, streaming=True, until_end=True
        )
        assert (broken.label, broken.body) == ("unavailable TABLE_CLOSED", b"1")
        assert shards[2].seen == ["sit-1", "watch"]
        again = await asyncio.to_thread(call, gateway.address, watch_path, watch, token=token, streaming=True)
        assert again.code == "ok"
        assert lobby.asked == 3
    finally:
        stop(gateway)
        for server, _ in servers:
            await server.stop(0)
