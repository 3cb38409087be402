"""The lobby and the house games' rules sheet at phone size (issue 36), in headless Chromium at 390x844
with touch (web/e2e/browser_lobby.mjs): three game tabs and a pool filter kept over a reload; the first
screen holds the tab bar and room cards (the page no longer runs to a 2,700-px column of 20 rooms);
each way to buy chips in one or two lines; "Play now" at 5/10 seats the player, without asking a
buy-in, at the fullest table with a free seat (where a bot sits, not the empty duel table); at Russian
Poker the rules and pay tables open in a sheet, the round reads in words, the exchange is two steps
(the button waits for picked cards), and once settled no decision is offered. Screenshots go to the
artefacts folder. Skipped loudly where Chromium or the built client is missing (CI sets
POKER_REQUIRE_BROWSER=1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.gateway.gateway_process import running_gateway
from tests.security.service_processes import running_services
from tests.web.browser_runs import require_browser, run_page_script
from tests.web.test_browser_play import ROOM, WEB, _fund_house_bank, artefacts_folder, bots_at

# A whole cluster and Chromium: the whole-cluster tier (`make test-cluster`; CI runs it after `make test`).
pytestmark = pytest.mark.cluster


def test_the_lobby_has_tabs_play_now_seats_the_player_and_the_house_rules_open_in_a_sheet(
    tmp_path: Path,
) -> None:
    require_browser()
    artefacts = artefacts_folder(os.environ)
    with (
        running_services(tmp_path, {"POKER_TABLE_COUNTDOWN_SECONDS": "2"}) as services,
        running_gateway(services, {"POKER_GATEWAY_WEB_ROOT": str(WEB / "dist")}) as gateway,
    ):
        _fund_house_bank(services["cashier"].address)
        with bots_at(services, count=1, seed=11, prefix="lobbybot"):
            lines = run_page_script(
                gateway, "browser_lobby.mjs", str(artefacts), f"{ROOM}.1", timeout=300, artefacts=artefacts
            )
    steps = {step["step"]: step for step in lines}
    lobby = steps["lobby"]
    assert lobby["tabs"] == ["no_limit", "fixed_limit", "house"]
    assert lobby["cardsOnFirstScreen"] >= 2, lobby
    assert lobby["pageHeight"] < 1400, lobby
    assert steps["play now"]["route"]["tableId"] == f"{ROOM}.1"
    assert len(steps["casino rules sheet"]["ante"]) == 10
    assert steps["rules sheet"]["bonus"] == 6
    assert "done" in steps
