"""Folded hole cards stay hidden from fairness reads too (issues 23 and 24), with real table,
cashier and fairness processes: the table deals under version 3 and reports who saw which deal
positions, so each reader gets openings of exactly those (a stranger the public cards only; burnt
and undealt cards nobody but admins), a table's chain shows strangers no hand id, and a house-game
round is invisible to anyone but its player, who gets the openings of the round's cards."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from service_runtime.auth import STAFF_ROLES
from service_runtime.testing import auth_metadata, reason_of
from services.fairness.verification import DealtCard, openings_from, published_hand, verify_hand
from services.table.house.house_round import fairness_chain
from tests.table.conftest import ServiceProcess, TableWorld, nl_room, table_world, unique, wait_for
from tests.table.house_players import FOLD, HouseClient, fund_house, house_room
from tests.table.players import Player
from tests.table.test_table_hands import in_hand, play_passively, seated_pair

pytestmark = pytest.mark.postgres

ADMIN = auth_metadata("operator", *STAFF_ROLES)


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
    await _reveal_when_ready(world, request, ann.metadata)
    admin = (await world.fairness.GetReveal(request, metadata=ADMIN)).reveal
    assert admin.commitment.shuffle_version == 3
    assert not admin.deck
    assert sorted(o.deal_position for o in admin.openings) == list(range(52))
    deck = {o.deal_position: o.card.index for o in admin.openings}
    record = world.history.hands[hand_id]
    board = {p for p, card in deck.items() if card in {c.index for c in record.board}}
    # Heads-up: hole cards at 0..3, then burn 4, flop 5-7, burn 8, turn 9, burn 10, river 11.
    burnt_or_undealt = {4, 8, 10, *range(12, 52)}
    opened: dict[str, set[int]] = {}
    for name, reader in (("ann", ann.metadata), ("bob", bob.metadata), ("eve", eve)):
        reveal = (await world.fairness.GetReveal(request, metadata=reader)).reveal
        assert not reveal.deck
        opened[name] = {o.deal_position for o in reveal.openings}
        assert opened[name] & burnt_or_undealt == set(), name
        assert board <= opened[name], name
        published = dataclasses.replace(
            published_hand(bytes(reveal.server_seed), reveal.commitment),
            openings=openings_from(reveal.openings),
        )
        verdict = verify_hand(published, [DealtCard(p, deck[p]) for p in sorted(opened[name])])
        assert verdict.passed, (name, verdict.first_mismatch)
    own = {
        seat.player_id: {p for p, card in deck.items() if card in {c.index for c in seat.hole_cards}}
        for seat in record.seats
    }
    for seat in record.seats:
        name = "ann" if seat.player_id == ann.player_id else "bob"
        assert own[seat.player_id] <= opened[name]
        if not seat.shown:  # a folded or mucked hand stays behind its salts for everyone else
            assert own[seat.player_id] & opened["eve"] == set()
    # A stranger's verdict on an unseen position says nothing about the card.
    oracle = [
        fairness_pb2.VerifyHandRequest(
            hand_id=hand_id, dealt_cards=[fairness_pb2.DealtCard(position=51, card_index=c)]
        )
        for c in (deck[51], (deck[51] + 1) % 52)
    ]
    answers = [await world.fairness.VerifyHand(o, metadata=eve) for o in oracle]
    assert answers[0] == answers[1]
    assert answers[0].first_mismatch.kind == fairness_pb2.MISMATCH_KIND_NOT_OPENED
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
    # The player gets an opening of every card of the round they saw, and each holds.
    mine = (await world.fairness.GetReveal(request, metadata=ann.metadata)).reveal
    assert mine.openings
    published = dataclasses.replace(
        published_hand(bytes(mine.server_seed), mine.commitment), openings=openings_from(mine.openings)
    )
    assert verify_hand(published).passed
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


async def test_a_room_the_operator_keeps_on_the_full_reveal_deals_under_version_2(
    backends: dict[str, ServiceProcess],
) -> None:
    room_id = unique("fullreveal")
    async with table_world(backends, full_reveal_rooms=(room_id,)) as world:
        table_id = world.add_room(nl_room(room_id))
        ann = Player(unique("ann"), world.table_channel, table_id)
        bob = Player(unique("bob"), world.table_channel, table_id)
        for p in (ann, bob):
            await world.fund(p.player_id, 1000)
            await p.watch()
        await ann.sit(500, seat=1)
        await bob.sit(500, seat=2)
        hand_id = (await ann.until(in_hand)).hand_id
        await play_passively([ann, bob], hand_id)
        await wait_for(lambda: hand_id in world.history.hands)
        reveal = await _reveal_when_ready(world, fairness_pb2.GetRevealRequest(hand_id=hand_id), ann.metadata)
        assert reveal.reveal.commitment.shuffle_version == 2
        assert len(reveal.reveal.deck) == 52
        assert not reveal.reveal.openings
        # Another room of the same shard deals under version 3.
        _, carl, dana = await seated_pair(world)
        other_hand = (await carl.until(in_hand)).hand_id
        commitment = await world.fairness.GetCommitment(
            fairness_pb2.GetCommitmentRequest(hand_id=other_hand), metadata=carl.metadata
        )
        assert (commitment.commitment.shuffle_version, len(commitment.commitment.deck_root)) == (3, 64)
        for p in (ann, bob, carl, dana):
            await p.close()


async def test_a_private_rooms_hands_exist_only_for_their_players_and_admins(
    backends: dict[str, ServiceProcess],
) -> None:
    """Issue 23, item 4, at fairness: a stranger the lobby and the table answer ROOM_NOT_FOUND /
    TABLE_NOT_FOUND for a private room learnt of its hands from the table's chain (creation, seal
    and reveal times, seats, client seeds) and read them by id. The table tells fairness at the
    commitment that the hand is a private room's; a room that turns private does so from its next
    hand, and the hands committed before keep what they were."""
    async with table_world(backends, room_refresh_seconds=0.01) as world:
        room_id = unique("private")
        table_id = world.add_room(nl_room(room_id))
        ann = Player(unique("ann"), world.table_channel, table_id)
        bob = Player(unique("bob"), world.table_channel, table_id)
        for p in (ann, bob):
            await world.fund(p.player_id, 1000)
            await p.watch()
        await ann.sit(500, seat=1)
        await bob.sit(500, seat=2)
        public_hand = (await ann.until(in_hand)).hand_id
        # Committed while the room was public; the operator makes it private during the hand.
        world.lobby.rooms[room_id].private = True
        await play_passively([ann, bob], public_hand)
        private_hand = (await ann.until(lambda v: in_hand(v) and v.hand_id != public_hand)).hand_id
        await play_passively([ann, bob], private_hand)
        await wait_for(lambda: private_hand in world.history.hands)
        reveal = fairness_pb2.GetRevealRequest(hand_id=private_hand)
        await _reveal_when_ready(world, reveal, ann.metadata)
        listing = fairness_pb2.ListTableCommitmentsRequest(table_id=table_id)
        sequences = {
            c.hand_id: c.sequence
            for c in (await world.fairness.ListTableCommitments(listing, metadata=ADMIN)).commitments
        }
        assert {public_hand, private_hand} <= set(sequences)

        eve = auth_metadata(unique("eve"))
        strangers = (await world.fairness.ListTableCommitments(listing, metadata=eve)).commitments
        assert [c.sequence for c in strangers][:1] == [sequences[public_hand]]
        # Besides the public hand, a stranger sees only the commitment asked for ahead while the room
        # was public (issue 28): voided once the room turned private, never sealed, no seat, no seed.
        for ahead in strangers[1:]:
            assert ahead.sequence == sequences[public_hand] + 1
            assert ahead.state == fairness_pb2.HAND_STATE_VOIDED
            assert not ahead.client_seeds
            assert not ahead.HasField("seal_time")
        not_found = (grpc.StatusCode.NOT_FOUND, "HAND_NOT_FOUND")
        by_id = fairness_pb2.GetCommitmentRequest(hand_id=private_hand)
        assert await _refusal(world.fairness.GetCommitment(by_id, metadata=eve)) == not_found
        assert await _refusal(world.fairness.GetReveal(reveal, metadata=eve)) == not_found
        verify = fairness_pb2.VerifyHandRequest(hand_id=private_hand)
        assert await _refusal(world.fairness.VerifyHand(verify, metadata=eve)) == not_found
        # The hand committed while the room was public stays public.
        earlier = fairness_pb2.GetCommitmentRequest(hand_id=public_hand)
        assert (await world.fairness.GetCommitment(earlier, metadata=eve)).commitment.sequence == sequences[
            public_hand
        ]

        for reader in (ann.metadata, bob.metadata, ADMIN):
            listed = (await world.fairness.ListTableCommitments(listing, metadata=reader)).commitments
            assert private_hand in [c.hand_id for c in listed]
            got = await world.fairness.GetCommitment(by_id, metadata=reader)
            assert got.commitment.hand_id == private_hand
            assert (await world.fairness.GetReveal(reveal, metadata=reader)).reveal.openings
            verdict = (await world.fairness.VerifyHand(verify, metadata=reader)).verdict
            assert verdict == fairness_pb2.VERDICT_PASS
        for p in (ann, bob):
            await p.close()
