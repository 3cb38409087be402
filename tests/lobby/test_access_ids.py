"""Allow-lists hold only ids a player can have (issue 23, item 8): the cashier's player-id rule, the
one every wallet is opened under. On the old code `UpdateAllowList` stored `ünï-😀`, `system/house`
and `house`, none of which any player can ever be."""

from __future__ import annotations

import grpc
import pytest

from poker.lobby.v1 import lobby_pb2
from tests.lobby.conftest import ADMIN, TABLE, Lobby, expect_error

INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize(
    "bad",
    ["ünï-😀", "system/house", "house", "SYSTEM", "-leading-dash", "tab\tinside", "a" * 129, "caf\u00e9"],
)
async def test_an_id_no_player_can_have_is_refused_and_nothing_is_stored(lobby: Lobby, bad: str) -> None:
    for field, request in (
        (
            "add_player_ids",
            lobby_pb2.UpdateAllowListRequest(request_id="bad-add", add_player_ids=["ok-1", bad]),
        ),
        ("remove_player_ids", lobby_pb2.UpdateAllowListRequest(request_id="bad-rm", remove_player_ids=[bad])),
    ):
        await expect_error(
            lobby.stub.UpdateAllowList(request, metadata=ADMIN), INVALID, "FIELD_INVALID", field=field
        )
    listed = await lobby.stub.ListAllowList(lobby_pb2.ListAllowListRequest(), metadata=ADMIN)
    assert list(listed.player_ids) == []
    # The shard's seat question takes the same rule for the player it asks about.
    await expect_error(
        lobby.stub.AuthorizeSeat(
            lobby_pb2.AuthorizeSeatRequest(player_id=bad, room_id="nlhe-mpx-duel"), metadata=TABLE
        ),
        INVALID,
        "FIELD_INVALID",
        field="player_id",
    )


async def test_ids_of_every_shape_a_player_can_have_are_taken(lobby: Lobby) -> None:
    good = ["tg:12345", "alice", "Bob.Smith_2", "user@example.org", "7", "a" * 128]
    reply = await lobby.stub.UpdateAllowList(
        lobby_pb2.UpdateAllowListRequest(request_id="good", add_player_ids=good), metadata=ADMIN
    )
    assert reply.player_count == len(good)
