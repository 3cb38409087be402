"""The hand event log in Redis: the engine's replay rebuilds a live hand from it exactly, and every
append is fenced by the room's token in the shard registry, so a shard that lost the room cannot write."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand
from poker_engine.replay import apply_json_action, config_from_json
from service_runtime.errors import FailedPrecondition
from service_runtime.redis_client import create_redis
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo
from services.table.cash import table_core
from services.table.cash.hand_record import config_entry
from services.table.cash.presence import PresenceRules
from services.table.log.event_log import FileEventLog, RedisEventLog

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


async def owning_log(client: Any, prefix: str, room_id: str) -> tuple[RedisShardRegistry, RedisEventLog]:
    """Shard A registered, owning `room_id`, and its Redis log holding the room's token."""
    registry = RedisShardRegistry(client, prefix=prefix)
    await registry.heartbeat(A)
    owner = await registry.owner_of(room_id)
    assert owner.shard.shard_id == A.shard_id
    log = RedisEventLog(client, shard_id=A.shard_id, prefix=prefix)
    log.own(room_id, owner.fencing_token)
    return registry, log


async def test_a_hand_rebuilt_from_its_redis_log_is_the_live_hand(
    redis_server_url: str, redis_prefix: str
) -> None:
    client = create_redis(redis_server_url)
    try:
        _, log = await owning_log(client, redis_prefix, "room-x")
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


async def test_the_seats_log_is_fenced_like_a_hand_s_and_read_back_in_order(
    redis_server_url: str, redis_prefix: str
) -> None:
    client = create_redis(redis_server_url)
    try:
        registry, old = await owning_log(client, redis_prefix, "room-z")
        sat_out = table_core.to_entry(table_core.SitOut("ann", 1_000.5))
        await old.append_seats("room-z", "room-z.1", [sat_out])
        await registry.deregister(A)
        await registry.heartbeat(B)
        second = await registry.owner_of("room-z")
        with pytest.raises(FailedPrecondition) as fenced:
            await old.append_seats("room-z", "room-z.1", [table_core.to_entry(table_core.Reconnect("bob"))])
        assert fenced.value.reason == "SHARD_NOT_OWNER"
        new = RedisEventLog(client, shard_id=B.shard_id, prefix=redis_prefix)
        new.own("room-z", second.fencing_token)
        away = table_core.to_entry(table_core.Disconnect("bob", 1_001.25))
        await new.append_seats("room-z", "room-z.1", [away])
        read = await new.read_seats("room-z.1")
        assert [table_core.from_entry(e) for e in read] == [
            table_core.SitOut("ann", 1_000.5),
            table_core.Disconnect("bob", 1_001.25),
        ]
        assert await new.read_seats("room-z.2") == []
    finally:
        await client.aclose()


async def test_the_seats_log_is_trimmed_to_a_snapshot_in_one_fenced_write(
    redis_server_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    """`rewrite_seats` replaces the table's seats' log (the trim: a snapshot, then what follows);
    a shard that lost the room cannot trim it; the file log keeps the trimmed log across a restart."""
    rules = table_core.Rules("room-z.1", 6, 30.0, PresenceRules(), 1_800.0)
    seats = table_core.Seats.empty(rules, 5, 10)
    for given in (
        table_core.SessionOpened("ann", 0, "s0", 500, False, 1_000.0),
        table_core.SessionOpened("bob", 3, "s3", 700, True, 1_000.5),
        table_core.SitOut("ann", 1_001.0),
        table_core.Disconnect("bob", 1_002.25),
    ):
        seats = table_core.feed(seats, given, rules).state
    snapshot = table_core.to_entry(table_core.snapshot_of(seats))
    later = table_core.to_entry(table_core.Reconnect("bob"))
    client = create_redis(redis_server_url)
    try:
        registry, old = await owning_log(client, redis_prefix, "room-z")
        await old.append_seats("room-z", "room-z.1", [table_core.to_entry(table_core.SitOut("ann", 1.0))] * 3)
        await old.rewrite_seats("room-z", "room-z.1", [snapshot])
        await old.append_seats("room-z", "room-z.1", [later])
        read = await old.read_seats("room-z.1")
        assert read == [snapshot, later]
        replayed = table_core.replay(read, rules, 5, 10)
        assert (
            replayed.durable() == table_core.feed(seats, table_core.Reconnect("bob"), rules).state.durable()
        )
        await registry.deregister(A)
        await registry.heartbeat(B)
        assert (await registry.owner_of("room-z")).shard.shard_id == B.shard_id
        with pytest.raises(FailedPrecondition) as fenced:
            await old.rewrite_seats("room-z", "room-z.1", [])
        assert fenced.value.reason == "SHARD_NOT_OWNER"
        assert await old.read_seats("room-z.1") == [snapshot, later]
    finally:
        await client.aclose()
    file_log = FileEventLog(tmp_path / "log.jsonl")
    await file_log.append_seats("room-z", "room-z.1", [table_core.to_entry(table_core.SitOut("ann", 1.0))])
    await file_log.rewrite_seats("room-z", "room-z.1", [snapshot])
    await file_log.append_seats("room-z", "room-z.1", [later])
    file_log.close()
    again = FileEventLog(tmp_path / "log.jsonl")
    assert await again.read_seats("room-z.1") == [snapshot, later]
    again.close()


async def test_the_file_log_keeps_the_seats_entries_across_a_restart_and_its_compaction(
    tmp_path: Path,
) -> None:
    entries = [
        table_core.to_entry(table_core.SitOut("ann", 1_000.5)),
        table_core.to_entry(
            table_core.HandPlayed(((0, "s0"), (2, "s2")), frozenset({2}), frozenset({0}), 1_002.0)
        ),
    ]
    first = FileEventLog(tmp_path / "log.jsonl")
    await first.append_seats("room-z", "room-z.1", entries[:1])
    await first.append_seats("room-z", "room-z.1", entries[1:])
    first.close()
    again = FileEventLog(tmp_path / "log.jsonl")  # read and compacted
    assert await again.read_seats("room-z.1") == entries
    again.close()
    third = FileEventLog(tmp_path / "log.jsonl")
    assert [table_core.from_entry(e) for e in await third.read_seats("room-z.1")] == [
        table_core.SitOut("ann", 1_000.5),
        table_core.HandPlayed(((0, "s0"), (2, "s2")), frozenset({2}), frozenset({0}), 1_002.0),
    ]
    third.close()


async def test_a_hand_starts_with_its_config_and_live_mark_in_one_fenced_write_and_ends_in_one(
    redis_server_url: str, redis_prefix: str
) -> None:
    # Issue 28: the live mark folded into the config's append (one script), the end of a hand
    # (forget the log, clear the mark) one more; both as fenced / as guarded as the separate calls.
    client = create_redis(redis_server_url)
    try:
        registry, log = await owning_log(client, redis_prefix, "room-z")
        await log.append_live("room-z", "room-z.1", "h9", [{"config": 1}])
        assert await log.read("h9") == [{"config": 1}]
        assert await log.live_hand("room-z.1") == "h9"
        # A newer hand's mark is left alone by the end of an older one; the older log goes.
        await log.mark_live("room-z", "room-z.1", "h10")
        await log.forget_live("room-z.1", "h9")
        assert await log.read("h9") == []
        assert await log.live_hand("room-z.1") == "h10"
        await log.forget_live("room-z.1", "h10")
        assert await log.live_hand("room-z.1") is None
        # A shard that lost the room writes neither the entries nor the mark.
        await registry.deregister(A)
        await registry.heartbeat(B)
        assert (await registry.owner_of("room-z")).shard.shard_id == B.shard_id
        with pytest.raises(FailedPrecondition) as fenced:
            await log.append_live("room-z", "room-z.1", "h11", [{"config": 2}])
        assert fenced.value.reason == "SHARD_NOT_OWNER"
        assert await log.read("h11") == []
        assert await log.live_hand("room-z.1") is None
    finally:
        await client.aclose()


@pytest.mark.parametrize("backend", ["redis", "file"])
async def test_the_next_hand_s_mark_is_fenced_cleared_by_its_deal_and_by_its_void(
    backend: str, redis_server_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    # Issue 28: the next hand is committed while the running one plays and marked as the table's next
    # (a next owner voids it); its deal clears the mark in the same write that sets the live one.
    client = create_redis(redis_server_url)
    try:
        registry, redis_log = await owning_log(client, redis_prefix, "room-z")
        log: RedisEventLog | FileEventLog = (
            redis_log if backend == "redis" else FileEventLog(tmp_path / "hands.jsonl")
        )
        await log.append_live("room-z", "room-z.1", "h1", [{"config": 1}])
        await log.mark_next("room-z", "room-z.1", "h2")
        assert (await log.live_hand("room-z.1"), await log.next_hand("room-z.1")) == ("h1", "h2")
        # The end of the running hand leaves the next one's mark.
        await log.forget_live("room-z.1", "h1")
        assert (await log.live_hand("room-z.1"), await log.next_hand("room-z.1")) == (None, "h2")
        if isinstance(log, FileEventLog):
            log.close()
            log = FileEventLog(tmp_path / "hands.jsonl")  # read back and compacted: the mark is kept
            assert await log.next_hand("room-z.1") == "h2"
        # Its deal: live, and no longer next.
        await log.append_live("room-z", "room-z.1", "h2", [{"config": 2}])
        assert (await log.live_hand("room-z.1"), await log.next_hand("room-z.1")) == ("h2", None)
        # A commitment voided (never dealt): its mark goes, the running hand's stays.
        await log.mark_next("room-z", "room-z.1", "h3")
        await log.forget_live("room-z.1", "h3")
        assert (await log.live_hand("room-z.1"), await log.next_hand("room-z.1")) == ("h2", None)
        if isinstance(log, RedisEventLog):
            # A shard that lost the room cannot mark a next hand.
            await registry.deregister(A)
            await registry.heartbeat(B)
            assert (await registry.owner_of("room-z")).shard.shard_id == B.shard_id
            with pytest.raises(FailedPrecondition) as fenced:
                await log.mark_next("room-z", "room-z.1", "h4")
            assert fenced.value.reason == "SHARD_NOT_OWNER"
            assert await log.next_hand("room-z.1") is None
        else:
            log.close()
    finally:
        await client.aclose()


async def test_a_request_id_stays_bound_to_its_first_value_in_redis_and_the_file_log_across_a_restart(
    redis_server_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    """A request id of a call that names one of several tables (CloseTable) is bound, for good, to
    the table it first named, in the shard's log, so the same id for another table is a conflict even
    after a restart or at another shard; scopes (one per caller) never see each other's ids."""
    client = create_redis(redis_server_url)
    path = tmp_path / "log.jsonl"
    try:
        opens = {
            "redis": lambda: RedisEventLog(client, shard_id=A.shard_id, prefix=redis_prefix),
            "file": lambda: FileEventLog(path),
        }
        for backend, open_log in opens.items():
            log: Any = open_log()
            assert await log.bind_request("close-table:olga", "req-1", "r.2") == "r.2", backend
            assert await log.bind_request("close-table:olga", "req-1", "r.2") == "r.2", backend
            assert await log.bind_request("close-table:olga", "req-1", "r.3") == "r.2", backend
            assert await log.bind_request("close-table:ivan", "req-1", "r.3") == "r.3", backend
            if backend == "file":
                log.close()
            again: Any = open_log()  # a restart (the file log replays and compacts its file)
            assert await again.bind_request("close-table:olga", "req-1", "r.4") == "r.2", backend
            assert await again.bind_request("close-table:ivan", "req-1", "r.2") == "r.3", backend
            if backend == "file":
                again.close()
    finally:
        await client.aclose()


def test_the_file_log_forgets_a_binding_after_its_retention(tmp_path: Path) -> None:
    """The file does not grow with every close ever asked: a binding older than the retention
    (30 days) is dropped when the file is replayed; a younger one stays."""
    import json
    import time

    from services.table.log.event_log import REQUEST_BINDING_SECONDS

    path = tmp_path / "log.jsonl"
    now = time.time()
    lines = [
        {
            "op": "bind",
            "hand_id": "",
            "key": "close-table:olga\x00old",
            "value": "r.2",
            "at": now - REQUEST_BINDING_SECONDS - 60,
        },
        {"op": "bind", "hand_id": "", "key": "close-table:olga\x00new", "value": "r.3", "at": now - 60},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    log = FileEventLog(path)
    try:
        assert log.bound_requests() == {"close-table:olga\x00new": "r.3"}
    finally:
        log.close()
    assert "old" not in path.read_text()
