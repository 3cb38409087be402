"""The whole cluster as real processes on loopback: lobby, two table shards, cashier, fairness and
history on their own PostgreSQL databases, the shards and the lobby sharing one Redis (registry,
table directory, fenced hand logs). Used by tests/e2e and by tests/bench/bench_cluster.py."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from service_runtime.testing import throwaway_postgres_database
from tests.ports import free_port
from tests.table.conftest import ServiceProcess

# Fast clocks: a bot that lets the clock act costs well under a second.
# How long an end-to-end run's bots keep trying to leave (routes and leaves that fail UNAVAILABLE,
# backing off) before the run checks every seat session closed: the cluster e2e run once saw its
# lobby name no live shard for a room for more than the bots' default 30 s at a load average of 20.
BOT_LEAVE_SECONDS = 90.0
TABLE_CLOCKS = {
    "POKER_TABLE_ACTION_SECONDS": "0.5",
    "POKER_TABLE_TIME_BANK_SECONDS": "0.2",
    "POKER_TABLE_COUNTDOWN_SECONDS": "0",
    "POKER_TABLE_SHOWDOWN_SECONDS": "0",
    "POKER_TABLE_LEASE_SECONDS": "1",
    "POKER_TABLE_RETRY_INITIAL_SECONDS": "0.05",
    "POKER_TABLE_RETRY_MAX_SECONDS": "0.5",
    "POKER_TABLE_WATCH_QUEUE_SIZE": "256",
}
DATABASES = ("cashier", "fairness", "history", "lobby")


@dataclass(frozen=True)
class Placement:
    """Where a shard runs other than beside the rest: under `prefix` (`ip netns exec <namespace>`),
    listening on `host` (its address there), which it advertises to the lobby."""

    prefix: tuple[str, ...]
    host: str


@dataclass
class Cluster:
    services: dict[str, ServiceProcess] = field(default_factory=dict)

    def address(self, name: str) -> str:
        return self.services[name].address

    @property
    def shards(self) -> dict[str, ServiceProcess]:
        return {name: p for name, p in self.services.items() if name.startswith("table-")}

    def pids(self) -> dict[str, int]:
        return {
            n: p.process.pid
            for n, p in self.services.items()
            if p.process is not None and p.process.poll() is None
        }

    def errors(self) -> dict[str, list[str]]:
        return {name: list(p.errors) for name, p in self.services.items() if p.errors}


@contextlib.contextmanager
def running_cluster(
    postgres_url: str,
    redis_url: str,
    redis_prefix: str,
    folder: Path,
    shards: int = 2,
    table_env: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
    host: str = "127.0.0.1",
    placements: Mapping[str, Placement] | None = None,
) -> Iterator[Cluster]:
    """Start the cluster; without `postgres_url` every database is SQLite in `folder`, and without
    `redis_url` there is one shard that the lobby is pointed at (the `make run` shape). `extra_env`
    goes to every service (TLS files, metrics ports, a trace collector). Every service listens on
    `host` (and is reached there), but a shard named in `placements` (by shard id) runs there."""
    if not redis_url:
        shards = 1
    ports = [free_port() for _ in range(shards)]
    base = {
        **os.environ,
        "POKER_LOG_FORMAT": "json",
        "POKER_DATA_DIR": str(folder),
        "POKER_REDIS_URL": redis_url,
        "POKER_LOBBY_REDIS_PREFIX": redis_prefix,
        "POKER_TABLE_REGISTRY_PREFIX": redis_prefix,
        "POKER_LOBBY_TABLE_SHARD_ADDRESS": f"{host}:{ports[0]}",
        "POKER_LOBBY_TABLE_SHARD_ID": "table-a",
        **(extra_env or {}),
    }
    cluster = Cluster()
    with contextlib.ExitStack() as stack:
        urls = {
            name: stack.enter_context(throwaway_postgres_database(postgres_url, prefix=f"e2e_{name}"))
            if postgres_url
            else ""
            for name in DATABASES
        }
        try:
            for name in ("cashier", "fairness", "lobby"):
                service = ServiceProcess(
                    name,
                    {**base, f"POKER_{name.upper()}_DATABASE_URL": urls[name]},
                    log_file=folder / f"{name}.log",
                    host=host,
                )
                service.start()
                cluster.services[name] = service
            history = ServiceProcess(
                "history",
                {
                    **base,
                    "POKER_HISTORY_DATABASE_URL": urls["history"],
                    "POKER_HISTORY_CASHIER_ADDRESS": cluster.address("cashier"),
                    # The run's bots are the operator's own automation (rules 17: permitted).
                    "POKER_HISTORY_PERMITTED_AUTOMATION": "e2e-,bot-",
                },
                log_file=folder / "history.log",
                host=host,
            )
            history.start()
            cluster.services["history"] = history
            for n, port in enumerate(ports):
                shard_id = f"table-{chr(ord('a') + n)}"
                place = (placements or {}).get(shard_id, Placement((), host))
                shard = ServiceProcess(
                    "table",
                    {
                        **base,
                        **TABLE_CLOCKS,
                        **(table_env or {}),
                        "POKER_TABLE_SHARD_ID": shard_id,
                        "POKER_TABLE_ADVERTISE_ADDRESS": f"{place.host}:{port}",
                        "POKER_TABLE_LOBBY_ADDRESS": cluster.address("lobby"),
                        "POKER_TABLE_CASHIER_ADDRESS": cluster.address("cashier"),
                        "POKER_TABLE_FAIRNESS_ADDRESS": cluster.address("fairness"),
                        "POKER_TABLE_HISTORY_ADDRESS": cluster.address("history"),
                    },
                    log_file=folder / f"{shard_id}.log",
                    host=place.host,
                    prefix=place.prefix,
                )
                shard.start(port)
                cluster.services[shard_id] = shard
            yield cluster
        finally:
            for service in reversed(list(cluster.services.values())):
                service.stop()
            for name, lines in cluster.errors().items():
                for line in lines[:20]:
                    print(f"{name}: {line}", file=sys.stderr)
