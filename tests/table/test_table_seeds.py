"""Provably fair dealing at the table: the commitment is shown before any card, and client seeds go
in before the seal and never after. Under fairness version 3 a seed comes in two steps
(docs/fairness.md, the seed flow at a table): its hash while the table takes hashes, then, once the
set of hashes is closed and shown in every view, the seed of a seat in the set; a version 2 room
takes the seed in one step as before."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from service_runtime.testing import reason_of
from services.fairness.deck_commitment import client_seed_hash
from services.fairness.verification import DealtCard, openings_from, published_hand, verify_hand
from tests.table.conftest import ServiceProcess, TableWorld, nl_room, table_world, unique, wait_for
from tests.table.players import Player

pytestmark = pytest.mark.postgres

A = table_pb2
# The countdown's first 1.5 seconds take hashes, its last 1.5 the seeds of the closed hash set.
TIMINGS = {"countdown_seconds": 3.0, "seed_reveal_seconds": 1.5}


def hashes_open(view: table_pb2.TableView) -> bool:
    return view.seed_phase == A.SEED_PHASE_HASHES and view.seed_commitment != ""


def seeds_open(view: table_pb2.TableView) -> bool:
    return view.seed_phase == A.SEED_PHASE_SEEDS


def dealt(view: table_pb2.TableView) -> bool:
    return view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and view.to_act_seat != 0


async def refusal(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    return error.value.code(), reason_of(error.value)


def seed_request(table_id: str, request_id: str, *, seed: str = "", seed_hash: str = "") -> Any:
    return A.SetPlayerSeedRequest(
        request_id=request_id, table_id=table_id, client_seed=seed, client_seed_hash=seed_hash
    )


async def send(player: Player, *, seed: str = "", seed_hash: str = "", request_id: str = "") -> Any:
    request = seed_request(player.table_id, request_id or unique("seed"), seed=seed, seed_hash=seed_hash)
    return await player.stub.SetPlayerSeed(request, metadata=player.metadata)


def hash_of(view: table_pb2.TableView, seat: int, seed: str) -> str:
    return client_seed_hash(view.seed_commitment, seat, seed.encode())


async def reveal_of(world: TableWorld, hand_id: str, player: Player) -> fairness_pb2.Reveal:
    """The reveal follows the settlement through a retrying queue: wait for it."""
    for _ in range(200):
        try:
            reply = await world.fairness.GetReveal(
                fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=player.metadata
            )
            return reply.reveal
        except grpc.aio.AioRpcError as error:
            if reason_of(error) != "HAND_NOT_FINISHED":
                raise
            await asyncio.sleep(0.05)
    raise AssertionError("never revealed")


async def fold_the_hand(world: TableWorld, players: list[Player], view: table_pb2.TableView) -> None:
    actor = next(p for p in players if p.seat == view.to_act_seat)
    await actor.my_turn()
    await actor.act(A.ACTION_KIND_FOLD)
    await wait_for(lambda: view.hand_id in world.history.hands)


def verified_openings(reveal: fairness_pb2.Reveal) -> int:
    """The reader's openings checked against the pre-deal commitment and the revealed seeds; the
    number of cards that passed (a failure raises)."""
    published = dataclasses.replace(
        published_hand(bytes(reveal.server_seed), reveal.commitment), openings=openings_from(reveal.openings)
    )
    cards = [DealtCard(o.deal_position, o.card.index) for o in reveal.openings]
    verdict = verify_hand(published, cards)
    assert verdict.passed, verdict.mismatch
    return len(cards)


@pytest.fixture
async def world(backends: dict[str, ServiceProcess]) -> AsyncIterator[TableWorld]:
    async with table_world(backends, **TIMINGS) as built:
        yield built


async def seated(world: TableWorld, room_id: str = "") -> tuple[str, Player, Player]:
    table_id = world.add_room(nl_room(room_id or unique("seed")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    bob = Player(unique("bob"), world.table_channel, table_id)
    for p in (ann, bob):
        await world.fund(p.player_id, 1000)
        await p.watch()
    await ann.sit(500, seat=1)
    await bob.sit(500, seat=2)
    return table_id, ann, bob


async def test_a_hash_first_then_the_seed_goes_into_the_deal_and_nothing_else_is_taken(
    world: TableWorld,
) -> None:
    table_id, ann, bob = await seated(world)
    countdown = await ann.until(hashes_open)
    assert not any(c.text for s in countdown.seats for c in s.hole_cards)
    # The hashes are taken for the countdown less its seed part (3.0 - 1.5 seconds) from the commit.
    left = (countdown.seed_phase_deadline.ToNanoseconds() - countdown.as_of.ToNanoseconds()) / 1e9
    assert 0 < left <= 1.5 + 0.01
    assert list(countdown.seed_hashes) == []  # nothing is listed before the set closes
    seed = "ann-lucky-7"
    ann_hash = hash_of(countdown, ann.seat, seed)
    request = seed_request(table_id, "ann-hash", seed_hash=ann_hash)
    first = await ann.stub.SetPlayerSeed(request, metadata=ann.metadata)
    assert (first.hand_id, first.seed_phase) == (countdown.hand_id, A.SEED_PHASE_HASHES)
    # A retry is answered as the first time; the same request id with other fields is a conflict.
    assert await ann.stub.SetPlayerSeed(request, metadata=ann.metadata) == first
    other = seed_request(table_id, "ann-hash", seed_hash="0" * 64)
    assert await refusal(ann.stub.SetPlayerSeed(other, metadata=ann.metadata)) == (
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    # Another hash for the same seat is refused by fairness: the first one stands.
    assert await refusal(send(ann, seed_hash="1" * 64)) == (
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    # The seed is not taken while hashes are: it would be disclosed before the set is fixed.
    early = seed_request(table_id, "ann-early", seed=seed)
    too_early = (grpc.StatusCode.FAILED_PRECONDITION, "SEED_REVEAL_NOT_OPEN")
    assert await refusal(ann.stub.SetPlayerSeed(early, metadata=ann.metadata)) == too_early
    # A seed in one step (no hash) is refused in a version 3 hand, in either phase.
    no_hash = (grpc.StatusCode.FAILED_PRECONDITION, "SEED_HASH_REQUIRED")
    assert await refusal(send(bob, seed="bob-plain")) == no_hash
    # Malformed: not hex, upper case, both fields.
    for bad in (
        {"seed_hash": "g" * 64},
        {"seed_hash": ann_hash.upper()},
        {"seed": seed, "seed_hash": ann_hash},
    ):
        assert await refusal(send(bob, **bad)) == (grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID")
    # A player with no seat at this table (seated at no table, or at another one) has no seat to use.
    cat = Player(unique("cat"), world.table_channel, table_id)
    assert await refusal(send(cat, seed_hash=ann_hash)) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_SEATED")

    closed = await ann.until(seeds_open)
    assert closed.hand_id == countdown.hand_id
    assert [(h.seat, h.client_seed_hash) for h in closed.seed_hashes] == [(ann.seat, ann_hash)]
    assert (await bob.until(seeds_open)).seed_hashes == closed.seed_hashes  # the same set for everyone
    assert await refusal(send(bob, seed_hash=hash_of(closed, bob.seat, "bob-late"))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "SEED_HASHES_CLOSED",
    )
    # Bob cannot use ann's hash: his own seat has none.
    assert await refusal(send(bob, seed=seed)) == no_hash
    # The first answer of a request id holds, a refusal included.
    assert await refusal(ann.stub.SetPlayerSeed(early, metadata=ann.metadata)) == too_early
    # A seed that does not match the seat's hash is refused; the right one is taken, once.
    assert await refusal(send(ann, seed="ann-unlucky")) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "CLIENT_SEED_HASH_MISMATCH",
    )
    taken = await send(ann, seed=seed, request_id="ann-seed")
    assert (taken.hand_id, taken.seed_phase) == (countdown.hand_id, A.SEED_PHASE_SEEDS)
    assert await send(ann, seed=seed, request_id="ann-seed") == taken

    view = await ann.until(dealt)
    assert (view.hand_id, view.seed_commitment) == (countdown.hand_id, countdown.seed_commitment)
    assert (view.seed_phase, list(view.seed_hashes)) == (A.SEED_PHASE_UNSPECIFIED, [])
    closed_after_deal = (grpc.StatusCode.FAILED_PRECONDITION, "ENTROPY_CLOSED")
    assert await refusal(send(bob, seed_hash=ann_hash)) == closed_after_deal
    assert await refusal(send(ann, seed=seed)) == closed_after_deal
    await fold_the_hand(world, [ann, bob], view)

    reveal = await reveal_of(world, view.hand_id, ann)
    listed = [(s.seat, bytes(s.client_seed), s.client_seed_hash) for s in reveal.commitment.client_seeds]
    assert listed == [(ann.seat, seed.encode(), ann_hash)]
    assert verified_openings(reveal) == 2  # ann's two hole cards (nobody showed: it was folded)
    # The order was dealt from ann's seed: without it her openings no longer match.
    without = dataclasses.replace(
        published_hand(bytes(reveal.server_seed), reveal.commitment),
        client_seeds=(),
        openings=openings_from(reveal.openings),
    )
    assert not verify_hand(without).passed
    checked = await world.fairness.VerifyHand(
        fairness_pb2.VerifyHandRequest(hand_id=view.hand_id, shown_commitment=countdown.seed_commitment),
        metadata=ann.metadata,
    )
    assert checked.verdict == fairness_pb2.VERDICT_PASS
    for p in (ann, bob):
        await p.close()


async def test_a_seat_that_gave_a_hash_and_withholds_its_seed_is_left_out_of_the_deal(
    world: TableWorld,
) -> None:
    _, ann, bob = await seated(world)
    countdown = await ann.until(hashes_open)
    ann_hash = hash_of(countdown, ann.seat, "ann-withholds")
    bob_seed = "bob-reveals"
    bob_hash = hash_of(countdown, bob.seat, bob_seed)
    await send(ann, seed_hash=ann_hash)
    await send(bob, seed_hash=bob_hash)
    closed = await bob.until(seeds_open)
    assert [(h.seat, h.client_seed_hash) for h in closed.seed_hashes] == [
        (ann.seat, ann_hash),
        (bob.seat, bob_hash),
    ]
    await send(bob, seed=bob_seed)
    view = await ann.until(dealt)
    assert view.hand_id == countdown.hand_id
    await fold_the_hand(world, [ann, bob], view)
    for reader in (ann, bob):
        reveal = await reveal_of(world, view.hand_id, reader)
        listed = [(s.seat, bytes(s.client_seed), s.client_seed_hash) for s in reveal.commitment.client_seeds]
        # Ann's hash stays in the record, with no seed: her seat is not in the deal; bob's seed is.
        assert listed == [(ann.seat, b"", ann_hash), (bob.seat, bob_seed.encode(), bob_hash)]
        assert verified_openings(reveal) == 2
    for p in (ann, bob):
        await p.close()


async def test_a_version_2_room_takes_the_seed_in_one_step(backends: dict[str, ServiceProcess]) -> None:
    room_id = unique("fullreveal")
    async with table_world(backends, full_reveal_rooms=(room_id,), **TIMINGS) as world:
        table_id, ann, bob = await seated(world, room_id)
        countdown = await ann.until(
            lambda v: v.seed_phase == A.SEED_PHASE_ONE_STEP and v.seed_commitment != ""
        )
        assert await refusal(send(ann, seed_hash=hash_of(countdown, ann.seat, "x"))) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
        )
        request = seed_request(table_id, "seed-1", seed="ann-lucky-7")
        first = await ann.stub.SetPlayerSeed(request, metadata=ann.metadata)
        assert (first.hand_id, first.seed_phase) == (countdown.hand_id, A.SEED_PHASE_ONE_STEP)
        assert await ann.stub.SetPlayerSeed(request, metadata=ann.metadata) == first
        view = await ann.until(dealt)
        assert view.hand_id == countdown.hand_id
        assert await refusal(send(bob, seed="too-late")) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "ENTROPY_CLOSED",
        )
        await fold_the_hand(world, [ann, bob], view)
        reveal = await reveal_of(world, view.hand_id, ann)
        assert reveal.commitment.shuffle_version == 2
        assert [(s.seat, bytes(s.client_seed)) for s in reveal.commitment.client_seeds] == [
            (ann.seat, b"ann-lucky-7")
        ]
        record = world.history.hands[view.hand_id]
        # The whole deck is revealed (version 2): it verifies with the seed, and the hole cards dealt
        # are its first four.
        published = published_hand(bytes(reveal.server_seed), reveal.commitment)
        deck = [c.index for c in reveal.deck]
        assert verify_hand(published, [DealtCard(i, deck[i]) for i in range(4)]).passed
        assert {c.index for s in record.seats for c in s.hole_cards} == set(deck[:4])
        for p in (ann, bob):
            await p.close()
