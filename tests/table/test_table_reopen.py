"""A table closed and opened again in the same shard process deals fresh hands at once (issue 30).

Found in the fault run: after a shard restart moved rooms back and a second kill moved them to the
survivor again, the survivor reopened tables it had served before, in the same process, and their
`CommitHand` request ids (`<table>:<boot id>:<n>`) counted from one again. Fairness answered each
with the first commitment of that id, long revealed, so every seal was refused
(HAND_ALREADY_REVEALED), the commitment dropped, and the table dealt nothing until its counter had
passed every number it had used in its earlier life.
"""

from __future__ import annotations

import pytest

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from tests.table.conftest import ServiceProcess, nl_room, table_world, unique, wait_for
from tests.table.players import Player
from tests.table.test_table_closing import LOBBY
from tests.table.test_table_failures import fold_current, running

pytestmark = pytest.mark.postgres


async def test_a_table_reopened_in_the_same_process_commits_new_hands_and_deals_at_once(
    backends: dict[str, ServiceProcess],
) -> None:
    async with table_world(backends, close_empty_table_seconds=0.5, lease_seconds=0.6) as world:
        room = unique("reopen")
        world.add_room(nl_room(room, table_count=2))  # reads open only standing tables
        extra = f"{room}.2"
        players = [Player(unique(name), world.table_channel, extra) for name in ("ann", "bob")]
        for n, player in enumerate(players, start=1):
            await world.fund(player.player_id, 2000)
            await player.watch()
            await player.sit(500, seat=n)
        before: tuple[str, ...] = ()
        for _ in range(3):
            before = (*before, await fold_current(players, before))
        await wait_for(lambda: all(h in world.history.hands for h in before), within=20)
        for player in players:
            await player.leave()
            await player.close()
        directory = shard_directory_pb2_grpc.ShardDirectoryServiceStub(world.table_channel)

        async def closed() -> bool:
            reply = await directory.ListShardTables(
                shard_directory_pb2.ListShardTablesRequest(room_id=room), metadata=LOBBY
            )
            return extra not in {t.table_id for t in reply.tables}

        await wait_for(closed, within=15)
        # The same table opens again in the same process: its first hand is a new one, dealt at once.
        again = [Player(p.player_id, world.table_channel, extra) for p in players]
        for n, player in enumerate(again, start=1):
            await player.watch()
            await player.sit(500, seat=n)
        first = await again[0].until(lambda v: bool(v.hand_id), within=10)
        assert first.hand_id not in before, "the reopened table showed a hand of its earlier life"
        view = await again[0].until(running, within=10)
        assert view.hand_id not in before
        for player in again:
            await player.close()
