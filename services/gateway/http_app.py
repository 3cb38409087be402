"""The gateway's one ASGI application: the Connect services by path, the web client, health.

`/healthz` answers 200 while the process runs; `/readyz` answers 200 once the gateway serves and
503 while it drains (probes and `make run` use them); every other GET is the web client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from services.gateway.web_assets import WebAssets, headers_for

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class GatewayApp:
    def __init__(self, services: Mapping[str, ASGIApp], assets: WebAssets) -> None:
        # `/poker.lobby.v1.LobbyService/` -> its Connect application.
        self._services = {f"/{name}/": app for name, app in services.items()}
        self._assets = assets
        self.ready = False
        # Called once the server starts (its socket is bound and listening by then).
        self.on_ready: Callable[[], None] = lambda: None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    self.ready = True
                    self.on_ready()
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        prefix = path[: path.find("/", 1) + 1] if path.count("/") >= 2 else ""
        app = self._services.get(prefix)
        if app is not None:
            await app(scope, receive, send)
            return
        if path == "/healthz":
            await _plain(send, 200, b"ok\n")
            return
        if path == "/readyz":
            await _plain(send, 200 if self.ready else 503, b"ready\n" if self.ready else b"not ready\n")
            return
        asset = self._assets.find(path) if scope["method"] in ("GET", "HEAD") else None
        if asset is None:
            await _plain(send, 404, b"not found\n")
            return
        await send({"type": "http.response.start", "status": 200, "headers": headers_for(asset)})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else asset.body})
