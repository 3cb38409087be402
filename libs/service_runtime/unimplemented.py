"""Servicers for contract RPCs a release does not serve yet: each answers UNIMPLEMENTED with the
stable reason NOT_IMPLEMENTED, through the same interceptor as every real RPC, and pretends nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from google.protobuf import descriptor_pool

from service_runtime.errors import Unimplemented


def _raise(service: str, method: str) -> Unimplemented:
    return Unimplemented("NOT_IMPLEMENTED", f"{service}.{method} is not served by this release yet")


def unimplemented_servicer(base: type[Any], service_full_name: str, served: object | None = None) -> Any:
    """An instance of `base` whose RPCs not implemented by `served` answer UNIMPLEMENTED.

    `served`, when given, is an object whose methods of the same name are used instead, so a service
    can grow RPC by RPC without an RPC ever answering with a fake result.
    """
    service = descriptor_pool.Default().FindServiceByName(service_full_name)
    namespace: dict[str, Any] = {}
    for method in service.methods:
        real = getattr(served, method.name, None) if served is not None else None
        if real is not None:
            namespace[method.name] = staticmethod(real)
            continue
        if method.server_streaming:

            async def stream(
                self: Any, request: Any, context: Any, _m: str = method.name
            ) -> AsyncIterator[Any]:
                raise _raise(service_full_name, _m)
                yield  # pragma: no cover - makes this an async generator, as streaming handlers are

            namespace[method.name] = stream
        else:

            async def unary(self: Any, request: Any, context: Any, _m: str = method.name) -> Any:
                raise _raise(service_full_name, _m)

            namespace[method.name] = unary
    return type(f"Unimplemented{service.name}", (base,), namespace)()
