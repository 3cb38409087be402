"""A showdown with a side pot, on the page, made on purpose (the bots of test_browser_play.py play at
random, so theirs may never have one): in a 6-seat no-limit room whose buy-in is a range, the page's
player (headless Chromium, web/e2e/browser_side_pot.mjs) sits with the room's smallest buy-in and two
players driven from here over gRPC, straight to the services, sit with larger ones. In each hand the
three are dealt into, the page's player goes all-in with the page's All-in button; the drivers act on
their own views (whose turn, the legal actions): one raises past the all-in, the other calls, and both
check it down, nobody folding. The felt then shows the showdown with two awards, the main pot's and
the side pot's; the page photographs it (`showdown-side-pot.png`, docs/play.md shows it; a run with
POKER_UPDATE_DOCS_IMAGES=1 copies it into docs/img when it is a PNG under 150 KB).

Who wins is the deal's; won or lost, the page sees the showdown with its own seat still at the table:
the table keeps a player who lost every chip seated through its 3 s hold, then cashes them out, and
the page sits down again. (This run found that the table cashed the loser out as the hand settled,
so their page never showed the showdown they lost.) The first showdown with two awards is the
picture; the page tries hands for up to 45 s (each five to ten seconds). At that showdown the felt's
award lines name their pots (`Main pot: ...`, `Side pot: ...`) and none meets a seat's box (390x844).

Motion: the cards dealt slide in and each pot flies to its winner as animations with a transform;
then, with reduced motion emulated (`emulateMedia`), the next deal and award move nothing (a card only
fades in, no chip flies).

Skipped loudly where Chromium, node or the built client is missing (failed under
POKER_REQUIRE_BROWSER=1, as every browser test)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.auth import STAFF_ROLES, Role, ServiceName
from service_runtime.testing import auth_metadata, service_metadata
from tests.gateway.gateway_process import running_gateway
from tests.security.service_processes import ServiceProcess, running_services
from tests.web.browser_runs import WEB, require_browser, run_page_script
from tests.web.test_browser_play import SHOWDOWN_SECONDS, artefacts_folder, docs_images

# A whole cluster and Chromium: the whole-cluster tier (`make test-cluster`; CI runs it after `make test`).
pytestmark = pytest.mark.cluster

ROOM = "nlhe-gram-side-pot"
SHOT = "showdown-side-pot"
# The seeded no-limit rooms take one fixed buy-in (min = max) and seat 2 or 4; this room, made for the
# run through the lobby's admin API, seats 6 and takes 200 to 5,000 at 5/10.
MIN_BUY_IN, MAX_BUY_IN = 200, 5_000
# The two drivers (development players with minted tokens): who they are, what the others see them
# as, their buy-in (both larger than the page player's), and whether they raise past the all-in. Each
# side pot costs a driver up to 390 (the smallest raise past an all-in of 200 at 5/10): the stacks
# last the run's tries, the page's player always the shortest.
DRIVERS = (("sidepot-alice", "Alice", 3_000, False), ("sidepot-bruno", "Bruno", 4_000, True))
PAGE_PLAYER = "webby"
ADMIN = auth_metadata("ops", *STAFF_ROLES)
PAYMENTS = service_metadata(ServiceName.PAYMENTS)
GRAM_MINOR_PER_CHIP = 10**6
T = TypeVar("T")


def _create_room(lobby_address: str) -> None:
    with grpc.insecure_channel(lobby_address) as channel:
        lobby_pb2_grpc.LobbyServiceStub(channel).CreateRoom(
            lobby_pb2.CreateRoomRequest(
                request_id=f"create-{ROOM}",
                room=lobby_pb2.Room(
                    room_id=ROOM, display_name="Side pot GRAM", variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
                    pool=common_pb2.CHIP_POOL_GRAM, seats_per_table=6,
                    blinds=lobby_pb2.BlindStakes(small_blind=5, big_blind=10, step=5),
                    min_buy_in=MIN_BUY_IN, max_buy_in=MAX_BUY_IN,
                ),
                table_count=1,
            ),
            metadata=ADMIN, timeout=10,
        )  # fmt: skip


async def _retrying(call: Callable[[], Awaitable[T]]) -> T:
    """A call the table answers UNAVAILABLE (reading its seat sessions) or TABLE_NOT_FOUND (not open
    yet) to for a moment, tried again for up to 20 s."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.NOT_FOUND):
                raise
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


@dataclass
class Driver:
    """A player at the table driven from the test: its own WatchTable view, and a small policy played
    whenever that view says it is its turn (never a fold)."""

    player_id: str
    name: str
    buy_in: int
    raiser: bool
    stub: table_pb2_grpc.TableServiceStub
    table_id: str
    seat: int = 0
    view: table_pb2.TableView | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    acted: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    # Per hand: the most pots its view showed, and the awards it ended with.
    pots: dict[str, list[tuple[int, tuple[int, ...]]]] = field(default_factory=dict)
    awards: dict[str, list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = field(default_factory=dict)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return auth_metadata(self.player_id, Role.PLAYER)

    async def sit(self) -> None:
        reply = await _retrying(
            lambda: self.stub.SitDown(
                table_pb2.SitDownRequest(
                    request_id=f"{self.player_id}-sit", table_id=self.table_id, buy_in=self.buy_in
                ),
                metadata=self.metadata, timeout=10,
            )
        )  # fmt: skip
        self.seat = reply.seat

    async def watch(self) -> None:
        call = self.stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=self.table_id), metadata=self.metadata
        )
        async for message in call:
            view = message.view
            self.view = view
            if len(view.pots) > len(self.pots.get(view.hand_id, [])):
                self.pots[view.hand_id] = [(p.amount, tuple(p.eligible_seats)) for p in view.pots]
            if view.awards:
                self.awards[view.hand_id] = [
                    (a.pot_index, tuple(a.seats), tuple(a.amounts)) for a in view.awards
                ]
            self.changed.set()

    def decide(self, view: table_pb2.TableView) -> tuple[int, int]:
        """The action for my turn: the raiser raises past an all-in made on this street by a seat not a
        driver's, while nobody has bet more than it; otherwise a check, else a call (else all-in)."""
        legal = view.legal_actions
        kinds = set(legal.actions)
        dealt = [s for s in view.seats if s.player_id and len(s.hole_cards) == 2]
        all_in = [s for s in dealt if s.all_in and s.bet_this_round > 0 and s.seat != self.seat]
        top = max((s.bet_this_round for s in view.seats), default=0)
        if self.raiser and len(dealt) >= 3 and all_in and table_pb2.ACTION_KIND_RAISE in kinds:
            shove = max(s.bet_this_round for s in all_in)
            if top <= shove and legal.min_amount > shove:
                return table_pb2.ACTION_KIND_RAISE, legal.min_amount
        for kind in (table_pb2.ACTION_KIND_CHECK, table_pb2.ACTION_KIND_CALL, table_pb2.ACTION_KIND_ALL_IN):
            if kind in kinds:
                return kind, 0
        raise AssertionError(f"{self.name}: no check, call or all-in offered: {legal}")

    async def play(self, stop: asyncio.Event) -> None:
        watching = asyncio.create_task(self.watch())
        done: tuple[object, ...] | None = None
        try:
            while not stop.is_set():
                self.changed.clear()
                view = self.view
                if view is not None and view.to_act_seat == self.seat and view.legal_actions.actions:
                    # One action per turn: the turn as the bets and stacks stand when it came.
                    turn = (
                        view.hand_id,
                        view.street,
                        tuple((s.seat, s.bet_this_round, s.stack) for s in view.seats),
                    )
                    if turn != done:
                        done = turn
                        kind, amount = self.decide(view)
                        try:
                            await self.stub.Act(
                                table_pb2.ActRequest(
                                    request_id=uuid.uuid4().hex, table_id=self.table_id, hand_id=view.hand_id,
                                    action=kind, amount=amount,  # type: ignore[arg-type]
                                ),
                                metadata=self.metadata, timeout=10,
                            )  # fmt: skip
                            self.acted.append(f"{view.hand_id} {table_pb2.ActionKind.Name(kind)} {amount}")
                        except grpc.aio.AioRpcError as error:
                            self.refused.append(f"{table_pb2.ActionKind.Name(kind)}: {error.details()}")
                if watching.done():
                    watching.result()  # the stream's failure, raised
                    raise AssertionError(f"{self.name}: the table's stream ended")
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await self.changed.wait()
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await watching


async def _drivers_in_play(services: Mapping[str, ServiceProcess], stop: asyncio.Event) -> list[Driver]:
    """The two drivers funded and named, seated once the page's player sits (so the first hand deals
    the three in), then playing until `stop`."""
    async with (
        grpc.aio.insecure_channel(services["lobby"].address) as lobby_channel,
        grpc.aio.insecure_channel(services["cashier"].address) as cashier_channel,
    ):
        lobby = lobby_pb2_grpc.LobbyServiceStub(lobby_channel)
        cashier = cashier_pb2_grpc.CashierServiceStub(cashier_channel)
        joined = None
        for player_id, name, buy_in, _ in DRIVERS:
            await cashier.Purchase(
                cashier_pb2.PurchaseRequest(
                    payment_reference=f"fund-{player_id}", player_id=player_id,
                    source=cashier_pb2.PAYMENT_SOURCE_GRAM, amount_minor=buy_in * GRAM_MINOR_PER_CHIP,
                ),
                metadata=PAYMENTS, timeout=10,
            )  # fmt: skip
            metadata = auth_metadata(player_id, Role.PLAYER)
            await lobby.SetDisplayName(
                lobby_pb2.SetDisplayNameRequest(request_id=f"{player_id}-name", display_name=name),
                metadata=metadata, timeout=10,
            )  # fmt: skip
            joined = await lobby.JoinTable(
                lobby_pb2.JoinTableRequest(room_id=ROOM), metadata=metadata, timeout=10
            )
    assert joined is not None
    channel = grpc.aio.insecure_channel(joined.address)
    stub = table_pb2_grpc.TableServiceStub(channel)
    drivers = [
        Driver(player_id, name, buy_in, raiser, stub, joined.table_id)
        for player_id, name, buy_in, raiser in DRIVERS
    ]
    tasks: list[asyncio.Task[None]] = []
    try:
        # The page's player first: a seat taken at the table, as anyone reading it sees it.
        deadline = time.monotonic() + 120
        while not stop.is_set():
            snapshot = await _retrying(
                lambda: stub.GetTableSnapshot(
                    table_pb2.GetTableSnapshotRequest(table_id=joined.table_id), metadata=drivers[0].metadata, timeout=10
                )
            )  # fmt: skip
            if any(s.player_id for s in snapshot.view.seats):
                break
            assert time.monotonic() < deadline, "the page's player never sat down"
            await asyncio.sleep(0.1)
        await asyncio.gather(*(driver.sit() for driver in drivers))
        tasks = [asyncio.create_task(driver.play(stop)) for driver in drivers]
        await stop.wait()
        for task in tasks:
            await task
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await channel.close()
    return drivers


async def _run(
    services: Mapping[str, ServiceProcess], gateway: ServiceProcess, artefacts: Path, shots: Path
) -> tuple[list[dict[str, Any]], list[Driver]]:
    stop = asyncio.Event()
    driving = asyncio.create_task(_drivers_in_play(services, stop))
    try:
        steps = await asyncio.to_thread(
            run_page_script, gateway, "browser_side_pot.mjs", str(artefacts), ROOM, str(shots),
            timeout=180, artefacts=artefacts,
        )  # fmt: skip
    finally:
        stop.set()
    drivers = await asyncio.wait_for(driving, 30)
    return steps, drivers


def test_a_showdown_with_a_side_pot_shows_both_pots_awards(tmp_path: Path) -> None:
    require_browser()
    artefacts = artefacts_folder(os.environ)
    shots = tmp_path / "docs-shots"
    # Short pauses between hands; the showdown held 3 s, as in production and in test_browser_play.py.
    table_pace = {
        "POKER_TABLE_COUNTDOWN_SECONDS": "2",
        "POKER_TABLE_SPECTATOR_DELAY_SECONDS": "5",
        "POKER_TABLE_SHOWDOWN_SECONDS": str(SHOWDOWN_SECONDS),
    }
    with (
        running_services(tmp_path, table_pace) as services,
        running_gateway(services, {"POKER_GATEWAY_WEB_ROOT": str(WEB / "dist")}) as gateway,
    ):
        _create_room(services["lobby"].address)
        started = time.monotonic()
        steps, drivers = asyncio.run(_run(services, gateway, artefacts, shots))
        print(f"\nplay took {time.monotonic() - started:.1f} s")
    by_step = {step["step"]: step for step in steps}
    assert "page error" not in by_step, by_step["page error"]
    # The page's player sat with the room's smallest buy-in, the drivers with more.
    assert by_step["seated"]["buyIn"] == MIN_BUY_IN, by_step["seated"]
    assert all(driver.buy_in > MIN_BUY_IN for driver in drivers)
    assert all(driver.refused == [] for driver in drivers), [driver.refused for driver in drivers]
    showdown = by_step["showdown"]
    tries = [step for step in steps if step["step"] == "side pot showdown"]
    print(f"\nthe page's all-ins: {[(t['hand'], t['won'], t.get('seenAtTheSeat')) for t in tries]}")
    print(f"the picture: {showdown}")
    # The drivers' views: each hand with an award per pot beyond the main one is one of the page
    # player's all-ins, with a main pot the three could win and a side pot only the two drivers could,
    # both awarded at the showdown, after the raiser's raise past the all-in.
    alice, bruno = drivers
    seats = {driver.seat for driver in drivers}
    side_pot_hands = [hand for hand, awards in bruno.awards.items() if len(awards) > 1]
    assert len(side_pot_hands) == len(tries) == showdown["hands"], (bruno.awards, tries)
    for hand in side_pot_hands:
        pots = bruno.pots[hand]
        assert len(pots) == 2, pots
        (_, main_seats), (side, side_seats) = pots
        assert len(main_seats) == 3, pots
        assert set(side_seats) == seats, pots
        assert side > 0, pots
        awards = bruno.awards[hand]
        assert [index for index, _, _ in awards] == [0, 1], awards
        assert alice.awards[hand] == awards
        assert any(a.startswith(f"{hand} ACTION_KIND_RAISE") for a in bruno.acted), bruno.acted
    # The page: each all-in clicked in a hand the three were dealt into, and its showdown seen with the
    # player's own seat still at the table, won or lost (the table keeps a player who lost every chip
    # seated through the hold; it cashed them out as the hand settled before, and their page showed
    # the table without them: this run found it).
    assert all(t["dealtSeats"] == 3 for t in tries), tries
    assert all(t["seenAtTheSeat"] for t in tries), tries
    # The picture: the showdown on the felt with both pots' awards, the cards shown, the winning hand
    # lit up; a pot named main and one named side while they were in play; well under a minute from
    # sitting down.
    assert len(showdown["ownAllIn"]) == showdown["hands"], showdown
    assert len(showdown["awards"]) == 2, showdown
    assert showdown["shown"] is True, showdown
    assert showdown["lit"] == 5, showdown
    assert any(text.startswith("Main pot: ") for text in showdown["pots"]), showdown
    assert any(text.startswith("Side pot: ") for text in showdown["pots"]), showdown
    assert showdown["seconds"] < 60, showdown
    # The felt names each pot's award, as the hand log does, and keeps every award line clear of
    # every seat's box at 390x844.
    assert [award.split(": ")[0] for award in showdown["awards"]] == ["Main pot", "Side pot"], showdown
    assert showdown["overlaps"] == [], showdown["overlaps"]
    # Motion, normal: the cards dealt slid into place and each pot flew to its winner as the award
    # was drawn (Web Animations with a transform).
    motion = by_step["motion"]
    normal, reduced = motion["normal"], motion["reduced"]
    print(f"\nanimations, normal motion: {normal['normal']}; reduced: {reduced['reduced']}")
    assert normal["normal"].get("card moving", 0) > 0, normal
    assert normal["normal"].get("pot moving", 0) > 0, normal
    assert showdown["potFlights"] >= 1, showdown
    # Reduced motion (emulated): a deal and an award came, and nothing moved: no chip flew, the cards
    # only faded in.
    assert reduced["matches"] is True, reduced
    assert reduced["deals"]["reduced"] >= 1, reduced
    assert reduced["awards"]["reduced"] >= 1, reduced
    assert {kind: n for kind, n in reduced["reduced"].items() if kind.endswith(" moving")} == {}, reduced
    assert reduced["chips"]["reduced"] == 0, reduced
    assert reduced["reduced"].get("card still", 0) > 0, reduced
    assert (shots / f"{SHOT}.png").read_bytes()[:4] == b"\x89PNG"
    if os.environ.get("POKER_UPDATE_DOCS_IMAGES") == "1":
        copied = docs_images(shots, (SHOT,))
        print(f"\ndocs images copied: {copied}")
        assert copied == [SHOT], f"not a PNG under 150 KB, not copied: {SHOT}"
