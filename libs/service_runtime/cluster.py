"""`make run`: start every service as its own process on loopback with embedded defaults.

It starts lobby, table, cashier, fairness and history (`python -m services.<name>`) on the addresses
`POKER_<SERVICE>_HOST` / `POKER_<SERVICE>_PORT` name (else `--host` and `--base-port` + 0..4), prefixes
each line of their output with the service name, and prints the addresses and how to call them once
every service this run started is alive, answers SERVING and owns its port. A port already taken stops
the run before anything starts, with one line naming it; a service that exits during start-up stops
the run at once, naming the service and its last line of output. On Ctrl-C (or SIGTERM) every service
gets SIGTERM and, after the services' grace period, SIGKILL: the command always returns (a second
Ctrl-C kills at once). If any service dies later, the others are stopped and the command fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import shutil
import signal
import socket
import ssl
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service_runtime.cluster_output import QuietOutput
from service_runtime.dev_house_bank import fund_development_house_bank
from service_runtime.tls import TlsFiles, channel_credentials

# In this order from the base port: lobby 50051, table 50052, cashier 50053, fairness 50054, history 50055,
# gateway 50056 (the browsers' front door: HTTP with Connect, and the web client's page).
SERVICES = ("lobby", "table", "cashier", "fairness", "history", "gateway")
# Services that speak HTTP rather than gRPC: ready when GET /readyz answers 200.
HTTP_SERVICES = frozenset({"gateway"})
BASE_PORT = 50051
COLOURS = {"lobby": 36, "table": 32, "cashier": 33, "fairness": 35, "history": 34, "gateway": 91, "bots": 37}
# `make run BOTS=n`: that many bot players (poker-bots) sit in this room once every service is SERVING.
DEFAULT_BOTS_ROOM = "nlhe-gram-classic"
BOTS_STOP_SECONDS = 15.0
# A service's own shutdown: POKER_SHUTDOWN_DRAIN_SECONDS of NOT_SERVING (1 s in production, 0 here),
# then POKER_SHUTDOWN_GRACE_SECONDS for in-flight RPCs (service_runtime.server.serve). The launcher
# allows that plus a second and this margin, then kills.
DEFAULT_GRACE_SECONDS = 10.0
SHUTDOWN_MARGIN_SECONDS = 2.0
# Quiet mode prints one line of what happened this often.
SUMMARY_SECONDS = 60.0
# Longer lines are cut on the terminal (the rest is read and dropped, so the service never blocks).
MAX_LINE_BYTES = 8192
READ_CHUNK_BYTES = 65536


class ClusterError(Exception):
    """A reason not to start at all (bad address setting, port taken), one line each."""


@dataclass(frozen=True)
class Endpoint:
    name: str
    host: str
    port: int


@dataclass
class Child:
    name: str
    port: int
    process: asyncio.subprocess.Process
    last_lines: deque[str] = field(default_factory=lambda: deque(maxlen=3))


def plan_endpoints(environ: Mapping[str, str], host: str, base_port: int) -> list[Endpoint]:
    """Each service's address: its POKER_<SERVICE>_HOST / _PORT if set, else `host` and base port + n.

    Port 0 means "any free port", as for a single service: the launcher picks one and passes it on,
    since it must know the port to check the service and print it.
    """
    endpoints, problems = [], []
    for offset, name in enumerate(SERVICES):
        prefix = f"POKER_{name.upper()}_"
        service_host = environ.get(f"{prefix}HOST") or host
        raw = environ.get(f"{prefix}PORT", "").strip()
        port = base_port + offset
        if raw:
            try:
                port = int(raw)
            except ValueError:
                port = -1
            if not 0 <= port <= 65535:
                problems.append(f"{prefix}PORT={raw[:20]!r}: must be a port number between 0 and 65535")
                continue
            if port == 0:
                try:
                    port = _free_port(service_host)
                except OSError as error:
                    problems.append(f"{prefix}HOST={service_host[:40]!r}: cannot listen there ({error})")
                    continue
        endpoints.append(Endpoint(name, service_host, port))
    if problems:
        raise ClusterError("\n".join(f"cluster: {problem}" for problem in problems))
    return endpoints


# Who calls whom: each service is told the addresses of this run's services it calls (its setting in
# the environment wins), so a run on other ports than the defaults is still one cluster.
PEERS = {
    "lobby": {"TABLE_SHARD_ADDRESS": "table"},
    "table": {
        "LOBBY_ADDRESS": "lobby",
        "CASHIER_ADDRESS": "cashier",
        "FAIRNESS_ADDRESS": "fairness",
        "HISTORY_ADDRESS": "history",
    },
    "history": {"CASHIER_ADDRESS": "cashier"},
    "gateway": {
        "LOBBY_ADDRESS": "lobby",
        "CASHIER_ADDRESS": "cashier",
        "FAIRNESS_ADDRESS": "fairness",
        "HISTORY_ADDRESS": "history",
    },
}


def peer_addresses(name: str, endpoints: list[Endpoint], environ: Mapping[str, str]) -> dict[str, str]:
    """The POKER_<NAME>_<PEER>_ADDRESS settings `name` needs that `environ` does not set already."""
    by_name = {e.name: e for e in endpoints}
    settings = {}
    for key, peer in PEERS.get(name, {}).items():
        variable = f"POKER_{name.upper()}_{key}"
        target = by_name.get(peer)
        if target is not None and not environ.get(variable):
            settings[variable] = f"{_connect_host(target.host)}:{target.port}"
    return settings


def permitted_automation(name: str, bots: int, environ: Mapping[str, str]) -> dict[str, str]:
    """History's POKER_HISTORY_PERMITTED_AUTOMATION for a run with bots: the run's own bots (`--prefix
    bot`) are the operator's automation (rules 17), not cases; a setting in `environ` wins."""
    variable = "POKER_HISTORY_PERMITTED_AUTOMATION"
    if name != "history" or not bots or environ.get(variable):
        return {}
    return {variable: "bot-"}


# `make run`'s back office (docs/backoffice.md): development staff, one per job (two in finance, so a
# funding can be asked by one and approved by another). A setting in the environment wins.
DEV_STAFF = (
    "1001=olga:operations+support;1002=rita:risk;1003=fedor:finance;1004=fiona:finance;1005=adam:admin"
)


def staff_door(endpoints: list[Endpoint], environ: Mapping[str, str]) -> dict[str, str]:
    """The gateway's staff door for this run: a port of its own (the gateway's next one when free)
    and the development staff, unless the environment sets them."""
    gateway = next((e for e in endpoints if e.name == "gateway"), None)
    if gateway is None:
        return {}
    settings: dict[str, str] = {}
    if not environ.get("POKER_GATEWAY_STAFF_PORT"):
        after = Endpoint("gateway-staff", gateway.host, gateway.port + 1)
        taken = {e.port for e in endpoints}
        port = after.port if after.port not in taken and not port_taken(after) else _free_port(gateway.host)
        settings["POKER_GATEWAY_STAFF_PORT"] = str(port)
    if not environ.get("POKER_GATEWAY_STAFF_ALLOW_LIST"):
        settings["POKER_GATEWAY_STAFF_ALLOW_LIST"] = DEV_STAFF
    return settings


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def port_taken(endpoint: Endpoint) -> bool:
    """True if something already listens on the endpoint (bound as gRPC binds: SO_REUSEADDR on)."""
    family = socket.AF_INET6 if ":" in endpoint.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((endpoint.host, endpoint.port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return True
            raise ClusterError(
                f"cluster: cannot listen on {endpoint.host}:{endpoint.port} ({endpoint.name}): {error}"
            ) from error
    return False


def check_ports_free(endpoints: list[Endpoint]) -> None:
    """Raise ClusterError, one line naming every taken port and what to do, if any port is taken."""
    taken = [e for e in endpoints if port_taken(e)]
    if taken:
        ports = ", ".join(f"{e.host}:{e.port} ({e.name})" for e in taken)
        example = " ".join(f"POKER_{e.name.upper()}_PORT={e.port + 100}" for e in taken)
        raise ClusterError(
            f"cluster: already in use: {ports} (another `make run`?): stop what holds "
            f"{'it' if len(taken) == 1 else 'them'}, or choose free ports, e.g. {example} make run"
        )


class LineSplitter:
    """Splits a byte stream into lines of any length; keeps the first `max_bytes` of each line."""

    def __init__(self, max_bytes: int = MAX_LINE_BYTES) -> None:
        self._max = max_bytes
        self._head = bytearray()
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[tuple[bytes, int]]:
        """Complete lines in `chunk` as (kept bytes, bytes dropped from the end of the line)."""
        lines: list[tuple[bytes, int]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            part = chunk[start : len(chunk) if end < 0 else end]
            room = max(self._max - len(self._head), 0)
            self._head += part[:room]
            self._dropped += max(len(part) - room, 0)
            if end < 0:
                return lines
            lines.append(self._take())
            start = end + 1

    def finish(self) -> list[tuple[bytes, int]]:
        """The unterminated last line, if any."""
        return [self._take()] if self._head or self._dropped else []

    def _take(self) -> tuple[bytes, int]:
        line = (bytes(self._head), self._dropped)
        self._head, self._dropped = bytearray(), 0
        return line


def _label(name: str, out: TextIO) -> str:
    text = f"{name:>8} |"
    return f"\033[{COLOURS[name]}m{text}\033[0m" if out.isatty() else text


async def _pump(child: Child, out: TextIO | None = None, shown: QuietOutput | None = None) -> None:
    """Copy the child's output to `out` (stdout), labelled, until the child closes it; `shown` decides
    which lines a person sees (cluster_output: quiet by default).

    Reads chunks rather than lines: asyncio's line reader gives up on a line over its 64 KiB limit,
    and a service whose output nobody reads blocks on its next log line and never stops.
    """
    target = sys.stdout if out is None else out
    assert child.process.stdout is not None
    splitter = LineSplitter()
    label = _label(child.name, target)

    def emit(lines: list[tuple[bytes, int]]) -> None:
        for raw, dropped in lines:
            text = raw.decode(errors="replace").rstrip("\r")
            if dropped:
                text += f" ... [{dropped} more bytes of this line not shown]"
            if text.strip():
                child.last_lines.append(text)
            kept = text if shown is None else shown.line(text)
            if kept is not None:
                target.write(f"{label} {kept}\n")
        if lines:
            target.flush()

    while chunk := await child.process.stdout.read(READ_CHUNK_BYTES):
        emit(splitter.feed(chunk))
    emit(splitter.finish())


async def _summaries(shown: QuietOutput, every: float) -> None:
    """Now and then one line of what the cluster did (quiet mode), until cancelled."""
    while True:
        await asyncio.sleep(every)
        line = shown.summary()
        if line is not None:
            print(line, flush=True)


def _connect_host(host: str) -> str:
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def _listening_socket_inodes(port: int) -> set[str] | None:
    """Inodes of the sockets listening on `port` (Linux /proc), or None where /proc cannot say."""
    inodes: set[str] = set()
    seen = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        seen = True
        for row in rows:
            fields = row.split()
            # local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes if seen else None


def owns_port(pid: int, port: int) -> bool | None:
    """Whether process `pid` holds a socket listening on `port`; None where the OS cannot tell us."""
    listening = _listening_socket_inodes(port)
    if listening is None:
        return None
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None if not Path("/proc/self/fd").exists() else False
    links = []
    for fd in fds:
        with contextlib.suppress(OSError):  # closed since the listing
            links.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    held = {link[len("socket:[") : -1] for link in links if link.startswith("socket:[")}
    return bool(held & listening)


def tls_of(environ: Mapping[str, str]) -> TlsFiles | None:
    """The run's TLS files (the shared POKER_TLS_* settings every service of the run reads), if any."""
    if not environ.get("POKER_TLS_CERT_FILE"):
        return None
    keys = ("POKER_TLS_CERT_FILE", "POKER_TLS_KEY_FILE", "POKER_TLS_CA_FILE")
    cert, key, ca = (Path(environ.get(k, "")) for k in keys)
    return TlsFiles(cert, key, ca)


async def _http_ready(host: str, port: int, tls: TlsFiles | None = None) -> bool:
    """True when GET /readyz on host:port answers 200 (over HTTPS with the run's CA under TLS)."""
    context = None
    if tls is not None:
        context = ssl.create_default_context(cafile=str(tls.ca_file))
        context.load_cert_chain(str(tls.cert_file), str(tls.key_file))
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host.strip("[]"), port, ssl=context), timeout=1
        )
    except (OSError, TimeoutError):
        return False
    try:
        writer.write(b"GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n")
        await writer.drain()
        status = await asyncio.wait_for(reader.readline(), timeout=1)
        return status.split(b" ")[1:2] == [b"200"]
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()


async def _wait_ready(child: Child, host: str, tls: TlsFiles | None = None) -> None:
    """Return once `child` is alive, answers SERVING on its port, and that port is its own."""
    if child.name in HTTP_SERVICES:
        while True:
            if (
                await _http_ready(_connect_host(host), child.port, tls)
                and child.process.returncode is None
                and owns_port(child.process.pid, child.port) is not False
            ):
                return
            await asyncio.sleep(0.2)
    target = f"{_connect_host(host)}:{child.port}"
    secure = tls is not None and tls.cert_file.is_file()
    opened = (
        grpc.aio.secure_channel(target, channel_credentials(tls.read()))
        if secure and tls is not None
        else grpc.aio.insecure_channel(target)
    )
    async with opened as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                serving = reply.status == health_pb2.HealthCheckResponse.SERVING
            except grpc.aio.AioRpcError:
                serving = False
            # Something else answering on the port must not pass for this run's service.
            if (
                serving
                and child.process.returncode is None
                and owns_port(child.process.pid, child.port) is not False
            ):
                return
            await asyncio.sleep(0.2)


async def _stop(children: list[Child], deadline_seconds: float, force: asyncio.Event | None = None) -> None:
    """SIGTERM every child, then SIGKILL whatever still runs after `deadline_seconds` (or on `force`)."""
    for child in children:
        if child.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(signal.SIGTERM)
    all_exited = asyncio.gather(*(child.process.wait() for child in children))
    waiters: list[asyncio.Future[Any]] = [all_exited]
    if force is not None:
        waiters.append(asyncio.ensure_future(force.wait()))
    await asyncio.wait(waiters, timeout=deadline_seconds, return_when=asyncio.FIRST_COMPLETED)
    if force is not None:
        waiters[1].cancel()
    for child in children:
        if child.process.returncode is None:
            print(f"cluster: {child.name} did not stop in time; killing it", file=sys.stderr, flush=True)
            with contextlib.suppress(ProcessLookupError):
                child.process.kill()
    await all_exited


def _grace_seconds(environ: Mapping[str, str]) -> float:
    try:
        grace = float(environ.get("POKER_SHUTDOWN_GRACE_SECONDS", DEFAULT_GRACE_SECONDS))
    except ValueError:
        return DEFAULT_GRACE_SECONDS
    return grace if grace > 0 else DEFAULT_GRACE_SECONDS


def _usage(
    endpoints: list[Endpoint],
    tls: TlsFiles | None = None,
    *,
    grpcurl: bool | None = None,
    staff_port: int | None = None,
) -> str:
    """What a person can do with the running cluster: the web page and how to sign in, the terminal
    client, bots, and calls from the shell (grpcurl's lines only where grpcurl is installed)."""
    rows = "\n".join(f"  {e.name:<9} {e.host}:{e.port}" for e in endpoints)
    cashier = next(e for e in endpoints if e.name == "cashier")
    lobby = next(e for e in endpoints if e.name == "lobby")
    if grpcurl is None:
        grpcurl = shutil.which("grpcurl") is not None
    # With POKER_TLS_* set, the services speak mutual TLS only: a client needs the run's certificate.
    transport = (
        f"-cacert {tls.ca_file} -cert {tls.cert_file} -key {tls.key_file}"
        if tls is not None
        else "-plaintext"
    )
    # Under TLS the gateway serves HTTPS only (with the run's certificate), so the page is https://.
    scheme, trust = (
        ("https", f"\n  (its certificate is from the CA in {tls.ca_file})") if tls else ("http", "")
    )
    page = "".join(
        f"\nPlay in a browser: {scheme}://{e.host}:{e.port}/ (sign in with any name; development only){trust}\n"
        for e in endpoints
        if e.name == "gateway"
    )
    gateway = next((e for e in endpoints if e.name == "gateway"), None)
    if staff_port is not None and gateway is not None:
        page += (
            f"Back office (staff): {scheme}://{gateway.host}:{staff_port}/ (sign in as olga: operations and"
            " support, rita: risk, fedor or fiona: finance, adam: admin; development only)\n"
        )
    calls = (
        f"""  TOKEN=$(.venv/bin/mint-token --subject alice --roles player)
  grpcurl {transport} -H "authorization: Bearer $TOKEN" {cashier.host}:{cashier.port} list
  grpcurl {transport} {lobby.host}:{lobby.port} grpc.health.v1.Health/Check"""
        if grpcurl
        else '  .venv/bin/mint-token makes a token; README.md "Talk to a service" calls one from Python'
        + (
            f"\n  (mutual TLS: CA {tls.ca_file}, certificate {tls.cert_file}, key {tls.key_file})"
            if tls
            else ""
        )
    )
    return f"""
All services are SERVING:
{rows}
{page}
Play in the terminal:  .venv/bin/poker-play --name alice
Bots at a table:       make run BOTS=3 (or .venv/bin/poker-bots --help against this cluster)
Call a service (health and reflection need no token; everything else needs one):
{calls}
Press Ctrl-C to stop every service.
"""


def _exit_report(child: Child, when: str) -> str:
    last = child.last_lines[-1].strip() if child.last_lines else "(no output)"
    if len(last) > 300:
        last = last[:300] + " ..."
    return f"cluster: {child.name} exited {when} with code {child.process.returncode}: {last}"


def bots_command(endpoints: list[Endpoint], bots: int, room: str) -> list[str]:
    """The poker-bots command line for `bots` players at one table of `room` of this run."""
    by_name = {e.name: e for e in endpoints}
    lobby, cashier = by_name["lobby"], by_name["cashier"]
    return [
        sys.executable,
        "-m",
        "poker_bots.cli",
        "--lobby",
        f"{_connect_host(lobby.host)}:{lobby.port}",
        "--cashier",
        f"{_connect_host(cashier.host)}:{cashier.port}",
        "--rooms",
        room,
        "--bots",
        str(bots),
        "--tables",
        "1",
        # No turn left to the clock on purpose: a person watching saw the table sit ~35 s on a bot
        # with nothing saying why (issue 39). `poker-bots --timeout-rate` still tests the clock.
        "--timeout-rate",
        "0",
        "--prefix",
        "bot",
    ]


async def run_cluster(
    data_dir: str,
    host: str,
    ready_timeout: float,
    base_port: int = BASE_PORT,
    environ: Mapping[str, str] | None = None,
    bots: int = 0,
    bots_room: str = DEFAULT_BOTS_ROOM,
    verbose: bool = False,
    summary_seconds: float = SUMMARY_SECONDS,
) -> int:
    env = dict(os.environ if environ is None else environ)
    verbose = verbose or env.get("POKER_CLUSTER_VERBOSE", "").lower() in ("1", "true", "yes")
    shown = QuietOutput(verbose=verbose)
    try:
        endpoints = plan_endpoints(env, host, base_port)
        check_ports_free(endpoints)
    except ClusterError as error:
        print(error, file=sys.stderr, flush=True)
        return 1
    env.setdefault("POKER_DATA_DIR", data_dir)
    # The quiet summary counts successful calls (hands settled, seats taken) from their log lines,
    # which services write only with POKER_LOG_CALLS (production counts them in metrics instead).
    env.setdefault("POKER_LOG_CALLS", "1")
    # No load balancer routes to these processes: Ctrl-C need not wait for one to notice NOT_SERVING.
    env.setdefault("POKER_SHUTDOWN_DRAIN_SECONDS", "0")
    if verbose and sys.stdout.isatty():
        env.setdefault("POKER_LOG_FORMAT", "console")
    elif not verbose:
        # Quiet: the launcher reads the records to choose and count, so they come as JSON.
        env["POKER_LOG_FORMAT"] = "json"
    grace = _grace_seconds(env) + 1.0 + SHUTDOWN_MARGIN_SECONDS
    stop, force = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        # The first Ctrl-C stops gracefully; a second one kills what is left at once.
        (force if stop.is_set() else stop).set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    children: list[Child] = []
    pumps: list[asyncio.Task[None]] = []
    summaries: list[asyncio.Task[None]] = []
    bot_children: list[Child] = []
    exit_code = 0

    async def after_ready() -> None:
        cashier = next(e for e in endpoints if e.name == "cashier")
        try:
            lines = await fund_development_house_bank(f"{_connect_host(cashier.host)}:{cashier.port}", env)
        except Exception as error:  # the cluster runs on without it; say why
            lines = [f"cluster: the development house bank was not funded: {error!r}"]
        for line in lines:
            print(line, flush=True)
        await start_bots()

    async def start_bots() -> None:
        if bots <= 0:
            return
        process = await asyncio.create_subprocess_exec(
            *bots_command(endpoints, bots, bots_room),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        child = Child("bots", 0, process)
        bot_children.append(child)
        pumps.append(asyncio.create_task(_pump(child)))
        print(f"cluster: {bots} bots play at {bots_room}.1 (they print a summary when stopped)", flush=True)

    staff = staff_door(endpoints, env)
    try:
        for endpoint in endpoints:
            prefix = f"POKER_{endpoint.name.upper()}_"
            child_env = {**env, f"{prefix}PORT": str(endpoint.port), f"{prefix}HOST": endpoint.host}
            # Without Redis the lobby routes every room to the one table shard: this one.
            child_env.update(peer_addresses(endpoint.name, endpoints, env))
            child_env.update(permitted_automation(endpoint.name, bots, env))
            if endpoint.name == "gateway":
                child_env.update(staff)
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                f"services.{endpoint.name}",
                env=child_env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                # Own session: Ctrl-C reaches only this launcher, which then stops each service in turn.
                start_new_session=True,
            )
            child = Child(endpoint.name, endpoint.port, process)
            children.append(child)
            pumps.append(asyncio.create_task(_pump(child, shown=shown)))
        summaries.append(asyncio.create_task(_summaries(shown, summary_seconds)))
        staff_port = int(staff.get("POKER_GATEWAY_STAFF_PORT") or env.get("POKER_GATEWAY_STAFF_PORT") or -1)
        exit_code = await _supervise(
            children,
            endpoints,
            ready_timeout,
            stop,
            pumps,
            after_ready,
            tls=tls_of(env),
            staff_port=staff_port if staff_port > 0 else None,
        )
    finally:
        for task in summaries:
            task.cancel()
        # The bots leave their seats (cashing out) while the services are still there to answer.
        await _stop(bot_children, BOTS_STOP_SECONDS, force)
        await _stop(children, grace, force)
        # A pump ends when its child's output closes; one that does not (a grandchild holding the pipe)
        # must not hold the command up.
        _, unfinished = await asyncio.wait(pumps, timeout=2) if pumps else (set(), set())
        for pump in unfinished:
            pump.cancel()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
            # Every child is gone: a late Ctrl-C must not end the command with a KeyboardInterrupt.
            signal.signal(sig, signal.SIG_IGN)
    print("cluster: every service stopped", flush=True)
    return exit_code


async def _supervise(
    children: list[Child],
    endpoints: list[Endpoint],
    ready_timeout: float,
    stop: asyncio.Event,
    pumps: list[asyncio.Task[None]],
    after_ready: Callable[[], Awaitable[None]] | None = None,
    tls: TlsFiles | None = None,
    staff_port: int | None = None,
) -> int:
    """Wait for every service to be ready, then for Ctrl-C or a death; return the exit code."""
    # A child's exit counts once its output is read to the end, so its last line names the error.
    exits: dict[asyncio.Future[Any], Child] = {
        asyncio.ensure_future(_exited(child, pump)): child
        for child, pump in zip(children, pumps, strict=True)
    }
    stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    helpers: list[asyncio.Future[Any]] = []
    ready: asyncio.Future[Any] = asyncio.ensure_future(
        asyncio.gather(*(_wait_ready(c, e.host, tls) for c, e in zip(children, endpoints, strict=True)))
    )
    try:
        done, _ = await asyncio.wait(
            [ready, stopper, *exits], timeout=ready_timeout, return_when=asyncio.FIRST_COMPLETED
        )
        dead = [exits[task] for task in exits if task in done]
        if dead:
            print(
                f"{_exit_report(dead[0], 'during start-up')}; stopping the others",
                file=sys.stderr,
                flush=True,
            )
            return 1
        if stopper in done:
            return 0
        if ready not in done:
            waiting = [c.name for c in children if c.process.returncode is None]
            print(
                f"cluster: not SERVING after {ready_timeout:.0f}s: {', '.join(waiting)}",
                file=sys.stderr,
                flush=True,
            )
            return 1
        print(_usage(endpoints, tls, staff_port=staff_port), flush=True)
        # What follows readiness (the house bank's funding, the bots) runs beside the wait, so a
        # Ctrl-C or a dead service is acted on at once even while it waits on a service.
        if after_ready is not None:
            helpers.append(asyncio.ensure_future(after_ready()))
        done, _ = await asyncio.wait([stopper, *exits], return_when=asyncio.FIRST_COMPLETED)
        dead = [exits[task] for task in exits if task in done]
        if dead:
            print(
                f"{_exit_report(dead[0], 'unexpectedly')}; stopping the others", file=sys.stderr, flush=True
            )
            return 1
        return 0
    finally:
        for task in [ready, stopper, *exits, *helpers]:
            task.cancel()
        await asyncio.gather(ready, stopper, *exits, *helpers, return_exceptions=True)


async def _exited(child: Child, pump: asyncio.Task[None]) -> None:
    await child.process.wait()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(pump), timeout=2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="poker-cluster", description=__doc__)
    parser.add_argument("--data-dir", default="data", help="folder for the embedded SQLite files")
    parser.add_argument("--host", default="127.0.0.1", help="listen address unless POKER_<SERVICE>_HOST says")
    parser.add_argument("--ready-timeout", type=float, default=60.0)
    parser.add_argument(
        "--base-port",
        type=int,
        default=BASE_PORT,
        help="lobby's port (the others follow) unless POKER_<SERVICE>_PORT says",
    )
    parser.add_argument(
        "--bots", type=int, default=0, help="also start this many bot players (poker-bots) at one table"
    )
    parser.add_argument("--bots-room", default=DEFAULT_BOTS_ROOM, help="the room the bots play in")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="every line every service logs (default: addresses, warnings, errors and a summary a minute)",
    )
    args = parser.parse_args(argv)
    if args.bots < 0:
        parser.error("--bots must be 0 or more")
    raise SystemExit(
        asyncio.run(
            run_cluster(
                args.data_dir,
                args.host,
                args.ready_timeout,
                args.base_port,
                bots=args.bots,
                bots_room=args.bots_room,
                verbose=args.verbose,
            )
        )
    )


if __name__ == "__main__":
    main()
