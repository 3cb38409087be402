"""`make run`: start every service as its own process on loopback with embedded defaults.

It starts lobby, table, cashier, fairness and history (`python -m services.<name>`), prefixes each
line of their output with the service name, waits until every health check says SERVING, prints
the addresses and how to call them, and on Ctrl-C (or SIGTERM) stops them all gracefully. If any
service dies, the others are stopped and the command fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

# In this order from the base port: lobby 50051, table 50052, cashier 50053, fairness 50054, history 50055.
SERVICES = ("lobby", "table", "cashier", "fairness", "history")
BASE_PORT = 50051
COLOURS = {"lobby": 36, "table": 32, "cashier": 33, "fairness": 35, "history": 34}


@dataclass
class Child:
    name: str
    port: int
    process: asyncio.subprocess.Process


def _label(name: str) -> str:
    text = f"{name:>8} |"
    return f"\033[{COLOURS[name]}m{text}\033[0m" if sys.stdout.isatty() else text


async def _pump(child: Child) -> None:
    assert child.process.stdout is not None
    async for raw in child.process.stdout:
        sys.stdout.write(f"{_label(child.name)} {raw.decode(errors='replace')}")
        sys.stdout.flush()


async def _wait_serving(port: int, deadline_seconds: float) -> bool:
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_seconds
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while loop.time() < end:
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return True
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.2)
    return False


async def _stop(children: list[Child], grace_seconds: float) -> None:
    for child in children:
        if child.process.returncode is None:
            child.process.send_signal(signal.SIGTERM)
    for child in children:
        try:
            await asyncio.wait_for(child.process.wait(), grace_seconds)
        except TimeoutError:
            child.process.kill()
            await child.process.wait()


def _usage(host: str, ports: dict[str, int]) -> str:
    rows = "\n".join(f"  {name:<9} {host}:{port}" for name, port in ports.items())
    return f"""
All services are SERVING:
{rows}

Talk to them (health and reflection need no token; everything else needs one):
  TOKEN=$(.venv/bin/mint-token --subject alice --roles player)
  grpcurl -plaintext -H "authorization: Bearer $TOKEN" {host}:{ports["cashier"]} list
  grpcurl -plaintext {host}:{ports["lobby"]} grpc.health.v1.Health/Check
Press Ctrl-C to stop every service.
"""


async def run_cluster(data_dir: str, host: str, ready_timeout: float, base_port: int = BASE_PORT) -> int:
    ports = {name: base_port + offset for offset, name in enumerate(SERVICES)}
    env = dict(os.environ)
    env.setdefault("POKER_DATA_DIR", data_dir)
    if sys.stdout.isatty():
        env.setdefault("POKER_LOG_FORMAT", "console")
    children: list[Child] = []
    for name, port in ports.items():
        child_env = {**env, f"POKER_{name.upper()}_PORT": str(port), f"POKER_{name.upper()}_HOST": host}
        if name == "lobby":
            # Without Redis the lobby routes every room to the one table shard: this one.
            child_env.setdefault("POKER_LOBBY_TABLE_SHARD_ADDRESS", f"{host}:{ports['table']}")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            f"services.{name}",
            env=child_env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            # Own session: Ctrl-C reaches only this launcher, which then stops each service in turn.
            start_new_session=True,
        )
        children.append(Child(name, port, process))
    pumps = [asyncio.create_task(_pump(child)) for child in children]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    exit_code = 0
    died = [asyncio.create_task(child.process.wait()) for child in children]
    ready = await asyncio.gather(*(_wait_serving(c.port, ready_timeout) for c in children))
    if not all(ready):
        not_ready = [c.name for c, ok in zip(children, ready, strict=True) if not ok]
        print(f"cluster: not SERVING after {ready_timeout:.0f}s: {', '.join(not_ready)}", file=sys.stderr)
        exit_code = 1
    else:
        print(_usage(host, ports), flush=True)
        stopper = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait([stopper, *died], return_when=asyncio.FIRST_COMPLETED)
        if stopper not in done:
            dead = [c.name for c in children if c.process.returncode is not None]
            print(f"cluster: {', '.join(dead)} stopped unexpectedly; stopping the rest", file=sys.stderr)
            exit_code = 1
        stopper.cancel()
    await _stop(children, grace_seconds=15)
    for pump in pumps:
        with contextlib.suppress(asyncio.CancelledError):
            await pump
    print("cluster: every service stopped", flush=True)
    return exit_code


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="poker-cluster", description=__doc__)
    parser.add_argument("--data-dir", default="data", help="folder for the embedded SQLite files")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--ready-timeout", type=float, default=60.0)
    parser.add_argument("--base-port", type=int, default=BASE_PORT, help="lobby's port; the others follow")
    args = parser.parse_args(argv)
    raise SystemExit(asyncio.run(run_cluster(args.data_dir, args.host, args.ready_timeout, args.base_port)))


if __name__ == "__main__":
    main()
