"""Rules 18 at the table, through real lobby and table processes: the operator's two maintenance switches
with a hand in progress (no new seats: SitDown refused while play goes on; no new hands: the running
hand is played out, then PAUSED in every view, players may leave and cash out; lifted: play resumes),
and closed access: SitDown and (with the setting) spectating refuse players not on the allow-list."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2
from service_runtime.auth import Role
from service_runtime.testing import reason_of
from tests.table.conftest import ADMIN, ServiceProcess, TableWorld, unique, wait_for
from tests.table.players import Player
from tests.table.presence_kit import Spectator, running

pytestmark = pytest.mark.postgres

A = table_pb2
ROOM = "nlhe-gram-classic"  # 4 seats, buy-in 1,000 (rules 6)
TABLE = f"{ROOM}.1"
SPECTATOR_DELAY = 0.5


@pytest.fixture
async def closed_lobby(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> AsyncIterator[tuple[grpc.aio.Channel, lobby_pb2_grpc.LobbyServiceStub, TableWorld]]:
    base = {**os.environ, "POKER_LOG_FORMAT": "json", "POKER_DATA_DIR": str(tmp_path)}
    lobby = ServiceProcess("lobby", {**base, "POKER_LOBBY_CLOSED_ACCESS": "true"})
    await asyncio.to_thread(lobby.start)
    table = ServiceProcess(
        "table",
        {
            **base,
            "POKER_TABLE_LOBBY_ADDRESS": lobby.address,
            "POKER_TABLE_CASHIER_ADDRESS": backends["cashier"].address,
            "POKER_TABLE_FAIRNESS_ADDRESS": backends["fairness"].address,
            # History is not part of this test: its records wait in the shard's retrying queue.
            "POKER_TABLE_HISTORY_ADDRESS": "127.0.0.1:9",
            "POKER_TABLE_COUNTDOWN_SECONDS": "0.1",
            "POKER_TABLE_SHOWDOWN_SECONDS": "0",
            "POKER_TABLE_MAINTENANCE_POLL_SECONDS": "0.2",
            "POKER_TABLE_SPECTATOR_DELAY_SECONDS": str(SPECTATOR_DELAY),
            "POKER_TABLE_SPECTATORS_NEED_ACCESS": "true",
        },
    )
    lobby_channel = grpc.aio.insecure_channel(lobby.address)
    cashier = grpc.aio.insecure_channel(backends["cashier"].address)
    channel: grpc.aio.Channel | None = None
    try:
        await asyncio.to_thread(table.start)
        channel = grpc.aio.insecure_channel(table.address)
        helper = TableWorld(None, None, backends, channel, cashier, cashier, settings=None)  # type: ignore[arg-type]
        yield channel, lobby_pb2_grpc.LobbyServiceStub(lobby_channel), helper
    finally:
        for open_channel in (channel, lobby_channel, cashier):
            if open_channel is not None:
                await open_channel.close()
        table.stop()
        lobby.stop()


async def _allow(lobby: lobby_pb2_grpc.LobbyServiceStub, *players: Player) -> None:
    await lobby.UpdateAllowList(
        lobby_pb2.UpdateAllowListRequest(
            request_id=unique("allow"), room_id="", add_player_ids=[p.player_id for p in players]
        ),
        metadata=ADMIN,
    )


async def _switch(lobby: lobby_pb2_grpc.LobbyServiceStub, *, seats: bool, hands: bool) -> None:
    await lobby.SetMaintenance(
        lobby_pb2.SetMaintenanceRequest(
            request_id=unique("maint"),
            room_id=ROOM,
            maintenance=lobby_pb2.Maintenance(no_new_seats=seats, no_new_hands=hands, message="deploy"),
        ),
        metadata=ADMIN,
    )


async def _fold_running(players: list[Player], not_hand: str = "") -> str:
    view = await players[0].until(lambda v: running(v) and v.hand_id != not_hand, within=20)
    actor = next(p for p in players if p.seat == view.to_act_seat)
    await actor.until(lambda v: v.hand_id == view.hand_id and v.to_act_seat == actor.seat)
    await actor.act(A.ACTION_KIND_FOLD, hand_id=view.hand_id)
    return view.hand_id


async def test_maintenance_both_switches_with_a_hand_in_progress(
    closed_lobby: tuple[grpc.aio.Channel, lobby_pb2_grpc.LobbyServiceStub, TableWorld],
) -> None:
    channel, lobby, helper = closed_lobby
    ann, bob, cat = (Player(unique(n), channel, TABLE) for n in ("ann", "bob", "cat"))
    await _allow(lobby, ann, bob, cat)
    for p in (ann, bob, cat):
        await helper.fund(p.player_id, 1500)
        await p.watch()
    await ann.sit(1000)
    await bob.sit(1000)
    first = await ann.until(running, within=20)
    # No new seats: SitDown is refused with its reason, nothing taken; the hand in progress goes on.
    await _switch(lobby, seats=True, hands=False)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await cat.sit(1000)
    assert (refused.value.code(), reason_of(refused.value)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "MAINTENANCE_NO_NEW_SEATS",
    )
    assert await helper.wallet(cat.player_id) == 1500
    # Spectating is not a seat: maintenance does not stop it.
    fan = Spectator(cat.player_id, channel, TABLE)
    await fan.start()
    played = await _fold_running([ann, bob])
    assert played == first.hand_id
    second = await ann.until(lambda v: running(v) and v.hand_id != played, within=20)
    # No new hands, switched on in the middle of a hand: it is played to its end by the usual rules,
    # then the table pauses (phase PAUSED in every view, the spectator's too once the delay passed).
    await _switch(lobby, seats=True, hands=True)
    await asyncio.sleep(0.6)  # the shard's poll (0.2 s) has seen the switch
    assert (await ann.snapshot()).hand_id == second.hand_id
    await _fold_running([ann, bob], not_hand=played)
    for p in (ann, bob, cat):
        await p.until(lambda v: v.phase == A.TABLE_PHASE_PAUSED and v.to_act_seat == 0, within=10)
    await fan.until(lambda m: m.view.phase == A.TABLE_PHASE_PAUSED, within=SPECTATOR_DELAY + 10)
    await asyncio.sleep(0.5)
    assert (await ann.snapshot()).phase == A.TABLE_PHASE_PAUSED
    # Players may leave and cash out while paused.
    left = await bob.leave()
    assert not left.folded_mid_hand
    assert left.cashed_out.amount > 0
    assert await helper.wallet(bob.player_id) == 500 + left.cashed_out.amount
    # Lifted: seats and hands again.
    await _switch(lobby, seats=False, hands=False)
    await cat.sit(1000)
    resumed = await ann.until(lambda v: running(v) and v.hand_id not in (played, second.hand_id), within=20)
    assert {s.display_name for s in resumed.seats if s.hole_cards} == {ann.player_id, cat.player_id}
    await fan.close()
    # Everyone leaves (the cashier outlives this table process: no seat session may stay open).
    for p in (ann, cat):
        await p.leave()
    await ann.until(lambda v: not any(s.player_id for s in v.seats), within=20)
    for p in (ann, bob, cat):
        await p.close()
    audit = await helper.audit()
    assert audit.balanced


async def test_closed_access_refuses_seats_and_spectators_not_on_the_allow_list(
    closed_lobby: tuple[grpc.aio.Channel, lobby_pb2_grpc.LobbyServiceStub, TableWorld],
) -> None:
    channel, lobby, helper = closed_lobby
    ann, dan = Player(unique("ann"), channel, TABLE), Player(unique("dan"), channel, TABLE)
    await _allow(lobby, ann)
    for p in (ann, dan):
        await helper.fund(p.player_id, 1500)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await dan.sit(1000)
    assert (refused.value.code(), reason_of(refused.value)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_ON_ALLOW_LIST",
    )
    assert await helper.wallet(dan.player_id) == 1500
    outsider = Spectator(dan.player_id, channel, TABLE)
    await outsider.start()
    error = await outsider.first_error()
    assert error is not None
    assert (error.code(), reason_of(error)) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_ON_ALLOW_LIST")
    # On the list: a seat and a spectator's stream; an operator spectates without any list.
    await ann.sit(1000)
    insider = Spectator(ann.player_id, channel, TABLE)
    operator = Spectator("operator", channel, TABLE, role=Role.ADMIN)
    for s in (insider, operator):
        await s.start()
        assert await s.first_error(within=SPECTATOR_DELAY + 1) is None
        await s.close()
    await ann.leave()
    await wait_for(lambda: _wallet_is(helper, ann.player_id, 1500), within=10)
    assert (await helper.audit()).balanced


async def _wallet_is(helper: TableWorld, player: str, amount: int) -> bool:
    return await helper.wallet(player) == amount
