"""Provably fair dealing at the table: the commitment is shown before any card, players add client
seeds until the seal, the deck is derived with them, and no seed is taken once the hand is dealt."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from service_runtime.testing import reason_of
from tests.table.conftest import ServiceProcess, TableWorld, nl_room, table_world, unique, wait_for
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2


@pytest.fixture
async def slow_countdown(backends: dict[str, ServiceProcess]) -> AsyncIterator[TableWorld]:
    async with table_world(backends, countdown_seconds=1.5) as built:
        yield built


async def test_client_seeds_until_the_seal_go_into_the_deck_and_none_after(
    slow_countdown: TableWorld,
) -> None:
    world = slow_countdown
    table_id = world.add_room(nl_room(unique("seed")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    bob = Player(unique("bob"), world.table_channel, table_id)
    for p in (ann, bob):
        await world.fund(p.player_id, 1000)
        await p.watch()
    await ann.sit(500, seat=1)
    await bob.sit(500, seat=2)
    countdown = await ann.until(lambda v: v.phase == A.TABLE_PHASE_BETWEEN_HANDS and v.seed_commitment != "")
    assert not any(c.text for s in countdown.seats for c in s.hole_cards)
    request = A.SetPlayerSeedRequest(request_id="seed-1", table_id=table_id, client_seed="ann-lucky-7")
    first = await ann.stub.SetPlayerSeed(request, metadata=ann.metadata)
    assert first.hand_id == countdown.hand_id
    assert await ann.stub.SetPlayerSeed(request, metadata=ann.metadata) == first
    view = await ann.until(lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0)
    assert (view.hand_id, view.seed_commitment) == (countdown.hand_id, countdown.seed_commitment)
    # Dealt: the entropy is closed for this hand.
    with pytest.raises(grpc.aio.AioRpcError) as closed:
        await bob.stub.SetPlayerSeed(
            A.SetPlayerSeedRequest(request_id="seed-2", table_id=table_id, client_seed="too-late"),
            metadata=bob.metadata,
        )
    assert (closed.value.code(), reason_of(closed.value)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "ENTROPY_CLOSED",
    )
    actor = ann if view.to_act_seat == ann.seat else bob
    await actor.my_turn()
    await actor.act(A.ACTION_KIND_FOLD)
    await wait_for(lambda: view.hand_id in world.history.hands)
    reveal = await world.fairness.GetReveal(
        fairness_pb2.GetRevealRequest(hand_id=view.hand_id), metadata=ann.metadata
    )
    seeds = [(s.seat, bytes(s.client_seed)) for s in reveal.reveal.commitment.client_seeds]
    assert seeds == [(ann.seat, b"ann-lucky-7")]
    record = world.history.hands[view.hand_id]
    assert {c.index for s in record.seats for c in s.hole_cards} == {c.index for c in reveal.reveal.deck[:4]}
    for p in (ann, bob):
        await p.close()
