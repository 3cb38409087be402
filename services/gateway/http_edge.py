"""The HTTP edge of the gateway's Connect paths: what is checked of a request's head before the
Connect library reads it, and what every answer carries.

The library refuses a bad head by itself, but without a catalogue reason (a `Connect-Timeout-Ms:
abc`, a `Connect-Protocol-Version: 2`), with a traceback (a header that is not UTF-8 answered 500),
or by trying another protocol (`application/grpc` answered 200 with gRPC status UNKNOWN: uvicorn has
no HTTP trailers). So the head is checked here first, each refusal in the Connect protocol's own form
with the reason in a `google.rpc.ErrorInfo`, as every other refusal of the gateway:

- every header name and value is text (ASCII names, UTF-8 values), else INVALID_ARGUMENT
  HEADER_INVALID naming the header;
- the request is a POST in the Connect protocol (`application/proto` or `application/json` for a
  unary method, `application/connect+proto` or `+json` for a stream), else HTTP 405 / 415 with
  UNIMPLEMENTED PROTOCOL_UNSUPPORTED: the gateway serves neither gRPC nor gRPC-Web, which need HTTP
  trailers or a second framing the browsers' client does not use;
- the request's encoding (`Content-Encoding` of a unary call, `Connect-Content-Encoding` of a
  stream) is identity or gzip, else UNIMPLEMENTED PROTOCOL_UNSUPPORTED (HTTP 501, the code the
  Connect protocol gives an unsupported encoding);
- `Connect-Protocol-Version`, when sent, is `1`, and `Connect-Timeout-Ms` is 1 to 10 ASCII digits
  (the protocol's own rules), else INVALID_ARGUMENT HEADER_INVALID.

Every answer of a Connect path is `Cache-Control: no-store` (each carries a token or a player's
data, or says who may call what); with TLS ending here, every answer also carries HSTS.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from connectrpc.code import Code
from google.rpc import error_details_pb2

from service_runtime.errors import ERROR_DOMAIN

UNARY_CONTENT_TYPES = frozenset({"application/proto", "application/json"})
STREAM_CONTENT_TYPES = frozenset({"application/connect+proto", "application/connect+json"})
# What the Connect library decompresses (its defaults); anything else is refused here, not by it.
ENCODINGS = frozenset({"", "identity", "gzip"})
NO_STORE = (b"cache-control", b"no-store")
HSTS = (b"strict-transport-security", b"max-age=31536000")
_MAX_TIMEOUT_DIGITS = 10
_HTTP_STATUS = {Code.INVALID_ARGUMENT: 400, Code.UNIMPLEMENTED: 501}

Headers = Sequence[tuple[bytes, bytes]]


@dataclass(frozen=True)
class Refusal:
    """A request refused on its head: the Connect code, the catalogue reason, and the HTTP status of a
    unary answer (a stream's refusal is HTTP 200 with an end-of-stream message, as the protocol says,
    except 405 and 415, which come before any protocol is agreed)."""

    code: Code
    reason: str
    message: str
    metadata: dict[str, str] = field(default_factory=dict)
    http_status: int = 0
    extra_headers: tuple[tuple[bytes, bytes], ...] = ()

    @property
    def before_protocol(self) -> bool:
        return self.http_status in (405, 415)


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _header_refusal(name: str, message: str) -> Refusal:
    return Refusal(Code.INVALID_ARGUMENT, "HEADER_INVALID", message, {"header": name[:64]})


def check_head(http_method: str, headers: Headers, *, streaming: bool) -> Refusal | None:
    """None when the Connect library may read the request; else why not."""
    accepted = STREAM_CONTENT_TYPES if streaming else UNARY_CONTENT_TYPES
    protocol = (
        f"this gateway serves the Connect protocol: POST with content type {' or '.join(sorted(accepted))}"
    )
    text: dict[str, str] = {}
    for raw_name, raw_value in headers:
        try:
            name = raw_name.decode("ascii").lower()
        except UnicodeDecodeError:
            return _header_refusal(raw_name.decode("latin-1"), "a request header's name is not ASCII")
        try:
            text[name] = raw_value.decode("utf-8")
        except UnicodeDecodeError:
            return _header_refusal(name, f"the request header {name!r} is not UTF-8 text")
    if http_method != "POST":
        return Refusal(
            Code.UNIMPLEMENTED,
            "PROTOCOL_UNSUPPORTED",
            protocol,
            {"method": http_method[:16]},
            http_status=405,
            extra_headers=((b"allow", b"POST"),),
        )
    media_type = _media_type(text.get("content-type", ""))
    if media_type not in accepted:
        return Refusal(
            Code.UNIMPLEMENTED,
            "PROTOCOL_UNSUPPORTED",
            protocol,
            {"content_type": media_type[:64]},
            http_status=415,
            extra_headers=((b"accept-post", ", ".join(sorted(accepted)).encode()),),
        )
    version = text.get("connect-protocol-version")
    if version is not None and version != "1":
        return _header_refusal("connect-protocol-version", "Connect-Protocol-Version must be 1")
    encoding_header = "connect-content-encoding" if streaming else "content-encoding"
    encoding = text.get(encoding_header, "")
    if encoding not in ENCODINGS:
        return Refusal(
            Code.UNIMPLEMENTED,
            "PROTOCOL_UNSUPPORTED",
            f"{encoding_header} is identity or gzip",
            {"header": encoding_header},
        )
    timeout = text.get("connect-timeout-ms")
    if timeout is not None and not (
        timeout.isascii() and timeout.isdigit() and 0 < len(timeout) <= _MAX_TIMEOUT_DIGITS
    ):
        return _header_refusal("connect-timeout-ms", "Connect-Timeout-Ms is 1 to 10 digits (milliseconds)")
    return None


def _error_json(refusal: Refusal) -> bytes:
    info = error_details_pb2.ErrorInfo(reason=refusal.reason, domain=ERROR_DOMAIN, metadata=refusal.metadata)
    value = base64.b64encode(info.SerializeToString()).decode("ascii").rstrip("=")
    return json.dumps(
        {
            "code": refusal.code.value,
            "message": refusal.message,
            "details": [{"type": "google.rpc.ErrorInfo", "value": value}],
        }
    ).encode()


def refusal_answer(
    refusal: Refusal, *, streaming: bool, content_type: str
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """(HTTP status, headers, body) of the refusal in the Connect protocol's form."""
    error = _error_json(refusal)
    headers = [*refusal.extra_headers]
    if streaming and not refusal.before_protocol:
        # A stream's status is its end-of-stream message (flag 0x02), its HTTP status 200.
        end = b'{"error":' + error + b"}"
        headers.append((b"content-type", _media_type(content_type).encode()))
        return 200, headers, struct.pack(">BI", 0x02, len(end)) + end
    headers.append((b"content-type", b"application/json"))
    return refusal.http_status or _HTTP_STATUS[refusal.code], headers, error
