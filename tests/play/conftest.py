"""The client's tests run against the real services as processes, as `make run` starts them: cashier
(PostgreSQL), fairness, history, lobby (seeded rooms) and one table shard with quick clocks. The
lobby routes players to the shard through a TCP proxy the test can take down, so a dropped link is
real; bots and the test's own checks talk to the shard directly.

The screens' words are checked in English unless a test chooses Russian (tests/play/test_texts.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from clients.play import texts
from service_runtime.testing import throwaway_postgres_database
from tests.ports import free_port
from tests.table.conftest import ServiceProcess, TcpProxy


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    """Each test reads the screens in English, and leaves the language as it found it."""
    with texts.using("en"):
        yield


@dataclass
class Cluster:
    cashier: ServiceProcess
    fairness: ServiceProcess
    history: ServiceProcess
    lobby: ServiceProcess
    table: ServiceProcess
    # The lobby hands this address to players; the test listens on it with a TcpProxy to the table.
    proxy_port: int

    def proxy(self) -> TcpProxy:
        return ListeningProxy(self.table.port, self.proxy_port)


class ListeningProxy(TcpProxy):
    """A TcpProxy on a port chosen before the lobby started (the lobby must know it at start)."""

    def __init__(self, target_port: int, port: int) -> None:
        super().__init__(target_port)
        self.port = port

    async def start(self) -> None:
        import asyncio

        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)


def _free_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def cluster(postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder: Path = tmp_path_factory.mktemp("play-cluster")
    base = {**os.environ, "POKER_LOG_FORMAT": "json", "POKER_DATA_DIR": str(folder)}
    proxy_port = _free_port()
    with throwaway_postgres_database(postgres_server_url, prefix="play_cashier") as cashier_db:
        cashier = ServiceProcess("cashier", {**base, "POKER_CASHIER_DATABASE_URL": cashier_db})
        fairness = ServiceProcess("fairness", base)
        started: list[ServiceProcess] = []
        try:
            for process in (cashier, fairness):
                process.start()
                started.append(process)
            history = ServiceProcess("history", {**base, "POKER_HISTORY_CASHIER_ADDRESS": cashier.address})
            history.start()
            started.append(history)
            lobby = ServiceProcess(
                "lobby", {**base, "POKER_LOBBY_TABLE_SHARD_ADDRESS": f"127.0.0.1:{proxy_port}"}
            )
            lobby.start()
            started.append(lobby)
            table = ServiceProcess(
                "table",
                {
                    **base,
                    "POKER_TABLE_LOBBY_ADDRESS": lobby.address,
                    "POKER_TABLE_CASHIER_ADDRESS": cashier.address,
                    "POKER_TABLE_FAIRNESS_ADDRESS": fairness.address,
                    "POKER_TABLE_HISTORY_ADDRESS": history.address,
                    "POKER_TABLE_ADVERTISE_ADDRESS": f"127.0.0.1:{proxy_port}",
                    # Long enough for the client to send its seed's hash for the next hand in the
                    # countdown's first half and the seed in its second (fairness version 3), on a
                    # loaded machine too: with 2 s and 1 s the client under test (its screens drawn in
                    # the test's own process) missed the 1 s seed window in 2 of ~10 loaded runs, and
                    # its seed went into the next hand instead, as it should, but not the test's.
                    "POKER_TABLE_COUNTDOWN_SECONDS": "4.0",
                    "POKER_TABLE_SHOWDOWN_SECONDS": "0",
                    "POKER_TABLE_SEED_REVEAL_SECONDS": "2.0",
                    "POKER_TABLE_ACTION_SECONDS": "20",
                    "POKER_TABLE_TIME_BANK_SECONDS": "5",
                    "POKER_TABLE_RETRY_INITIAL_SECONDS": "0.05",
                    "POKER_TABLE_RETRY_MAX_SECONDS": "0.5",
                },
            )
            table.start()
            started.append(table)
            yield Cluster(cashier, fairness, history, lobby, table, proxy_port)
        finally:
            for process in reversed(started):
                process.stop()
            for process in started:
                for line in process.errors:
                    print(f"{process.name}: {line}", file=sys.stderr)
