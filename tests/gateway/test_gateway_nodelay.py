"""The gateway's connections send each answer at once (TCP_NODELAY): its listening socket is made as
a TCP socket, so asyncio turns Nagle's algorithm off on every connection it accepts. Before, the
socket was made without naming TCP: asyncio left Nagle on, and uvicorn's answer, written in pieces,
waited for the browser's delayed ACK (about 40 ms a call; the gateway bench measured 0.09x of a direct
call's rate, 0.49x with the option: issue 45)."""

from __future__ import annotations

import asyncio
import socket

from services.gateway.__main__ import bind


async def test_every_connection_the_gateway_accepts_has_nagle_off() -> None:
    listening = bind("127.0.0.1", 0)
    assert listening.proto == socket.IPPROTO_TCP
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = writer.get_extra_info("socket")
        seen.set_result(connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(accepted, sock=listening)
    try:
        port = listening.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await asyncio.wait_for(seen, timeout=10) != 0
        writer.close()
    finally:
        server.close()
        await server.wait_closed()
