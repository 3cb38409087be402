"""Outgoing gRPC channels: a deadline on every call, bearer token and request id propagated, and
retries of UNAVAILABLE and RESOURCE_EXHAUSTED (bounded attempts, jittered exponential backoff, per
gRFC A6). A server sheds overload with RESOURCE_EXHAUSTED before it runs the handler, so a retry is
safe; every mutating RPC is idempotent by its request id anyway.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import grpc
import structlog
from google.rpc import error_details_pb2, status_pb2

RETRY_SERVICE_CONFIG = {
    "methodConfig": [
        {
            "name": [{}],
            "retryPolicy": {
                "maxAttempts": 4,
                "initialBackoff": "0.1s",
                "maxBackoff": "2s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"],
            },
        }
    ]
}


# HTTP/2 keepalive: a peer that stops answering (a frozen process, a cut network) fails the channel's
# calls, streams included, within the time plus the timeout, so a client re-routes instead of waiting
# on a stream for ever (a table shard frozen past its lease: its players find the room's new owner).
# Servers accept pings this often (service_runtime.server).
# (grpcio 1.85 waits `ping_timeout_ms`, default a minute, for a keepalive ping's answer, whatever
# `keepalive_timeout_ms` says: measured with a SIGSTOPped server, a stream failed after 4 s with both
# set and never within 30 s with the keepalive pair alone.)
KEEPALIVE_OPTIONS: list[tuple[str, int]] = [
    ("grpc.keepalive_time_ms", 2000),
    ("grpc.keepalive_timeout_ms", 3000),
    ("grpc.http2.ping_timeout_ms", 3000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]


def reason_of(error: grpc.aio.AioRpcError) -> str:
    """The stable reason (google.rpc.ErrorInfo) a failed call carries, or '' when it carries none."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


class _CallDefaults:
    """Adds the default deadline, the bearer token and the current request id to each call.

    grpc.aio files an interceptor under the first kind it is an instance of, so one object that is
    both kinds would never see a stream: each kind gets its own object (`_UnaryDefaults`,
    `_StreamDefaults`)."""

    def __init__(self, timeout_seconds: float, token: Callable[[], str] | None) -> None:
        self._timeout = timeout_seconds
        self._token = token

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        if self._token is not None and "authorization" not in metadata:
            metadata.add("authorization", f"Bearer {self._token()}")
        request_id = structlog.contextvars.get_contextvars().get("request_id")
        if request_id and "x-request-id" not in metadata:
            metadata.add("x-request-id", str(request_id))
        return grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=details.timeout if details.timeout is not None else self._timeout,
            metadata=metadata,
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )


class _UnaryDefaults(_CallDefaults, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


class _StreamDefaults(_CallDefaults, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        # Streams live as long as the subscriber wants; only unary calls get the default deadline.
        new = self._details(details)
        if details.timeout is None:
            new = grpc.aio.ClientCallDetails(
                new.method, None, new.metadata, new.credentials, new.wait_for_ready
            )
        return await continuation(new, request)


def create_channel(
    target: str, *, timeout_seconds: float = 5.0, token: Callable[[], str] | None = None
) -> grpc.aio.Channel:
    """An insecure (loopback / service mesh) channel with deadlines, auth and retries with backoff."""
    return grpc.aio.insecure_channel(
        target,
        options=[
            ("grpc.enable_retries", 1),
            ("grpc.service_config", json.dumps(RETRY_SERVICE_CONFIG)),
            *KEEPALIVE_OPTIONS,
        ],
        interceptors=[_UnaryDefaults(timeout_seconds, token), _StreamDefaults(timeout_seconds, token)],
    )
