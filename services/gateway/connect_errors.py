"""Errors at the Connect edge: a domain error or a backend's gRPC status becomes a ConnectError with
the same code and the same `google.rpc.ErrorInfo` (reason from the catalogue), so the browser reads
the reason exactly as a gRPC client would."""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from google.rpc import error_details_pb2, status_pb2
from protobuf.wkt import Any as WireAny

from service_runtime.errors import ERROR_DOMAIN, DomainError

_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_CODES = {code.name: code for code in Code}
_CODES["CANCELLED"] = Code.CANCELED


def error_info(reason: str, metadata: dict[str, str] | None = None) -> ErrorDetail:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN, metadata=metadata or {})
    return ErrorDetail(WireAny(type_url=_ERROR_INFO, value=info.SerializeToString()))


def from_domain(error: DomainError) -> ConnectError:
    return ConnectError(_CODES[error.kind.value], error.message, [error_info(error.reason, error.metadata)])


def internal() -> ConnectError:
    return ConnectError(Code.INTERNAL, "internal error", [error_info("INTERNAL")])


def _status_details(error: grpc.aio.AioRpcError) -> Sequence[tuple[str, bytes]]:
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            return [(detail.type_url, detail.value) for detail in status.details]
    return []


def backend_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo of a backend's failed call, if it carries one."""
    for type_url, value in _status_details(error):
        if type_url == _ERROR_INFO:
            return error_details_pb2.ErrorInfo.FromString(value)
    return None


def from_backend(error: grpc.aio.AioRpcError) -> ConnectError:
    """The backend's status as the browser sees it; a status without a reason gets one from its code,
    so nothing reaches the page without a stable reason."""
    code = _CODES.get(error.code().name, Code.UNKNOWN)
    details = [ErrorDetail(WireAny(type_url=url, value=value)) for url, value in _status_details(error)]
    if backend_info(error) is None:
        # A link-level failure (the backend is down, or the call timed out): no reason of its own.
        if code in (Code.UNAVAILABLE, Code.DEADLINE_EXCEEDED, Code.CANCELED):
            return ConnectError(
                Code.UNAVAILABLE, "a service behind the gateway is unavailable", [error_info("UNAVAILABLE")]
            )
        return internal()
    return ConnectError(code, str(error.details() or code.value), details)


def reason_of_connect(error: ConnectError) -> str:
    for detail in error.details:
        if detail.type_name == "google.rpc.ErrorInfo":
            return str(error_details_pb2.ErrorInfo.FromString(detail.message_bytes).reason)
    return ""
