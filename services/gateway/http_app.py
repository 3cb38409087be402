"""The gateway's one ASGI application: the Connect services by path, the web client, health.

`/healthz` answers 200 while the process runs; `/readyz` answers 200 once the gateway serves and
503 while it drains (probes and `make run` use them); every other GET is the web client. A Connect
path's request head is checked first (`http_edge`), and its answers are never stored by a cache;
with TLS ending here every answer carries HSTS. What the edge refuses, and a path under a served
service that names none of its methods (which the Connect library answers 404), is counted by
reason in `poker_gateway_edge_refusals_total`: no method served it, so it is no call of one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from google.protobuf import descriptor_pool

from services.gateway import http_edge
from services.gateway import metrics as gateway_metrics
from services.gateway.web_assets import WebAssets, headers_for

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def method_paths(services: Mapping[str, object], *, streaming_only: bool = False) -> frozenset[str]:
    """`/service/Method` of every method (or every server-streaming one) of `services` (by full name)."""
    pool = descriptor_pool.Default()
    return frozenset(
        f"/{name}/{method.name}"
        for name in services
        for method in pool.FindServiceByName(name).methods
        if method.server_streaming or not streaming_only
    )


def with_headers(send: Send, added: list[tuple[bytes, bytes]]) -> Send:
    """`send`, adding `added` to the answer's head."""
    if not added:
        return send

    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *added]}
        await send(message)

    return sending


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
    def __init__(self, services: Mapping[str, ASGIApp], assets: WebAssets, *, tls: bool = False) -> None:
        # `/poker.lobby.v1.LobbyService/` -> its Connect application.
        self._services = {f"/{name}/": app for name, app in services.items()}
        self._streaming = method_paths(services, streaming_only=True)
        self._methods = method_paths(services)
        self._assets = assets
        self._hsts = [http_edge.HSTS] if tls else []
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
        send = with_headers(send, self._hsts)
        path: str = scope["path"]
        prefix = path[: path.find("/", 1) + 1] if path.count("/") >= 2 else ""
        app = self._services.get(prefix)
        if app is not None:
            await self._connect(app, scope, receive, with_headers(send, [http_edge.NO_STORE]))
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
        await send(
            {"type": "http.response.start", "status": 200, "headers": headers_for(asset, self._assets.csp)}
        )
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else asset.body})

    async def _connect(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        streaming = scope["path"] in self._streaming
        headers = scope.get("headers", ())
        refusal = http_edge.check_head(scope["method"], headers, streaming=streaming)
        if refusal is None:
            if scope["path"] not in self._methods:
                gateway_metrics.count_edge_refusal(gateway_metrics.METHOD_NOT_FOUND)
            await app(scope, receive, send)
            return
        gateway_metrics.count_edge_refusal(refusal.reason)
        content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
        status, answer_headers, body = http_edge.refusal_answer(
            refusal, streaming=streaming, content_type=content_type.decode("latin-1")
        )
        answer_headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": answer_headers})
        await send({"type": "http.response.body", "body": body})
