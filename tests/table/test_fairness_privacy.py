"""Folded hole cards stay hidden from fairness reads too (issue 23, items 1 and 2), with real table,
cashier and fairness processes: the table names the players it dealt in, so only they (and admins)
read a hand's reveal, a table's chain shows strangers no hand id, and a house-game round is
invisible to anyone but its player."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata, reason_of
from services.table.house_round import fairness_chain
from tests.table.conftest import ServiceProcess, TableWorld, table_world, unique, wait_for
from tests.table.house_players import FOLD, HouseClient, fund_house, house_room
from tests.table.test_table_hands import in_hand, play_passively, seated_pair

pytestmark = pytest.mark.postgres

ADMIN = auth_metadata("operator", Role.ADMIN)


async def _refusal(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    return error.value.code(), reason_of(error.value)


async def _reveal_when_ready(
    world: TableWorld, request: fairness_pb2.GetRevealRequest, metadata: Any
) -> fairness_pb2.GetRevealResponse:
    """The reveal follows the settlement through a retrying queue: wait for it."""
    last = ""
    for _ in range(100):
        try:
            return await world.fairness.GetReveal(request, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            last = reason_of(error)
            if last != "HAND_NOT_FINISHED":
                raise
            await asyncio.sleep(0.05)
    raise AssertionError(f"never revealed: {last}")


async def test_a_hands_reveal_goes_to_its_players_and_admins_and_its_id_to_no_stranger(
    world: TableWorld,
) -> None:
    table_id, ann, bob = await seated_pair(world)
    hand_id = (await ann.until(in_hand)).hand_id
    await play_passively([ann, bob], hand_id)
    await wait_for(lambda: hand_id in world.history.hands)
    eve = auth_metadata(unique("eve"))
    request = fairness_pb2.GetRevealRequest(hand_id=hand_id)
    reveal = await _reveal_when_ready(world, request, ann.metadata)
    assert len(reveal.reveal.deck) == 52
    for reader in (bob.metadata, ADMIN):
        assert (await world.fairness.GetReveal(request, metadata=reader)).reveal.deck == reveal.reveal.deck
    assert await _refusal(world.fairness.GetReveal(request, metadata=eve)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_RESOURCE",
    )
    oracle = fairness_pb2.VerifyHandRequest(
        hand_id=hand_id, dealt_cards=[fairness_pb2.DealtCard(position=0, card_index=0)]
    )
    assert await _refusal(world.fairness.VerifyHand(oracle, metadata=eve)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_RESOURCE",
    )
    listing = fairness_pb2.ListTableCommitmentsRequest(table_id=table_id)
    strangers = await world.fairness.ListTableCommitments(listing, metadata=eve)
    assert [c.hand_id for c in strangers.commitments if c.state == fairness_pb2.HAND_STATE_FINISHED] == [""]
    players = await world.fairness.ListTableCommitments(listing, metadata=ann.metadata)
    assert hand_id in [c.hand_id for c in players.commitments]
    for p in (ann, bob):
        await p.close()


@pytest.fixture
async def house_world(backends: dict[str, ServiceProcess], tmp_path: Path) -> Any:
    async with table_world(backends, house_journal=str(tmp_path / "journal.jsonl")) as built:
        yield built


async def test_a_house_round_exists_only_for_its_player_and_admins(house_world: TableWorld) -> None:
    world = house_world
    await fund_house(world, 10_000_000)
    table_id = world.add_room(house_room(unique("house"), common_pb2.GAME_VARIANT_CASINO_HOLDEM))
    ann = HouseClient(unique("hp"), table_id, world.table, common_pb2.GAME_VARIANT_CASINO_HOLDEM)
    await world.fund(ann.player_id, 100_000)
    placed = await ann.bet(table_pb2.HouseBox(box=1, ante=10))
    view = placed.round
    while view.phase != "COMPLETE":
        view = await ann.decide(view, 1, FOLD)
    round_id = view.round_id
    chain = fairness_chain(table_id, ann.player_id)  # derivable from the player id by anyone
    request = fairness_pb2.GetRevealRequest(hand_id=round_id)
    await _reveal_when_ready(world, request, ann.metadata)
    own = await world.fairness.ListTableCommitments(
        fairness_pb2.ListTableCommitmentsRequest(table_id=chain), metadata=ann.metadata
    )
    assert round_id in [c.hand_id for c in own.commitments]
    assert (await world.fairness.GetReveal(request, metadata=ADMIN)).reveal.commitment.hand_id == round_id
    eve = auth_metadata(unique("eve"))
    listed = await world.fairness.ListTableCommitments(
        fairness_pb2.ListTableCommitmentsRequest(table_id=chain), metadata=eve
    )
    assert list(listed.commitments) == []
    not_found = (grpc.StatusCode.NOT_FOUND, "HAND_NOT_FOUND")
    assert await _refusal(world.fairness.GetReveal(request, metadata=eve)) == not_found
    assert (
        await _refusal(
            world.fairness.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=round_id), metadata=eve)
        )
        == not_found
    )
