"""House-game rounds at the lobby's seeded house rooms (`casino-holdem-gram.1`, `russian-poker-mpx.1`)
through real lobby and table shard processes: the room's ante range, boxes and maximum payout come
from the catalogue."""

from __future__ import annotations

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from tests.table.conftest import ServiceProcess, TableWorld, unique, wait_for
from tests.table.house_players import CALL, FOLD, TAKE_ANTE, HouseClient, fund_house
from tests.table.test_table_with_lobby import lobby_and_table

pytestmark = pytest.mark.postgres
__all__ = ["lobby_and_table"]


async def test_rounds_at_the_seeded_house_rooms(
    backends: dict[str, ServiceProcess],
    lobby_and_table: tuple[ServiceProcess, ServiceProcess, ServiceProcess],
) -> None:
    _, table, history = lobby_and_table
    channel = grpc.aio.insecure_channel(table.address)
    cashier = grpc.aio.insecure_channel(backends["cashier"].address)
    history_channel = grpc.aio.insecure_channel(history.address)
    records = history_pb2_grpc.HistoryServiceStub(history_channel)
    helper = TableWorld(None, None, backends, channel, cashier, cashier, settings=None)  # type: ignore[arg-type]
    try:
        for table_id, variant, pool in (
            ("casino-holdem-gram.1", common_pb2.GAME_VARIANT_CASINO_HOLDEM, common_pb2.CHIP_POOL_GRAM),
            ("russian-poker-mpx.1", common_pb2.GAME_VARIANT_RUSSIAN_POKER, common_pb2.CHIP_POOL_MPX),
        ):
            await fund_house(helper, 1_000_000, pool=pool)
            client = HouseClient(unique("hp"), table_id, table_pb2_grpc.TableServiceStub(channel), variant)
            await helper.fund(client.player_id, 10_000, pool)
            view = await client.snapshot()
            assert (view.variant, view.pool) == (variant, pool)
            assert (view.house.min_ante, view.house.max_ante, view.house.max_payout, view.house.boxes) == (
                10,
                1000,
                50_000,
                7,
            )
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.bet(table_pb2.HouseBox(box=1, ante=5))
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            round_view = (await client.bet(table_pb2.HouseBox(box=1, ante=10))).round
            round_view = await client.decide(
                round_view, 1, CALL if variant == common_pb2.GAME_VARIANT_CASINO_HOLDEM else FOLD
            )
            if round_view.phase == "NO_GAME_CHOICES":
                round_view = await client.decide(round_view, 1, TAKE_ANTE)
            assert round_view.phase == "COMPLETE"

            # The round reaches the real history process; the player reads it with every line.
            async def recorded(
                rid: str = round_view.round_id,
                who: HouseClient = client,
                expected: int = len(round_view.boxes[0].settlement),
            ) -> bool:
                try:
                    reply = await records.GetHand(
                        history_pb2.GetHandRequest(hand_id=rid), metadata=who.metadata
                    )
                except grpc.aio.AioRpcError as error:
                    if error.code() == grpc.StatusCode.NOT_FOUND:
                        return False
                    raise
                lines = [line for box in reply.hand.house_game.boxes for line in box.lines]
                assert len(lines) == expected
                assert reply.hand.seed_reveal_reference == rid
                return True

            await wait_for(recorded, within=20)
            assert (await helper.audit()).balanced
    finally:
        await channel.close()
        await cashier.close()
        await history_channel.close()
