"""The table shard against a real lobby process: rooms from the lobby's seeded catalogue, AuthorizeSeat
before each seat (called with the table's own service token), a hand played at `nlhe-gram-duel.1`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from poker.history.v1 import history_pb2_grpc
from poker.table.v1 import table_pb2
from tests.table.conftest import ServiceProcess, StandInHistory, TableWorld, stand_in, unique, wait_for
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2


@pytest.fixture
async def lobby_and_table(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> AsyncIterator[tuple[ServiceProcess, ServiceProcess, StandInHistory]]:
    history = StandInHistory()
    async with stand_in(
        history, "poker.history.v1.HistoryService", history_pb2_grpc.add_HistoryServiceServicer_to_server
    ) as history_server:
        base = {**os.environ, "POKER_LOG_FORMAT": "json", "POKER_DATA_DIR": str(tmp_path)}
        lobby = ServiceProcess("lobby", base)
        await asyncio.to_thread(lobby.start)
        table = ServiceProcess(
            "table",
            {
                **base,
                "POKER_TABLE_LOBBY_ADDRESS": lobby.address,
                "POKER_TABLE_CASHIER_ADDRESS": backends["cashier"].address,
                "POKER_TABLE_FAIRNESS_ADDRESS": backends["fairness"].address,
                "POKER_TABLE_HISTORY_ADDRESS": f"127.0.0.1:{history_server.port}",
                "POKER_TABLE_COUNTDOWN_SECONDS": "0.1",
            },
        )
        try:
            await asyncio.to_thread(table.start)
            yield lobby, table, history
        finally:
            table.stop()
            lobby.stop()


async def test_a_hand_at_a_seeded_lobby_room_through_real_lobby_and_shard_processes(
    backends: dict[str, ServiceProcess],
    lobby_and_table: tuple[ServiceProcess, ServiceProcess, StandInHistory],
) -> None:
    _, table, history = lobby_and_table
    channel = grpc.aio.insecure_channel(table.address)
    cashier = grpc.aio.insecure_channel(backends["cashier"].address)
    helper = TableWorld(None, history, backends, channel, cashier, cashier, settings=None)  # type: ignore[arg-type]
    table_id = "nlhe-gram-duel.1"
    ann = Player(unique("ann"), channel, table_id)
    bob = Player(unique("bob"), channel, table_id)
    try:
        for p in (ann, bob):
            await helper.fund(p.player_id, 1500)
            await p.watch()
        # The room's buy-in (1,000 chips, rules 6) comes from the lobby, not from the table.
        await ann.sit(1000)
        await bob.sit(1000)
        view = await ann.until(lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0)
        assert view.room_id == "nlhe-gram-duel"
        assert sorted(s.bet_this_round for s in view.seats if s.player_id) == [5, 10]
        actor = ann if view.to_act_seat == ann.seat else bob
        await actor.my_turn()
        await actor.act(A.ACTION_KIND_FOLD)
        await wait_for(lambda: view.hand_id in history.hands, within=20)
        for p in (ann, bob):
            await p.close()
            await p.leave()
        await wait_for(lambda: _wallets(helper, ann.player_id, bob.player_id, 3000), within=20)
    finally:
        await channel.close()
        await cashier.close()


async def _wallets(helper: TableWorld, first: str, second: str, total: int) -> bool:
    return await helper.wallet(first) + await helper.wallet(second) == total
