"""Sitting out: no hand is dealt to a player who sat out (rules 8, 13); back in, hands start again."""

from __future__ import annotations

import grpc
import pytest

from poker.table.v1 import table_pb2
from service_runtime.testing import reason_of
from tests.table.conftest import TableWorld, nl_room, unique
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2


async def test_sit_out_stops_dealing_and_sit_in_starts_again(world: TableWorld) -> None:
    table_id = world.add_room(nl_room(unique("out")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    bob = Player(unique("bob"), world.table_channel, table_id)
    for p in (ann, bob):
        await world.fund(p.player_id, 1000)
        await p.watch()
    await ann.sit(500, seat=1)
    first = await ann.stub.SitOut(
        A.SitOutRequest(request_id="out-1", table_id=table_id), metadata=ann.metadata
    )
    assert first.status == A.SEAT_STATUS_SITTING_OUT
    assert (
        await ann.stub.SitOut(A.SitOutRequest(request_id="out-1", table_id=table_id), metadata=ann.metadata)
        == first
    )
    await bob.sit(500, seat=2)
    # One player can play: no hand, no commitment, no card.
    waiting = await bob.until(lambda v: v.phase == A.TABLE_PHASE_WAITING_FOR_PLAYERS and len(v.seats) > 0)
    assert waiting.hand_id == ""
    back = await ann.stub.SitIn(
        A.SitInRequest(request_id="in-1", table_id=table_id, wait_for_big_blind=False), metadata=ann.metadata
    )
    assert back.status != A.SEAT_STATUS_SITTING_OUT
    view = await bob.until(lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0)
    assert {s.display_name for s in view.seats if s.hole_cards} == {ann.player_id, bob.player_id}
    stranger = Player(unique("cat"), world.table_channel, table_id)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stranger.stub.SitOut(
            A.SitOutRequest(request_id="x", table_id=table_id), metadata=stranger.metadata
        )
    assert (refused.value.code(), reason_of(refused.value)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_SEATED",
    )
    for p in (ann, bob):
        await p.close()
