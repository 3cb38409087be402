"""The web client in a real headless Chromium (Debian's `chromium`, driven by playwright-core from
web/node_modules): a scripted player signs in, buys development chips, sits at a table with bots,
plays a hand to showdown with several actions, chats, drops the connection and reloads and keeps the
seat, leaves, checks a hand's fairness in the page, plays a Casino Hold'em and a Russian Poker round;
another browser spectates. Screenshots of each screen are kept in the artefacts folder (printed;
`POKER_TEST_ARTEFACTS` chooses it).

Skipped loudly where Chromium, node or the built client is missing; CI installs Chromium (.ci/run) and
sets POKER_REQUIRE_BROWSER=1, so there it fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata
from tests.gateway.gateway_process import running_gateway
from tests.security.service_processes import running_services

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
CHROMIUM = Path(os.environ.get("POKER_CHROMIUM", "/usr/bin/chromium"))
ROOM = "nlhe-gram-classic"


def _missing() -> str:
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if shutil.which("node") is None:
        return "no node"
    if not (WEB / "dist" / "index.html").exists() or not (WEB / "node_modules" / "playwright-core").exists():
        return "the web client is not built (make web)"
    return ""


def _fund_house_bank(cashier_address: str) -> None:
    """The operator's house bank, so the house games can cover a round (an admin call, as in e2e)."""
    with grpc.insecure_channel(cashier_address) as channel:
        cashier_pb2_grpc.CashierServiceStub(channel).FundHouseAccount(
            cashier_pb2.FundHouseAccountRequest(
                request_id="browser-test-house-bank",
                pool=common_pb2.CHIP_POOL_GRAM,
                account=cashier_pb2.HOUSE_ACCOUNT_BANK,
                amount=10_000_000,
                reason="browser test house bank",
            ),
            metadata=auth_metadata("ops", Role.ADMIN),
            timeout=10,
        )


def test_a_scripted_player_plays_through_the_page_and_a_spectator_watches(tmp_path: Path) -> None:
    missing = _missing()
    if missing:
        if os.environ.get("POKER_REQUIRE_BROWSER") == "1":
            pytest.fail(f"POKER_REQUIRE_BROWSER=1 but {missing}")
        print(f"\n!!! browser test SKIPPED: {missing} !!!")
        pytest.skip(missing)
    artefacts = Path(
        os.environ.get("POKER_TEST_ARTEFACTS") or f"/tmp/poker-test-artefacts/browser-{int(time.time())}"
    )
    # Short pauses between hands and a short spectator delay keep the run quick; the page's words
    # about the delay are the rules' (about 20 s).
    table_pace = {"POKER_TABLE_COUNTDOWN_SECONDS": "1", "POKER_TABLE_SPECTATOR_DELAY_SECONDS": "5"}
    with (
        running_services(tmp_path, table_pace) as services,
        running_gateway(services, {"POKER_GATEWAY_WEB_ROOT": str(WEB / "dist")}) as gateway,
    ):
        _fund_house_bank(services["cashier"].address)
        bots = subprocess.Popen(
            [
                sys.executable, "-m", "poker_bots.cli",
                "--lobby", services["lobby"].address, "--cashier", services["cashier"].address,
                "--rooms", ROOM, "--bots", "2", "--tables", "1", "--timeout-rate", "0",
                "--strategies", "random", "--seed", "7", "--prefix", "webbot",
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            run = subprocess.run(
                ["node", str(WEB / "e2e" / "browser_play.mjs"), f"http://{gateway.address}", str(artefacts), ROOM],
                cwd=WEB, capture_output=True, text=True, timeout=420, check=False,
            )  # fmt: skip
        finally:
            bots.terminate()
            try:
                bots.wait(timeout=20)
            except subprocess.TimeoutExpired:
                bots.kill()
        log = "".join(gateway.lines)
    print(f"\nbrowser artefacts: {artefacts}\n{run.stdout}")
    assert run.returncode == 0, f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}\ngateway:\n{log[-3000:]}"
    steps = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    by_step = {step["step"]: step for step in steps}
    assert by_step["played"]["showdown"] is True
    assert by_step["played"]["actions"] >= 2
    assert by_step["spectating"]["faceUpCardsSeen"] == 0
    assert by_step["fairness"]["verdict"].startswith("Fair")
    assert "page error" not in by_step, by_step["page error"]
    shots = sorted(artefacts.glob("*.png"))
    assert len(shots) >= 10, shots
    # No token ever reaches the gateway's log.
    assert "eyJ" not in log
