"""`make run BOTS=3` and `poker-bots` against a real cluster (`poker-cluster`, all five services as
processes on SQLite): the launcher's bots play at once; more bots route through the lobby to two
tables of a no-limit and a fixed-limit room, buy chips, let the clock act, leave and rejoin, and print
their summary; in production mode the bots take given tokens. Afterwards every pool balances."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.testing import auth_metadata, fund_house_now, token_for
from tests.runtime.test_cluster import _free_base_port, _read_until_banner

# A whole cluster for a minute or more: the whole-cluster tier (`make test-cluster`; CI runs it after `make test`).
pytestmark = pytest.mark.cluster

ADMIN = auth_metadata("operator", *STAFF_ROLES)
FAST_TABLES = {
    "POKER_TABLE_ACTION_SECONDS": "0.5",
    "POKER_TABLE_TIME_BANK_SECONDS": "0.2",
    "POKER_TABLE_COUNTDOWN_SECONDS": "0.1",
    "POKER_TABLE_SHOWDOWN_SECONDS": "0",
    "POKER_LOG_LEVEL": "warning",
}


@pytest.fixture
def cluster_with_bots(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int, list[str]]]:
    base = _free_base_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "service_runtime.cluster", "--data-dir", str(tmp_path), "--base-port", str(base), "--bots", "3"],
        env={**os.environ, "POKER_LOG_FORMAT": "json", **FAST_TABLES},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    reader: threading.Thread | None = None
    try:
        lines = _read_until_banner(process)
        # Keep reading for as long as it runs: a launcher whose output pipe fills blocks, and with it
        # every service whose lines it relays (under load, warnings alone can fill 64 KB).
        reader = threading.Thread(target=_drain, args=(process, lines), daemon=True)
        reader.start()
        yield process, base, lines
    finally:
        if process.poll() is None:
            # Ctrl-C, not SIGKILL: the services run in their own sessions, so killing the launcher
            # would leave them running; the launcher stops them (and the bots) itself.
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if reader is not None:
            reader.join(timeout=10)


def _drain(process: subprocess.Popen[str], lines: list[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)


def _bots(base: int, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "poker_bots.cli", "--lobby", f"127.0.0.1:{base}", "--cashier", f"127.0.0.1:{base + 2}", *args],
        env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def _table_hands(base: int, table_id: str) -> int:
    with grpc.insecure_channel(f"127.0.0.1:{base + 4}") as channel:
        try:
            reply = history_pb2_grpc.HistoryServiceStub(channel).ListTableHands(
                history_pb2.ListTableHandsRequest(table_id=table_id), metadata=ADMIN, timeout=10
            )
        except grpc.RpcError as error:
            # No hand recorded yet: the table is unknown to history.
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
            return 0
    return len(reply.hands)


def test_make_run_bots_play_at_once_and_poker_bots_routes_buys_plays_leaves_and_reports(
    cluster_with_bots: tuple[subprocess.Popen[str], int, list[str]], tmp_path: Path
) -> None:
    process, base, lines = cluster_with_bots
    # The launcher's three bots play at nlhe-gram-classic.1 with nobody else.
    deadline = time.monotonic() + 90
    while _table_hands(base, "nlhe-gram-classic.1") < 3:
        assert time.monotonic() < deadline, "make run's bots played no hands"
        time.sleep(0.5)

    # Eight bots over two tables of a no-limit and a fixed-limit room, both pools.
    done = _bots(
        base, "--rooms", "nlhe-mpx-classic,flhe-gram-6max-10-20", "--bots", "8", "--tables", "2",
        "--hands", "30", "--timeout-rate", "0.1", "--leave-rate", "0.15", "--seed", "7", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["hands"] >= 30
    assert summary["unexpected_errors"] == {}
    assert summary["purchases"] >= 8
    assert summary["leaves"] > 0
    assert summary["rejoins"] > 0
    assert summary["timeouts_let_run"] > 0
    assert summary["latency_ms"]["act"]["count"] == summary["actions"] > 0
    assert 0 < summary["latency_ms"]["act"]["p50"] <= summary["latency_ms"]["act"]["p99"]

    # House bots: two play rounds of both games at the seeded house rooms once an admin funded the bank.
    fund_house_now(
        f"127.0.0.1:{base + 2}", request_id=uuid.uuid4().hex, pool=common_pb2.CHIP_POOL_GRAM, amount=1_000_000,
        reason="bots test",
    )  # fmt: skip
    house = _bots(
        base, "--bots", "0", "--house-bots", "2", "--house-rooms", "casino-holdem-gram,russian-poker-gram",
        "--house-rounds", "12", "--json",
    )  # fmt: skip
    assert house.returncode == 0, house.stdout + house.stderr
    house_summary = json.loads(house.stdout.strip().splitlines()[-1])
    assert house_summary["house_rounds"] == 12
    assert house_summary["unexpected_errors"] == {}
    assert house_summary["latency_ms"]["house-round"]["count"] == 12
    assert house_summary["house_staked"] >= 12 * 10

    # Production: nothing is minted; without tokens the run is refused, with them it plays.
    production = {"POKER_ENVIRONMENT": "production", "POKER_AUTH_KEYS": "prod:" + "x" * 32}
    refused = _bots(base, "--rooms", "nlhe-gram-duel", "--bots", "2", "--hands", "1", env=production)
    assert refused.returncode != 0
    assert "--tokens" in refused.stderr
    tokens = tmp_path / "tokens"
    tokens.write_text("".join(f"{p} {token_for(p, Role.PLAYER)}\n" for p in ("prod-ann", "prod-bob")))
    payments = tmp_path / "payments"
    payments.write_text(token_for("payments", Role.SERVICE))
    given = _bots(
        base, "--rooms", "nlhe-gram-duel", "--bots", "2", "--hands", "3", "--tokens", str(tokens),
        "--payments-token-file", str(payments), "--json", env=production,
    )  # fmt: skip
    assert given.returncode == 0, given.stdout + given.stderr
    assert json.loads(given.stdout.strip().splitlines()[-1])["hands"] >= 3
    with grpc.insecure_channel(f"127.0.0.1:{base + 2}") as channel:
        cashier = cashier_pb2_grpc.CashierServiceStub(channel)
        balances = cashier.GetBalances(cashier_pb2.GetBalancesRequest(player_id="prod-ann"), metadata=ADMIN)
        assert sum(w.balance for w in balances.wallets) > 0
        assert cashier.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN).balanced

    # Ctrl-C: the launcher's bots leave and print their summary, then every service stops.
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    deadline = time.monotonic() + 10
    while not any("every service stopped" in line for line in lines) and time.monotonic() < deadline:
        time.sleep(0.05)  # the reader thread has the launcher's last lines
    output = "".join(lines)
    assert process.returncode == 0, output[-3000:]
    bot_lines = [line for line in output.splitlines() if line.lstrip().startswith("bots |")]
    assert any(" hands " in line or "| hands" in line for line in bot_lines), output[-3000:]
    assert not any("unexpected" in line for line in bot_lines), "\n".join(bot_lines)
