"""A raw Connect-protocol client over plain HTTP/1.1 (http.client), for attacking the gateway with
bytes no generated client would send. Reads a unary answer whole, or a stream's first envelope (or
all of it); `RawStream` reads a stream message by message."""

from __future__ import annotations

import base64
import http.client
import json
import struct
from dataclasses import dataclass, field, replace

from google.rpc import error_details_pb2


@dataclass(frozen=True)
class Outcome:
    http_status: int
    code: str  # the Connect code, or "ok"
    reason: str
    body: bytes  # the unary answer, or the stream's first message
    headers: dict[str, str] = field(default_factory=dict)  # the answer's head, names in lower case

    @property
    def label(self) -> str:
        return f"{self.code} {self.reason}".strip()


def _reason(error: dict[str, object]) -> str:
    for detail in error.get("details", []) or []:  # type: ignore[union-attr]
        if isinstance(detail, dict) and detail.get("type") == "google.rpc.ErrorInfo":
            raw = str(detail.get("value", ""))
            info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
            return str(info.reason)
    return ""


def call(
    address: str,
    path: str,
    body: bytes,
    *,
    token: str = "",
    streaming: bool = False,
    headers: dict[str, str] | None = None,
    timeout: float = 5.0,
    until_end: bool = False,
    method: str = "POST",
    flags: int = 0,
    source: str = "",
) -> Outcome:
    """`until_end`: read a stream to its end-of-stream message, whose status the outcome is (the body
    is then the count of messages before it, as text). `source`: the client address to call from
    (another loopback address is another client)."""
    host, _, port = address.rpartition(":")
    connection = http.client.HTTPConnection(
        host, int(port), timeout=timeout, source_address=(source, 0) if source else None
    )
    sent = {
        "content-type": "application/connect+proto" if streaming else "application/proto",
        "connect-protocol-version": "1",
        **(headers or {}),
    }
    if token:
        sent["authorization"] = f"Bearer {token}"
    payload = struct.pack(">BI", flags, len(body)) + body if streaming else body
    try:
        connection.request(method, path, body=payload, headers=sent)
        response = connection.getresponse()
        head = {name.lower(): value for name, value in response.getheaders()}
        return replace(_outcome(response, streaming, until_end), headers=head)
    finally:
        connection.close()


def _outcome(response: http.client.HTTPResponse, streaming: bool, until_end: bool) -> Outcome:
    if not streaming or response.status != 200:
        data = response.read()
        if response.status == 200:
            return Outcome(200, "ok", "", data)
        try:
            error = json.loads(data)
        except ValueError:
            return Outcome(response.status, f"http {response.status}", "", data)
        return Outcome(response.status, str(error.get("code", "")), _reason(error), b"")
    messages = 0
    while True:
        header = response.read(5)
        if len(header) < 5:
            return Outcome(200, "truncated", "", b"")
        flags, length = struct.unpack(">BI", header)
        data = response.read(length)
        if flags & 0x02:
            end = json.loads(data or b"{}")
            error = end.get("error")
            body = str(messages).encode() if until_end else b""
            if not error:
                return Outcome(200, "ok", "", body)
            return Outcome(200, str(error.get("code", "")), _reason(error), body)
        if not until_end:
            return Outcome(200, "ok", "", data)
        messages += 1


class RawStream:
    """A server stream read message by message over its own connection (to act while it is open)."""

    def __init__(self, address: str, path: str, body: bytes, *, token: str, timeout: float = 30.0) -> None:
        host, _, port = address.rpartition(":")
        self._connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        headers = {"content-type": "application/connect+proto", "connect-protocol-version": "1"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        self._connection.request("POST", path, body=struct.pack(">BI", 0, len(body)) + body, headers=headers)
        self._response = self._connection.getresponse()
        self.messages = 0

    def next_message(self) -> bytes | None:
        """The next message, or None at the end of the stream (then `end` is its status)."""
        header = self._response.read(5)
        if len(header) < 5:
            self.end = Outcome(200, "truncated", "", b"")
            return None
        flags, length = struct.unpack(">BI", header)
        data = self._response.read(length)
        if flags & 0x02:
            error = json.loads(data or b"{}").get("error")
            self.end = (
                Outcome(200, str(error.get("code", "")), _reason(error), b"")
                if error
                else Outcome(200, "ok", "", b"")
            )
            return None
        self.messages += 1
        return data

    def until_end(self) -> Outcome:
        while self.next_message() is not None:
            pass
        return self.end

    def close(self) -> None:
        self._connection.close()
