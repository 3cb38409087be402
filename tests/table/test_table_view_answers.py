"""The shard's visibility answers for readers without a seat (issue 45: ten spectators at each of 64
tables cost the lobby more than the shard, one AuthorizeView a spectator every 5 s). A room every
player may see (public, enabled: the lobby says so) is answered once a room per period; a private
room stays per player, and a refusal is never shared."""

from __future__ import annotations

from service_runtime.errors import NotFound
from services.table.ownership.table_access import TableAccess
from services.table.ports.rooms import ViewGrant


class CountingLobby:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.private = {"club"}
        self.allowed = {("ann", "club")}

    async def authorize_view(self, player_id: str, room_id: str) -> ViewGrant:
        self.asked.append((player_id, room_id))
        if room_id in self.private and (player_id, room_id) not in self.allowed:
            raise NotFound("ROOM_NOT_FOUND", "no such room")
        return ViewGrant(1, 2, everyone=room_id not in self.private)


async def test_a_room_everyone_may_see_is_asked_once_a_period_and_a_private_one_per_player() -> None:
    lobby, now = CountingLobby(), [0.0]
    access = TableAccess(None, lobby, answer_seconds=5.0, clock=lambda: now[0])  # type: ignore[arg-type]
    fans = [f"fan-{n}" for n in range(10)]
    assert [await access._visible(fan, "open") for fan in fans] == [2] * 10
    assert lobby.asked == [("fan-0", "open")]
    now[0] = 6.0  # the answer's time is up: the lobby is asked again, once
    assert [await access._visible(fan, "open") for fan in fans] == [2] * 10
    assert lobby.asked == [("fan-0", "open")] * 2
    lobby.asked.clear()
    assert await access._visible("ann", "club") == 2
    assert await access._visible("bob", "club") is None  # ann's answer is hers alone
    assert await access._visible("cat", "club") is None
    assert lobby.asked == [("ann", "club"), ("bob", "club"), ("cat", "club")]
