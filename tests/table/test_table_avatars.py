"""Players' Telegram photos at the seats: the lobby's AuthorizeSeat gives the photo with the name when
the player sits down (none when they have none or turned showing it off), the table keeps it in the
seats' log beside the name, and every view carries it at the player's seat for every reader. It
survives the table opening again elsewhere (the seats' log replayed, or its snapshot), and a log or
snapshot written before seats had photos reads as no photo. In-process, with the stand-ins of
tests/table/fakes.py."""

from __future__ import annotations

from typing import Any, cast

from services.table.cash import table_core
from services.table.cash.actor import TableActor
from services.table.cash.presence import PresenceRules
from services.table.cash.table_core import Rules, SessionOpened, feed, from_entry, to_entry
from services.table.log.event_log import LocalEventLog
from services.table.ports.rooms import RoomSource, SeatGrant
from tests.table.fakes import ROOM, FakeCashier, FakeRooms
from tests.table.inprocess_table import TABLE, seated_table
from tests.table.test_table_display_names import running_view_of

ANN, BOB = "tg:7200000001", "tg:7200000002"
PHOTO = "https://t.me/i/userpic/320/0HsMKYOWlgnBA2Httlfb3NBMp50KmdI4fD8tsNZu2js.jpg"
GRANTS = {ANN: SeatGrant(0, "Ann", PHOTO), BOB: SeatGrant(0, "Bob", "")}


class PhotoRooms(FakeRooms):
    """The lobby's answer to a seat: Ann shows her photo, Bob has none (or hides it)."""

    async def authorize_seat(self, player_id: str, room_id: str, suggested_name: str = "") -> SeatGrant:
        return GRANTS[player_id]


def photo_table(cashier: FakeCashier, log: LocalEventLog, records: list[Any]) -> TableActor:
    actor = seated_table(cashier, log, players=0, after_hand=lambda job: records.append(job.record))
    actor._rooms = cast(RoomSource, PhotoRooms({ROOM.room_id: ROOM}))
    return actor


async def test_every_view_carries_each_seats_photo_and_it_survives_the_table_opening_again() -> None:
    cashier, log = FakeCashier(), LocalEventLog()
    records: list[Any] = []
    actor = photo_table(cashier, log, records)
    actor.start()
    try:
        for number, player in enumerate((ANN, BOB), start=1):
            await actor.sit_down(player, f"sit-{number}", number, 500, False)
        for reader in (ANN, BOB):
            view = await running_view_of(actor, reader)
            photos = [(s.display_name, s.avatar_url) for s in view.seats[:2]]
            assert photos == [("Ann", PHOTO), ("Bob", "")], (reader, photos)
            assert all(s.avatar_url == "" for s in view.seats[2:])
        hand_id = view.hand_id
    finally:
        await actor.stop()

    # The next owner of the table: the photos come back from the seats' log, the lobby not asked.
    again = photo_table(cashier, log, records)
    again._rooms = cast(RoomSource, FakeRooms())
    again.start()
    try:
        view = await running_view_of(again, BOB)  # the hand taken over goes on
        assert view.hand_id == hand_id
        assert [(s.display_name, s.avatar_url) for s in view.seats[:2]] == [("Ann", PHOTO), ("Bob", "")]
    finally:
        await again.stop()


def test_the_photo_is_durable_and_old_entries_and_snapshots_read_as_none() -> None:
    rules = Rules(TABLE, 6, 30.0, PresenceRules(), 300.0)
    empty = table_core.Seats.empty(rules, 5, 10)
    opened = SessionOpened(ANN, 0, "s-1", 500, False, 1.0, display_name="Ann", avatar_url=PHOTO)
    state = feed(empty, opened, rules).state
    assert state.players[0].avatar_url == PHOTO
    # The seats' log entry carries it and reads back the same input.
    entry = to_entry(opened)
    assert entry["avatar_url"] == PHOTO
    assert from_entry(entry) == opened
    # An entry logged before seats had photos: no photo, the rest as it was.
    old_entry = {name: value for name, value in entry.items() if name != "avatar_url"}
    assert from_entry(old_entry) == SessionOpened(ANN, 0, "s-1", 500, False, 1.0, display_name="Ann")
    # The snapshot the log is trimmed to keeps it.
    back = table_core.from_snapshot(table_core.snapshot_of(state), rules)
    assert back.durable() == state.durable()
    assert back.players[0].avatar_url == PHOTO
    # A snapshot written before seats had photos (12 values a player): the name, no photo; before
    # names (11 values): neither.
    for kept, name in ((12, "Ann"), (11, "")):
        snapshot = table_core.snapshot_of(state)
        old = table_core.Snapshot(
            {**snapshot.state, "players": [p[:kept] for p in snapshot.state["players"]]}
        )
        player = table_core.from_snapshot(old, rules).players[0]
        assert (player.display_name, player.avatar_url) == (name, ""), kept
