"""`make up` waits for the stack it started and fails loudly when it is broken (issue 25 item 17).

`python -m service_runtime.stack_health lobby=127.0.0.1:50051 table=... gateway=http://127.0.0.1:50056/readyz
--timeout 180` asks each service's gRPC health service, and the gateway (an `http://` or `https://`
address) its HTTP readiness (200), until every one answers SERVING; it prints one line per service as it
comes up, and if the deadline passes first it names every service that is not SERVING with the last
thing it answered (connection refused, NOT_SERVING, ...) and exits 1, so `deploy/compose.sh up` can
show the containers and their logs and fail. `wait_for_stack` is the testable part: the check and the
clock are passed in.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

SERVING = "SERVING"


def grpc_health(address: str, timeout: float = 2.0) -> str:
    """SERVING, or what the service answered instead (a status, or why nothing answered)."""
    try:
        with grpc.insecure_channel(address) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=timeout
            )
    except grpc.RpcError as error:
        return f"{error.code().name}: {error.details() or 'no answer'}"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def http_ready(url: str, timeout: float = 2.0) -> str:
    """SERVING when GET `url` (the gateway's /readyz) answers 200, else its status or why nothing
    answered."""
    try:
        # Straight to the address: a proxy set in the environment must not answer for the gateway.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=timeout) as reply:
            status = reply.status
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        return f"UNAVAILABLE: {reason}"
    return SERVING if status == 200 else f"HTTP {status}"


def stack_check(address: str) -> str:
    """An `http://` or `https://` address by its HTTP readiness, any other by gRPC health."""
    if address.startswith(("http://", "https://")):
        return http_ready(address)
    return grpc_health(address)


def wait_for_stack(
    services: Mapping[str, str],
    *,
    timeout: float,
    check: Callable[[str], str] = stack_check,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    say: Callable[[str], None] = print,
    interval: float = 2.0,
) -> dict[str, str]:
    """Poll until every service is SERVING or `timeout` passes; the services that are not, with their
    last answer (empty when the whole stack is up)."""
    deadline = clock() + timeout
    last: dict[str, str] = dict.fromkeys(services, "not asked yet")
    up: set[str] = set()
    while True:
        for name, address in services.items():
            if name in up:
                continue
            last[name] = check(address)
            if last[name] == SERVING:
                up.add(name)
                say(f"stack: {name} SERVING at {address}")
        if len(up) == len(services):
            return {}
        if clock() >= deadline:
            return {name: answer for name, answer in last.items() if name not in up}
        sleep(interval)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stack_health", description=__doc__)
    parser.add_argument(
        "services",
        nargs="+",
        help="name=host:port (gRPC health) or name=http(s)://host:port/readyz of each service to wait for",
    )
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds before giving up")
    args = parser.parse_args(argv)
    services = dict(item.split("=", 1) for item in args.services)
    broken = wait_for_stack(services, timeout=args.timeout)
    if not broken:
        print(f"stack: all {len(services)} services SERVING")
        return 0
    for name, answer in broken.items():
        print(
            f"stack: FAILED: {name} at {services[name]} not SERVING after {args.timeout:.0f}s: {answer}",
            file=sys.stderr,
        )
    return 1


if __name__ == "__main__":
    sys.exit(main())
