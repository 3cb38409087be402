"""A settled hand reaches history even if its shard is killed before history took the record.

Found by tests/e2e: the hand record waits in the shard's in-memory queue (history away, or just not
yet sent) while the hand's log and live-hand mark are dropped right after the settlement, so a
`kill -9` loses the record for good: the cashier settled the hand, fairness shows it FINISHED, history
never hears of it, and a player's nets in history stop matching the cashier's statement. Fixed by
the record outbox
(services/table/log/record_outbox.py): the record is kept durably before the settlement and dropped
when history acknowledged it; whoever opens the table next sends what is left."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from poker.table.v1 import table_pb2
from tests.table.conftest import (
    ServiceProcess,
    StandInHistory,
    StandInLobby,
    TableWorld,
    nl_room,
    unique,
    wait_for,
)
from tests.table.players import Player
from tests.table.test_table_restart import _backend_channels, stand_ins, table_process

pytestmark = pytest.mark.postgres
__all__ = ["stand_ins"]

A = table_pb2


async def test_a_hand_settled_while_history_is_away_is_recorded_after_the_shard_is_killed(
    backends: dict[str, ServiceProcess], stand_ins: tuple[StandInLobby, StandInHistory, int, int]
) -> None:
    lobby, history, lobby_port, history_port = stand_ins
    room = nl_room(unique("lost"))
    lobby.rooms[room.room_id] = room
    table_id = f"{room.room_id}.1"
    shard = table_process(backends, lobby_port, history_port)
    await asyncio.to_thread(shard.start)
    channel = grpc.aio.insecure_channel(shard.address)
    helper = TableWorld(lobby, history, backends, channel, *_backend_channels(backends), settings=None)  # type: ignore[arg-type]
    ann, bob = (Player(unique(name), channel, table_id) for name in ("ann", "bob"))
    try:
        history.down = True
        for n, p in enumerate((ann, bob), start=1):
            await helper.fund(p.player_id, 1000)
            await p.watch()
            await p.sit(500, seat=n)
        view = await ann.until(lambda v: v.to_act_seat != 0)
        hand_id = view.hand_id
        actor = ann if view.to_act_seat == ann.seat else bob
        await actor.my_turn()
        await actor.act(A.ACTION_KIND_FOLD)
        # Settled: the cashier moved the blinds; history has not got the record (it is down).
        await ann.until(lambda v: v.hand_id != hand_id, within=20)
        assert hand_id not in history.hands
        shard.kill()
        for p in (ann, bob):
            await p.close()
        await channel.close()
        history.down = False

        await asyncio.to_thread(shard.start)
        channel = grpc.aio.insecure_channel(shard.address)
        for p in (ann, bob):
            p.stub = type(p.stub)(channel)
        await ann.snapshot()
        # The table retries history every 0.05-5 s; 10 s is several rounds of it.
        await wait_for(lambda: hand_id in history.hands, within=10)
        # Fairness version 3: the reveal made before the kill keeps who saw what; the record sent
        # again does not wipe it (ann folded or was folded to: her own two cards are opened to her).
        fairness = fairness_pb2_grpc.FairnessServiceStub(helper.fairness_channel)
        reveal = await fairness.GetReveal(
            fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=ann.metadata
        )
        own = next(s for s in history.hands[hand_id].seats if s.player_id == ann.player_id)
        assert {o.card.index for o in reveal.reveal.openings} == {c.index for c in own.hole_cards}
    finally:
        await channel.close()
        for c in (helper.cashier_channel, helper.fairness_channel):
            await c.close()  # type: ignore[attr-defined]
        shard.kill()
