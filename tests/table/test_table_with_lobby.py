"""The table shard against real lobby and history processes: rooms from the lobby's seeded catalogue,
AuthorizeSeat before each seat (called with the table's own service token), a hand played at
`nlhe-gram-duel.1` that reaches history's store (RecordHand with the table's token), where each player
reads it with the other's folded cards hidden and nets equal to the cashier's wallets."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.testing import auth_metadata, reason_of
from tests.table.conftest import ServiceProcess, TableWorld, unique, wait_for
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2


@pytest.fixture
async def lobby_and_table(
    backends: dict[str, ServiceProcess], tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[ServiceProcess, ServiceProcess, ServiceProcess]]:
    base = {**os.environ, "POKER_LOG_FORMAT": "json", "POKER_DATA_DIR": str(tmp_path)}
    # Indirect parametrisation may add lobby settings (closed access, say).
    lobby = ServiceProcess("lobby", {**base, **getattr(request, "param", {})})
    history = ServiceProcess(
        "history", {**base, "POKER_HISTORY_CASHIER_ADDRESS": backends["cashier"].address}
    )
    table = ServiceProcess(
        "table",
        {
            **base,
            "POKER_TABLE_CASHIER_ADDRESS": backends["cashier"].address,
            "POKER_TABLE_FAIRNESS_ADDRESS": backends["fairness"].address,
            "POKER_TABLE_COUNTDOWN_SECONDS": "0.1",
            "POKER_TABLE_SHOWDOWN_SECONDS": "0",
            "POKER_TABLE_MAINTENANCE_POLL_SECONDS": "0.2",
        },
    )
    try:
        await asyncio.gather(asyncio.to_thread(lobby.start), asyncio.to_thread(history.start))
        table.env["POKER_TABLE_LOBBY_ADDRESS"] = lobby.address
        table.env["POKER_TABLE_HISTORY_ADDRESS"] = history.address
        await asyncio.to_thread(table.start)
        yield lobby, table, history
    finally:
        for process in (table, history, lobby):
            process.stop()


async def test_a_hand_at_a_seeded_lobby_room_through_real_lobby_and_shard_processes(
    backends: dict[str, ServiceProcess],
    lobby_and_table: tuple[ServiceProcess, ServiceProcess, ServiceProcess],
) -> None:
    _, table, history = lobby_and_table
    channel = grpc.aio.insecure_channel(table.address)
    cashier = grpc.aio.insecure_channel(backends["cashier"].address)
    history_channel = grpc.aio.insecure_channel(history.address)
    records = history_pb2_grpc.HistoryServiceStub(history_channel)
    helper = TableWorld(None, None, backends, channel, cashier, cashier, settings=None)  # type: ignore[arg-type]
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
        # Both sit out first (from the next hand on), so that no second hand deals before they
        # leave, however long the leaving takes on a loaded machine: one hand, one record.
        for p in (ann, bob):
            await p.stub.SitOut(
                A.SitOutRequest(request_id=unique("out"), table_id=table_id), metadata=p.metadata
            )
        await actor.act(A.ACTION_KIND_FOLD)

        async def recorded(player: Player) -> history_pb2.HandRecord | None:
            try:
                reply = await records.GetHand(
                    history_pb2.GetHandRequest(hand_id=view.hand_id),
                    metadata=auth_metadata(player.player_id, Role.PLAYER),
                )
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.NOT_FOUND:
                    return None
                raise
            return reply.hand

        await wait_for(lambda: recorded(ann), within=20)
        for p in (ann, bob):
            await p.close()
            await p.leave()
        await wait_for(lambda: _wallets(helper, ann.player_id, bob.player_id, 3000), within=20)
        # History's record, as each player reads it: own cards, the other's hidden (nobody showed),
        # nets that are the cashier's wallet changes.
        for me, other in ((ann, bob), (bob, ann)):
            record = await recorded(me)
            assert record is not None
            assert record.table_id == table_id
            # The other player is their display name (the lobby's profile: a development id's own).
            seats = {s.player_id or s.display_name: s for s in record.seats}
            assert len(seats[me.player_id].hole_cards) == 2
            assert not any(c.hidden for c in seats[me.player_id].hole_cards)
            assert not seats[other.player_id].shown
            assert [c for c in seats[other.player_id].hole_cards] == [common_pb2.Card(hidden=True)] * 2
            assert await helper.wallet(me.player_id) == 500 + 1000 + seats[me.player_id].net_result
        mine = await records.ListMyHands(
            history_pb2.ListMyHandsRequest(), metadata=auth_metadata(ann.player_id, Role.PLAYER)
        )
        assert [h.hand_id for h in mine.hands] == [view.hand_id]
    finally:
        await channel.close()
        await cashier.close()
        await history_channel.close()


async def _wallets(helper: TableWorld, first: str, second: str, total: int) -> bool:
    return await helper.wallet(first) + await helper.wallet(second) == total


async def test_maintenance_set_on_the_lobby_stops_seats_then_hands_at_the_table_and_lifting_resumes(
    backends: dict[str, ServiceProcess],
    lobby_and_table: tuple[ServiceProcess, ServiceProcess, ServiceProcess],
) -> None:
    lobby, table, _ = lobby_and_table
    channel = grpc.aio.insecure_channel(table.address)
    cashier = grpc.aio.insecure_channel(backends["cashier"].address)
    lobby_channel = grpc.aio.insecure_channel(lobby.address)
    admin = lobby_pb2_grpc.LobbyServiceStub(lobby_channel)
    helper = TableWorld(None, None, backends, channel, cashier, cashier, settings=None)  # type: ignore[arg-type]
    room_id, table_id = "nlhe-gram-duel", "nlhe-gram-duel.1"
    ann = Player(unique("ann"), channel, table_id)
    bob = Player(unique("bob"), channel, table_id)

    async def switch(*, no_new_seats: bool = False, no_new_hands: bool = False) -> None:
        await admin.SetMaintenance(
            lobby_pb2.SetMaintenanceRequest(
                request_id=unique("maintenance"),
                room_id=room_id,
                maintenance=lobby_pb2.Maintenance(
                    no_new_seats=no_new_seats, no_new_hands=no_new_hands, message="test"
                ),
            ),
            metadata=auth_metadata("operator", *STAFF_ROLES),
        )

    try:
        for p in (ann, bob):
            await helper.fund(p.player_id, 1500)
            await p.watch()
        await switch(no_new_seats=True)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await ann.sit(1000)
        assert (refused.value.code(), reason_of(refused.value)) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "MAINTENANCE_NO_NEW_SEATS",
        )
        assert await helper.wallet(ann.player_id) == 1500
        await switch()
        await ann.sit(1000)
        await bob.sit(1000)
        view = await ann.until(lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0)
        # No new hands: the running hand is played to its end, then the table pauses.
        await switch(no_new_hands=True)
        await asyncio.sleep(1.0)
        actor = ann if view.to_act_seat == ann.seat else bob
        await actor.my_turn()
        await actor.act(A.ACTION_KIND_FOLD)
        await ann.until(lambda v: v.phase == A.TABLE_PHASE_PAUSED)
        await asyncio.sleep(1.0)
        paused = await ann.snapshot()
        assert (paused.phase, paused.hand_id) == (A.TABLE_PHASE_PAUSED, view.hand_id)
        await switch()
        await ann.until(
            lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.hand_id not in ("", view.hand_id)
        )
    finally:
        for p in (ann, bob):
            await p.close()
            with contextlib.suppress(grpc.aio.AioRpcError):
                await p.leave()
        await wait_for(lambda: _wallets(helper, ann.player_id, bob.player_id, 3000), within=20)
        for c in (channel, cashier, lobby_channel):
            await c.close()
