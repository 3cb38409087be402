"""The gateway bench's client: Connect over HTTP/1.1 as a browser page sends it, on keep-alive
connections (asyncio streams, no HTTP library, so the client costs little beside the servers).

Every request carries what connect-web (`web/src/api.ts`: binary protobuf, a 10 s `connect-timeout-ms`
on unary calls, the player's bearer token) and the browser's `fetch` put in its head: Chrome's
same-origin headers, among them `accept-encoding: gzip, deflate, br, zstd`, which the Connect library
answers with a gzipped unary answer (every one, however small). A unary answer is read whole (chunked,
as uvicorn sends an answer without a length) and gunzipped; a stream is read envelope by envelope.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import struct
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from google.rpc import error_details_pb2

# What Chrome sends with a same-origin `fetch` POST, beside the request's own headers.
BROWSER_HEADERS = (
    ("accept", "*/*"),
    ("accept-encoding", "gzip, deflate, br, zstd"),
    ("accept-language", "en-GB,en;q=0.9"),
    ("sec-ch-ua", '"Chromium";v="130", "Google Chrome";v="130", "Not?A_Brand";v="99"'),
    ("sec-ch-ua-mobile", "?1"),
    ("sec-ch-ua-platform", '"Android"'),
    ("sec-fetch-dest", "empty"),
    ("sec-fetch-mode", "cors"),
    ("sec-fetch-site", "same-origin"),
    (
        "user-agent",
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/130.0.0.0 Mobile Safari/537.36 Telegram-Android/11.4.2",
    ),
)
UNARY_TIMEOUT_MS = "10000"  # connect-web's defaultTimeoutMs in web/src/api.ts
END_STREAM = 0x02


class CallFailed(Exception):
    """A call answered with an error (its Connect code and the catalogue reason, when given)."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.code = ""
        self.reason = ""
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            error = json.loads(body or b"{}")
            error = error.get("error", error)  # a stream's end message holds it under "error"
            self.code = str(error.get("code", ""))
            self.reason = _reason(error)
        super().__init__(f"HTTP {status} {self.code} {self.reason}".strip())


def _reason(error: dict[str, Any]) -> str:
    for detail in error.get("details", []) or []:
        if isinstance(detail, dict) and detail.get("type") == "google.rpc.ErrorInfo":
            raw = str(detail.get("value", ""))
            value = base64.b64decode(raw + "=" * (-len(raw) % 4))
            return str(error_details_pb2.ErrorInfo.FromString(value).reason)
    return str(error.get("message", ""))[:200]


def request_head(host: str, path: str, token: str, *, streaming: bool, length: int, browser: bool) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"host: {host}"]
    if browser:
        lines += [f"origin: http://{host}", f"referer: http://{host}/"]
        lines += [f"{name}: {value}" for name, value in BROWSER_HEADERS]
    lines += [
        f"content-type: {'application/connect+proto' if streaming else 'application/proto'}",
        "connect-protocol-version: 1",
        f"authorization: Bearer {token}",
        f"content-length: {length}",
    ]
    if not streaming:
        lines.append(f"connect-timeout-ms: {UNARY_TIMEOUT_MS}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split(" ", 2)[1]), headers


async def _read_chunk(reader: asyncio.StreamReader) -> bytes:
    """The next chunk of a chunked body (b"" for the last one)."""
    size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
    if size == 0:
        await reader.readuntil(b"\r\n")  # no trailers are sent: the empty line
        return b""
    data = await reader.readexactly(size)
    await reader.readexactly(2)
    return data


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "content-length" in headers:
        return await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() != "chunked":
        raise RuntimeError(f"an answer with neither a length nor chunks: {headers}")
    parts = []
    while chunk := await _read_chunk(reader):
        parts.append(chunk)
    return b"".join(parts)


@dataclass
class _Link:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError, ConnectionError):
            await self.writer.wait_closed()


async def _connect(address: str) -> _Link:
    host, _, port = address.rpartition(":")
    reader, writer = await asyncio.open_connection(host, int(port), limit=1 << 20)
    return _Link(reader, writer)


class UnaryConnection:
    """One keep-alive connection making Connect unary calls one after another (a browser spreads a
    page's calls over up to six of these)."""

    def __init__(self, address: str, *, browser: bool = True) -> None:
        self._address = address
        self._browser = browser
        self._link: _Link | None = None
        self.reconnects = 0

    async def call(self, path: str, request: bytes, token: str) -> bytes:
        """The answer's message bytes; CallFailed for an error answer. A kept-alive connection the
        server closed meanwhile (uvicorn closes one idle for 5 s) is opened again, as a browser does:
        before the request when its end was seen, else once the request found it closed."""
        head = request_head(
            self._address, path, token, streaming=False, length=len(request), browser=self._browser
        )
        if self._link is not None and self._link.reader.at_eof():
            await self.close()
            self.reconnects += 1
        reused = self._link is not None
        if self._link is None:
            self._link = await _connect(self._address)
        link = self._link
        try:
            link.writer.write(head + request)
            status, headers = await _read_head(link.reader)
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            if not reused or (isinstance(error, asyncio.IncompleteReadError) and error.partial):
                raise
            await self.close()
            self.reconnects += 1
            self._link = link = await _connect(self._address)
            link.writer.write(head + request)
            status, headers = await _read_head(link.reader)
        body = await _read_body(link.reader, headers)
        if headers.get("connection", "").lower() == "close":
            await self.close()
        if status != 200:
            raise CallFailed(status, body)
        if headers.get("content-encoding") == "gzip":
            body = zlib.decompress(body, wbits=31)
        return body

    async def close(self) -> None:
        if self._link is not None:
            link, self._link = self._link, None
            await link.close()


class ConnectStream:
    """A Connect server stream on a connection of its own, as the page's table feed opens it."""

    def __init__(self, address: str, path: str, request: bytes, token: str, *, browser: bool = True) -> None:
        self._address = address
        self._path = path
        self._request = request
        self._token = token
        self._browser = browser
        self._link: _Link | None = None
        self.bytes = 0

    async def messages(self) -> AsyncIterator[bytes]:
        """The stream's messages until its end (CallFailed for an end with an error)."""
        self._link = link = await _connect(self._address)
        envelope = struct.pack(">BI", 0, len(self._request)) + self._request
        head = request_head(
            self._address,
            self._path,
            self._token,
            streaming=True,
            length=len(envelope),
            browser=self._browser,
        )
        link.writer.write(head + envelope)
        status, headers = await _read_head(link.reader)
        if status != 200:
            raise CallFailed(status, await _read_body(link.reader, headers))
        buffer = bytearray()
        while chunk := await _read_chunk(link.reader):
            buffer += chunk
            while len(buffer) >= 5:
                flags, length = struct.unpack_from(">BI", buffer)
                if len(buffer) < 5 + length:
                    break
                data = bytes(buffer[5 : 5 + length])
                del buffer[: 5 + length]
                if flags & END_STREAM:
                    end = json.loads(data or b"{}")
                    if end.get("error"):
                        raise CallFailed(200, data)
                    return
                self.bytes += length
                yield data

    async def close(self) -> None:
        """Leaves the stream as a closed page does: the connection goes."""
        if self._link is not None:
            link, self._link = self._link, None
            await link.close()
