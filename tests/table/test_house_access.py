"""House-game tables obey the lobby like cash tables (issue 23, item 3), through real lobby, table and
history processes.

On the old code `PlaceHouseBets` never asked the lobby's AuthorizeSeat: a private room, a disabled
room and closed access all refused JoinTable and SitDown but took house stakes; and UpdateRoom of a
house room (ante range, maximum payout) never reached a running house table.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.testing import reason_of
from tests.table.conftest import ADMIN, ServiceProcess, TableWorld, unique
from tests.table.house_players import CALL, FOLD, HouseClient, fund_house
from tests.table.test_table_with_lobby import lobby_and_table

pytestmark = pytest.mark.postgres
__all__ = ["lobby_and_table"]
HOLDEM = common_pb2.GAME_VARIANT_CASINO_HOLDEM


class World:
    def __init__(
        self, backends: dict[str, ServiceProcess], lobby: ServiceProcess, table: ServiceProcess
    ) -> None:
        self.channels = [
            grpc.aio.insecure_channel(table.address),
            grpc.aio.insecure_channel(backends["cashier"].address),
            grpc.aio.insecure_channel(lobby.address),
        ]
        table_channel, cashier, lobby_channel = self.channels
        self.helper = TableWorld(None, None, backends, table_channel, cashier, cashier, settings=None)  # type: ignore[arg-type]
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(lobby_channel)
        self.table = table_pb2_grpc.TableServiceStub(table_channel)

    async def create_room(self, *, max_ante: int = 1000, max_payout: int = 50_000) -> str:
        room_id = unique("hx").replace("_", "-").lower()
        await self.lobby.CreateRoom(
            lobby_pb2.CreateRoomRequest(
                request_id=uuid.uuid4().hex,
                room=lobby_pb2.Room(
                    room_id=room_id,
                    display_name="house access",
                    variant=HOLDEM,
                    pool=common_pb2.CHIP_POOL_GRAM,
                    seats_per_table=3,
                    antes=lobby_pb2.AnteStakes(min_ante=10, max_ante=max_ante, max_payout=max_payout),
                ),
                table_count=1,
            ),
            metadata=ADMIN,
        )
        return room_id

    async def update_room(self, room_id: str, **changes: object) -> None:
        current = (await self.lobby.GetRoom(lobby_pb2.GetRoomRequest(room_id=room_id), metadata=ADMIN)).room
        room = lobby_pb2.Room()
        room.CopyFrom(current)
        for name, value in changes.items():
            if name in ("max_ante", "max_payout"):
                setattr(room.antes, name, value)
            else:
                setattr(room, name, value)
        await self.lobby.UpdateRoom(
            lobby_pb2.UpdateRoomRequest(request_id=uuid.uuid4().hex, room=room), metadata=ADMIN
        )

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


@pytest.fixture
async def world(
    backends: dict[str, ServiceProcess],
    lobby_and_table: tuple[ServiceProcess, ServiceProcess, ServiceProcess],
) -> AsyncIterator[World]:
    lobby, table, _ = lobby_and_table
    served = World(backends, lobby, table)
    await fund_house(served.helper, 10_000_000)
    try:
        yield served
    finally:
        await served.close()


async def _refused(client: HouseClient, ante: int = 10) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.bet(table_pb2.HouseBox(box=1, ante=ante))
    return caught.value.code(), reason_of(caught.value)


async def _play_one(client: HouseClient, ante: int = 10) -> None:
    round_view = (await client.bet(table_pb2.HouseBox(box=1, ante=ante))).round
    if round_view.phase != "COMPLETE":
        round_view = await client.decide(round_view, 1, CALL)
    assert round_view.phase == "COMPLETE"


async def test_a_private_or_disabled_house_room_takes_no_stakes_from_a_stranger(world: World) -> None:
    room_id = await world.create_room()
    client = HouseClient(unique("hp"), f"{room_id}.1", world.table, HOLDEM)
    await world.helper.fund(client.player_id, 10_000)
    await _play_one(client)  # open room: the round runs
    await world.update_room(room_id, private=True)
    before = await world.helper.wallet(client.player_id)
    assert await _refused(client) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_ON_ALLOW_LIST")
    assert await world.helper.wallet(client.player_id) == before
    await world.lobby.UpdateAllowList(
        lobby_pb2.UpdateAllowListRequest(
            request_id=uuid.uuid4().hex, room_id=room_id, add_player_ids=[client.player_id]
        ),
        metadata=ADMIN,
    )
    await _play_one(client)  # invited: plays again
    await world.lobby.DisableRoom(
        lobby_pb2.DisableRoomRequest(request_id=uuid.uuid4().hex, room_id=room_id), metadata=ADMIN
    )
    before = await world.helper.wallet(client.player_id)
    assert await _refused(client) == (grpc.StatusCode.FAILED_PRECONDITION, "ROOM_DISABLED")
    assert await world.helper.wallet(client.player_id) == before
    assert (await world.helper.audit()).balanced


async def test_a_changed_ante_range_applies_from_the_next_round(world: World) -> None:
    room_id = await world.create_room(max_ante=1000)
    client = HouseClient(unique("hp"), f"{room_id}.1", world.table, HOLDEM)
    await world.helper.fund(client.player_id, 50_000)
    await _play_one(client, ante=800)
    await world.update_room(room_id, max_ante=500, max_payout=20_000)
    before = await world.helper.wallet(client.player_id)
    assert await _refused(client, ante=800) == (grpc.StatusCode.INVALID_ARGUMENT, "ANTE_OUT_OF_RANGE")
    assert await world.helper.wallet(client.player_id) == before
    view = await client.snapshot()
    assert (view.house.max_ante, view.house.max_payout) == (500, 20_000)
    await _play_one(client, ante=500)
    assert (await world.helper.audit()).balanced


@pytest.mark.parametrize("lobby_and_table", [{"POKER_LOBBY_CLOSED_ACCESS": "true"}], indirect=True)
async def test_closed_access_refuses_house_stakes_to_a_player_not_on_the_list(world: World) -> None:
    client = HouseClient(unique("hp"), "casino-holdem-gram.1", world.table, HOLDEM)
    await world.helper.fund(client.player_id, 10_000)
    assert await _refused(client) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_ON_ALLOW_LIST")
    assert await world.helper.wallet(client.player_id) == 10_000
    await world.lobby.UpdateAllowList(
        lobby_pb2.UpdateAllowListRequest(request_id=uuid.uuid4().hex, add_player_ids=[client.player_id]),
        metadata=ADMIN,
    )
    await _play_one(client)


async def test_a_break_stops_new_rounds_and_a_loss_limit_any_stake_past_it_through_real_services(
    world: World,
) -> None:
    """Issue 37, item 7: the cashier refuses a house round's opening stakes during a break the player
    took (the dealt round finishes) and any stake that would pass their loss limit, a call's too."""
    room_id = await world.create_room()
    cashier = world.helper.cashier
    limited = HouseClient(unique("hp"), f"{room_id}.1", world.table, HOLDEM)
    await world.helper.fund(limited.player_id, 10_000)
    await cashier.SetSelfLimit(
        cashier_pb2.SetSelfLimitRequest(
            request_id=uuid.uuid4().hex,
            pool=common_pb2.CHIP_POOL_GRAM,
            kind=cashier_pb2.SELF_LIMIT_KIND_LOSS_DAILY,
            amount=25,
        ),
        metadata=limited.metadata,
    )
    dealt = (await limited.bet(table_pb2.HouseBox(box=1, ante=10))).round
    assert dealt.phase != "COMPLETE"
    with pytest.raises(grpc.aio.AioRpcError) as call:
        await limited.decide(dealt, 1, CALL)  # the call (20) would take the day's loss to 30
    assert (call.value.code(), reason_of(call.value)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "SELF_LIMIT_REACHED",
    )
    assert await world.helper.wallet(limited.player_id) == 9_990
    assert (await limited.decide(dealt, 1, FOLD)).phase == "COMPLETE"

    resting = HouseClient(unique("hp"), f"{room_id}.1", world.table, HOLDEM)
    await world.helper.fund(resting.player_id, 10_000)
    dealt = (await resting.bet(table_pb2.HouseBox(box=1, ante=10))).round
    await cashier.StartBreak(
        cashier_pb2.StartBreakRequest(
            request_id=uuid.uuid4().hex, kind=cashier_pb2.BREAK_KIND_COOLING_OFF, days=1
        ),
        metadata=resting.metadata,
    )
    assert (await resting.decide(dealt, 1, CALL)).phase == "COMPLETE"  # the dealt round finishes
    before = await world.helper.wallet(resting.player_id)
    assert await _refused(resting) == (grpc.StatusCode.FAILED_PRECONDITION, "COOLING_OFF")
    assert await world.helper.wallet(resting.player_id) == before
    assert (await world.helper.audit()).balanced
