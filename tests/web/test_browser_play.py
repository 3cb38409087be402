"""The web client in a real headless Chromium (Debian's `chromium`, driven by playwright-core from
web/node_modules): a scripted player signs in, buys development chips, sits at a table with bots,
plays a hand to showdown with several actions (at 390x844: every action bar button at least 44 px
tall and on the first screen, a typed raise kept while a chat line arrives, a pre-action applied when
the turn comes), chats, drops the connection and reloads and keeps the
seat, leaves, checks a hand's fairness in the page, plays a Casino Hold'em and a Russian Poker round
and checks each round's fairness in the page; another browser spectates. The chat and the hand log
come back after the reload, and a hand is stepped through in the replayer. Budgets: the page's JS and
CSS under 150 KB gzipped, the table's first paint after opening it under 1 s, click-to-update p95 under
150 ms; the table holds a showdown 3 s (as in production) and the page keeps it on screen that long.
Screenshots of each screen, the sign-in first, are kept in the artefacts folder: `POKER_TEST_ARTEFACTS`
names it (CI points it at a folder it keeps), else `.artefacts/browser-<time>` in the repo (git-ignored);
the folder is printed, and named in a failure. The lobby, the table mid-hand, a showdown, my hands and
the replayer, and a Casino Hold'em and a Russian Poker round mid-round (the cards dealt, the decisions
offered) also go to the test's own folder by name; POKER_UPDATE_DOCS_IMAGES=1 copies those under 150 KB
into docs/img (docs/play.md shows them).

Skipped loudly where Chromium, node or the built client is missing; CI installs Chromium (.ci/run) and
sets POKER_REQUIRE_BROWSER=1, so there it fails instead.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from poker.common.v1 import common_pb2
from service_runtime.testing import fund_house_now
from tests.gateway.gateway_process import running_gateway
from tests.security.service_processes import ServiceProcess, running_services
from tests.web.browser_runs import ROOT, WEB, require_browser, run_page_script

# A whole cluster and Chromium: the whole-cluster tier (`make test-cluster`; CI runs it after `make test`).
pytestmark = pytest.mark.cluster

ROOM = "nlhe-gram-classic"
DOCS_IMAGES = ROOT / "docs" / "img"
# The screenshots docs/play.md shows, by name; refreshed from a run with POKER_UPDATE_DOCS_IMAGES=1.
DOCS_SHOTS = ("lobby", "table-mid-hand", "showdown", "history", "replayer", "casino-holdem", "russian-poker")
DOCS_IMAGE_MAX_BYTES = 150 * 1024
# The page's budgets (issue "The Mini App players would choose").
PAGE_WEIGHT_MAX_BYTES = 150 * 1024  # its JS and CSS, gzip-compressed
FIRST_TABLE_PAINT_MAX_MS = 1000
CLICK_TO_UPDATE_P95_MAX_MS = 150
SHOWDOWN_SECONDS = 3
# The page draws a message in its next frame: the first showdown of a run, drawn while the page is
# still busy with its first hands, came 88 ms late on a loaded CI run (2,912 ms of a 3,000 ms hold).
SHOWDOWN_SLACK_MS = 150


def _fund_house_bank(cashier_address: str) -> None:
    """The operator's house bank, so the house games can cover a round (an admin call, as in e2e)."""
    fund_house_now(
        cashier_address,
        request_id="browser-test-house-bank",
        pool=common_pb2.CHIP_POOL_GRAM,
        amount=10_000_000,
        reason="browser test house bank",
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


def test_the_pages_scripts_and_styles_weigh_under_150_kb_gzipped() -> None:
    """What a player downloads before the first screen: index.html names one script and one stylesheet
    (besides Telegram's own script), and the two, gzip-compressed, stay under the budget."""
    dist = WEB / "dist"
    if not (dist / "index.html").exists():
        require_browser()  # skips (or fails under POKER_REQUIRE_BROWSER=1): the client is not built
    page = (dist / "index.html").read_text()
    local = [src for src in re.findall(r'(?:src|href)="(/[^"]+)"', page)]
    assert sorted(local) == ["/app.css", "/app.js"], local
    sizes = {
        name: len(gzip.compress((dist / name.lstrip("/")).read_bytes(), compresslevel=9)) for name in local
    }
    total = sum(sizes.values())
    print(f"\npage weight, gzip: {sizes} = {total} bytes ({total / 1024:.1f} KB)")
    assert total < PAGE_WEIGHT_MAX_BYTES, sizes


def docs_images(shots: Path, names: tuple[str, ...] = DOCS_SHOTS) -> list[str]:
    """The run's screenshots for the docs (`names`) copied into docs/img, each only if it is a PNG
    under 150 KB; the names copied."""
    copied = []
    DOCS_IMAGES.mkdir(exist_ok=True)
    for name in names:
        shot = shots / f"{name}.png"
        if shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size < DOCS_IMAGE_MAX_BYTES:
            shutil.copyfile(shot, DOCS_IMAGES / shot.name)
            copied.append(name)
    return copied


def test_a_scripted_player_plays_through_the_page_and_a_spectator_watches(tmp_path: Path) -> None:
    require_browser()
    artefacts = artefacts_folder(os.environ)
    docs_shots = tmp_path / "docs-shots"
    # Short pauses between hands and a short spectator delay keep the run quick; the page's words
    # about the delay are the rules' (about 20 s). The 2 s countdown gives the page a second for its
    # seed's hash and one for the seed (fairness version 3's two steps). The showdown is held 3 s, as
    # in production, so the run can see it stay on screen.
    table_pace = {
        "POKER_TABLE_COUNTDOWN_SECONDS": "2",
        "POKER_TABLE_SPECTATOR_DELAY_SECONDS": "5",
        "POKER_TABLE_SHOWDOWN_SECONDS": str(SHOWDOWN_SECONDS),
    }
    with (
        running_services(tmp_path, table_pace) as services,
        running_gateway(services, {"POKER_GATEWAY_WEB_ROOT": str(WEB / "dist")}) as gateway,
    ):
        _fund_house_bank(services["cashier"].address)
        with bots_at(services, count=2, seed=7, prefix="webbot"):
            steps = run_page_script(
                gateway,
                "browser_play.mjs",
                str(artefacts),
                ROOM,
                str(docs_shots),
                timeout=420,
                artefacts=artefacts,
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
    # Budgets: the table's first paint after opening it, and the time from each click to the update
    # that answers it (every action, chat line and sticker of the run; p95).
    budgets = by_step["budgets"]
    assert len(budgets["clicks"]) >= 5, budgets
    assert {c["kind"] for c in budgets["clicks"]} == {"action", "chat"}, budgets
    print(f"\nfirst table paint {budgets['firstPaintMs']} ms, click-to-update p95 {budgets['clickP95Ms']} ms")
    # Times are measured in every run and held to their budgets where the machine is the page's own
    # (POKER_BROWSER_BUDGETS=1): `make test` runs on a loaded machine, where a timed check is a flake
    # (p95 243-486 ms beside a 32-table bench at a load average of 9; 22-60 ms idle).
    if os.environ.get("POKER_BROWSER_BUDGETS") == "1":
        assert budgets["firstPaintMs"] < FIRST_TABLE_PAINT_MAX_MS, budgets
        assert budgets["clickP95Ms"] < CLICK_TO_UPDATE_P95_MAX_MS, budgets
    # The showdown stays on screen (the cards shown and the award) at least the table's hold, every
    # time, until the next hand's view takes it away: timed in the page from the frame that draws it
    # to the one that takes it away (the table holds it from its settlement, a little after it sent
    # it; the page's clock may see either message a few ms late in a busy frame: SHOWDOWN_SLACK_MS).
    # Each showdown of a hand the player was dealt into (a hand they sat down during shows its end
    # only once they are seated); a player who lost it all there and bought in again at once sees it
    # gone for that moment, counted in the one showdown.
    showdowns = budgets["showdowns"]
    assert showdowns, budgets
    # The winning hand's five cards are lit up on the felt at every showdown (the award's
    # winning_cards: the board and the winner's shown two).
    assert all(s.get("lit") == 5 for s in showdowns), showdowns
    assert all(s["ms"] >= SHOWDOWN_SECONDS * 1000 - SHOWDOWN_SLACK_MS for s in showdowns), showdowns
    # The chat and the hand log as the page showed them come back after the reload.
    kept = by_step["reconnected after a reload"]["keptOverReload"]
    assert kept["sameChat"] is True, kept
    assert kept["chatAfter"] == min(kept["chatBefore"], 50), kept
    assert kept["logAfter"] >= min(kept["logBefore"], 50), kept
    # The replayer: step 1 of n at the deal with my own cards face up, the steps moved by the buttons
    # and by play (one a second), the last step the award; players named, never by an id.
    replay = by_step["replayer"]
    start, after_next, played, last = replay["start"], replay["next"], replay["played"], replay["last"]
    total = int(re.fullmatch(r"Step 1 of (\d+)", start["counter"]).group(1))  # type: ignore[union-attr]
    assert total >= 4, replay
    assert (start["step"], len(start["myCards"])) == (0, 2), replay
    assert start["lines"][0].startswith("You are dealt "), replay
    assert after_next["step"] == 2, replay
    # Play moved it on (one step a second for the run's 2.3 s: about two, but a loaded machine delivers
    # the pause late: one CI run under two busy loops read step 7 of 9), and it stopped by the last.
    assert after_next["step"] < played["step"] <= total - 1, replay
    assert (last["step"], last["counter"]) == (total - 1, f"Step {total} of {total}"), replay
    assert any("won" in line for line in last["lines"]), replay
    assert "You" in start["seats"], replay
    assert start["ids"] + last["ids"] == [], replay
    shots = sorted(artefacts.glob("*.png"))
    assert len(shots) >= 12, shots
    assert shots[0].name == "01-sign-in.png", shots
    # The docs' screenshots, each a PNG; copied into docs/img (those under 150 KB) only when asked.
    for name in DOCS_SHOTS:
        assert (docs_shots / f"{name}.png").read_bytes()[:4] == b"\x89PNG", name
    if os.environ.get("POKER_UPDATE_DOCS_IMAGES") == "1":
        copied = docs_images(docs_shots)
        print(f"\ndocs images copied: {copied}")
        assert copied == list(DOCS_SHOTS), (
            f"not PNGs under 150 KB, not copied: {set(DOCS_SHOTS) - set(copied)}"
        )
    # No token ever reaches the gateway's log.
    assert "eyJ" not in log
