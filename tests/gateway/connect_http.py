"""A raw Connect-protocol client over plain HTTP/1.1 (http.client), for attacking the gateway with
bytes no generated client would send. Reads a unary answer whole, or a stream's first envelope."""

from __future__ import annotations

import base64
import http.client
import json
import struct
from dataclasses import dataclass

from google.rpc import error_details_pb2


@dataclass(frozen=True)
class Outcome:
    http_status: int
    code: str  # the Connect code, or "ok"
    reason: str
    body: bytes  # the unary answer, or the stream's first message

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
) -> Outcome:
    """`until_end`: read a stream to its end-of-stream message, whose status the outcome is (the body
    is then the count of messages before it, as text)."""
    host, _, port = address.rpartition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    sent = {
        "content-type": "application/connect+proto" if streaming else "application/proto",
        "connect-protocol-version": "1",
        **(headers or {}),
    }
    if token:
        sent["authorization"] = f"Bearer {token}"
    payload = struct.pack(">BI", 0, len(body)) + body if streaming else body
    try:
        connection.request("POST", path, body=payload, headers=sent)
        response = connection.getresponse()
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
    finally:
        connection.close()
