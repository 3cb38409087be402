"""Drains and orderly handovers of rooms between two table shards on one Redis registry (issue 26).

SIGTERM to a shard (`TableWorld.terminate`, the process's own shutdown path): its health goes
NOT_SERVING at once, the hand in play finishes and settles there, no new hand starts, and the room is
released to the other shard, which opens it at once (before the draining shard's lease is gone) with
every player in their seat (the same seat sessions at the cashier). A shard that comes back wins its
rooms back the same way: the running hand at the other shard finishes first. A hand still running at
the drain's bound goes on at the next owner, as on a takeover (issue 30). Chips are conserved throughout."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from poker.cashier.v1 import cashier_pb2
from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from service_runtime.redis_client import create_redis
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo, choose_shard
from service_runtime.table_directory import RedisTableDirectory
from tests.table.conftest import ADMIN, ServiceProcess, TableWorld, nl_room, table_world, unique, wait_for
from tests.table.players import Player

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

A = table_pb2


@contextlib.asynccontextmanager
async def two_shards(
    backends: dict[str, ServiceProcess], redis_url: str, prefix: str, **overrides: float
) -> AsyncIterator[tuple[list[TableWorld], str]]:
    """Shards `shard-a` and `shard-b` with a room both know; yields them, owner first, and the table."""
    common = {"redis_url": redis_url, "registry_prefix": prefix, "lease_seconds": 1.0, **overrides}
    async with contextlib.AsyncExitStack() as stack:
        worlds = [
            await stack.enter_async_context(table_world(backends, shard_id=s, **common))
            for s in ("shard-a", "shard-b")
        ]
        room = nl_room(unique("drain"))
        for world in worlds:
            table_id = world.add_room(room)
        try:
            await Player(unique("probe"), worlds[0].table_channel, table_id).snapshot()
        except grpc.aio.AioRpcError:
            worlds.reverse()
        yield worlds, table_id


async def seat_two(world: TableWorld, table_id: str) -> list[Player]:
    players = [Player(unique(name), world.table_channel, table_id) for name in ("ann", "bob")]
    for seat, player in enumerate(players, start=1):
        await world.fund(player.player_id, 1000)
        await player.watch()
        await player.sit(500, seat=seat)
    return players


async def open_sessions(world: TableWorld, table_id: str) -> dict[str, tuple[str, int]]:
    reply = await world.cashier.ListOpenSeatSessions(
        cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id), metadata=ADMIN
    )
    return {s.session_id: (s.player_id, s.seat_index) for s in reply.seat_sessions}


async def hand_state(world: TableWorld, hand_id: str) -> int:
    reply = await world.fairness.GetCommitment(
        fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=ADMIN
    )
    return int(reply.commitment.state)


async def fold_whoever_acts(players: list[Player], hand_id: str) -> None:
    """Play the hand out: the player to act folds (heads-up, that ends it)."""
    view = await players[0].until(lambda v: v.hand_id == hand_id and v.to_act_seat != 0)
    acting = next(p for p in players if p.seat == view.to_act_seat)
    await acting.my_turn()
    await acting.act(A.ACTION_KIND_FOLD, hand_id=hand_id)


async def finished(world: TableWorld, hand_id: str) -> bool:
    """Settled and revealed as such (a voided hand is never FINISHED)."""
    return await hand_state(world, hand_id) == fairness_pb2.HAND_STATE_FINISHED


def hands_seen(player: Player) -> set[str]:
    return {m.view.hand_id for m in player.messages if m.view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS}


async def figures_at(redis_url: str, prefix: str, room_id: str, shard_id: str, players: set[str]) -> bool:
    client = create_redis(redis_url)
    try:
        tables = await RedisTableDirectory(client, prefix=prefix).tables_of_room(room_id)
    finally:
        await client.aclose()
    return any(t.shard_id == shard_id and {s.display_name for s in t.taken_seats} == players for t in tables)


async def test_sigterm_plays_the_running_hand_out_and_the_other_shard_takes_the_room_at_once_with_every_seat(
    backends: dict[str, ServiceProcess],
    redis_server_url: str,
    redis_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each release as the registry answered it, with whether the releasing shard still held its lease
    # right after (read in the same call: the shards run in this process, so a sampling thread, which
    # needs the interpreter at that very moment, missed the window under load: CI, 2026-12-07).
    releases: list[tuple[str, bool]] = []
    release = RedisShardRegistry.release

    async def spied(self: RedisShardRegistry, room_id: str, shard_id: str, fencing_token: int) -> object:
        owner = await release(self, room_id, shard_id, fencing_token)
        lease = bool(await self._redis.exists(self._shard_key_prefix() + shard_id))
        releases.append((owner.shard.shard_id if owner is not None else "", lease))
        return owner

    monkeypatch.setattr(RedisShardRegistry, "release", spied)
    async with two_shards(backends, redis_server_url, redis_prefix, drain_seconds=30.0) as (worlds, table_id):
        owner, other = worlds
        room_id = table_id.rsplit(".", 1)[0]
        players = await seat_two(owner, table_id)
        view = await players[0].until(
            lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0
        )
        hand_id = view.hand_id
        sessions = await open_sessions(owner, table_id)
        assert sorted(sessions.values()) == sorted((p.player_id, p.seat) for p in players)
        client = create_redis(redis_server_url)
        before = await client.hgetall(f"{redis_prefix}room-owner:{room_id}")  # type: ignore[misc]
        health = health_pb2_grpc.HealthStub(grpc.aio.insecure_channel(f"127.0.0.1:{owner.port}"))
        drain = asyncio.create_task(owner.terminate())
        try:
            # Health goes NOT_SERVING at the drain's start, while the hand is still being played.
            async def not_serving() -> bool:
                reply = await health.Check(health_pb2.HealthCheckRequest())
                return reply.status == health_pb2.HealthCheckResponse.NOT_SERVING

            await wait_for(not_serving, within=5)
            assert not drain.done()
            # The hand plays on at the draining shard, to its end.
            await fold_whoever_acts(players, hand_id)
            await asyncio.wait_for(drain, timeout=20)
            after = await client.hgetall(f"{redis_prefix}room-owner:{room_id}")  # type: ignore[misc]
        finally:
            await client.aclose()
        # Settled and revealed as finished, not voided; and no other hand started at the draining shard.
        await wait_for(lambda: finished(other, hand_id), within=10)
        for player in players:
            assert hands_seen(player) == {hand_id}
            assert {m.view.hand_id for m in player.messages if m.view.hand_id} == {hand_id}, (
                "a next hand was committed"
            )
        # The room was given to the other shard by the release, while the draining shard still held
        # its lease (not by the lease running out), with a grown fencing token.
        assert releases == [(other.settings.shard_id, True)], releases
        assert after[b"shard"].decode() == other.settings.shard_id
        assert int(after[b"token"]) == int(before[b"token"]) + 1
        # The other shard opened the table by itself at once, every player in their seat.
        names = {p.player_id for p in players}
        released_at = time.monotonic()
        await wait_for(
            lambda: figures_at(redis_server_url, redis_prefix, room_id, other.settings.shard_id, names),
            within=3,
        )
        assert time.monotonic() - released_at < 3
        assert await open_sessions(other, table_id) == sessions
        moved = [Player(p.player_id, other.table_channel, table_id) for p in players]
        for mover, player in zip(moved, players, strict=True):
            mover.seat = player.seat
            await mover.watch()
        snapshot = await moved[0].until(
            lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.hand_id != hand_id
        )
        stacks = {s.seat: s.stack for s in snapshot.seats if s.player_id}
        assert set(stacks) == {1, 2}
        for mover in moved:
            await mover.close()
        for player in players:
            await player.close()
        # Chips conserved: the settled hand moved chips between the two seats and the rake only.
        audit = await other.audit()
        assert audit.balanced


async def test_a_shard_that_comes_back_wins_its_room_back_after_the_hand_in_play_there(
    backends: dict[str, ServiceProcess], redis_server_url: str, redis_prefix: str
) -> None:
    common = {
        "redis_url": redis_server_url,
        "registry_prefix": redis_prefix,
        "lease_seconds": 1.0,
        "drain_seconds": 30.0,
    }
    async with two_shards(backends, redis_server_url, redis_prefix, drain_seconds=30.0) as (worlds, table_id):
        owner, other = worlds
        room_id = table_id.rsplit(".", 1)[0]
        players = await seat_two(owner, table_id)
        await players[0].until(lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS)
        for player in players:
            await player.close()
        # The owner drains (nobody acts: the clock ends the hand), the other takes the room.
        await owner.terminate()
        sessions = await open_sessions(other, table_id)
        moved = [Player(p.player_id, other.table_channel, table_id) for p in players]
        for mover, player in zip(moved, players, strict=True):
            mover.seat = player.seat
            await mover.watch()
        view = await moved[0].until(
            lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0
        )
        hand_id = view.hand_id
        # The first shard comes back (same id): the room is its by rendezvous hashing, but the
        # hand at the other shard is played to its end there first.
        async with table_world(backends, shard_id=owner.settings.shard_id, **common) as back:
            back.add_room(owner.lobby.rooms[room_id])
            await asyncio.sleep(1.0)
            assert await hand_state(other, hand_id) == fairness_pb2.HAND_STATE_SEALED, (
                "the hand must not be cut"
            )
            await fold_whoever_acts(moved, hand_id)
            names = {p.player_id for p in players}
            await wait_for(
                lambda: figures_at(redis_server_url, redis_prefix, room_id, back.settings.shard_id, names),
                within=15,
            )
            await wait_for(lambda: finished(other, hand_id), within=10)
            for mover in moved:
                assert hands_seen(mover) == {hand_id}
                await mover.close()
            assert await open_sessions(back, table_id) == sessions
            returned = Player(players[0].player_id, back.table_channel, table_id)
            returned.seat = players[0].seat
            await returned.watch()
            await returned.until(lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.hand_id != hand_id)
            await returned.close()
            assert (await back.audit()).balanced


async def test_a_hand_still_running_at_the_drain_bound_goes_on_at_the_next_owner(
    backends: dict[str, ServiceProcess], redis_server_url: str, redis_prefix: str
) -> None:
    # Nobody acts and the action clock (5 s) outlasts the bound: the drain leaves the hand running.
    async with two_shards(backends, redis_server_url, redis_prefix, drain_seconds=0.5) as (worlds, table_id):
        owner, other = worlds
        players = await seat_two(owner, table_id)
        view = await players[0].until(
            lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0
        )
        started = time.monotonic()
        await owner.terminate()
        assert time.monotonic() - started < 4
        for player in players:
            await player.close()
        # The next owner goes on with it (never voided): the same hand, the same player to act.
        moved = [Player(p.player_id, other.table_channel, table_id) for p in players]
        for old, new in zip(players, moved, strict=True):
            new.seat = old.seat
            await new.watch()
        there = await moved[0].until(
            lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0
        )
        assert (there.hand_id, there.to_act_seat) == (view.hand_id, view.to_act_seat)
        assert await hand_state(other, view.hand_id) != fairness_pb2.HAND_STATE_VOIDED
        await fold_whoever_acts(moved, view.hand_id)
        await wait_for(lambda: finished(other, view.hand_id), within=10)
        for player in moved:
            await player.close()
        # The hand's own final stacks (its record): a snapshot now may already show the next hand's
        # blinds posted (a loaded run read [485, 500]).
        await wait_for(lambda: view.hand_id in other.history.hands, within=10)
        record = other.history.hands[view.hand_id]
        assert sorted(s.final_stack for s in record.seats) == [495, 505]
        assert (await other.audit()).balanced


async def test_a_room_whose_new_owner_vanishes_before_the_handover_deals_on_at_its_shard(
    backends: dict[str, ServiceProcess], redis_server_url: str, redis_prefix: str
) -> None:
    async with two_shards(backends, redis_server_url, redis_prefix, drain_seconds=30.0) as (worlds, table_id):
        owner = worlds[0]
        room_id = table_id.rsplit(".", 1)[0]
        players = await seat_two(owner, table_id)
        view = await players[0].until(
            lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.to_act_seat != 0
        )
        # A shard that wins the room registers (no table process behind it) and its lease runs out
        # before the hand at the owner is over: the owner stops dealing, then deals on.
        shard_ids = [w.settings.shard_id for w in worlds]
        # The room's best weight among the two shards is the larger of two uniform draws: with 1,000
        # candidates none beat it in 2 runs of 1,000 (it failed so once in a full run); with 10**7 in
        # 2 of 10**7, and the search takes about 1 / (1 - that weight) tries, a handful as a rule.
        newcomer = next(
            f"shard-new-{n}"
            for n in range(10**7)
            if choose_shard(room_id, [*shard_ids, f"shard-new-{n}"]) == f"shard-new-{n}"
        )
        client = create_redis(redis_server_url)
        try:
            registry = RedisShardRegistry(client, prefix=redis_prefix, lease_seconds=0.8)
            await registry.heartbeat(ShardInfo(newcomer, "127.0.0.1:9"))
            await asyncio.sleep(1.5)  # the owner has seen it (a third of its lease) and it is gone again
        finally:
            await client.aclose()
        await fold_whoever_acts(players, view.hand_id)
        await players[0].until(
            lambda v: v.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and v.hand_id != view.hand_id
        )
        for player in players:
            await player.close()
        assert (await owner.audit()).balanced
