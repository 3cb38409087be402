"""The shard registry on a real Redis: leases, rendezvous ownership, fencing tokens that only grow."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as redis
from hypothesis import given, settings
from hypothesis import strategies as st

from service_runtime.shard_registry import (
    NoShardAvailable,
    RedisShardRegistry,
    ShardInfo,
    ShardLease,
    SingleShardRegistry,
    choose_shard,
)

ROOMS = [f"room-{n}" for n in range(40)]
A = ShardInfo("shard-a", "127.0.0.1:7001")
B = ShardInfo("shard-b", "127.0.0.1:7002")
C = ShardInfo("shard-c", "127.0.0.1:7003")


@pytest.fixture
async def client(redis_server_url: str) -> AsyncIterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_server_url)
    try:
        yield connection
    finally:
        await connection.aclose()


def _registry(client: redis.Redis, prefix: str, lease: float = 3.0) -> RedisShardRegistry:
    return RedisShardRegistry(client, prefix=prefix, lease_seconds=lease)


async def test_every_room_resolves_to_the_rendezvous_winner_among_live_shards(
    client: redis.Redis, redis_prefix: str
) -> None:
    registry = _registry(client, redis_prefix)
    for shard in (A, B, C):
        await registry.heartbeat(shard)
    assert await registry.live_shards() == [A, B, C]
    owners = await registry.owners_of(ROOMS)
    # The Lua script and the Python function agree, and the load is spread over all three shards.
    assert {room: o.shard.shard_id for room, o in owners.items()} == {
        room: choose_shard(room, ["shard-a", "shard-b", "shard-c"]) for room in ROOMS
    }
    assert {o.shard for o in owners.values()} == {A, B, C}
    assert all(o.fencing_token == 1 for o in owners.values())
    # Asking again changes nothing: same owner, same token.
    assert await registry.owners_of(ROOMS) == owners


async def test_owners_of_many_rooms_is_one_round_trip_with_owner_of_s_answers(
    redis_server_url: str, redis_prefix: str
) -> None:
    """The shard's ownership round reads its rooms' owners every third of a lease: one pipeline, not
    one script call per room (issue 28), with the same answers, rooms without a shard left out."""

    class Counting(redis.Redis):
        calls = 0
        pipelines = 0

        async def execute_command(self, *args: object, **options: object) -> object:
            Counting.calls += 1
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]

        def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Any:
            Counting.pipelines += 1
            return super().pipeline(transaction, shard_hint)

    client = Counting.from_url(redis_server_url)
    try:
        registry = _registry(client, redis_prefix)
        assert await registry.owners_of(ROOMS) == {}  # no live shard: every room left out
        for shard in (A, B):
            await registry.heartbeat(shard)
        Counting.calls = Counting.pipelines = 0
        owners = await registry.owners_of(ROOMS)
        assert (Counting.calls, Counting.pipelines) == (0, 1)
        assert owners == {room: await registry.owner_of(room) for room in ROOMS}
    finally:
        await client.aclose()


async def test_no_live_shard_is_no_shard_available(client: redis.Redis, redis_prefix: str) -> None:
    registry = _registry(client, redis_prefix)
    with pytest.raises(NoShardAvailable) as error:
        await registry.owner_of("room-1")
    assert error.value.reason == "NO_SHARD_AVAILABLE"


async def test_a_lapsed_lease_moves_its_rooms_and_their_tokens_grow(
    client: redis.Redis, redis_prefix: str
) -> None:
    registry = _registry(client, redis_prefix, lease=1.5)
    lease_a, lease_b = ShardLease(registry, A), ShardLease(registry, B)
    await lease_a.start()
    await lease_b.start()
    try:
        before = await registry.owners_of(ROOMS)
        of_a = sorted(room for room, o in before.items() if o.shard == A)
        assert of_a
        assert len(of_a) < len(ROOMS)
        await lease_a.stop(give_up=False)  # dies without a word: only the lease says so
        assert (await registry.owner_of(of_a[0])).shard == A, "the lease has not run out yet"
        await asyncio.sleep(1.7)
        after = await registry.owners_of(ROOMS)
        assert all(o.shard == B for o in after.values())
        for room in ROOMS:
            grown = 1 if room in of_a else 0
            assert after[room].fencing_token == before[room].fencing_token + grown
        assert await registry.live_shards() == [B]
        # A comes back: its rooms return to it, and the token grows again rather than going back.
        assert await registry.heartbeat(A) is False
        back = await registry.owners_of(of_a)
        assert all(
            o.shard == A and o.fencing_token == before[room].fencing_token + 2 for room, o in back.items()
        )
    finally:
        await lease_a.stop()
        await lease_b.stop()


async def test_a_heartbeat_keeps_the_lease_beyond_its_length(client: redis.Redis, redis_prefix: str) -> None:
    registry = _registry(client, redis_prefix, lease=1.0)
    lease = ShardLease(registry, A)
    await lease.start()
    try:
        await asyncio.sleep(2.5)
        assert await registry.live_shards() == [A]
        assert lease.lapses == 0
    finally:
        await lease.stop()
    assert await registry.live_shards() == [], "a graceful stop gives the lease up at once"


async def test_a_new_shard_takes_only_the_rooms_it_wins(client: redis.Redis, redis_prefix: str) -> None:
    registry = _registry(client, redis_prefix)
    await registry.heartbeat(A)
    alone = await registry.owners_of(ROOMS)
    await registry.heartbeat(B)
    shared = await registry.owners_of(ROOMS)
    for room in ROOMS:
        moved = shared[room].shard == B
        assert shared[room].fencing_token == alone[room].fencing_token + (1 if moved else 0)
        assert moved == (choose_shard(room, ["shard-a", "shard-b"]) == "shard-b")


async def test_concurrent_resolutions_agree_and_grow_the_token_once(
    client: redis.Redis, redis_prefix: str
) -> None:
    registry = _registry(client, redis_prefix)
    await registry.heartbeat(A)
    await registry.heartbeat(B)
    results = await asyncio.gather(*(registry.owner_of("room-7") for _ in range(50)))
    assert len(set(results)) == 1
    assert results[0].fencing_token == 1 == await registry.fencing_token("room-7")


async def test_without_redis_the_one_shard_owns_every_room() -> None:
    registry = SingleShardRegistry(A)
    assert await registry.live_shards() == [A]
    owners = await registry.owners_of(ROOMS)
    assert all(o.shard == A and o.fencing_token == 1 for o in owners.values())


def test_shard_ids_and_addresses_are_checked() -> None:
    for bad in ("", "a b", "x" * 65, "a:b"):
        with pytest.raises(ValueError, match="shard ids"):
            ShardInfo(bad, "127.0.0.1:1")
    with pytest.raises(ValueError, match="address"):
        ShardInfo("ok", "")


@given(
    room=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=30),
    shards=st.sets(st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True), min_size=2, max_size=8),
)
def test_removing_a_shard_moves_only_the_rooms_it_owned(room: str, shards: set[str]) -> None:
    owner = choose_shard(room, shards)
    assert owner in shards
    for gone in shards:
        rest = shards - {gone}
        # Rendezvous hashing: a room moves only if its owner left; otherwise it stays put.
        if gone != owner:
            assert choose_shard(room, rest) == owner
    assert choose_shard(room, sorted(shards, reverse=True)) == owner, (
        "the order of the shards does not matter"
    )
    assert choose_shard(room, []) is None


async def test_a_shard_that_hands_over_keeps_its_rooms_until_it_releases_them(
    client: redis.Redis, redis_prefix: str
) -> None:
    registry = _registry(client, redis_prefix)
    await registry.heartbeat(A, hands_over=True)
    alone = await registry.owners_of(ROOMS)
    assert all(o.shard == A for o in alone.values())
    await registry.heartbeat(B, hands_over=True)
    # B wins some rooms by rendezvous hashing, but A keeps them (same token) until it lets go.
    won_by_b = [room for room in ROOMS if choose_shard(room, ["shard-a", "shard-b"]) == "shard-b"]
    assert won_by_b
    assert await registry.owners_of(ROOMS) == alone
    room = won_by_b[0]
    # Only the owner with its very token may release; the room then goes to B with a grown token,
    # and B's handover list names it once.
    assert await registry.release(room, "shard-b", alone[room].fencing_token) is None
    assert await registry.release(room, "shard-a", alone[room].fencing_token + 1) is None
    moved = await registry.release(room, "shard-a", alone[room].fencing_token)
    assert moved is not None
    assert (moved.shard, moved.fencing_token) == (B, alone[room].fencing_token + 1)
    assert await registry.owner_of(room) == moved
    assert await registry.take_handovers("shard-b") == [room]
    assert await registry.take_handovers("shard-b") == []
    assert await registry.take_handovers("shard-a") == []


async def test_a_withdrawn_shard_wins_nothing_keeps_its_rooms_and_a_lapsed_lease_still_moves_them(
    client: redis.Redis, redis_prefix: str
) -> None:
    registry = _registry(client, redis_prefix, lease=1.0)
    lease_a = ShardLease(registry, A, hands_over=True)
    await lease_a.start()
    try:
        before = await registry.owners_of(ROOMS)
        await lease_a.withdraw()
        assert await registry.live_shards() == []
        # Withdrawn (a drain): the rooms it has stay with it; a room nobody resolved yet has no shard.
        assert await registry.owners_of(ROOMS) == before
        with pytest.raises(NoShardAvailable):
            await registry.owner_of("room-never-seen")
        await registry.heartbeat(B, hands_over=True)
        assert await registry.owners_of(ROOMS) == before
        # A release goes to the only candidate.
        released = await registry.release(ROOMS[0], "shard-a", before[ROOMS[0]].fencing_token)
        assert released is not None
        assert released.shard == B
        # A lease that lapses moves the rest without a word, sticky or not.
        await lease_a.stop(give_up=False)
        await asyncio.sleep(1.2)
        await registry.heartbeat(B, hands_over=True)  # B's own one-second lease, renewed
        after = await registry.owners_of(ROOMS)
        assert set(after) == set(ROOMS)
        assert all(o.shard == B for o in after.values())
        assert after[ROOMS[1]].fencing_token == before[ROOMS[1]].fencing_token + 1
    finally:
        await lease_a.stop()


def test_no_property_test_has_a_wall_clock_deadline() -> None:
    """The suite's Hypothesis profile (tests/conftest.py): examples are never timed, so a loaded
    machine cannot fail a property that holds."""
    assert settings.default.deadline is None
