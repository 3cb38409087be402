"""Fair play (rules 17) at the table: the device and network signals of the token a player sat down
with go into the hand record's seat (and nowhere a player can read), and each decision's time from
the start of the turn is recorded with it; a token without signals records none."""

from __future__ import annotations

import time

import pytest

from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from service_runtime.auth import Role, mint_token
from service_runtime.testing import DEV_KEYS
from tests.table.conftest import TableWorld, nl_room, unique, wait_for
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2


def signed_in(player: Player, device: str, network: str) -> None:
    """Give the player the token a gateway issues at sign-in, with its signed `dev` / `net` claims."""
    token = mint_token(
        DEV_KEYS,
        player.player_id,
        (Role.PLAYER,),
        now=int(time.time()),
        ttl_seconds=3600,
        device=device,
        network=network,
    )
    player.metadata = (("authorization", f"Bearer {token}"),)


async def play_one_hand(ann: Player, bob: Player) -> str:
    view = await ann.until(lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0)
    hand_id = view.hand_id
    while True:
        snapshot = await ann.snapshot()
        if snapshot.hand_id != hand_id or snapshot.to_act_seat == 0:
            return hand_id
        actor = ann if snapshot.to_act_seat == ann.seat else bob
        turn = await actor.my_turn()
        if turn.hand_id != hand_id:
            return hand_id
        kinds = list(turn.legal_actions.actions)
        await actor.act(A.ACTION_KIND_CHECK if A.ACTION_KIND_CHECK in kinds else A.ACTION_KIND_CALL)


async def test_the_signals_of_the_sit_down_token_reach_the_record_and_no_player_view(
    world: TableWorld,
) -> None:
    table_id = world.add_room(nl_room(unique("signals")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    bob = Player(unique("bob"), world.table_channel, table_id)
    signed_in(ann, "dev-digest-ann-7f3a", "net-digest-shared-19c2")
    signed_in(bob, "dev-digest-bob-0b44", "net-digest-shared-19c2")
    for player in (ann, bob):
        await world.fund(player.player_id, 1000)
        await player.watch()
    await ann.sit(500, seat=1)
    await bob.sit(500, seat=2)

    hand_id = await play_one_hand(ann, bob)
    await wait_for(lambda: hand_id in world.history.hands)
    record = world.history.hands[hand_id]
    by_player = {seat.player_id: seat for seat in record.seats}
    assert by_player[ann.player_id].client_fingerprint == "dev-digest-ann-7f3a"
    assert by_player[bob.player_id].client_fingerprint == "dev-digest-bob-0b44"
    assert {seat.network_fingerprint for seat in record.seats} == {"net-digest-shared-19c2"}

    # Every decision the players took has its time; posts and board cards have none.
    decisions = [a for a in record.actions if a.cause == history_pb2.ACTION_CAUSE_PLAYER]
    assert decisions
    assert all(a.decision_ms >= 1 for a in decisions)
    assert all(a.decision_ms == 0 for a in record.actions if a.cause != history_pb2.ACTION_CAUSE_PLAYER)

    # Server-side only: no stream message, snapshot or spectator view carries a signal.
    spectator = await world.table.GetTableSnapshot(
        A.GetTableSnapshotRequest(table_id=table_id), metadata=ann.metadata
    )
    seen = [m.SerializeToString() for p in (ann, bob) for m in p.sent]
    seen += [(await ann.snapshot()).SerializeToString(), spectator.SerializeToString()]
    for signal in (b"dev-digest-ann-7f3a", b"dev-digest-bob-0b44", b"net-digest-shared-19c2"):
        assert not any(signal in message for message in seen)
    for player in (ann, bob):
        await player.close()


async def test_a_token_without_signals_records_empty_ones(world: TableWorld) -> None:
    table_id = world.add_room(nl_room(unique("nosignals")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    bob = Player(unique("bob"), world.table_channel, table_id)
    for player in (ann, bob):
        await world.fund(player.player_id, 1000)
        await player.watch()
    await ann.sit(500, seat=1)
    await bob.sit(500, seat=2)
    hand_id = await play_one_hand(ann, bob)
    await wait_for(lambda: hand_id in world.history.hands)
    record = world.history.hands[hand_id]
    assert [(s.client_fingerprint, s.network_fingerprint) for s in record.seats] == [("", "")] * 2
    for player in (ann, bob):
        await player.close()
