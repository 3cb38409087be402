"""House rounds move with their room (issue 30): with Redis the round journal is shared by every shard
and fenced by the room's token, so the shard that takes a house room over resumes the rounds its last
owner left open, as a restarted shard does: a dealt round goes on with the same cards and decisions
(its player's clock: what was left plus the handover grace) and settles once; an undealt one is
refunded once. Two in-process shards (tests/table/conftest.py table_world) on a real Redis, cashier
and fairness; a shard "dies" by stopping without resuming anything, or loses the room while it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from service_runtime.errors import FailedPrecondition
from service_runtime.redis_client import create_redis
from service_runtime.shard_registry import RedisShardRegistry
from service_runtime.testing import reason_of
from services.table.house.house_journal import RedisJournal
from tests.table.conftest import ADMIN, AS_TABLE, ServiceProcess, TableWorld, table_world, unique, wait_for
from tests.table.house_players import CALL, FOLD, HouseClient, Sent, fund_house, house_room
from tests.table.test_house_rounds import box, finish

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

HOLDEM = common_pb2.GAME_VARIANT_CASINO_HOLDEM
GRACE = 5.0


@contextlib.asynccontextmanager
async def two_shards(
    backends: dict[str, ServiceProcess], redis_url: str, prefix: str
) -> AsyncIterator[
    tuple[list[TableWorld], list[bool], list[contextlib.AbstractAsyncContextManager[TableWorld]]]
]:
    common = {
        "redis_url": redis_url,
        "registry_prefix": prefix,
        "lease_seconds": 1.0,
        "house_decision_seconds": 30.0,
        "handover_grace_seconds": GRACE,
    }
    managers = [table_world(backends, shard_id=f"house-{n}", **common) for n in ("a", "b")]
    opened = [await m.__aenter__() for m in managers]
    alive = [True, True]
    try:
        yield opened, alive, managers  # type: ignore[misc]
    finally:
        for manager, up in zip(managers, alive, strict=True):
            if up:
                await manager.__aexit__(None, None, None)


async def owner_index(worlds: list[TableWorld], table_id: str) -> int:
    probe = HouseClient(unique("probe"), table_id, worlds[0].table, HOLDEM)
    try:
        await probe.snapshot()
        return 0
    except grpc.aio.AioRpcError as error:
        if reason_of(error) != "SHARD_NOT_OWNER":
            raise
        return 1


async def open_undealt_round(
    world: TableWorld, redis_url: str, prefix: str, table_id: str, player: str, ante: int
) -> str:
    """What a shard killed between a round's stake batch and its seal leaves: the journal's `open`
    (written as the room's owner, with its token), the stakes in the house bank, no `dealt`."""
    room_id = table_id.rsplit(".", 1)[0]
    committed = await world.fairness.CommitHand(
        fairness_pb2.CommitHandRequest(request_id=unique("undealt"), table_id=f"{table_id}~{player}"),
        metadata=AS_TABLE,
    )
    round_id = committed.commitment.hand_id
    client = create_redis(redis_url)
    try:
        owner = await RedisShardRegistry(client, prefix=prefix).owner_of(room_id)
        journal = RedisJournal(client, shard_id=owner.shard.shard_id, prefix=prefix)
        await journal.append(
            room_id,
            table_id,
            owner.fencing_token,
            {
                "type": "open", "round_id": round_id, "player": player, "chain": f"{table_id}~{player}",
                "commitment": committed.commitment.commitment, "jackpot_before": 0,
                "started_at": time.time(), "cover": 50_000, "wagers": [[1, ante, False, 0]],
            },
        )  # fmt: skip
    finally:
        await client.aclose()
    stake = cashier_pb2.Transfer(
        transfer_id=f"hgr:{round_id}:in:1", debit_account_id=f"wallet:GRAM:{player}",
        credit_account_id="house:bank:GRAM", pool=common_pb2.CHIP_POOL_GRAM, amount=ante,
        kind=cashier_pb2.TRANSFER_KIND_HOUSE_GAME_RESULT, reference=f"{round_id}:box1", table_id=table_id,
    )  # fmt: skip
    await world.cashier.CreateTransfers(
        cashier_pb2.CreateTransfersRequest(transfers=[stake], linked=True), metadata=AS_TABLE
    )
    return round_id


async def state_of(world: TableWorld, round_id: str) -> int:
    reply = await world.fairness.GetCommitment(
        fairness_pb2.GetCommitmentRequest(hand_id=round_id), metadata=ADMIN
    )
    return int(reply.commitment.state)


async def test_the_next_owner_resumes_a_dealt_round_and_refunds_an_undealt_one(
    backends: dict[str, ServiceProcess], redis_server_url: str, redis_prefix: str
) -> None:
    async with two_shards(backends, redis_server_url, redis_prefix) as (worlds, alive, managers):
        await fund_house(worlds[0], 10_000_000)
        room = house_room(unique("hmove"), HOLDEM)
        for world in worlds:
            table_id = world.add_room(room)
        index = await owner_index(worlds, table_id)
        owner, other = worlds[index], worlds[1 - index]
        client = HouseClient(unique("hp"), table_id, owner.table, HOLDEM)
        await owner.fund(client.player_id, 100_000)
        before = await owner.wallet(client.player_id)
        view = (await client.bet(box(1, 10), box(2, 10))).round
        view = await client.decide(view, 1, CALL)
        cards = {b.box: [c.index for c in b.cards] for b in view.boxes}
        deadline_there = view.deadline.ToNanoseconds() / 1e9
        # A second table of the room holds a round whose stakes went in and that was never dealt;
        # nobody comes back to that table: the next owner opens it for its open round alone.
        undealt_table = f"{room.room_id}.2"
        late = unique("hp")
        await owner.fund(late, 100_000)
        late_before = await owner.wallet(late)
        undealt = await open_undealt_round(owner, redis_server_url, redis_prefix, undealt_table, late, 10)
        assert await owner.wallet(late) == late_before - 10
        # The owner goes away in the middle of both rounds: stopped, nothing resumed or refunded.
        await managers[index].__aexit__(None, None, None)
        alive[index] = False
        assert view.round_id not in owner.history.hands

        # The undealt round is refunded at the next owner without its player calling.
        async def refunded() -> bool:
            return await other.wallet(late) == late_before

        await wait_for(refunded, within=15)
        await wait_for(lambda: _voided(other, undealt), within=10)

        # The dealt round's player comes back through the next owner: the same round, cards, decision.
        client.stub = other.table
        watch = other.table.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id), metadata=client.metadata
        )
        try:
            async with asyncio.timeout(10):
                async for update in watch:
                    if update.view.house.round.round_id == view.round_id:
                        break
        finally:
            watch.cancel()
        again = (await client.snapshot()).house.round
        assert again.round_id == view.round_id
        assert {b.box: [c.index for c in b.cards] for b in again.boxes} == cards
        assert "RESUMED after a shard restart or takeover" in again.notes
        # The clock of box 2: what was left at the old owner plus the handover grace.
        assert abs(again.deadline.ToNanoseconds() / 1e9 - (deadline_there + GRACE)) < 1.5
        again = await client.decide(again, 2, FOLD)
        assert again.phase == "COMPLETE"
        await finish(other, client, again, before)
        record = other.history.hands[view.round_id]
        assert [(d.box, d.decision) for d in record.house_game.decisions] == [(1, "CALL"), (2, "FOLD")]
        assert await state_of(other, view.round_id) == fairness_pb2.HAND_STATE_FINISHED
        # Settled once, refunded once: each transfer id exists once and nothing else moved.
        looked = await other.cashier.LookupTransfers(
            cashier_pb2.LookupTransfersRequest(
                transfer_ids=[f"hgr:{undealt}:in:1", f"hgr:{undealt}:void:1", f"hgr:{undealt}:out:1"]
            ),
            metadata=ADMIN,
        )
        assert [r.transfer_id for r in looked.results if r.status == cashier_pb2.TRANSFER_STATUS_EXISTS] == [
            f"hgr:{undealt}:in:1",
            f"hgr:{undealt}:void:1",
        ]
        assert await other.wallet(late) == late_before
        assert (await other.audit()).balanced
        # The journal keeps nothing of either round.
        redis = create_redis(redis_server_url)
        try:
            journal = RedisJournal(redis, shard_id="nobody", prefix=redis_prefix)
            assert await journal.open_rounds(table_id) == {}
            assert await journal.open_rounds(undealt_table) == {}
            assert table_id not in await journal.tables()
        finally:
            await redis.aclose()


async def _voided(world: TableWorld, round_id: str) -> bool:
    return await state_of(world, round_id) == fairness_pb2.HAND_STATE_VOIDED


async def test_a_shard_that_lost_the_room_can_neither_decide_nor_settle_a_round_it_dealt(
    backends: dict[str, ServiceProcess], redis_server_url: str, redis_prefix: str
) -> None:
    """A partition (or a freeze past the lease): the registry gives the room to the other shard while
    the old owner still runs. The old owner's next decision is fenced before it takes any stake; the
    new owner resumes the round from the journal and settles it."""
    async with two_shards(backends, redis_server_url, redis_prefix) as (worlds, _alive, _managers):
        await fund_house(worlds[0], 10_000_000)
        room = house_room(unique("hfence"), HOLDEM)
        for world in worlds:
            table_id = world.add_room(room)
        index = await owner_index(worlds, table_id)
        owner, other = worlds[index], worlds[1 - index]
        client = HouseClient(unique("hp"), table_id, owner.table, HOLDEM)
        await owner.fund(client.player_id, 100_000)
        before = await owner.wallet(client.player_id)
        view = (await client.bet(box(1, 10))).round
        # The registry moves the room to the other shard (as when the owner's lease lapsed).
        redis = create_redis(redis_server_url)
        try:
            key = f"{redis_prefix}room-owner:{room.room_id}"
            await redis.hset(key, "shard", other.settings.shard_id)
            await redis.hincrby(key, "token", 1)
        finally:
            await redis.aclose()
        paid_in = await owner.wallet(client.player_id)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.decide(view, 1, CALL)
        assert reason_of(caught.value) == "SHARD_NOT_OWNER"
        assert await owner.wallet(client.player_id) == paid_in  # the call's stake was never taken
        # The new owner has the round back and settles it.
        client.stub = other.table

        async def resumed() -> bool:
            return (await client.snapshot()).house.round.round_id == view.round_id

        await wait_for(resumed, within=10)
        client.sent = []
        again = await client.decide((await client.snapshot()).house.round, 1, CALL)
        assert again.phase == "COMPLETE"
        await finish(other, client, again, before)
        # The old owner dropped its copy of the table: asked again, it names the new owner.
        stale = HouseClient(client.player_id, table_id, owner.table, HOLDEM)

        async def dropped() -> bool:
            try:
                await stale.snapshot()
            except grpc.aio.AioRpcError as error:
                return reason_of(error) == "SHARD_NOT_OWNER"
            return False

        await wait_for(dropped, within=10)
        assert view.round_id not in owner.history.hands


async def test_the_shared_journal_is_fenced_by_the_rooms_token(
    redis_server_url: str, redis_prefix: str
) -> None:
    redis = create_redis(redis_server_url)
    try:
        owner_key = f"{redis_prefix}room-owner:r"
        await redis.hset(owner_key, mapping={"shard": "a", "token": "3"})
        a = RedisJournal(redis, shard_id="a", prefix=redis_prefix)
        b = RedisJournal(redis, shard_id="b", prefix=redis_prefix)
        opened = {"type": "open", "round_id": "h1", "player": "p", "wagers": [[1, 10, False, 0]]}
        await a.append("r", "r.1", 3, opened)
        await a.append("r", "r.1", 3, {"type": "dealt", "round_id": "h1", "deadline": 12.5})
        assert await b.tables() == ["r.1"]
        assert (await b.open_rounds("r.1"))["h1"]["deadline"] == 12.5
        # The room moves to b: a's writes are refused and change nothing; b's go through.
        await redis.hset(owner_key, mapping={"shard": "b", "token": "4"})
        decision = {"type": "decision", "round_id": "h1", "decision": {"box": 1, "transfer": "t"}}
        for journal, token in ((a, 3), (a, 4), (b, 3)):
            with pytest.raises(FailedPrecondition) as refused:
                await journal.append("r", "r.1", token, decision)
            assert refused.value.reason == "SHARD_NOT_OWNER"
        assert (await b.open_rounds("r.1"))["h1"]["decisions"] == []
        closed = {"type": "closed", "round_id": "h1", "how": "settled", "player": "p", "view": "dmlldw=="}
        with pytest.raises(FailedPrecondition):
            await a.append("r", "r.1", 3, closed)  # fenced: no view either
        assert await b.last_views("r.1") == {}
        await b.append("r", "r.1", 4, closed)
        assert await b.open_rounds("r.1") == {}
        assert await b.tables() == []
        # The player's last view is kept (a day), outside the round's entries.
        assert await b.last_views("r.1") == {"p": "dmlldw=="}
        assert 0 < await redis.ttl(f"{redis_prefix}house-table-last-views:r.1") <= 86_400
        # A step of a round closed meanwhile is refused too (it would leave a list nobody reads).
        with pytest.raises(FailedPrecondition) as late:
            await b.append("r", "r.1", 4, decision)
        assert late.value.reason == "HAND_IS_OVER"
    finally:
        await redis.aclose()


async def test_a_round_the_dead_owner_settled_but_never_closed_is_paid_once(
    backends: dict[str, ServiceProcess], redis_server_url: str, redis_prefix: str
) -> None:
    """The owner's settlement reached the cashier, then it died before the journal's `closed` (and
    before its reveal): the next owner resumes the round, sends the same settlement (the round's own
    ids, applied once), reveals it FINISHED and records it; the wallet moved by the round once."""
    async with two_shards(backends, redis_server_url, redis_prefix) as (worlds, alive, managers):
        await fund_house(worlds[0], 10_000_000)
        room = house_room(unique("honce"), HOLDEM)
        for world in worlds:
            table_id = world.add_room(room)
        index = await owner_index(worlds, table_id)
        owner, other = worlds[index], worlds[1 - index]
        client = HouseClient(unique("hp"), table_id, owner.table, HOLDEM)
        await owner.fund(client.player_id, 100_000)
        before = await owner.wallet(client.player_id)
        view = (await client.bet(box(1, 10))).round
        redis = create_redis(redis_server_url)
        try:
            rows = await redis.lrange(f"{redis_prefix}house-round:{view.round_id}", 0, -1)
            logged = [json.loads(row) for row in rows]
            # The core journals `staked` between them (older readers skip it).
            assert [e["type"] for e in logged] == ["open", "staked", "dealt"]
            # The owner's reveal cannot go out: the round is settled there and never revealed.
            owner.proxies["fairness"].take_down()
            final = await client.decide(view, 1, CALL)
            assert final.phase == "COMPLETE"
            paid = await owner.wallet(client.player_id)
            assert paid - before == final.paid_out - final.staked
            # As if the owner had died after the settlement and before the journal's `closed`.
            registry = RedisShardRegistry(redis, prefix=redis_prefix)
            token = (await registry.owner_of(room.room_id)).fencing_token
            journal = RedisJournal(redis, shard_id=owner.settings.shard_id, prefix=redis_prefix)
            decision = {
                "box": 1, "decision": "CALL", "cost": 20, "cards": [], "insurance": 0, "timed_out": False,
                "transfer": f"hgr:{view.round_id}:b1:0:0:CALL",
            }  # fmt: skip
            for entry in [*logged, {"type": "decision", "round_id": view.round_id, "decision": decision}]:
                await journal.append(room.room_id, table_id, token, entry)
            await managers[index].__aexit__(None, None, None)
            alive[index] = False
            assert view.round_id not in owner.history.hands
            # The next owner finds the table in the journal and settles the round there, once.
            await wait_for(lambda: view.round_id in other.history.hands, within=15)
            assert await other.wallet(client.player_id) == paid
            client.sent = [Sent(1, CALL)]
            await finish(other, client, final, before)
            assert await state_of(other, view.round_id) == fairness_pb2.HAND_STATE_FINISHED
            assert await journal.open_rounds(table_id) == {}
        finally:
            await redis.aclose()


async def test_a_settled_rounds_record_history_never_had_is_sent_by_the_next_owner(
    backends: dict[str, ServiceProcess], redis_server_url: str, redis_prefix: str
) -> None:
    """The round settled and closed at its owner, whose history was away until it died: the record
    waited in the shared record outbox, and the next owner sends it as the table opens there."""
    async with two_shards(backends, redis_server_url, redis_prefix) as (worlds, alive, managers):
        await fund_house(worlds[0], 10_000_000)
        room = house_room(unique("hrec"), HOLDEM)
        for world in worlds:
            table_id = world.add_room(room)
        index = await owner_index(worlds, table_id)
        owner, other = worlds[index], worlds[1 - index]
        client = HouseClient(unique("hp"), table_id, owner.table, HOLDEM)
        await owner.fund(client.player_id, 100_000)
        before = await owner.wallet(client.player_id)
        owner.history.down = True
        final = await client.decide((await client.bet(box(1, 10))).round, 1, FOLD)
        assert final.phase == "COMPLETE"
        await asyncio.sleep(0.3)  # the owner's history queue tries (and fails) meanwhile
        await managers[index].__aexit__(None, None, None)
        alive[index] = False
        assert final.round_id not in owner.history.hands
        client.stub = other.table
        # The round is over: the next owner shows the player how it ended (the journal's last view).
        assert (await client.snapshot()).house.round == final
        await wait_for(lambda: final.round_id in other.history.hands, within=10)
        await finish(other, client, final, before)


async def test_the_next_owner_shows_a_player_the_round_that_ended_at_the_last_owner(
    backends: dict[str, ServiceProcess], redis_server_url: str, redis_prefix: str
) -> None:
    """A round settled at the owner, which then goes away (a handover right after a settlement, a
    takeover): at the next owner the player's view still shows how that round ended (the journal's
    last views), nobody else's; their next round replaces it."""
    async with two_shards(backends, redis_server_url, redis_prefix) as (worlds, alive, managers):
        await fund_house(worlds[0], 10_000_000)
        room = house_room(unique("hlast"), HOLDEM)
        for world in worlds:
            table_id = world.add_room(room)
        index = await owner_index(worlds, table_id)
        owner, other = worlds[index], worlds[1 - index]
        client = HouseClient(unique("hp"), table_id, owner.table, HOLDEM)
        stranger = HouseClient(unique("hp"), table_id, owner.table, HOLDEM)
        await owner.fund(client.player_id, 100_000)
        view = (await client.bet(box(1, 10))).round
        ended = await client.decide(view, 1, FOLD)
        assert ended.phase == "COMPLETE"
        await managers[index].__aexit__(None, None, None)
        alive[index] = False
        client.stub = stranger.stub = other.table

        async def shown() -> bool:
            try:
                return (await client.snapshot()).house.round.round_id == view.round_id
            except grpc.aio.AioRpcError:
                return False

        await wait_for(shown, within=15)
        again = (await client.snapshot()).house.round
        assert again == ended
        assert (await stranger.snapshot()).house.round.round_id == ""
        following = (await client.bet(box(1, 10))).round
        assert following.round_id != view.round_id
        assert (await client.snapshot()).house.round.round_id == following.round_id
