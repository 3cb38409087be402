"""Load: one account at its limits cannot lock seated players out (issue 23, item 5).

Bounded and on loopback only: a server with 60 streams, 20 of them kept for seated players, a share
of 12 streams per player and 2 streams without a seat per account at a table. One account opens
streams without end over six tables, thirty others spectate until the viewers' share is full; the
seated players then drop their streams, come back, and play a hand. Every check is on outcomes (which
call got which answer), none on how fast: each stream's first answer (a message or an error) is
awaited without a deadline of its own.

On the old code there was no per-player share and no reserve: the one account took every stream it
asked for (a table's 200 spectator slots included), and the seated players' new streams were refused
SERVER_OVERLOADED.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from pathlib import Path

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.table.v1 import table_pb2
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata, reason_of
from tests.table.conftest import ServiceProcess, nl_room, table_world, unique
from tests.table.house_players import FOLD, HouseClient, fund_house, house_room
from tests.table.players import Player
from tests.table.test_table_hands import in_hand, play_passively

pytestmark = pytest.mark.postgres

A = table_pb2
TABLES = 6
# Every reason a shed stream may carry, each in the error catalogue and docs/access.md.
DOCUMENTED = {
    "RESOURCE_EXHAUSTED:CALLER_QUOTA_EXCEEDED",
    "RESOURCE_EXHAUSTED:SPECTATOR_QUOTA_EXCEEDED",
    "RESOURCE_EXHAUSTED:VIEWERS_FULL",
    "RESOURCE_EXHAUSTED:SERVER_OVERLOADED",
}


class Held:
    """Open streams kept open until the test ends; each one's first answer recorded."""

    def __init__(self) -> None:
        self.calls: list[grpc.aio.UnaryStreamCall] = []

    async def first_answer(self, call: grpc.aio.UnaryStreamCall) -> str:
        self.calls.append(call)
        try:
            await call.read()
        except grpc.aio.AioRpcError as error:
            return f"{error.code().name}:{reason_of(error)}"
        return "OK"

    def close(self) -> None:
        for call in self.calls:
            call.cancel()


async def test_one_account_at_its_limits_leaves_seated_players_their_streams(
    backends: dict[str, ServiceProcess],
) -> None:
    async with table_world(
        backends,
        max_concurrent_streams=60,
        seated_stream_reserve=20,
        player_concurrent_streams=12,
        spectator_streams_per_account=2,
        spectator_delay_seconds=0.0,
    ) as world:
        room = unique("load")
        world.add_room(nl_room(room, table_count=TABLES))
        tables = [f"{room}.{n}" for n in range(1, TABLES + 1)]
        ann, bob = (Player(unique(name), world.table_channel, tables[0]) for name in ("ann", "bob"))
        for n, player in enumerate((ann, bob), start=1):
            await world.fund(player.player_id, 1000)
            await player.watch()
            await player.sit(500, seat=n)
        held = Held()
        try:
            # One account asks for 4 spectator streams at each of the 6 tables and 4 WatchTable streams
            # without a seat at each: 48 streams.
            # One ask after the other, each answered before the next: which of 24 asks in flight at
            # once meets the account's share first is the machine's timing, not the rule (with all 24
            # concurrent, as few as 8 were let through on a loaded machine).
            hog = auth_metadata(unique("hog"), Role.PLAYER)
            hog_spectating = collections.Counter()
            for table_id in tables:
                for _ in range(4):
                    call = world.table.SpectateTable(A.SpectateTableRequest(table_id=table_id), metadata=hog)
                    hog_spectating[await held.first_answer(call)] += 1
            watching = [
                world.table.WatchTable(A.WatchTableRequest(table_id=table_id), metadata=hog)
                for table_id in tables
                for _ in range(4)
            ]
            hog_watching = collections.Counter([await held.first_answer(call) for call in watching])
            # Two streams without a seat per table: 12 spectator streams, which is also the account's
            # share of the server, so the last table's third and fourth asks meet that share first.
            # (A refused ask's slot of the account's share is freed a moment after its answer, so on a
            # loaded machine the next ask can still meet it: one or two fewer may be let through.)
            assert set(hog_spectating) <= {
                "OK",
                "RESOURCE_EXHAUSTED:SPECTATOR_QUOTA_EXCEEDED",
                "RESOURCE_EXHAUSTED:CALLER_QUOTA_EXCEEDED",
            }, hog_spectating
            held_by_hog = hog_spectating["OK"]
            assert 10 <= held_by_hog <= 12, hog_spectating
            assert hog_spectating["RESOURCE_EXHAUSTED:SPECTATOR_QUOTA_EXCEEDED"] >= 8, hog_spectating
            assert hog_watching == {"RESOURCE_EXHAUSTED:CALLER_QUOTA_EXCEEDED": 24}
            # Thirty other accounts spectate: the viewers' share of the server (60 - 20 = 40) fills; the
            # account took 12 of it, and the seated players' first streams (opened before they sat) 2.
            others = [
                world.table.SpectateTable(
                    A.SpectateTableRequest(table_id=tables[n % TABLES]),
                    metadata=auth_metadata(unique("fan"), Role.PLAYER),
                )
                for n in range(30)
            ]
            fans = collections.Counter([await held.first_answer(call) for call in others])
            assert set(fans) <= {"OK", "RESOURCE_EXHAUSTED:VIEWERS_FULL"}, fans
            assert fans["OK"] == 60 - 20 - held_by_hog - 2
            assert set(hog_spectating) | set(hog_watching) | set(fans) <= DOCUMENTED | {"OK"}

            # The seated players drop their connection and come back: the reserve is theirs.
            for player in (ann, bob):
                await player.close()
            for player in (ann, bob):
                await player.watch()
            view = await ann.until(in_hand, within=60)
            await play_passively([ann, bob], view.hand_id)
            after = await ann.until(lambda v: v.hand_id != view.hand_id, within=60)
            assert after.hand_id != view.hand_id
        finally:
            held.close()
            for player in (ann, bob):
                with contextlib.suppress(Exception):
                    await player.close()
            await asyncio.sleep(0)
        for player in (ann, bob):
            await player.leave()
        assert (await world.audit()).balanced


async def test_watching_a_house_table_without_a_round_takes_a_viewers_share(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    """A WatchTable stream at a house table of a player with no round there is a viewer, as at a cash
    table: at most 2 per account at the table, and all of them within the viewers' share, so the
    reserve stays for players with a round. On the old code only cash tables counted viewers: one
    account held 4 (and more) streams at a house table, and free accounts there could take the
    streams kept for seated players (the audit counted about 63 accounts for the 200 of a shard)."""
    async with table_world(
        backends,
        house_journal=str(tmp_path / "journal.jsonl"),
        house_decision_seconds=60.0,
        max_concurrent_streams=30,
        seated_stream_reserve=20,
        player_concurrent_streams=12,
        spectator_streams_per_account=2,
    ) as world:
        await fund_house(world, 10_000_000)
        table_id = world.add_room(house_room(unique("house"), common_pb2.GAME_VARIANT_CASINO_HOLDEM))
        pat = HouseClient(unique("hp"), table_id, world.table, common_pb2.GAME_VARIANT_CASINO_HOLDEM)
        await world.fund(pat.player_id, 100_000)
        placed = await pat.bet(A.HouseBox(box=1, ante=10))
        held = Held()
        try:
            # One account without a round: its third and fourth streams are refused, also after it
            # committed a next round with SetPlayerSeed (which costs nothing).
            hog = auth_metadata(unique("hog"), Role.PLAYER)
            seed = A.SetPlayerSeedRequest(request_id=unique("seed"), table_id=table_id, client_seed="abc")
            await world.table.SetPlayerSeed(seed, metadata=hog)
            hog_watching = collections.Counter()
            for _ in range(4):
                call = world.table.WatchTable(A.WatchTableRequest(table_id=table_id), metadata=hog)
                hog_watching[await held.first_answer(call)] += 1
            assert hog_watching == {"OK": 2, "RESOURCE_EXHAUSTED:SPECTATOR_QUOTA_EXCEEDED": 2}
            # Four more accounts fill the viewers' share (30 - 20 = 10); the next one is refused.
            fans = collections.Counter()
            for _ in range(5):
                fan = auth_metadata(unique("fan"), Role.PLAYER)
                for _ in range(2):
                    call = world.table.WatchTable(A.WatchTableRequest(table_id=table_id), metadata=fan)
                    fans[await held.first_answer(call)] += 1
            assert fans == {"OK": 8, "RESOURCE_EXHAUSTED:VIEWERS_FULL": 2}
            # The player with a round watches it out of the reserve.
            call = world.table.WatchTable(A.WatchTableRequest(table_id=table_id), metadata=pat.metadata)
            held.calls.append(call)
            first = await call.read()
            assert isinstance(first, A.WatchTableResponse)
            assert first.view.house.round.round_id == placed.round.round_id
        finally:
            held.close()
            await asyncio.sleep(0)
        view = placed.round
        while view.phase != "COMPLETE":
            view = await pat.decide(view, 1, FOLD)
        assert (await world.audit()).balanced
