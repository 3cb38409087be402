"""Typed domain errors with stable reasons; the one place that says which kind of failure each is.

Domain and application code raise these (never grpc errors). The gRPC error interceptor maps the
kind to a status code and the reason to `google.rpc.ErrorInfo.reason`, so this module stays free of
grpc and usable from pure code.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

ERROR_DOMAIN = "poker.platform"


class ErrorKind(enum.Enum):
    """What went wrong, in the terms of AIP-193; each maps to exactly one gRPC status code."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    NOT_FOUND = "NOT_FOUND"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    ABORTED = "ABORTED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    UNAVAILABLE = "UNAVAILABLE"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    OUT_OF_RANGE = "OUT_OF_RANGE"
    UNIMPLEMENTED = "UNIMPLEMENTED"


class DomainError(Exception):
    """Base of every error a caller may see: a kind, a stable UPPER_SNAKE reason and safe metadata.

    The message and metadata are shown to the caller, so they must never carry hidden cards, seeds
    or another player's data.
    """

    kind: ErrorKind = ErrorKind.FAILED_PRECONDITION

    def __init__(self, reason: str, message: str = "", metadata: Mapping[str, str] | None = None) -> None:
        if not reason or reason.upper() != reason:
            raise ValueError(f"error reasons are UPPER_SNAKE strings, got {reason!r}")
        super().__init__(message or reason)
        self.reason = reason
        self.message = message or reason.replace("_", " ").capitalize()
        self.metadata: dict[str, str] = dict(metadata or {})


class InvalidArgument(DomainError):
    """The request is malformed whatever the state of the system."""

    kind = ErrorKind.INVALID_ARGUMENT


class NotFound(DomainError):
    """An id in the request names nothing the caller may see."""

    kind = ErrorKind.NOT_FOUND


class FailedPrecondition(DomainError):
    """The request is well formed but illegal in the current state (not your turn, no funds...)."""

    kind = ErrorKind.FAILED_PRECONDITION


class AlreadyExists(DomainError):
    """An idempotency key was reused with different fields: a conflict, nothing applied."""

    kind = ErrorKind.ALREADY_EXISTS


class Aborted(DomainError):
    """A concurrency conflict the caller may retry with the same request."""

    kind = ErrorKind.ABORTED


class PermissionDenied(DomainError):
    """The caller is known but not allowed to do this."""

    kind = ErrorKind.PERMISSION_DENIED


class Unauthenticated(DomainError):
    """No credentials, or credentials that are expired or forged."""

    kind = ErrorKind.UNAUTHENTICATED


class Unavailable(DomainError):
    """A dependency is down or the service is shutting down; retry later."""

    kind = ErrorKind.UNAVAILABLE


class ResourceExhausted(DomainError):
    """A quota or rate limit was hit."""

    kind = ErrorKind.RESOURCE_EXHAUSTED


class Unimplemented(DomainError):
    """The RPC is in the contract but not served by this release; never a silent fake."""

    kind = ErrorKind.UNIMPLEMENTED
