"""Calls to the services a table depends on (cashier, fairness, history, lobby): errors made typed.

A dependency's business error (INSUFFICIENT_FUNDS, SEAT_SESSION_ALREADY_OPEN, ...) keeps its code
and reason so the player sees the cashier's word; a dependency that is down, slow, or answers with
a status that is its own fault becomes UNAVAILABLE (reason UNAVAILABLE, metadata `dependency`).
"""

from __future__ import annotations

import grpc

from service_runtime.clients import reason_of
from service_runtime.errors import (
    Aborted,
    AlreadyExists,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unavailable,
)

_PASSED_ON: dict[grpc.StatusCode, type[DomainError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.ABORTED: Aborted,
}
# A player refused by the lobby (NOT_ON_ALLOW_LIST) hears it; the table's own credentials being
# refused (ROLE_REQUIRED, TOKEN_*) is the table's fault and stays UNAVAILABLE.
_PLAYER_PERMISSION_REASONS = frozenset({"NOT_ON_ALLOW_LIST"})


def translate_rpc_error(error: BaseException, dependency: str) -> DomainError:
    """The domain error a failed call to `dependency` becomes (see the module docstring)."""
    if isinstance(error, grpc.aio.AioRpcError):
        kind = _PASSED_ON.get(error.code())
        reason = reason_of(error)
        if kind is not None and reason:
            return kind(reason, str(error.details() or reason), {"dependency": dependency})
        if error.code() == grpc.StatusCode.PERMISSION_DENIED and reason in _PLAYER_PERMISSION_REASONS:
            return PermissionDenied(reason, str(error.details() or reason), {"dependency": dependency})
    return Unavailable("UNAVAILABLE", f"the {dependency} service is unavailable", {"dependency": dependency})


def is_unavailable(error: DomainError) -> bool:
    """True for a dependency that is down: the same call may be retried with the same ids."""
    return isinstance(error, Unavailable)
