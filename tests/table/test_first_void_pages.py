"""The first voided hand of a shard pages (issue 40): a real table voids a hand (the cashier refuses
its settlement for good), the shard's figures are scraped before and after it, and promtool evaluates
the cluster's alert rules on those scrapes: `PokerHandsVoided` fires with the reason, and not before.

Before issue 40 the void reasons had no series until the first void, so the first one was a series
born at 1, which increase() reads as no increase: the alert stayed quiet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy.scraped_series import ScrapedSeries, run_promtool, scrape_this_process
from tests.table.inprocess_table import running_view
from tests.table.test_table_telemetry import RefusingCashier, fold, table_with

pytestmark = pytest.mark.skipif(
    __import__("shutil").which("promtool") is None, reason="promtool is not installed"
)


async def test_the_first_voided_hand_of_a_shard_pages(tmp_path: Path) -> None:
    cashier = RefusingCashier()
    actor = table_with(cashier)
    series = ScrapedSeries()
    actor.start()
    try:
        view = await running_view(actor)
        series.record({"table-0": scrape_this_process()})
        before = series.value("poker_hands_voided_total", reason="settlement_refused")[-1]
        assert before is not None, "the void reason has no series before the first void"
        # Prometheus has scraped the shard for ten minutes already (in this test process, another
        # test's void may have moved the counter before: only this one's increase matters).
        series.repeat_last(40)
        cashier.refuse = view.hand_id
        await fold(actor, view)
        await running_view(actor, frozenset({view.hand_id}))
        assert cashier.refused == [view.hand_id]
        series.record({"table-0": scrape_this_process()})
    finally:
        await actor.stop()
    after = series.value("poker_hands_voided_total", reason="settlement_refused")[-1]
    assert after == before + 1
    series.repeat_last(4)
    failures = run_promtool(
        tmp_path,
        series,
        [
            {"eval_time": "10m", "alertname": "PokerHandsVoided", "exp_alerts": []},
            {
                "eval_time": "10m30s",
                "alertname": "PokerHandsVoided",
                "exp_alerts": [
                    {
                        "exp_labels": {"severity": "page", "reason": "settlement_refused"},
                        "exp_annotations": {
                            "summary": "Hands voided in 10 minutes: 1 (settlement_refused)",
                            "runbook": "docs/deploy.md#pokerhandsvoided",
                        },
                    }
                ],
            },
        ],
    )
    assert not failures, failures
