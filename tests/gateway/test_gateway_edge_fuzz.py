"""A bounded fuzz of the gateway's HTTP edge (issue 41): every Connect method the gateway serves,
called over raw HTTP/1.1 with random heads (header names and values, bytes that are not UTF-8, content
types, Connect timeouts, protocol versions and encodings), random stream envelopes (flags, lengths
that lie) and random bodies. No answer may be a 5xx (but the protocol's 501 for an encoding it does not
take), `internal` or `unknown`, or a refusal without a
reason from the catalogue, and no traceback may reach the gateway's log. (The bodies of every method
are fuzzed with every identity by tests/security/test_fuzz_every_method.py; this is the head and the
framing around them.)"""

from __future__ import annotations

import http.client
import json
import random
import struct
from collections import Counter

from google.protobuf import descriptor_pool

from poker.common.v1 import common_pb2
from services.gateway.access import FORWARDED, GATEWAY_SERVICE
from tests.gateway.conftest import Cluster
from tests.gateway.connect_http import call
from tests.gateway.gateway_process import running_gateway
from tests.security.fuzz_messages import random_request

CATALOGUE = {name.removeprefix("ERROR_REASON_") for name in common_pb2.ErrorReason.keys()}  # noqa: SIM118
CALLS_PER_METHOD = 40
CONTENT_TYPES = (
    "application/proto",
    "application/json",
    "application/connect+proto",
    "application/connect+json",
    "application/grpc",
    "application/grpc+proto",
    "application/grpc-web+proto",
    "application/grpc-web-text",
    "application/json; charset=utf-8",
    "APPLICATION/PROTO",
    "text/html",
    "multipart/form-data; boundary=x",
    "",
)
HEADER_NAMES = (
    "user-agent",
    "x-forwarded-for",
    "x-request-id",
    "connect-timeout-ms",
    "connect-protocol-version",
    "connect-content-encoding",
    "connect-accept-encoding",
    "content-encoding",
    "accept-encoding",
    "grpc-timeout",
    "te",
    "x-custom",
)
VALUE_BYTES = [chr(b) for b in (*range(0x20, 0x7F), *range(0x80, 0x100)) if chr(b) not in "\r\n"]


def _value(rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return str(rng.choice((-1, 0, 1, 5000, 10**10, 10**15)))
    if kind == 1:
        return rng.choice(("1", "2", "", "gzip", "br", "identity", "deflate", "abc", "1_000", " 1"))
    # Any latin-1 byte but CR and LF (http.client refuses those): many are not UTF-8 on the wire.
    return "".join(rng.choice(VALUE_BYTES) for _ in range(rng.randrange(0, 40)))


def _methods() -> list[tuple[str, object]]:
    found = []
    for service_name in (GATEWAY_SERVICE, *FORWARDED):
        descriptor = descriptor_pool.Default().FindServiceByName(service_name)
        found += [(f"/{descriptor.full_name}/{m.name}", m) for m in descriptor.methods]
    return found


def _envelope(rng: random.Random, body: bytes) -> bytes:
    flags = rng.choice((0, 0, 1, 2, 3, 0x80, 0xFF))
    length = len(body) if rng.random() < 0.7 else rng.randrange(0, 2**32)
    return struct.pack(">BI", flags, length) + body


def test_random_heads_envelopes_and_bodies_of_every_method_never_answer_without_a_reason(
    cluster: Cluster,
) -> None:
    rng = random.Random(41)
    unlimited = {
        "POKER_GATEWAY_CALLS_PER_SECOND_PER_ADDRESS": "100000",
        "POKER_GATEWAY_CALL_BURST_PER_ADDRESS": "100000",
        "POKER_GATEWAY_CALLS_PER_SECOND_PER_USER": "100000",
        "POKER_GATEWAY_CALL_BURST_PER_USER": "100000",
        "POKER_GATEWAY_SIGN_INS_PER_MINUTE_PER_ADDRESS": "100000",
    }
    findings: list[str] = []
    outcomes: Counter[str] = Counter()
    with running_gateway(cluster.services, unlimited) as gateway:
        signed = call(gateway.address, f"/{GATEWAY_SERVICE}/SignIn", b"\x12\x04fuzz\x1a\x01d")
        assert signed.code == "ok", signed
        token = signed.body[signed.body.index(b"eyJ") :].split(b"\x22")[0].split(b"\x1a")[0]
        methods = _methods()
        for path, method in methods:
            streaming = bool(getattr(method, "server_streaming", False))
            for _ in range(CALLS_PER_METHOD):
                headers = {rng.choice(HEADER_NAMES): _value(rng) for _ in range(rng.randrange(0, 4))}
                headers["content-type"] = rng.choice(CONTENT_TYPES)
                body = (
                    random_request(method, rng) if rng.random() < 0.7 else rng.randbytes(rng.randrange(0, 64))
                )
                payload = _envelope(rng, body) if streaming and rng.random() < 0.5 else body
                try:
                    outcome = call(
                        gateway.address,
                        path,
                        payload,
                        token=token.decode("latin-1") if rng.random() < 0.8 else "",
                        streaming=False,  # the envelope, if any, is ours
                        headers=headers,
                        timeout=15,
                    )
                except (http.client.HTTPException, OSError) as error:
                    findings.append(f"{path} {headers}: the connection failed ({error!r})")
                    continue
                outcomes[outcome.label] += 1
                # 501 is the Connect protocol's answer to an unsupported encoding (with its reason).
                if outcome.http_status in (500, *range(502, 600)) or outcome.code in ("internal", "unknown"):
                    findings.append(f"{path} {headers}: {outcome.http_status} {outcome.label}")
                elif outcome.http_status != 200 and outcome.reason not in CATALOGUE:
                    findings.append(
                        f"{path} {headers}: {outcome.http_status} {outcome.label} without a reason"
                    )
                elif outcome.http_status == 200 and outcome.code == "ok" and streaming:
                    _check_stream_body(outcome.body, path, headers, findings)
        log = "".join(gateway.lines)
    assert sum(outcomes.values()) >= CALLS_PER_METHOD * len(methods) - len(findings)
    assert not findings, "\n".join(findings[:30])
    assert "Traceback" not in log
    for line in log.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            assert record.get("code") not in ("INTERNAL", "UNKNOWN"), record


def _check_stream_body(body: bytes, path: str, headers: dict[str, str], findings: list[str]) -> None:
    """A stream's answer read as one body: its end-of-stream message must carry a catalogue reason."""
    offset = 0
    while offset + 5 <= len(body):
        flags, length = struct.unpack(">BI", body[offset : offset + 5])
        message = body[offset + 5 : offset + 5 + length]
        offset += 5 + length
        if flags & 0x02:
            error = json.loads(message or b"{}").get("error")
            if error and error.get("code") in ("internal", "unknown"):
                findings.append(f"{path} {headers}: stream ended {error.get('code')}")
