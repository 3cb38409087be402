"""The staff console (the back office, docs/backoffice.md) in a real headless Chromium against the
gateway's staff door, in front of the five services. A fair-play case is made the way the detectors'
tests make one (tests/history/fair_play_players.py: a call-down dumper and its partner playing real
hands, recorded into history as the table records them), then web/e2e/backoffice.mjs: rita (risk)
signs in by the development name, opens the case from the queue and holds the dumper with a reason,
then asks to release the dumper (four-eyes: the page says it awaits finance; rita is offered no
decision); fedor (finance) asks for a house funding, and his own request's approval is disabled with
the words why (forced, the cashier's FOUR_EYES_REQUIRED in words); fiona (finance) approves it with a
reason; adam (admin) finds the staff actions with their reasons in the audit trail and exports it as
JSON lines. Two hands with rake are settled through the cashier first (with the table's service
token), and rita's dashboard shows GRAM's (and MPX's) hands in the last hour and rake since 00:00
UTC exactly as GetPlayFigures answers them. Checked here: the held player's next SitDown is still
refused (PLAYER_ON_HOLD: the release waits) while the partner, under the case's withdrawal hold
only, still sits down; the house bank grew by the amount; the exported lines, parsed. Then the
release run: rhea (risk and finance) finds her own release request offering her no decision; fedor
approves rita's, and the dumper's next SitDown is no longer refused. A run in Russian: every screen's words are Russian, the play figures'
tiles too.

Two more players are seated at ROOM's table (display names of their own) before the flow: rita
watches that table live through the staff door (the spectators' view: the seated names, no face-up
hole card of anyone), and opens one of the case's hands in the players' replayer, every seat's hole
cards face up (those of the record as risk reads it: GetHand). olga (support) writes a note on one of
the seated players and finds it listed; checked here through ListAuditEvents (OPERATOR_NOTE, the dumper), and in
the exported trail the RecordAuditEvent staff action with the note's words as its reason.

Screenshots (1280x800, and 390x844) go to the artefacts folder as the other browser tests' do; the
sign-in, dashboard, fair-play case, money queue and audit screens are copied to
docs/img/backoffice-*.png with POKER_UPDATE_DOCS_IMAGES=1 (PNGs under 150 KB).

The rooms screen (web/e2e/backoffice_rooms.mjs): sofia (support) finds the duel
room's table with two seated players and no "Close after this hand" (the table service refuses her
role too), the tables list and the live view number the seats as the players took them (from 1);
oskar (operations), on a phone, closes the table after its hand with a reason, and then both
players' chips are back in their wallets and the trail has his CloseTable with his words (the screen
copied to docs/img/backoffice-close-table.png with POKER_UPDATE_DOCS_IMAGES=1). oskar also drives
every form of the rooms screen (a private room created, renamed, disabled and enabled, its
maintenance, its allow-list, an invite code), each change checked through the lobby's API while the
page waits.

The console's pure parts (its catalogue against the players' catalogue's rules, the JSON-lines
formatting, the ASCII form of a reason, the screens of each role, refusals in words) are checked
with node only. Skipped loudly without Chromium, node or the built client; CI requires them.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.service_settings import DEV_KEY_ID, DEV_SIGNING_KEY
from service_runtime.testing import auth_metadata, reason_of
from tests.gateway.gateway_process import running_gateway, staff_address_of
from tests.history.fair_play_players import Player, Session, call_down_dumper, tiny_bet_receiver
from tests.node import run_web_script
from tests.security.service_processes import ServiceProcess, running_services
from tests.web.browser_runs import ROOT, WEB, require_browser, run_page_script

# A whole cluster and Chromium: the whole-cluster tier (`make test-cluster`; CI runs it after `make test`).
pytestmark = pytest.mark.cluster

# The rooms screen's own page script (web/e2e/backoffice.mjs is the main flow's; staff_browser.mjs
# their shared harness).
ROOMS_SCRIPT = str(WEB / "e2e" / "backoffice_rooms.mjs")

# The staff door signs with a staff-scoped key; the services know it too (docs/backoffice.md).
STAFF_KEY = "bo1/staff:backoffice-browser-test-staff-key"
AUTH_KEYS = f"{DEV_KEY_ID}:{DEV_SIGNING_KEY},{STAFF_KEY}"
ALLOW_LIST = (
    "1001=olga:operations+support;1002=rita:risk;1003=fedor:finance;1004=fiona:finance;1005=adam:admin;"
    "1006=rhea:risk+finance;1007=oskar:operations;1008=sofia:support"
)
ROOM = "nlhe-gram-classic"
FUNDING = 250_000
CHIP = 10**6  # nanoGRAM per GRAM-pool chip
DOCS_IMAGES = ROOT / "docs" / "img"
DOCS_SHOTS = (
    "sign-in",
    "dashboard",
    "fair-play-case",
    "money-queue",
    "audit",
    "live-table",
    "player-notes",
)
PAYOUT_CHIPS = 7  # one withdrawal for the money screen's payouts list
FIGURES_RAKES = (10, 5)  # the rake of each hand settled through the cashier for the dashboard's figures
SITDOWN_DEADLINE = 30.0  # seconds for an approved release to reach the next SitDown
DOCS_IMAGE_MAX_BYTES = 150 * 1024
CONSOLE_WEIGHT_MAX_BYTES = 150 * 1024
TABLE = auth_metadata("table", "service")
PAYMENTS = auth_metadata("payments", "service")
RISK = auth_metadata("risk-check", "risk")
SUPPORT = auth_metadata("support-check", "support")
FINANCE = auth_metadata("finance-check", "finance")
# The fields of every exported line (the console's "Export JSON lines", web/src/staff/audit_lines.ts).
LINE_FIELDS = [
    "event_id",
    "time",
    "actor",
    "kind",
    "subject",
    "player_ids",
    "table_id",
    "hand_ids",
    "details",
]
ACTION_FIELDS = ["roles", "method", "why", "code", "reason", "room_id", "case_id", "request_id", "mutating"]


@dataclass
class Door:
    """The staff door as run_page_script reads a gateway: its address and the gateway's log."""

    address: str
    lines: list[str] = field(default_factory=list)


@dataclass
class Cluster:
    services: dict[str, ServiceProcess]
    door: Door
    dumper: str
    receiver: str
    artefacts: Path
    live_table: str = ""
    seated_names: tuple[str, ...] = ()
    name: str = ""


def artefacts_folder() -> Path:
    base = Path(os.environ.get("POKER_TEST_ARTEFACTS") or ROOT / ".artefacts")
    return base / f"backoffice-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def make_case(history_address: str, dumper: str, receiver: str) -> str:
    """A call-down dumper and its partner heads-up, hand after hand recorded into history as the table
    records them, until the detectors open the chip-dumping case (about 100 hands); its id."""
    players = [
        Player(dumper, script=call_down_dumper(receiver)),
        Player(receiver, script=tiny_bet_receiver(dumper)),
    ]
    session = Session(players, f"bo-{dumper}-table", seed=1)
    with grpc.insecure_channel(history_address) as channel:
        history = history_pb2_grpc.HistoryServiceStub(channel)
        for number in range(1, 301):
            history.RecordHand(history_pb2.RecordHandRequest(hand=session.play()), metadata=TABLE, timeout=10)
            if number < 90 and number % 10:
                continue
            listed = history.ListCases(
                history_pb2.ListCasesRequest(page=common_pb2.PageRequest(page_size=500)),
                metadata=RISK,
                timeout=10,
            )
            for case in listed.cases:
                if {p.player_id for p in case.players} == {dumper, receiver}:
                    return str(case.case_id)
    raise AssertionError("no fair-play case opened in 300 hands")


def fund(cashier_address: str, player: str) -> None:
    with grpc.insecure_channel(cashier_address) as channel:
        cashier_pb2_grpc.CashierServiceStub(channel).Purchase(
            cashier_pb2.PurchaseRequest(
                payment_reference=f"pay-{player}",
                player_id=player,
                source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                amount_minor=5_000 * CHIP,
            ),
            metadata=PAYMENTS,
            timeout=10,
        )


def withdraw(cashier_address: str, player: str, chips: int, reference: str) -> None:
    with grpc.insecure_channel(cashier_address) as channel:
        cashier_pb2_grpc.CashierServiceStub(channel).Withdraw(
            cashier_pb2.WithdrawRequest(
                payment_reference=reference,
                player_id=player,
                source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                amount_minor=chips * CHIP,
            ),
            metadata=PAYMENTS,
            timeout=10,
        )


def payments_today(cashier_address: str) -> dict[str, tuple[int, int]]:
    """GetPlayFigures since today's 00:00 UTC: each pool's (chips bought, chips paid out)."""
    moment = Timestamp()
    moment.FromDatetime(datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0))
    with grpc.insecure_channel(cashier_address) as channel:
        reply = cashier_pb2_grpc.CashierServiceStub(channel).GetPlayFigures(
            cashier_pb2.GetPlayFiguresRequest(since=moment), metadata=SUPPORT, timeout=10
        )
    return {
        common_pb2.ChipPool.Name(p.pool).removeprefix("CHIP_POOL_"): (
            int(p.chips_purchased),
            int(p.chips_withdrawn),
        )
        for p in reply.pools
    }


def settle_hands(cashier_address: str, players: tuple[str, str], rakes: tuple[int, ...]) -> None:
    """Hands settled through the cashier as a table settles them (its service token): the two funded
    players seated at a table of their own in GRAM, one hand a rake, then cashed out (the way
    tests/cashier/test_cashier_grpc.py's play figures are made)."""
    table_id = f"bo-figures-{uuid.uuid4().hex[:8]}"
    with grpc.insecure_channel(cashier_address) as channel:
        cashier = cashier_pb2_grpc.CashierServiceStub(channel)
        sessions = []
        for seat, player in enumerate(players):
            opened = cashier.OpenSeatSession(
                cashier_pb2.OpenSeatSessionRequest(
                    session_id=f"{table_id}/sit-{player}", player_id=player, table_id=table_id, seat_index=seat,
                    pool=common_pb2.CHIP_POOL_GRAM, buy_in_amount=1000, min_buy_in=1000, max_buy_in=1000,
                ),
                metadata=TABLE,
                timeout=10,
            )  # fmt: skip
            sessions.append(opened.seat_session.session_id)
        for number, rake in enumerate(rakes, 1):
            cashier.SettleHand(
                cashier_pb2.SettleHandRequest(
                    hand_id=f"{table_id}:{number}", table_id=table_id, pool=common_pb2.CHIP_POOL_GRAM, rake=rake,
                    seat_results=[cashier_pb2.SeatResult(session_id=sessions[0], net_amount=-20 - rake),
                                  cashier_pb2.SeatResult(session_id=sessions[1], net_amount=20)],
                ),
                metadata=TABLE,
                timeout=10,
            )  # fmt: skip
        for session in sessions:
            cashier.CashOutSeatSession(
                cashier_pb2.CashOutSeatSessionRequest(session_id=session), metadata=TABLE, timeout=10
            )


def play_figures(cashier_address: str) -> dict[str, dict[str, int]]:
    """GetPlayFigures as the dashboard asks it, by a staff member of support: GRAM's and MPX's hands
    settled in the last hour and rake taken since today's 00:00 UTC."""
    now = datetime.now(UTC)
    windows = {
        "hands": now - timedelta(hours=1),
        "rake": now.replace(hour=0, minute=0, second=0, microsecond=0),
    }
    figures: dict[str, dict[str, int]] = {}
    with grpc.insecure_channel(cashier_address) as channel:
        cashier = cashier_pb2_grpc.CashierServiceStub(channel)
        for kind, since in windows.items():
            moment = Timestamp()
            moment.FromDatetime(since)
            reply = cashier.GetPlayFigures(
                cashier_pb2.GetPlayFiguresRequest(since=moment), metadata=SUPPORT, timeout=10
            )
            for p in reply.pools:
                pool = common_pb2.ChipPool.Name(p.pool).removeprefix("CHIP_POOL_")
                figures.setdefault(pool, {})[kind] = int(p.hands_settled if kind == "hands" else p.rake)
    return figures


def house_bank(cashier_address: str) -> int:
    with grpc.insecure_channel(cashier_address) as channel:
        reply = cashier_pb2_grpc.CashierServiceStub(channel).GetHouseBalances(
            cashier_pb2.GetHouseBalancesRequest(pool=common_pb2.CHIP_POOL_GRAM), metadata=FINANCE, timeout=10
        )
    return int(reply.bank_balance)


def releases(history_address: str, state: int) -> list[history_pb2.ReleaseRequest]:
    """The release requests in `state`, as finance reads them (one page)."""
    with grpc.insecure_channel(history_address) as channel:
        reply = history_pb2_grpc.HistoryServiceStub(channel).ListReleaseRequests(
            history_pb2.ListReleaseRequestsRequest(state=state, page=common_pb2.PageRequest(page_size=500)),
            metadata=FINANCE,
            timeout=10,
        )
    return list(reply.releases)


def hold_as_risk(history_address: str, player: str) -> None:
    """An operator's hold of the player, by another member of risk than the console's."""
    with grpc.insecure_channel(history_address) as channel:
        history_pb2_grpc.HistoryServiceStub(channel).HoldPlayer(
            history_pb2.HoldPlayerRequest(
                request_id=f"desk-hold-{uuid.uuid4().hex[:8]}", player_id=player, reason="review by the desk"
            ),
            metadata=auth_metadata("risk-desk", "risk"),
            timeout=10,
        )


def decide_as_risk(history_address: str, request_id: str) -> tuple[grpc.StatusCode, str]:
    """DecideRelease by a staff member of risk only (the asker's role): the refusal."""
    with grpc.insecure_channel(history_address) as channel:
        try:
            history_pb2_grpc.HistoryServiceStub(channel).DecideRelease(
                history_pb2.DecideReleaseRequest(
                    decision_id=f"d-{uuid.uuid4().hex[:10]}",
                    request_id=request_id,
                    approve=True,
                    reason="mine",
                ),
                metadata=RISK,
                timeout=10,
            )
        except grpc.RpcError as error:
            call = error if isinstance(error, grpc.Call) else None
            if call is None:
                raise
            return call.code(), reason_of(call)
    return grpc.StatusCode.OK, ""


# Two players seated at ROOM's table for the staff to watch live (Cyrillic names: the Russian run's
# log lines name them), at seats the flow's SitDowns leave alone.
WATCHED = (("Вера Лейн", 2), ("Зоя Парк", 3))


def seat_watched_players(services: dict[str, ServiceProcess], name: str) -> str:
    """Two funded players with display names seated at ROOM's table (the one JoinTable gives the
    first): a table with a hand running for the staff to spectate; its id."""
    players = [
        (f"watch{name}{number}", display_name, seat) for number, (display_name, seat) in enumerate(WATCHED)
    ]
    return seat_players(services, ROOM, players)


def seat_players(services: dict[str, ServiceProcess], room: str, players: list[tuple[str, str, int]]) -> str:
    """Funded players with display names seated at the room's table (the one JoinTable gives the
    first) at the seats given (from 1); the table's id."""
    table_id = ""
    for player, display_name, seat in players:
        fund(services["cashier"].address, player)
        me = auth_metadata(player, "player")
        with grpc.insecure_channel(services["lobby"].address) as channel:
            lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
            lobby.SetDisplayName(
                lobby_pb2.SetDisplayNameRequest(request_id=f"{player}-name", display_name=display_name),
                metadata=me,
                timeout=10,
            )
            joined = lobby.JoinTable(lobby_pb2.JoinTableRequest(room_id=room), metadata=me, timeout=10)
        table_id = table_id or joined.table_id
        with grpc.insecure_channel(joined.address or services["table"].address) as channel:
            table_pb2_grpc.TableServiceStub(channel).SitDown(
                table_pb2.SitDownRequest(
                    request_id=f"sit-{player}", table_id=table_id, seat=seat, buy_in=1000
                ),
                metadata=me,
                timeout=15,
            )
    return table_id


def unseat_watched_players(services: dict[str, ServiceProcess], name: str, table_id: str) -> None:
    """The watched players leave the table again (the flow's own SitDowns then find the table as
    they did before: no hand runs with the case's players)."""
    for number in range(len(WATCHED)):
        player = f"watch{name}{number}"
        with grpc.insecure_channel(services["table"].address) as channel:
            table_pb2_grpc.TableServiceStub(channel).LeaveTable(
                table_pb2.LeaveTableRequest(request_id=f"leave-{player}", table_id=table_id),
                metadata=auth_metadata(player, "player"),
                timeout=15,
            )


def notes_on(history_address: str, player: str) -> list[history_pb2.AuditEvent]:
    """The notes on a player as support reads them (ListAuditEvents, OPERATOR_NOTE), newest first."""
    with grpc.insecure_channel(history_address) as channel:
        reply = history_pb2_grpc.HistoryServiceStub(channel).ListAuditEvents(
            history_pb2.ListAuditEventsRequest(
                kind="OPERATOR_NOTE", player_id=player, page=common_pb2.PageRequest(page_size=50)
            ),
            metadata=SUPPORT,
            timeout=10,
        )
    return list(reply.events)


def hand_as_risk(history_address: str, hand_id: str) -> history_pb2.HandRecord:
    with grpc.insecure_channel(history_address) as channel:
        reply = history_pb2_grpc.HistoryServiceStub(channel).GetHand(
            history_pb2.GetHandRequest(hand_id=hand_id), metadata=RISK, timeout=10
        )
    hand: history_pb2.HandRecord = reply.hand
    return hand


def sit_down(services: dict[str, ServiceProcess], player: str, seat: int) -> tuple[grpc.StatusCode, str]:
    """The player's next SitDown at ROOM, as the player: (OK, "") or the refusal's code and reason."""
    me = auth_metadata(player, "player")
    with grpc.insecure_channel(services["lobby"].address) as channel:
        joined = lobby_pb2_grpc.LobbyServiceStub(channel).JoinTable(
            lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=me, timeout=10
        )
    with grpc.insecure_channel(joined.address or services["table"].address) as channel:
        table = table_pb2_grpc.TableServiceStub(channel)
        try:
            table.SitDown(
                table_pb2.SitDownRequest(
                    request_id=f"sit-{uuid.uuid4().hex[:10]}",
                    table_id=joined.table_id,
                    seat=seat,
                    buy_in=1000,
                ),
                metadata=me,
                timeout=15,
            )
        except grpc.RpcError as error:
            call = error if isinstance(error, grpc.Call) else None
            if call is None:
                raise
            return call.code(), reason_of(call)
    return grpc.StatusCode.OK, ""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    require_browser()
    data = tmp_path_factory.mktemp("backoffice")
    name = uuid.uuid4().hex[:8]
    dumper, receiver = f"dump{name}a", f"dump{name}b"
    keys = {"POKER_AUTH_KEYS": AUTH_KEYS}
    # The watched table's hand waits for its players for the whole module: a turn the clock ended
    # would settle a hand in the middle of the flow, whose dashboard figures must not move (a loaded
    # CI run took longer than the default 20 s turn plus bank and failed so).
    # (The drain's bound must cover the longest hand such a clock allows; a stop kills after 30 s.)
    slow_clock = {"POKER_TABLE_ACTION_SECONDS": "600", "POKER_TABLE_DRAIN_SECONDS": "30000"}
    with running_services(data, {**keys, **slow_clock}) as services:
        staff = {
            **keys,
            "POKER_GATEWAY_STAFF_PORT": "0",
            "POKER_GATEWAY_STAFF_ALLOW_LIST": ALLOW_LIST,
        }
        with running_gateway(services, staff) as gateway:
            door = Door(staff_address_of(gateway), gateway.lines)
            started = time.monotonic()
            case_id = make_case(services["history"].address, dumper, receiver)
            print(f"\nfair-play case {case_id} in {time.monotonic() - started:.1f} s")
            for player in (dumper, receiver):
                fund(services["cashier"].address, player)
            # The dumper has a lobby profile (as a player who signed in has), so staff find them by
            # id and support reads their holds panel after risk's hold.
            with grpc.insecure_channel(services["lobby"].address) as channel:
                lobby_pb2_grpc.LobbyServiceStub(channel).GetMyProfile(
                    lobby_pb2.GetMyProfileRequest(), metadata=auth_metadata(dumper, "player"), timeout=10
                )
            # The dashboard's play figures: hands with rake settled through the cashier (the case's
            # hands above are recorded into history only; nothing else settles in this cluster).
            figures_players = (f"fig{name}a", f"fig{name}b")
            for player in figures_players:
                fund(services["cashier"].address, player)
            settle_hands(services["cashier"].address, figures_players, FIGURES_RAKES)
            # One payout, for the money screen's payouts list (nothing else withdraws here).
            withdraw(services["cashier"].address, figures_players[0], PAYOUT_CHIPS, f"payout-{name}")
            live_table = seat_watched_players(services, name)
            yield Cluster(
                services,
                door,
                dumper,
                receiver,
                artefacts_folder(),
                live_table,
                tuple(n for n, _ in WATCHED),
                name,
            )


def test_staff_hold_a_dumper_fund_the_house_by_four_eyes_and_find_it_all_in_the_audit_trail(
    cluster: Cluster,
) -> None:
    before = house_bank(cluster.services["cashier"].address)
    figures_before = play_figures(cluster.services["cashier"].address)
    started = time.monotonic()
    steps = run_page_script(
        cluster.door,
        "backoffice.mjs",
        str(cluster.artefacts),
        "flow",
        cluster.dumper,
        str(FUNDING),
        cluster.receiver,
        cluster.live_table,
        ",".join(cluster.seated_names),
        timeout=420,
        artefacts=cluster.artefacts,
    )
    print(f"browser run: {time.monotonic() - started:.1f} s")
    by_step = {s["step"]: s for s in steps}
    assert "done" in by_step, steps

    # The dashboard's play figures are the cashier's: GRAM's hands in the last hour and rake today
    # (00:00 UTC) as GetPlayFigures answers them before and after the run (nothing settled meanwhile),
    # written as en-US writes a number; the two hands settled above are GRAM's only ones.
    figures = play_figures(cluster.services["cashier"].address)
    assert figures == figures_before, (figures_before, figures)
    assert (figures["GRAM"]["hands"], figures["GRAM"]["rake"]) == (len(FIGURES_RAKES), sum(FIGURES_RAKES)), (
        figures
    )
    shown = by_step["rita dashboard"]["figures"]
    for pool in ("GRAM", "MPX"):
        for kind in ("hands", "rake"):
            assert shown[pool][kind] == {
                "value": str(figures[pool][kind]),
                "text": f"{figures[pool][kind]:,}",
            }, (
                pool,
                kind,
                shown,
                figures,
            )
    assert shown["titles"] == ["Hands in the last hour", "Rake today, since 00:00 UTC"], shown

    # Finance's purchases and payouts: today's chips in and out per pool are the cashier's, and the
    # one payout is listed with its player, pool, amount and reference.
    payments = payments_today(cluster.services["cashier"].address)
    assert payments["GRAM"][1] == PAYOUT_CHIPS, payments
    flows = by_step["money: payouts"]["payouts"]["flows"]
    today: dict[tuple[str, str], int] = {}
    for kind, pool, value in flows:
        today.setdefault((kind, pool), int(value))  # the first of each kind and pool is today's
    assert today == {
        (kind, pool): payments[pool][0 if kind == "purchased" else 1]
        for pool in ("GRAM", "MPX")
        for kind in ("purchased", "withdrawn")
    }, (today, payments)
    rows = by_step["money: payouts"]["payouts"]["rows"]
    assert [r[1:] for r in rows] == [
        [f"fig{cluster.name}a", "GRAM", "GRAM", str(PAYOUT_CHIPS), f"payout-{cluster.name}"]
    ], rows

    # The live table: the spectators' view with the seated names and no face-up hole card.
    live = by_step["live table"]
    assert {s["name"] for s in live["seats"]} >= set(cluster.seated_names), live
    assert all(s["faceUp"] == [] for s in live["seats"]), live
    # The replayer showed every seat's hole cards: those of the whole record as risk reads it.
    replay = by_step["replayer"]
    record = hand_as_risk(cluster.services["history"].address, replay["hand"])
    held = {seat.seat: [c.text for c in seat.hole_cards] for seat in record.seats}
    assert len(held) == 2, held
    assert all(len(cards) == 2 and all(cards) for cards in held.values()), held
    assert {s["seat"]: s["cards"] for s in replay["deal"]} == held, (replay, held)
    # olga's note, as ListAuditEvents answers it: the newest note on the watched player, by olga.
    note = by_step["note"]
    assert note["player"].startswith("watch"), note
    [first, *_] = notes_on(cluster.services["history"].address, note["player"])
    assert (first.kind, first.actor, first.details) == ("OPERATOR_NOTE", "olga", note["words"]), first
    assert (first.subject, list(first.player_ids)) == (note["player"], [note["player"]]), first
    assert first.event_id == note["notes"][0]["event"], (first.event_id, note)
    # The dumper's holds panel, as support read it: rita's hold first (its release only asked then).
    holds = by_step["holds"]
    assert holds["player"] == cluster.dumper, holds
    assert (holds["holds"][0]["kind"], holds["holds"][0]["cells"][2]) == ("PLAYER_HELD", "rita"), holds

    unseat_watched_players(cluster.services, cluster.name, cluster.live_table)

    # The hold reaches the player at the table: the next SitDown is refused. The partner is under
    # the case's withdrawal hold only (docs/integrity.md): a seat is still theirs to take.
    assert sit_down(cluster.services, cluster.dumper, 0) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "PLAYER_ON_HOLD",
    )
    assert sit_down(cluster.services, cluster.receiver, 1) == (grpc.StatusCode.OK, "")

    # rita's release waits for finance: pending, asked by rita, and risk cannot decide it.
    history_address = cluster.services["history"].address
    release_id = by_step["release asked"]["requestId"]
    [pending] = [
        r
        for r in releases(history_address, history_pb2.RELEASE_REQUEST_STATE_PENDING)
        if r.request_id == release_id
    ]
    assert (pending.player_id, pending.asked_by, pending.case_release) == (cluster.dumper, "rita", False)
    assert decide_as_risk(history_address, release_id) == (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")

    # fiona's approval moved the amount into the house bank, once.
    assert house_bank(cluster.services["cashier"].address) == before + FUNDING
    # fedor's own approval was refused by the cashier (the page's words checked in the script).
    assert by_step["forced"]["forced"].startswith("You cannot decide your own request")

    # The exported trail: one JSON object a line, every field, the two actions with their reasons.
    exported = (cluster.artefacts / "audit.jsonl").read_text()
    assert exported.endswith("\n")
    lines = [json.loads(line) for line in exported.splitlines()]
    assert lines
    assert all(list(line)[: len(LINE_FIELDS)] == LINE_FIELDS for line in lines), lines[:2]
    actions = [line for line in lines if line["kind"] == "STAFF_ACTION"]
    assert actions
    assert all(list(a["staff_action"]) == ACTION_FIELDS for a in actions)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z", a["time"]) for a in lines)

    def one(actor: str, method: str, code: str = "OK") -> dict[str, Any]:
        found = [
            a
            for a in actions
            if a["actor"] == actor
            and a["staff_action"]["method"].endswith(f"/{method}")
            and a["staff_action"]["code"] == code
        ]
        assert found, (actor, method, code, [(a["actor"], a["staff_action"]["method"]) for a in actions])
        first: dict[str, Any] = found[0]
        return first

    hold = one("rita", "HoldPlayer")
    assert hold["staff_action"]["why"] == by_step["audit"]["holdWhy"]
    assert hold["staff_action"]["why"].startswith("Chip dumping to the partner")
    assert hold["staff_action"]["roles"] == ["risk"]
    assert hold["staff_action"]["mutating"] is True
    assert hold["staff_action"]["request_id"]
    decide = one("fiona", "DecideHouseFunding")
    assert decide["staff_action"]["why"] == "Approved: expected house-game volume this weekend"
    assert decide["staff_action"]["roles"] == ["finance"]
    assert decide["staff_action"]["mutating"] is True
    refused = one("fedor", "DecideHouseFunding", "PERMISSION_DENIED")
    assert refused["staff_action"]["reason"] == "FOUR_EYES_REQUIRED"
    noted = one("olga", "RecordAuditEvent")
    assert noted["staff_action"]["why"] == note["words"], noted
    assert sorted(noted["staff_action"]["roles"]) == ["operations", "support"], noted
    asked = one("fedor", "RequestHouseFunding")
    assert asked["staff_action"]["why"] == "Top up the GRAM house bank before the weekend"

    # fedor (finance) approves rita's release in the money screen; rhea's own request offered her
    # no decision. The hold is lifted: the dumper's next SitDown is no longer refused. rhea's request
    # is about an operator's hold of the partner (ReleasePlayer ends an operator's hold; the case's
    # automatic withdrawal hold is released by resolving the case), placed here by the risk desk.
    hold_as_risk(history_address, cluster.receiver)
    released = run_page_script(
        cluster.door,
        "backoffice.mjs",
        str(cluster.artefacts),
        "release",
        cluster.dumper,
        str(FUNDING),
        cluster.receiver,
        timeout=180,
        artefacts=cluster.artefacts,
    )
    by_step.update({s["step"]: s for s in released})
    assert by_step["release approved"]["requestId"] == release_id
    [approved] = [
        r
        for r in releases(history_address, history_pb2.RELEASE_REQUEST_STATE_APPROVED)
        if r.request_id == release_id
    ]
    assert approved.decided_by == "fedor"
    assert approved.decision_reason == "Approved: the review found no dumping"
    deadline = time.monotonic() + SITDOWN_DEADLINE
    while (answer := sit_down(cluster.services, cluster.dumper, 0))[1] == "PLAYER_ON_HOLD":
        assert time.monotonic() < deadline, "the approved release never reached SitDown"
        time.sleep(0.5)
    assert answer == (grpc.StatusCode.OK, ""), answer

    shots = {p.stem for p in cluster.artefacts.glob("*.png")}
    assert (
        set(DOCS_SHOTS)
        | {"dashboard-390", "audit-390", "money-own-request", "money-own-release", "money-releases"}
        | {"case-replayer", "live-table", "player-notes"}
        <= shots
    ), shots
    if os.environ.get("POKER_UPDATE_DOCS_IMAGES") == "1":
        DOCS_IMAGES.mkdir(exist_ok=True)
        for name in DOCS_SHOTS:
            shot = cluster.artefacts / f"{name}.png"
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot
            assert shot.stat().st_size < DOCS_IMAGE_MAX_BYTES, (shot, shot.stat().st_size)
            shutil.copyfile(shot, DOCS_IMAGES / f"backoffice-{name}.png")


def test_every_screen_of_the_console_reads_in_russian(cluster: Cluster) -> None:
    steps = run_page_script(
        cluster.door,
        "backoffice.mjs",
        str(cluster.artefacts / "russian"),
        "russian",
        cluster.dumper,
        str(FUNDING),
        cluster.receiver,
        cluster.live_table,
        ",".join(cluster.seated_names),
        timeout=240,
        artefacts=cluster.artefacts / "russian",
    )
    checked = [s["where"] for s in steps if s["step"] == "russian"]
    assert {
        "sign-in",
        "dashboard (operations, support)",
        "rooms",
        "a room",
        "players",
        "a player",
        "audit",
        "case queue",
        "a case",
        "dashboard (finance)",
        "money",
        "a live table",
        "a hand in the replayer",
        "staff directory",
    } <= set(checked), checked
    assert all(s["foreign"] == [] for s in steps if s["step"] == "russian")
    [tiles] = [s for s in steps if s["step"] == "russian figures"]
    assert tiles["titles"] == ["Раздачи за последний час", "Рейк за сегодня, с 00:00 UTC"], tiles


# --- The rooms screen: closing a table after its hand, the seat numbers. ----------------------------

# The table operations closes: the two-seat duel room's (no other test of this module plays there),
# two players at seats 1 and 2 (SitDown's seats, from 1, as the lobby's figures and the table's view
# number them: docs/table.md).
CLOSE_ROOM = "nlhe-gram-duel"
CLOSING = (("Ира Стол", 1), ("Олег Финиш", 2))
CLOSE_WHY = "Moving the duel players to the new room before the release; the table closes after this hand"
FUNDED = 5_000  # chips a funded player holds (fund)
CLOSE_DEADLINE = 120.0  # seconds for the running hand to end and the seats to be cashed out


def balances(cashier_address: str, player: str) -> cashier_pb2.GetBalancesResponse:
    """The player's wallets and open seat session, as support reads them."""
    with grpc.insecure_channel(cashier_address) as channel:
        reply: cashier_pb2.GetBalancesResponse = cashier_pb2_grpc.CashierServiceStub(channel).GetBalances(
            cashier_pb2.GetBalancesRequest(player_id=player), metadata=SUPPORT, timeout=10
        )
    return reply


def gram(reply: cashier_pb2.GetBalancesResponse) -> int:
    return sum(int(w.balance) for w in reply.wallets if w.pool == common_pb2.CHIP_POOL_GRAM)


def fold_if_to_act(table_address: str, table_id: str, player: str) -> None:
    """The player folds if the running hand waits for them (the closing table's hand ends sooner than
    by the clock); nothing otherwise."""
    me = auth_metadata(player, "player")
    with grpc.insecure_channel(table_address) as channel:
        table = table_pb2_grpc.TableServiceStub(channel)
        try:
            view = table.GetTableSnapshot(
                table_pb2.GetTableSnapshotRequest(table_id=table_id), metadata=me, timeout=10
            ).view
            mine = [s.seat for s in view.seats if s.player_id == player]
            if view.phase == table_pb2.TABLE_PHASE_HAND_IN_PROGRESS and mine and view.to_act_seat == mine[0]:
                table.Act(
                    table_pb2.ActRequest(
                        request_id=f"fold-{uuid.uuid4().hex[:10]}",
                        table_id=table_id,
                        hand_id=view.hand_id,
                        action=table_pb2.ACTION_KIND_FOLD,
                    ),
                    metadata=me,
                    timeout=10,
                )
        except grpc.RpcError:
            pass  # the hand moved on, or the seat is gone: the loop looks again


def staff_actions_of(history_address: str, actor: str) -> list[history_pb2.AuditEvent]:
    with grpc.insecure_channel(history_address) as channel:
        reply = history_pb2_grpc.HistoryServiceStub(channel).ListAuditEvents(
            history_pb2.ListAuditEventsRequest(
                kind="STAFF_ACTION", actor=actor, page=common_pb2.PageRequest(page_size=200)
            ),
            metadata=SUPPORT,
            timeout=10,
        )
    return list(reply.events)


def close_as(
    metadata: tuple[tuple[str, str], ...], table_address: str, table_id: str
) -> tuple[grpc.StatusCode, str]:
    """CloseTable straight at the table service: (OK, "") or the refusal's code and reason."""
    with grpc.insecure_channel(table_address) as channel:
        try:
            table_pb2_grpc.TableServiceStub(channel).CloseTable(
                table_pb2.CloseTableRequest(request_id=f"close-{uuid.uuid4().hex[:10]}", table_id=table_id),
                metadata=metadata,
                timeout=10,
            )
        except grpc.RpcError as error:
            call = error if isinstance(error, grpc.Call) else None
            if call is None:
                raise
            return call.code(), reason_of(call)
    return grpc.StatusCode.OK, ""


def test_operations_close_a_table_after_its_hand_and_its_players_are_cashed_out(cluster: Cluster) -> None:
    """sofia (support) finds the duel table with its two players and no close offered (and the
    table's service refuses her role); the tables list and the live view number the seats as the
    players took them; oskar (operations), on a phone, closes the table after its hand with a reason.
    Then both players' chips are back in their wallets (no seat session left, nothing lost: the room
    takes no rake), and the trail has oskar's CloseTable with his words."""
    services = cluster.services
    players = [(f"close{cluster.name}{n}", name, seat) for n, (name, seat) in enumerate(CLOSING)]
    table_id = seat_players(services, CLOSE_ROOM, players)
    ids = [p for p, _, _ in players]
    assert all(gram(balances(services["cashier"].address, p)) == FUNDED - 1000 for p in ids)
    assert close_as(SUPPORT, services["table"].address, table_id) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )

    steps = run_page_script(
        cluster.door,
        ROOMS_SCRIPT,
        str(cluster.artefacts / "rooms"),
        "close",
        CLOSE_ROOM,
        table_id,
        CLOSE_WHY,
        ",".join(name for _, name, _ in players),
        timeout=300,
        artefacts=cluster.artefacts / "rooms",
    )
    by_step = {s["step"]: s for s in steps}
    assert "done" in by_step, steps

    # The seat numbers: the tables list's and the live view's are the seats the players took (from 1).
    numbers = by_step["seat numbers"]
    taken = {name: seat for _, name, seat in players}
    listed = {s["text"].split(": ", 1)[1].rsplit(" (", 1)[0]: s["seat"] for s in numbers["list"]}
    assert listed == taken, numbers
    assert all(s["text"].startswith(f"{s['seat']}: ") for s in numbers["list"]), numbers
    assert {s["name"]: s["seat"] for s in numbers["live"]} == taken, numbers
    assert all(s["number"] == str(s["seat"]) for s in numbers["live"]), numbers

    # The answer in words: after the running hand (or at once, between hands), both players.
    answer = by_step["closed"]["answer"]
    assert answer in (
        "Closes after the running hand; 2 players will be cashed out.",
        "No hand is running: the table closes now; 2 players will be cashed out.",
    ), answer

    # The hand ends (whoever it waits for folds), and both seats are cashed out into the wallets.
    deadline = time.monotonic() + CLOSE_DEADLINE
    while True:
        replies = {p: balances(services["cashier"].address, p) for p in ids}
        if not any(r.HasField("open_seat_session") for r in replies.values()):
            break
        assert time.monotonic() < deadline, {p: str(r) for p, r in replies.items()}
        for p in ids:
            if replies[p].HasField("open_seat_session"):
                fold_if_to_act(services["table"].address, table_id, p)
        time.sleep(1.0)
    wallets = {p: gram(r) for p, r in replies.items()}
    assert sum(wallets.values()) == len(ids) * FUNDED, wallets
    assert all(w > FUNDED - 1000 for w in wallets.values()), wallets

    # The trail: oskar's CloseTable, with his words, his role, the table, answered OK.
    [closed] = [
        e
        for e in staff_actions_of(services["history"].address, "oskar")
        if e.staff_action.method == "poker.table.v1.TableService/CloseTable"
        and e.staff_action.code != "ASKED"
    ]
    assert (closed.staff_action.why, closed.staff_action.code, closed.table_id) == (CLOSE_WHY, "OK", table_id)
    assert (list(closed.staff_action.roles), closed.staff_action.mutating) == (["operations"], True)
    assert closed.staff_action.request_id

    shot = cluster.artefacts / "rooms" / "close-table.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot
    if os.environ.get("POKER_UPDATE_DOCS_IMAGES") == "1":
        assert shot.stat().st_size < DOCS_IMAGE_MAX_BYTES, (shot, shot.stat().st_size)
        DOCS_IMAGES.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_IMAGES / "backoffice-close-table.png")


# --- The rooms screen's forms, each checked through the lobby's API. -------------------------------

OPERATIONS = auth_metadata("operations-check", "operations")
MAINTENANCE_MESSAGE = "Dealers' training: seats open again at 19:00"


def run_page_steps(
    door: Door, script: str, *args: str, checks: dict[str, Callable[[dict[str, Any]], None]], timeout: float
) -> list[dict[str, Any]]:
    """`node <script> http://<door> <args...>` whose steps wait (`"wait": true`): each is checked by
    `checks[step]` while the page waits, then answered "go"; its step lines, once it exited 0."""
    process = subprocess.Popen(
        ["node", script, f"http://{door.address}", *args],
        cwd=WEB, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    steps: list[dict[str, Any]] = []
    try:
        assert process.stdout is not None
        assert process.stdin is not None
        for line in process.stdout:
            print(line, end="")
            if not line.startswith("{"):
                continue
            step = json.loads(line)
            steps.append(step)
            if step.get("wait"):
                checks.pop(step["step"])(step)
                process.stdin.write("go\n")
                process.stdin.flush()
        code = process.wait(timeout=30)
        errors = process.stderr.read() if process.stderr else ""
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code == 0, f"{steps[-3:]}\n{errors[-4000:]}\ngateway:\n{''.join(door.lines)[-3000:]}"
    assert not checks, f"never reached: {sorted(checks)}"
    return steps


def room_as_operations(lobby_address: str, room_id: str) -> lobby_pb2.Room:
    with grpc.insecure_channel(lobby_address) as channel:
        room: lobby_pb2.Room = (
            lobby_pb2_grpc.LobbyServiceStub(channel)
            .GetRoom(lobby_pb2.GetRoomRequest(room_id=room_id), metadata=OPERATIONS, timeout=10)
            .room
        )
    return room


def allow_list(lobby_address: str, room_id: str) -> list[str]:
    with grpc.insecure_channel(lobby_address) as channel:
        reply = lobby_pb2_grpc.LobbyServiceStub(channel).ListAllowList(
            lobby_pb2.ListAllowListRequest(room_id=room_id, page=common_pb2.PageRequest(page_size=500)),
            metadata=OPERATIONS,
            timeout=10,
        )
    return list(reply.player_ids)


def test_operations_drive_every_rooms_form_and_the_lobby_has_each_change(cluster: Cluster) -> None:
    """oskar (operations) creates a private room, renames it, disables and enables it, sets its
    maintenance, adds a player to its allow-list and creates an invite code; after each form the
    lobby's API (GetRoom, GetMaintenance, ListAllowList, RedeemInviteCode) has the change; the
    maintenance is then scheduled as a window an hour ahead (in the browser's time, read back as the
    lobby's times, not in force yet)."""
    lobby_address = cluster.services["lobby"].address
    room_id, name = f"club-{cluster.name}", f"Club {cluster.name}"
    member, guest = f"member{cluster.name}", f"guest{cluster.name}"
    seen: dict[str, Any] = {}

    def created(step: dict[str, Any]) -> None:
        room = room_as_operations(lobby_address, room_id)
        assert (room.display_name, room.private, room.disabled) == ("Club evening", True, False), room
        assert (room.variant, room.pool, room.table_count) == (
            common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
            common_pb2.CHIP_POOL_GRAM,
            1,
        ), room
        assert (room.blinds.small_blind, room.blinds.big_blind, room.min_buy_in, room.max_buy_in) == (
            5,
            10,
            400,
            2000,
        )
        seen["revision"] = room.revision

    def edited(step: dict[str, Any]) -> None:
        room = room_as_operations(lobby_address, room_id)
        assert room.display_name == name, room
        assert room.revision > seen["revision"], (room.revision, seen)

    def disabled(step: dict[str, Any]) -> None:
        assert room_as_operations(lobby_address, room_id).disabled

    def enabled(step: dict[str, Any]) -> None:
        assert not room_as_operations(lobby_address, room_id).disabled

    def maintenance(step: dict[str, Any]) -> None:
        with grpc.insecure_channel(lobby_address) as channel:
            reply = lobby_pb2_grpc.LobbyServiceStub(channel).GetMaintenance(
                lobby_pb2.GetMaintenanceRequest(room_id=room_id), metadata=OPERATIONS, timeout=10
            )
        switches = reply.room
        assert (switches.no_new_seats, switches.no_new_hands) == (True, False), reply
        assert (switches.message, switches.set_by) == (MAINTENANCE_MESSAGE, "oskar"), reply

    def window(step: dict[str, Any]) -> None:
        with grpc.insecure_channel(lobby_address) as channel:
            reply = lobby_pb2_grpc.LobbyServiceStub(channel).GetMaintenance(
                lobby_pb2.GetMaintenanceRequest(room_id=room_id), metadata=OPERATIONS, timeout=10
            )
        switches = reply.room
        assert (switches.no_new_seats, switches.in_force) == (True, False), reply
        start, end = switches.start_time.ToSeconds(), switches.end_time.ToSeconds()
        assert abs(start - (time.time() + 3600)) < 300, (start, time.time(), step)
        assert end - start == 3600, reply

    def listed(step: dict[str, Any]) -> None:
        assert allow_list(lobby_address, room_id) == [member]
        assert step["listed"] == [member], step

    def invited(step: dict[str, Any]) -> None:
        # A guest redeems the code shown: the guest is on the room's list beside the member.
        with grpc.insecure_channel(lobby_address) as channel:
            reply = lobby_pb2_grpc.LobbyServiceStub(channel).RedeemInviteCode(
                lobby_pb2.RedeemInviteCodeRequest(request_id=f"redeem-{guest}", code=step["code"]),
                metadata=auth_metadata(guest, "player"),
                timeout=10,
            )
        assert reply.room_id == room_id, reply
        assert sorted(allow_list(lobby_address, room_id)) == sorted([member, guest])

    steps = run_page_steps(
        cluster.door,
        ROOMS_SCRIPT,
        str(cluster.artefacts / "rooms"),
        "forms",
        room_id,
        name,
        MAINTENANCE_MESSAGE,
        member,
        checks={
            "created": created,
            "edited": edited,
            "disabled": disabled,
            "enabled": enabled,
            "maintenance": maintenance,
            "maintenance-window": window,
            "allow-list": listed,
            "invite": invited,
        },
        timeout=300,
    )
    assert steps[-1]["step"] == "done", steps[-3:]

    # Each change is in the trail as oskar's, with his reason.
    methods = {
        e.staff_action.method.rsplit("/", 1)[1]: e.staff_action
        for e in staff_actions_of(cluster.services["history"].address, "oskar")
        if e.staff_action.room_id == room_id and e.staff_action.code != "ASKED"  # the answers
    }
    for method in (
        "CreateRoom",
        "UpdateRoom",
        "DisableRoom",
        "EnableRoom",
        "SetMaintenance",
        "UpdateAllowList",
    ):
        assert method in methods, (method, sorted(methods))
        assert (methods[method].code, bool(methods[method].why)) == ("OK", True), (method, methods[method])
    assert methods["CreateInviteCode"].why == "Invitations for the club's guests", methods


# --- The console's pure parts (node only). ----------------------------------------------------------


def _cases(tmp_path: Path, cases: dict[str, Any]) -> list[dict[str, Any]]:
    return run_web_script("e2e/backoffice_cases.ts", cases, tmp_path, "the staff console's checks")


def test_the_consoles_catalogue_follows_the_catalogues_rules(tmp_path: Path) -> None:
    """Every entry in Russian and English, none empty, every plural form, the same parameters, no
    English word in the Russian and no Russian word in the English (e2e/i18n_cases.ts's checks)."""
    [catalogue] = [line["staff_catalogue"] for line in _cases(tmp_path, {}) if "staff_catalogue" in line]
    assert len(catalogue) > 300
    checked = run_web_script(
        "e2e/i18n_cases.ts", {"catalogue": catalogue}, tmp_path, "the catalogue's checks"
    )
    assert [line["catalogue"] for line in checked if "catalogue" in line] == [[]]


def test_the_audit_trail_exports_one_json_object_a_line(tmp_path: Path) -> None:
    base = {"subject": "", "details": "", "playerIds": [], "tableId": "", "handIds": []}
    events = [
        {
            **base,
            "eventId": "gateway/1",
            "time": {"seconds": 1767225600, "nanos": 250_000_000},
            "actor": "rita",
            "kind": "STAFF_ACTION",
            "subject": "p1",
            "playerIds": ["p1"],
            "staffAction": {
                "roles": ["risk"],
                "method": "poker.history.v1.HistoryService/HoldPlayer",
                "why": 'слив фишек\nвторая строка "в кавычках"',
                "code": "OK",
                "reason": "",
                "roomId": "",
                "caseId": "c1",
                "requestId": "r1",
                "mutating": True,
            },
        },
        {
            **base,
            "eventId": "hold:x",
            "time": {"seconds": 1767225601},
            "actor": "history-detectors",
            "kind": "PLAYER_HELD",
        },
    ]
    [text] = [line["lines"] for line in _cases(tmp_path, {"events": events}) if "lines" in line]
    lines = text.splitlines()
    assert text.endswith("\n")
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert list(first) == [*LINE_FIELDS, "staff_action"]
    assert first["time"] == "2026-01-01T00:00:00.250Z"
    assert second["time"] == "2026-01-01T00:00:01Z"
    assert first["staff_action"] == {
        "roles": ["risk"],
        "method": "poker.history.v1.HistoryService/HoldPlayer",
        "why": 'слив фишек\nвторая строка "в кавычках"',
        "code": "OK",
        "reason": "",
        "room_id": "",
        "case_id": "c1",
        "request_id": "r1",
        "mutating": True,
    }
    assert "staff_action" not in second
    assert list(second) == LINE_FIELDS


def test_a_reason_is_kept_whole_in_the_trail_and_as_ascii_where_a_service_wants_ascii(tmp_path: Path) -> None:
    reasons = ["Слив фишек партнёру «B» — 100 раздач", "plain words", "x" * 300, "   ", "Ça va, 日本"]
    answers = [line["ascii"] for line in _cases(tmp_path, {"reasons": reasons}) if "ascii" in line]
    assert answers[0] == 'Sliv fishek partneru "B" - 100 razdach'
    assert answers[1] == "plain words"
    assert len(answers[2]) == 128
    assert answers[2].endswith("...")
    assert answers[3] == "?"
    assert answers[4] == "Ca va, ??"
    assert all(a.isascii() and a.isprintable() and 1 <= len(a) <= 128 for a in answers)


def test_each_role_sees_only_its_screens_and_refusals_read_in_words(tmp_path: Path) -> None:
    lines = _cases(
        tmp_path,
        {
            "roles": [["risk"], ["finance"], ["operations", "support"], ["admin"]],
            "refusals": [
                {"lang": "en", "code": "PermissionDenied", "reason": "ROLE_REQUIRED"},
                {"lang": "ru", "code": "InvalidArgument", "reason": "STAFF_REASON_REQUIRED"},
                {"lang": "en", "code": "PermissionDenied", "reason": "FOUR_EYES_REQUIRED"},
                {"lang": "en", "code": "NotFound", "reason": "CASE_NOT_FOUND"},
                {"lang": "en", "code": "Unavailable", "reason": ""},
                {"lang": "en", "code": "FailedPrecondition", "reason": "SOMETHING_NEW"},
                {"lang": "ru", "code": "PermissionDenied", "reason": "OWN_STAFF_ENTRY"},
            ],
        },
    )
    assert [line["screens"] for line in lines if "screens" in line] == [
        ["dashboard", "rooms", "players", "fairplay", "audit"],
        ["dashboard", "rooms", "players", "money", "audit"],
        ["dashboard", "rooms", "players", "audit"],
        ["dashboard", "rooms", "staff", "audit"],
    ]
    assert [line["refusal"] for line in lines if "refusal" in line] == [
        "Your role does not allow this.",
        "Укажите причину: без неё изменение не принимается.",
        "You cannot decide your own request: another member of finance must.",
        "The review was not found.",
        "The server cannot be reached. Please try again in a minute.",
        "That did not work: the server refused (SOMETHING_NEW). Please try again.",
        "Свою запись не меняет никто: это делает другой администратор.",
    ]


def test_the_console_page_loads_one_script_and_one_stylesheet_under_150_kb_gzipped() -> None:
    """The staff door's policy allows no inline script or style: the page names /app.js and /app.css
    only, and the two, gzip-compressed, stay under the budget."""
    dist = WEB / "dist" / "staff"
    if not (dist / "index.html").exists():
        require_browser()
    page = (dist / "index.html").read_text()
    assert sorted(re.findall(r'(?:src|href)="(/[^"]+)"', page)) == ["/app.css", "/app.js"]
    assert "<style" not in page
    assert " style=" not in page
    assert re.findall(r"<script[^>]*>([^<]*)</script>", page) == [""]
    sizes = {
        name: len(gzip.compress((dist / name).read_bytes(), compresslevel=9))
        for name in ("app.js", "app.css")
    }
    print(f"\nconsole weight, gzip: {sizes} = {sum(sizes.values())} bytes")
    assert sum(sizes.values()) < CONSOLE_WEIGHT_MAX_BYTES, sizes
