"""The limits a player sets on themself (responsible gaming, docs/cashier.md) in a real headless
Chromium, in Russian at phone size (web/e2e/browser_limits.mjs): a player signs in, buys chips, opens
Limits from their profile, sets a daily purchase limit (applies at once: listed with what is left),
raises it (the form says after 24 hours; listed pending with its time), sets a session reminder (the
page's clock moved on: a notice after 15 minutes and again after 30), starts a cooling-off after a
confirmation naming its end, and then a purchase is refused with the Russian text. Then the staff
console (web/e2e/backoffice_limits.mjs): sofia (support) opens the player on the players screen and
reads the block of their self-set limits, with no form and no control (staff cannot change them).
Checked here too through the cashier: the limit and its raise as the page showed them. Skipped loudly
where Chromium or the built client is missing (CI sets POKER_REQUIRE_BROWSER=1)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.testing import auth_metadata
from tests.gateway.gateway_process import running_gateway, staff_address_of
from tests.security.service_processes import running_services
from tests.web.browser_runs import WEB, require_browser, run_page_script
from tests.web.test_browser_backoffice import AUTH_KEYS, Door
from tests.web.test_browser_play import artefacts_folder

# A whole cluster and Chromium: the whole-cluster tier (`make test-cluster`; CI runs it after `make test`).
pytestmark = pytest.mark.cluster

SUPPORT = auth_metadata("support-check", "support")


def self_limits(cashier_address: str, player: str) -> cashier_pb2.GetSelfLimitsResponse:
    with grpc.insecure_channel(cashier_address) as channel:
        reply: cashier_pb2.GetSelfLimitsResponse = cashier_pb2_grpc.CashierServiceStub(channel).GetSelfLimits(
            cashier_pb2.GetSelfLimitsRequest(player_id=player), metadata=SUPPORT, timeout=10
        )
    return reply


def test_a_player_sets_limits_a_reminder_and_a_break_and_support_reads_them(tmp_path: Path) -> None:
    require_browser()
    artefacts = artefacts_folder(os.environ)
    name = f"limits{uuid.uuid4().hex[:6]}"
    keys = {"POKER_AUTH_KEYS": AUTH_KEYS}
    gateway_env = {
        **keys,
        "POKER_GATEWAY_WEB_ROOT": str(WEB / "dist"),
        # The page's clock is moved 30 minutes on for the reminder: the token outlives it.
        "POKER_GATEWAY_TOKEN_TTL_SECONDS": "3600",
        "POKER_GATEWAY_STAFF_PORT": "0",
        "POKER_GATEWAY_STAFF_ALLOW_LIST": "1008=sofia:support",
    }
    with (
        running_services(tmp_path, keys) as services,
        running_gateway(services, gateway_env) as gateway,
    ):
        lines = run_page_script(
            gateway, "browser_limits.mjs", str(artefacts), name, timeout=300, artefacts=artefacts
        )
        steps = {step["step"]: step for step in lines}
        assert "done" in steps, lines
        assert steps["limits"]["rows"] == 12
        assert steps["purchase refused"]["refused"].startswith("У вас перерыв в игре.")

        door = Door(staff_address_of(gateway), gateway.lines)
        staff = run_page_script(
            door, "backoffice_limits.mjs", str(artefacts / "staff"), name, timeout=180, artefacts=artefacts
        )
        by_step = {step["step"]: step for step in staff}
        assert "done" in by_step, staff
        block = by_step["self limits"]
        player = block["player"]
        reply = self_limits(services["cashier"].address, player)
        [limit] = [
            lim
            for lim in reply.limits
            if lim.pool == common_pb2.CHIP_POOL_GRAM
            and lim.kind == cashier_pb2.SELF_LIMIT_KIND_PURCHASE_DAILY
        ]
        assert (limit.amount, limit.remaining, limit.pending_amount) == (20_000, 15_000, 50_000)
        assert limit.HasField("pending_time")
        assert reply.session_reminder_minutes == 15
        assert reply.active_break.kind == cashier_pb2.BREAK_KIND_COOLING_OFF
        assert block["controls"] == 0, block
        assert block["row"][:3] == ["GRAM", "Bought per day", "20,000"], block
