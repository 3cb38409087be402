"""A room's extra table closes once empty (issue 13: "closes an extra table once it is empty").

The first table of a room stays open; an extra one (`<room>.2`, ...) that has had no seat, no watcher
and no hand for `close_empty_table_seconds` leaves the shard (and the lobby's view of it), and the
next call for it opens it again.
"""

from __future__ import annotations

import asyncio

import pytest

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata
from tests.table.conftest import ServiceProcess, nl_room, table_world, unique, wait_for
from tests.table.players import Player

pytestmark = pytest.mark.postgres

LOBBY = auth_metadata("lobby", Role.SERVICE)


async def test_an_extra_table_closes_once_empty_and_the_first_stays(
    backends: dict[str, ServiceProcess],
) -> None:
    async with table_world(backends, close_empty_table_seconds=0.5, lease_seconds=0.6) as world:
        room = unique("extra")
        # Two standing tables: a read may open only those; the shard still closes an extra one empty.
        first = world.add_room(nl_room(room, table_count=2))
        extra = f"{room}.2"
        directory = shard_directory_pb2_grpc.ShardDirectoryServiceStub(world.table_channel)

        async def open_tables() -> set[str]:
            reply = await directory.ListShardTables(
                shard_directory_pb2.ListShardTablesRequest(room_id=room), metadata=LOBBY
            )
            return {t.table_id for t in reply.tables}

        ann = Player(unique("ann"), world.table_channel, extra)
        await world.fund(ann.player_id, 1000)
        await ann.watch()
        await ann.sit(500, seat=1)
        assert await open_tables() == {first, extra}
        # Seated (and watching): the table stays however long it waits for a second player.
        await asyncio.sleep(1.5)
        assert extra in await open_tables()
        await ann.leave()
        await ann.close()

        async def extra_closed() -> bool:
            return extra not in await open_tables()

        await wait_for(extra_closed, within=10)
        assert first in await open_tables()
        assert await world.wallet(ann.player_id) == 1000
        # The next player opens it again: a closed table is only a number the room may reuse.
        bob = Player(unique("bob"), world.table_channel, extra)
        await world.fund(bob.player_id, 1000)
        await bob.watch()
        await bob.sit(500, seat=2)
        assert extra in await open_tables()
        await bob.leave()
        await bob.close()
        audit = await world.audit()
        assert all(pool.balanced for pool in audit.pools)
