"""A server of the service runtime that does no work, for bench_runtime: `create_server` with the full
interceptor stack (telemetry, shedding, auth with a real token, access policy, quotas, request ids,
errors, the log line) around one unary method, `/bench.Runtime/Check`, that answers a health
`HealthCheckResponse` to a `HealthCheckRequest`: the same protobuf work as the bare floor's Check.

Configured as a service process is (`run_service`): JSON log lines at the given level to stderr
(the bench sends them to a file), tracing with nothing exported (ids only). `--before DIR` imports
`service_runtime` from DIR/libs first: the runtime of another commit, in the same run.
Prints the port once serving.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--level", default="info")
    parser.add_argument("--before", default="", help="a checkout whose libs/service_runtime to import")
    parser.add_argument(
        "--shape",
        default="runtime",
        choices=["runtime", "plain", "passthrough"],
        help="runtime: create_server; plain: grpc.aio.server with its options and the same handler, no"
        " interceptor; passthrough: that plus one interceptor that only continues",
    )
    args = parser.parse_args()
    if args.before:
        sys.path.insert(0, f"{args.before}/libs")

    import grpc
    from grpc_health.v1 import health_pb2

    import service_runtime
    from service_runtime import tracing
    from service_runtime.access import ANY_CALLER, AccessPolicy
    from service_runtime.server import GrpcService, create_server
    from service_runtime.structured_logging import configure_logging
    from service_runtime.testing import DEV_KEYS

    assert not args.before or service_runtime.__file__.startswith(args.before), service_runtime.__file__

    serving = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)

    async def check(
        request: health_pb2.HealthCheckRequest, context: object
    ) -> health_pb2.HealthCheckResponse:
        return serving

    handlers = {
        "Check": grpc.unary_unary_rpc_method_handler(
            check,
            request_deserializer=health_pb2.HealthCheckRequest.FromString,
            response_serializer=health_pb2.HealthCheckResponse.SerializeToString,
        )
    }
    handler = grpc.method_handlers_generic_handler("bench.Runtime", handlers)

    def register(server: Any) -> None:
        # As the generated code of every service registers: generic and pre-registered handlers.
        server.add_generic_rpc_handlers((handler,))
        server.add_registered_method_handlers("bench.Runtime", handlers)

    class Passthrough(grpc.aio.ServerInterceptor):  # type: ignore[misc]
        async def intercept_service(self, continuation: Any, details: Any) -> Any:
            return await continuation(details)

    async def serve_plain() -> None:
        interceptors = [Passthrough()] if args.shape == "passthrough" else []
        server = grpc.aio.server(interceptors=interceptors, options=[("grpc.so_reuseport", 0)])
        register(server)
        port = server.add_insecure_port(f"127.0.0.1:{args.port}")
        await server.start()
        print(port, flush=True)
        await server.wait_for_termination()

    async def serve() -> None:
        running, port = await create_server(
            f"127.0.0.1:{args.port}",
            services=[GrpcService("bench.Runtime", register)],
            access=AccessPolicy(roles={"/bench.Runtime/Check": ANY_CALLER}),
            token_keys=DEV_KEYS,
        )
        await running.start()
        print(port, flush=True)
        await running.server.wait_for_termination()

    # As `run_service` passes POKER_LOG_CALLS (a runtime from before the setting takes no such argument).
    calls = {"log_calls": True} if os.environ.get("POKER_LOG_CALLS") == "1" else {}
    configure_logging("bench", log_format="json", level=args.level, **calls)
    tracing.configure_tracing("bench")
    asyncio.run(serve() if args.shape == "runtime" else serve_plain())


if __name__ == "__main__":
    main()
