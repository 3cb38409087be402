"""The page in Russian in a real headless Chromium (issue 36): a browser whose language is ru-RU gets
the Russian page (web/e2e/browser_language.mjs): the sign-in, the lobby with the seeded rooms' Russian
names, a refusal as a Russian sentence that stays until closed, buying chips ("Зачислено 5 000 фишек"),
a cash table with bots (buttons, streets, the hand log with the blinds and the pot won), the RU/EN
switch (English at once and over a reload, then Russian again, the seat kept), a Russian Poker round
and my hands with a fairness verdict; on every screen no English word, catalogue key or unfilled
parameter is visible. (tests/web/test_browser_play.py plays the same page in English.) Screenshots
go to the artefacts folder; skipped loudly where Chromium or the built client is missing, as the other
browser tests (CI sets POKER_REQUIRE_BROWSER=1)."""

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


def test_a_russian_player_reads_every_screen_in_russian_and_can_switch_to_english(tmp_path: Path) -> None:
    require_browser()
    artefacts = artefacts_folder(os.environ)
    with (
        running_services(tmp_path, {"POKER_TABLE_COUNTDOWN_SECONDS": "2"}) as services,
        running_gateway(services, {"POKER_GATEWAY_WEB_ROOT": str(WEB / "dist")}) as gateway,
    ):
        _fund_house_bank(services["cashier"].address)
        with bots_at(services, count=2, seed=5, prefix="langbot"):
            lines = run_page_script(
                gateway, "browser_language.mjs", str(artefacts), ROOM, timeout=360, artefacts=artefacts
            )
    steps = {step["step"]: step for step in lines}
    done = steps["done"]
    assert done["foreign"] == [], done
    assert done["braces"] is False, done
    assert done["pageErrors"] == []
    assert steps["bought"]["credited"] == "Зачислено 5\u202f000 фишек"
    assert steps["switch"]["afterReload"] == {"lang": "en", "leave": "Leave"}
    assert steps["my hands"]["verdict"].startswith("Честно")
    assert len(sorted(artefacts.glob("*.png"))) >= 7
