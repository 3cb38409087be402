"""A tiny service used only by the runtime tests: raw-bytes RPCs that sleep, fail or echo the caller."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from service_runtime.access import ADMIN_ONLY, ANY_ROLE, AccessPolicy
from service_runtime.auth import current_caller
from service_runtime.errors import FailedPrecondition

SERVICE = "test.Probe"
PROBE_ACCESS = AccessPolicy(
    roles={
        f"/{SERVICE}/Sleep": ANY_ROLE,
        f"/{SERVICE}/Whoami": ANY_ROLE,
        f"/{SERVICE}/Fail": ANY_ROLE,
        f"/{SERVICE}/Crash": ANY_ROLE,
        f"/{SERVICE}/AdminOnly": ADMIN_ONLY,
    }
)


async def _sleep(request: bytes, context: Any) -> bytes:
    await asyncio.sleep(float(request.decode() or "0"))
    return b"slept"


async def _whoami(request: bytes, context: Any) -> bytes:
    return current_caller().subject.encode()


async def _fail(request: bytes, context: Any) -> bytes:
    raise FailedPrecondition("NOT_YOUR_TURN", "it is seat 3's turn", {"seat": "3"})


async def _crash(request: bytes, context: Any) -> bytes:
    raise KeyError("secret-internal-detail")


def probe_handler() -> grpc.GenericRpcHandler:
    def unary(fn: Any) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(fn)

    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Sleep": unary(_sleep),
            "Whoami": unary(_whoami),
            "Fail": unary(_fail),
            "Crash": unary(_crash),
            "AdminOnly": unary(_whoami),
        },
    )
