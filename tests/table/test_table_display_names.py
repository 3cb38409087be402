"""Players see each other by display names, never by player ids (issue 36: a Telegram player's id,
`tg:<account>`, tells strangers which Telegram account plays). The lobby's profile names the seat
when the player sits down; the table shows that name at the seat, in the player's chat lines, its
notices, the lobby's table figures and the hand's record, and gives every other player an opaque
handle of the sitting where the player id was. The names survive the table opening again elsewhere
(the seats' log). In-process, with the stand-ins of tests/table/fakes.py."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from poker.table.v1 import table_pb2
from services.table.cash import table_core
from services.table.cash.actor import TableActor
from services.table.cash.presence import PresenceRules
from services.table.cash.table_core import Rules, SessionOpened, feed
from services.table.log.event_log import LocalEventLog
from services.table.ports.rooms import SeatGrant
from tests.table.fakes import ROOM, FakeCashier, FakeRooms
from tests.table.inprocess_table import TABLE, seated_table

ANN, BOB = "tg:7100000001", "tg:7100000002"
NAMES = {ANN: "Анна К.", BOB: "Bob"}
HANDLE = re.compile(r"p-[0-9a-f]{12}")


class NamingRooms(FakeRooms):
    """The lobby's answer to a seat: the profile's name, here a fixed one per player."""

    async def authorize_seat(self, player_id: str, room_id: str, suggested_name: str = "") -> SeatGrant:
        return SeatGrant(0, NAMES[player_id])


def named_table(cashier: FakeCashier, log: LocalEventLog, records: list[Any]) -> TableActor:
    actor = seated_table(cashier, log, players=0, after_hand=lambda job: records.append(job.record))
    actor._rooms = NamingRooms({ROOM.room_id: ROOM})
    return actor


def leaks(text: str, *players: str) -> list[str]:
    return [p for p in players if p.removeprefix("tg:") in text]


async def test_players_see_each_other_by_name_and_handle_never_by_id() -> None:
    cashier, log, records = FakeCashier(), LocalEventLog(), []
    actor = named_table(cashier, log, records)
    actor.start()
    try:
        for number, player in enumerate((ANN, BOB), start=1):
            await actor.sit_down(player, f"sit-{number}", number, 500, False)
        view = await running_view_of(actor, ANN)
        mine, theirs = view.seats[0], view.seats[1]
        assert (mine.player_id, mine.display_name) == (ANN, "Анна К.")
        assert HANDLE.fullmatch(theirs.player_id)
        assert theirs.display_name == "Bob"
        assert leaks(str(view), BOB) == []
        bobs = await actor.call(lambda: actor.snapshot(BOB))
        assert bobs.seats[1].player_id == BOB
        assert bobs.seats[0].player_id != ANN
        assert HANDLE.fullmatch(bobs.seats[0].player_id)
        assert leaks(str(bobs), ANN) == []

        # Chat: the sender's handle (as their seat shows them), name and seat.
        sent = await actor.chat(BOB, "hi-1", "привет", "")
        chat = sent.event.chat
        assert (chat.player_id, chat.display_name, chat.seat) == (theirs.player_id, "Bob", 2)
        assert leaks(str(sent), ANN, BOB) == []

        # The lobby's table figures name the seats.
        figures = actor.figures("shard-a")
        assert sorted(s.display_name for s in figures.taken_seats) == ["Bob", "Анна К."]

        # The hand's record names each seat (history shows the names to the other players).
        hand_id = view.hand_id
        while view.hand_id == hand_id and view.to_act_seat:
            player = (ANN, BOB)[view.to_act_seat - 1]
            await actor.call(
                lambda p=player, v=view: actor.act(
                    p, f"fold-{v.hand_id}", v.hand_id, table_pb2.ACTION_KIND_FOLD, 0
                )
            )
            view = await actor.call(lambda: actor.snapshot(ANN))
        for _ in range(500):
            if records:
                break
            await asyncio.sleep(0.01)
        assert {s.player_id: s.display_name for s in records[0].seats} == NAMES
    finally:
        await actor.stop()

    # The next owner of the table (a handover): the names come back from the seats' log.
    again = named_table(cashier, log, records)
    again._rooms = FakeRooms()  # nobody sits down again: the lobby is not asked
    again.start()
    try:
        view = await running_view_of(again, ANN, exclude=frozenset({hand_id}))
        assert [s.display_name for s in view.seats[:2]] == ["Анна К.", "Bob"]
        assert HANDLE.fullmatch(view.seats[1].player_id)
    finally:
        await again.stop()


async def running_view_of(
    actor: TableActor, player: str, exclude: frozenset[str] = frozenset()
) -> table_pb2.TableView:
    for _ in range(1000):
        async with asyncio.timeout(5):
            view = await actor.call(lambda: actor.snapshot(player))
        if (
            view.phase == table_pb2.TABLE_PHASE_HAND_IN_PROGRESS
            and view.to_act_seat
            and view.hand_id not in exclude
        ):
            return view
        await asyncio.sleep(0.01)
    raise AssertionError("no hand running")


def test_the_seats_notices_name_the_player_and_a_seat_without_a_name_by_its_number() -> None:
    rules = Rules(TABLE, 6, 30.0, PresenceRules(), 300.0)
    empty = table_core.Seats.empty(rules, 5, 10)
    named = feed(empty, SessionOpened(ANN, 0, "s-1", 500, False, 1.0, display_name="Анна К."), rules)
    assert [(n.code, n.text) for n in named.notices] == [("PLAYER_SAT_DOWN", "Анна К. sat at seat 1")]
    nameless = feed(named.state, SessionOpened(BOB, 1, "s-2", 500, False, 1.0), rules)
    assert [n.text for n in nameless.notices] == ["seat 2 sat at seat 2"]
    left = feed(nameless.state, table_core.CashedOut(0, 2.0), rules)
    assert [n.text for n in left.notices] == ["Анна К. left seat 1"]
    # The name is durable: in the snapshot the log is trimmed to, and read back from it.
    back = table_core.from_snapshot(table_core.snapshot_of(nameless.state), rules)
    assert back.durable() == nameless.state.durable()
    assert back.players[0].display_name == "Анна К."
    # A snapshot written before seats had names (11 values a player) reads with no name.
    old = table_core.snapshot_of(nameless.state)
    old.state["players"] = [p[:11] for p in old.state["players"]]
    assert table_core.from_snapshot(old, rules).players[0].display_name == ""
    assert all(leaks(n.text, ANN, BOB) == [] for n in (*named.notices, *nameless.notices, *left.notices))
