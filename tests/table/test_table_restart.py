"""Shard restart: a table process killed with SIGKILL comes back with every player in their seat and
the stack of the last settled hand (the cashier's seat sessions are the truth), and goes on with the
hand it was running (issue 30: the embedded default keeps its hand logs in a file); nothing is lost."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from collections.abc import AsyncIterator

import pytest

from poker.history.v1 import history_pb2_grpc
from poker.lobby.v1 import lobby_pb2_grpc
from poker.table.v1 import table_pb2
from tests.table.conftest import (
    ServiceProcess,
    StandInHistory,
    StandInLobby,
    TableWorld,
    nl_room,
    stand_in,
    unique,
    wait_for,
)
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2


@pytest.fixture
async def stand_ins() -> AsyncIterator[tuple[StandInLobby, StandInHistory, int, int]]:
    lobby, history = StandInLobby(), StandInHistory()
    async with (
        stand_in(
            lobby, "poker.lobby.v1.LobbyService", lobby_pb2_grpc.add_LobbyServiceServicer_to_server
        ) as ls,
        stand_in(
            history, "poker.history.v1.HistoryService", history_pb2_grpc.add_HistoryServiceServicer_to_server
        ) as hs,
    ):
        yield lobby, history, ls.port, hs.port


def table_process(backends: dict[str, ServiceProcess], lobby_port: int, history_port: int) -> ServiceProcess:
    env = {
        **os.environ,
        "POKER_LOG_FORMAT": "json",
        "POKER_TABLE_LOBBY_ADDRESS": f"127.0.0.1:{lobby_port}",
        "POKER_TABLE_HISTORY_ADDRESS": f"127.0.0.1:{history_port}",
        "POKER_TABLE_CASHIER_ADDRESS": backends["cashier"].address,
        "POKER_TABLE_FAIRNESS_ADDRESS": backends["fairness"].address,
        "POKER_TABLE_COUNTDOWN_SECONDS": "0.3",
        "POKER_TABLE_SHOWDOWN_SECONDS": "0",
        "POKER_TABLE_ACTION_SECONDS": "5",
        "POKER_TABLE_RETRY_INITIAL_SECONDS": "0.05",
        # Its own data folder (the record outbox, the house journal), kept across its restarts.
        "POKER_DATA_DIR": tempfile.mkdtemp(prefix="table-shard-"),
    }
    return ServiceProcess("table", env)


async def test_kill_9_between_and_during_hands_brings_every_player_back_with_settled_stacks(
    backends: dict[str, ServiceProcess], stand_ins: tuple[StandInLobby, StandInHistory, int, int]
) -> None:
    import grpc

    lobby, history, lobby_port, history_port = stand_ins
    room = nl_room(unique("restart"))
    lobby.rooms[room.room_id] = room
    table_id = f"{room.room_id}.1"
    shard = table_process(backends, lobby_port, history_port)
    await asyncio.to_thread(shard.start)
    channel = grpc.aio.insecure_channel(shard.address)
    helper = TableWorld(lobby, history, backends, channel, *_backend_channels(backends), settings=None)  # type: ignore[arg-type]
    players = [Player(unique(name), channel, table_id) for name in ("ann", "bob", "cat")]
    try:
        for p in players:
            await helper.fund(p.player_id, 1000)
            await p.watch()
        for n, p in enumerate(players, start=1):
            await p.sit(400 + 100 * n, seat=n)
        # Play two hands by folding to the big blind, then kill the shard in the middle of a third.
        for _ in range(2):
            view = await players[0].until(lambda v: v.to_act_seat != 0 and v.hand_id not in history.hands)
            hand_id = view.hand_id
            while hand_id not in history.hands:
                now = await players[0].snapshot()
                if now.hand_id != hand_id or now.to_act_seat == 0:
                    await asyncio.sleep(0.02)
                    continue
                actor = next(p for p in players if p.seat == now.to_act_seat)
                turn = await actor.my_turn()
                can_check = A.ACTION_KIND_CHECK in turn.legal_actions.actions
                await actor.act(A.ACTION_KIND_CHECK if can_check else A.ACTION_KIND_FOLD)
                await asyncio.sleep(0.02)
        running = await players[0].until(lambda v: v.to_act_seat != 0)
        # One decision in the hand, so the kill cuts it past its blinds.
        actor = next(p for p in players if p.seat == running.to_act_seat)
        await actor.my_turn()
        await actor.act(A.ACTION_KIND_CALL)
        before = await players[0].until(lambda v: v.to_act_seat not in (0, running.to_act_seat))
        shard.process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
        shard.process.wait()  # type: ignore[union-attr]
        for p in players:
            await p.close()
        await channel.close()

        stacks_before = await _seat_stacks(helper, table_id)
        assert sorted(stacks_before) == sorted(p.player_id for p in players)

        await asyncio.to_thread(shard.start)
        channel = grpc.aio.insecure_channel(shard.address)
        for p in players:
            p.stub = type(p.stub)(channel)
        view = await players[0].snapshot()
        # Back in their seats, in the hand the kill cut: the same hand, stacks, bets, player to act
        # and her own cards (the cashier's stacks are still those before it: it never settled).
        assert (view.hand_id, view.to_act_seat) == (before.hand_id, before.to_act_seat)
        assert [(s.player_id, s.stack, s.bet_this_round) for s in view.seats] == [
            (s.player_id, s.stack, s.bet_this_round) for s in before.seats
        ]
        mine = [players[0].seat_view(v, players[0].seat).hole_cards for v in (view, before)]
        assert mine[0] == mine[1]
        assert len(mine[0]) == 2
        assert await _seat_stacks(helper, table_id) == stacks_before
        # And they play on: each leaves (folded mid-hand, cashed out once it settled), with
        # everything accounted for; the hand the kill cut is recorded, not voided.
        for p in players:
            await p.leave()
        await wait_for(lambda: _all_cashed_out(helper, table_id), within=30)
        await wait_for(lambda: before.hand_id in history.hands, within=15)
        assert not history.hands[before.hand_id].voided
        wallets = [await helper.wallet(p.player_id) for p in players]
        rake = sum(h.rake for h in history.hands.values())
        assert sum(wallets) + rake == 3000
        audit = await helper.audit()
        assert all(pool.balanced for pool in audit.pools)
    finally:
        await channel.close()
        for c in (helper.cashier_channel, helper.fairness_channel):
            await c.close()
        shard.kill()


def _backend_channels(backends: dict[str, ServiceProcess]) -> list[object]:
    import grpc

    return [grpc.aio.insecure_channel(backends[name].address) for name in ("cashier", "fairness")]


async def _seat_stacks(world: TableWorld, table_id: str) -> dict[str, int]:
    from poker.cashier.v1 import cashier_pb2
    from tests.table.conftest import AS_TABLE

    reply = await world.cashier.ListOpenSeatSessions(
        cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id), metadata=AS_TABLE
    )
    return {s.player_id: s.stack for s in reply.seat_sessions}


async def _all_cashed_out(world: TableWorld, table_id: str) -> bool:
    return not await _seat_stacks(world, table_id)


async def test_a_restarted_shard_reopens_every_extra_table_with_players_seated_before_anyone_calls(
    backends: dict[str, ServiceProcess], stand_ins: tuple[StandInLobby, StandInHistory, int, int]
) -> None:
    import grpc

    from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
    from service_runtime.auth import Role
    from service_runtime.testing import auth_metadata

    lobby, history, lobby_port, history_port = stand_ins
    room = nl_room(unique("extras"), table_count=5)  # reads open only standing tables
    lobby.rooms[room.room_id] = room
    # Seats at tables 2 and 5 (3 and 4 empty: a hole the probe must look past), none at 1.
    seated_at = {f"{room.room_id}.2": unique("ann"), f"{room.room_id}.5": unique("bob")}
    shard = table_process(backends, lobby_port, history_port)
    await asyncio.to_thread(shard.start)
    channel = grpc.aio.insecure_channel(shard.address)
    helper = TableWorld(lobby, history, backends, channel, *_backend_channels(backends), settings=None)  # type: ignore[arg-type]

    async def open_tables() -> dict[str, list[str]]:
        reply = await shard_directory_pb2_grpc.ShardDirectoryServiceStub(channel).ListShardTables(
            shard_directory_pb2.ListShardTablesRequest(room_id=room.room_id),
            metadata=auth_metadata("lobby", Role.SERVICE),
        )
        return {t.table_id: [s.display_name for s in t.taken_seats] for t in reply.tables}

    try:
        for table_id, name in seated_at.items():
            player = Player(name, channel, table_id)
            await helper.fund(name, 1000)
            await player.watch()
            await player.sit(500)
            await player.close()
        shard.process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
        shard.process.wait()  # type: ignore[union-attr]
        await channel.close()

        await asyncio.to_thread(shard.start)
        channel = grpc.aio.insecure_channel(shard.address)

        async def back() -> bool:
            tables = await open_tables()
            return all(tables.get(t) == [name] for t, name in seated_at.items())

        await wait_for(back, within=15)
        assert set(await open_tables()) == {f"{room.room_id}.1", *seated_at}
        for table_id, name in seated_at.items():
            leaving = Player(name, channel, table_id)
            await leaving.leave()
            await wait_for(lambda t=table_id: _all_cashed_out(helper, t), within=15)
            assert await helper.wallet(name) == 1000
    finally:
        await channel.close()
        for c in (helper.cashier_channel, helper.fairness_channel):
            await c.close()
        shard.kill()
