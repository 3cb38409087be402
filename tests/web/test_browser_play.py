"""The web client in a real headless Chromium (Debian's `chromium`, driven by playwright-core from
web/node_modules): a scripted player signs in, buys development chips, sits at a table with bots,
plays a hand to showdown with several actions (at 390x844: every action bar button at least 44 px
tall and on the first screen, a typed raise kept while a chat line arrives, a pre-action applied when
the turn comes), chats, drops the connection and reloads and keeps the
seat, leaves, checks a hand's fairness in the page, plays a Casino Hold'em and a Russian Poker round
and checks each round's fairness in the page; another browser spectates. Screenshots of each screen, the sign-in first, are kept in the artefacts folder: `POKER_TEST_ARTEFACTS`
names it (CI points it at a folder it keeps), else `.artefacts/browser-<time>` in the repo (git-ignored);
the folder is printed, and named in a failure.

Skipped loudly where Chromium, node or the built client is missing; CI installs Chromium (.ci/run) and
sets POKER_REQUIRE_BROWSER=1, so there it fails instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata
from tests.gateway.gateway_process import running_gateway
from tests.security.service_processes import ServiceProcess, running_services
from tests.web.browser_runs import ROOT, WEB, require_browser, run_page_script

ROOM = "nlhe-gram-classic"


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


@contextmanager
def bots_at(services: Mapping[str, ServiceProcess], *, count: int, seed: int, prefix: str) -> Iterator[None]:
    """`count` random bots playing at one table of ROOM while the block runs (stopped by PID after)."""
    bots = subprocess.Popen(
        [
            sys.executable, "-m", "poker_bots.cli",
            "--lobby", services["lobby"].address, "--cashier", services["cashier"].address,
            "--rooms", ROOM, "--bots", str(count), "--tables", "1", "--timeout-rate", "0",
            "--strategies", "random", "--seed", str(seed), "--prefix", prefix,
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        yield
    finally:
        bots.terminate()
        try:
            bots.wait(timeout=20)
        except subprocess.TimeoutExpired:
            bots.kill()


def artefacts_folder(environ: Mapping[str, str]) -> Path:
    """Where this run's screenshots go: POKER_TEST_ARTEFACTS if set (a folder per run below it), else
    .artefacts/ in the repo, which git ignores and a later run does not overwrite."""
    base = Path(environ.get("POKER_TEST_ARTEFACTS") or ROOT / ".artefacts")
    return base / f"browser-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def test_the_screenshots_go_to_the_folder_the_run_names_or_to_the_repos_ignored_one(tmp_path: Path) -> None:
    named = artefacts_folder({"POKER_TEST_ARTEFACTS": str(tmp_path)})
    assert named.parent == tmp_path
    assert named.name.startswith("browser-")
    default = artefacts_folder({})
    assert default.parent == ROOT / ".artefacts"
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(default / "01-sign-in.png")], cwd=ROOT, check=False, timeout=30
    )
    assert ignored.returncode == 0, "the default artefacts folder is not ignored by git"


def test_a_scripted_player_plays_through_the_page_and_a_spectator_watches(tmp_path: Path) -> None:
    require_browser()
    artefacts = artefacts_folder(os.environ)
    # Short pauses between hands and a short spectator delay keep the run quick; the page's words
    # about the delay are the rules' (about 20 s). The 2 s countdown gives the page a second for its
    # seed's hash and one for the seed (fairness version 3's two steps).
    table_pace = {"POKER_TABLE_COUNTDOWN_SECONDS": "2", "POKER_TABLE_SPECTATOR_DELAY_SECONDS": "5"}
    with (
        running_services(tmp_path, table_pace) as services,
        running_gateway(services, {"POKER_GATEWAY_WEB_ROOT": str(WEB / "dist")}) as gateway,
    ):
        _fund_house_bank(services["cashier"].address)
        with bots_at(services, count=2, seed=7, prefix="webbot"):
            steps = run_page_script(
                gateway, "browser_play.mjs", str(artefacts), ROOM, timeout=420, artefacts=artefacts
            )
            log = "".join(gateway.lines)
    by_step = {step["step"]: step for step in steps}
    assert by_step["played"]["showdown"] is True
    assert by_step["played"]["actions"] >= 2
    # Whose turn with its countdown, at the other players' seats too (issue 27).
    assert by_step["played"]["othersCountdown"] is True
    # Bets and raises read as their total with the chips added beside it; pots are named (issue 25 item 4).
    assert by_step["played"]["badBetLines"] == []
    assert by_step["played"]["badPots"] == []
    assert by_step["played"]["pots"] > 0
    # The player bet or raised once (on the step the page offers), and the log says it as its total.
    assert by_step["played"]["bets"] == 1
    assert re.fullmatch(
        r"You (bet [\d,]+|(raise|go all-in) to [\d,]+( \(\+[\d,]+\))?)", by_step["played"]["ownBet"]
    )
    # The action bar at 390x844 (issue 36): every button at least 44 px tall and on the first screen,
    # a typed raise kept while a chat line arrives, a pre-action applied when the turn came.
    assert by_step["played"]["bar"]["measured"] > 0
    assert by_step["played"]["bar"]["problems"] == []
    assert by_step["played"]["typedRaise"]["survived"] is True, by_step["played"]["typedRaise"]
    assert by_step["pre-action"]["applied"] is True, by_step["pre-action"]
    assert by_step["pre-action"]["smallBoxes"] == []
    assert by_step["spectating"]["faceUpCardsSeen"] == 0
    assert by_step["fairness"]["verdict"].startswith("Fair")
    # House rounds are checked in the page too (fairness version 3), never left "NOT verified".
    house = by_step["house fairness"]["verdicts"]
    assert set(house) == {"casino-holdem-gram", "russian-poker-gram"}
    assert all(verdict.startswith("Fair") for verdict in house.values()), house
    assert "page error" not in by_step, by_step["page error"]
    shots = sorted(artefacts.glob("*.png"))
    assert len(shots) >= 12, shots
    assert shots[0].name == "01-sign-in.png", shots
    # No token ever reaches the gateway's log.
    assert "eyJ" not in log
