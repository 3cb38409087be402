"""The hand event log in Redis: the engine's replay rebuilds a live hand from it exactly, and every
append is fenced by the room's token in the shard registry, so a shard that lost the room cannot write."""

from __future__ import annotations

import random

import pytest

from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand
from poker_engine.replay import apply_json_action, config_from_json
from service_runtime.errors import FailedPrecondition
from service_runtime.redis_client import create_redis
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo
from services.table.event_log import RedisEventLog
from services.table.hand_record import config_entry

pytestmark = pytest.mark.redis

A = ShardInfo("table-a", "127.0.0.1:1")
B = ShardInfo("table-b", "127.0.0.1:2")


def random_hand(seed: int) -> tuple[Hand, list[dict[str, object]]]:
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    config = HandConfig(
        variant=Variant.NO_LIMIT,
        seats=(SeatConfig(0, "ann", 1000), SeatConfig(2, "bob", 700), SeatConfig(5, "cat", 400)),
        button=0,
        small_blind=5,
        big_blind=10,
        deck=tuple(deck),
        step=5,
        rake=RakeRule(500, 30),
        hand_id=f"h{seed}",
    )
    hand = Hand(config)
    entries: list[dict[str, object]] = [config_entry(config)]
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        choice = rng.choice(["CHECK", "CALL", "FOLD", "ALL_IN", "RAISE", "TIMEOUT"])
        entry: dict[str, object] = {"seat": legal.seat, "action": choice}
        if choice == "RAISE":
            entry["to"] = legal.min_to
        try:
            apply_json_action(hand, entry)
        except Exception:
            continue
        entries.append(entry)
    return hand, entries


async def test_a_hand_rebuilt_from_its_redis_log_is_the_live_hand(
    redis_server_url: str, redis_prefix: str
) -> None:
    client = create_redis(redis_server_url)
    try:
        registry = RedisShardRegistry(client, prefix=redis_prefix)
        await registry.heartbeat(A)
        owner = await registry.owner_of("room-x")
        log = RedisEventLog(client, shard_id=A.shard_id, prefix=redis_prefix)
        log.own("room-x", owner.fencing_token)
        for seed in range(5):
            hand, entries = random_hand(seed)
            for entry in entries:
                await log.append("room-x", hand.config.hand_id, [entry])
            stored = await log.read(hand.config.hand_id)
            rebuilt = Hand(config_from_json(stored[0]))
            for entry in stored[1:]:
                apply_json_action(rebuilt, entry)
            assert rebuilt.events == hand.events
            await log.forget(hand.config.hand_id)
            assert await log.read(hand.config.hand_id) == []
    finally:
        await client.aclose()


async def test_a_shard_that_lost_the_room_can_never_append_again(
    redis_server_url: str, redis_prefix: str
) -> None:
    client = create_redis(redis_server_url)
    try:
        registry = RedisShardRegistry(client, prefix=redis_prefix)
        await registry.heartbeat(A)
        first = await registry.owner_of("room-y")
        assert first.shard.shard_id == A.shard_id
        old = RedisEventLog(client, shard_id=A.shard_id, prefix=redis_prefix)
        old.own("room-y", first.fencing_token)
        await old.append("room-y", "h1", [{"seat": 0, "action": "CALL"}])
        # A's lease goes, B takes the room over with a larger token.
        await registry.deregister(A)
        await registry.heartbeat(B)
        second = await registry.owner_of("room-y")
        assert second.shard.shard_id == B.shard_id
        assert second.fencing_token > first.fencing_token
        with pytest.raises(FailedPrecondition) as fenced:
            await old.append("room-y", "h1", [{"seat": 2, "action": "FOLD"}])
        assert fenced.value.reason == "SHARD_NOT_OWNER"
        new = RedisEventLog(client, shard_id=B.shard_id, prefix=redis_prefix)
        new.own("room-y", second.fencing_token)
        await new.append("room-y", "h1", [{"seat": 2, "action": "CHECK"}])
        assert [e["action"] for e in await new.read("h1")] == ["CALL", "CHECK"]
        # Even A coming back with its old token is refused: the token only grows.
        await registry.heartbeat(A)
        with pytest.raises(FailedPrecondition):
            await old.append("room-y", "h1", [{"seat": 2, "action": "FOLD"}])
    finally:
        await client.aclose()
