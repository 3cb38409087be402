"""A hand survives the death of its shard (issue 30): the table that opens next goes on with it.

Shard A deals and the players act; A is stopped without settling (a kill) or fenced while it runs (a
partition); B opens the table from the same hand log and the hand goes on with the same cards, stacks,
bets and player to act, who gets what was left of their turn plus the handover grace. It settles once,
its reveal is FINISHED (never VOIDED) and its record holds every decision, A's and B's. Driven
in-process: two actors on the in-memory cashier and fairness (tests/table/fakes.py), over a real
Redis log fenced by the shard registry, the file log across a "restart", or the in-memory log.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import AlreadyExists, FailedPrecondition
from service_runtime.redis_client import create_redis
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo
from services.table.cash.actor import TableActor
from services.table.cash.settlement import AfterHand
from services.table.log.event_log import FileEventLog, HandEventLog, LocalEventLog, RedisEventLog
from services.table.log.record_outbox import MemoryOutbox
from services.table.ports.clock import WALL_CLOCK, Clock, SimulatedClock
from services.table.streams.chat import ChatGuard
from services.table.timings import Timings
from tests.table.fakes import ROOM, FakeCashier, FakeFairness, FakeRooms, down

A = table_pb2
TABLE = f"{ROOM.room_id}.1"
NAMES = {1: "ann", 2: "bob", 3: "cat"}
BUY_IN = 500
SHARD_A = ShardInfo("table-a", "127.0.0.1:1")
SHARD_B = ShardInfo("table-b", "127.0.0.1:2")


class Cashier(FakeCashier):
    """The in-memory cashier, counting the settlements it applied (a retry applies nothing)."""

    def __init__(self) -> None:
        super().__init__()
        self.applied: list[str] = []

    async def settle_hand(
        self, *, hand_id: str, table_id: str, pool: int, nets: list[tuple[str, int]], rake: int
    ) -> None:
        first = hand_id not in self.settled
        await super().settle_hand(hand_id=hand_id, table_id=table_id, pool=pool, nets=nets, rake=rake)
        if first:
            self.applied.append(hand_id)


class WayTo:
    """One shard's way to something the shards share (the cashier; Redis, which holds the hand logs
    and the record outbox), which the test can cut (`down`) for that shard alone."""

    def __init__(self, shared: Any, dependency: str) -> None:
        self._shared = shared
        self._dependency = dependency
        self.down = False

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._shared, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                raise down(self._dependency)
            return await method(*args, **kwargs)

        return call


@dataclass
class World:
    cashier: Cashier = field(default_factory=Cashier)
    fairness: FakeFairness = field(default_factory=FakeFairness)
    outbox: MemoryOutbox = field(default_factory=MemoryOutbox)
    records: list[AfterHand] = field(default_factory=list)
    tables: list[TableActor] = field(default_factory=list)
    reveals: set[asyncio.Task[None]] = field(default_factory=set)

    def after_hand(self, job: AfterHand) -> None:
        """What the shard's after-hand queue does: the reveal (with who saw what), then the record."""
        self.records.append(job)
        reveal = asyncio.get_running_loop().create_task(self._after(job))
        self.reveals.add(reveal)
        reveal.add_done_callback(self.reveals.discard)

    async def _after(self, job: AfterHand) -> None:
        await self.fairness.reveal(job.hand_id, seen=job.seen)
        await self.outbox.done(job.table_id, job.hand_id)  # history has the record

    def seat_players(self, count: int = 3) -> None:
        for seat in range(1, count + 1):
            self.cashier.seat(TABLE, NAMES[seat], seat, BUY_IN)

    def table(
        self,
        event_log: HandEventLog,
        *,
        cashier: Any = None,
        outbox: Any = None,
        action_seconds: float = 30.0,
        time_bank_seconds: float = 10.0,
        grace: float = 5.0,
        countdown: float = 0.0,
        clock: Clock = WALL_CLOCK,
    ) -> TableActor:
        timings = Timings(
            action_seconds=action_seconds,
            time_bank_seconds=time_bank_seconds,
            countdown_seconds=countdown,
            retry_initial_seconds=0.01,
            retry_max_seconds=0.05,
            command_queue_size=16,
            watch_queue_size=64,
            handover_grace_seconds=grace,
        )
        actor = TableActor(
            TABLE,
            ROOM,
            cashier=cashier or self.cashier,
            fairness=self.fairness,  # type: ignore[arg-type]
            event_log=event_log,
            after_hand=self.after_hand,
            rooms=FakeRooms(),  # type: ignore[arg-type]
            timings=timings,
            chat=ChatGuard(),
            outbox=outbox or self.outbox,
            clock=clock,
        )
        self.tables.append(actor)
        actor.start()
        return actor

    async def close(self) -> None:
        for actor in self.tables:
            await actor.stop()

    def chips(self) -> int:
        return sum(s.stack for s in self.cashier.sessions.values()) + sum(
            r for _, r in self.cashier.settled.values()
        )


async def view_of(actor: TableActor, player: str = "ann") -> table_pb2.TableView:
    async with asyncio.timeout(5):
        return await actor.call(lambda: actor.snapshot(player))


async def until(
    actor: TableActor, predicate: Callable[[table_pb2.TableView], bool], within: float = 5.0
) -> table_pb2.TableView:
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while True:
        try:
            view = await view_of(actor)
        except Exception:  # the table still opening (UNAVAILABLE): ask again
            view = None
        if view is not None and predicate(view):
            return view
        if loop.time() > end:
            raise AssertionError(f"not reached in {within} s; last view: {view}")
        await asyncio.sleep(0.01)


def playing(view: table_pb2.TableView) -> bool:
    return view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and view.to_act_seat != 0


@dataclass
class Play:
    """The decisions the test made, in order: (engine seat, action kind) as history records them."""

    made: list[tuple[int, str]] = field(default_factory=list)
    requests: int = 0
    # The last decision sent: (public seat, request id, hand id, action kind, amount).
    last: tuple[int, str, str, int, int] = (0, "", "", 0, 0)

    async def decide(
        self, actor: TableActor, kind: int | None = None, amount: int = 0
    ) -> table_pb2.TableView:
        view = await until(actor, playing)
        seat = view.to_act_seat
        own = await view_of(actor, NAMES[seat])
        legal = own.legal_actions.actions
        if kind is None:
            kind = A.ACTION_KIND_CHECK if A.ACTION_KIND_CHECK in legal else A.ACTION_KIND_CALL
        if kind == A.ACTION_KIND_BET and not amount:
            amount = own.legal_actions.min_amount
        self.requests += 1
        self.last = (seat, f"q{self.requests}", view.hand_id, kind, amount)
        await actor.call(lambda: actor.act(NAMES[seat], f"q{self.requests}", view.hand_id, kind, amount))
        self.made.append((seat - 1, A.ActionKind.Name(kind).removeprefix("ACTION_KIND_")))
        return await view_of(actor)

    async def to_flop_with_a_bet(self, actor: TableActor) -> table_pb2.TableView:
        """Preflop called round, the flop checked once and then bet into: a bet is outstanding."""
        view = await until(actor, playing)
        while len(view.board) < 3:
            view = await self.decide(actor)
        view = await self.decide(actor, A.ACTION_KIND_CHECK)
        return await self.decide(actor, A.ACTION_KIND_BET)

    async def to_the_end(self, actor: TableActor, world: World, hand_id: str) -> None:
        while hand_id not in world.cashier.settled:
            view = await view_of(actor)
            if not playing(view) or view.hand_id != hand_id:
                await asyncio.sleep(0.01)
                continue
            await self.decide(actor)


def without_clock(view: table_pb2.TableView) -> table_pb2.TableView:
    """The view with the times it was taken at (and the turn's deadline, compared on its own) left out."""
    copy = table_pb2.TableView()
    copy.CopyFrom(view)
    for name in ("as_of", "to_act_deadline"):
        copy.ClearField(name)  # type: ignore[arg-type]
    copy.legal_actions.ClearField("deadline")
    return copy


async def every_view(actor: TableActor) -> dict[str, table_pb2.TableView]:
    return {name: await view_of(actor, name) for name in NAMES.values()}


def record_decisions(job: AfterHand) -> list[tuple[int, str]]:
    """The players' decisions in the hand record, as (engine seat, kind); each says how long it took
    (the milliseconds measured at A travel in the log to B's record)."""
    decisions = [a for a in job.record.actions if a.kind in ("FOLD", "CHECK", "CALL", "BET", "RAISE")]
    assert all(a.decision_ms > 0 for a in decisions), [a.decision_ms for a in decisions]
    return [(a.seat, a.kind) for a in decisions]


async def registry_and_logs(redis_url: str, prefix: str) -> tuple[Any, RedisShardRegistry, RedisEventLog]:
    client = create_redis(redis_url)
    registry = RedisShardRegistry(client, prefix=prefix)
    await registry.heartbeat(SHARD_A)
    owner = await registry.owner_of(ROOM.room_id)
    assert owner.shard.shard_id == SHARD_A.shard_id
    log_a = RedisEventLog(client, shard_id=SHARD_A.shard_id, prefix=prefix)
    log_a.own(ROOM.room_id, owner.fencing_token)
    return client, registry, log_a


async def move_to_b(client: Any, registry: RedisShardRegistry, prefix: str) -> RedisEventLog:
    """A's lease is gone; B owns the room with a larger token (what the registry does at a takeover)."""
    await registry.deregister(SHARD_A)
    await registry.heartbeat(SHARD_B)
    owner = await registry.owner_of(ROOM.room_id)
    assert owner.shard.shard_id == SHARD_B.shard_id
    log_b = RedisEventLog(client, shard_id=SHARD_B.shard_id, prefix=prefix)
    log_b.own(ROOM.room_id, owner.fencing_token)
    return log_b


@pytest.mark.redis
async def test_a_hand_whose_shard_died_goes_on_at_the_next_owner_and_settles_once(
    redis_server_url: str, redis_prefix: str
) -> None:
    world = World()
    world.seat_players()
    client, registry, log_a = await registry_and_logs(redis_server_url, redis_prefix)
    try:
        a = world.table(log_a)
        play = Play()
        at_a = await play.to_flop_with_a_bet(a)
        hand_id = at_a.hand_id
        before = await every_view(a)
        assert len(before["ann"].board) == 3
        assert any(s.bet_this_round for s in before["ann"].seats)
        deadline_at_a = before["ann"].to_act_deadline.ToNanoseconds() / 1e9
        # The next hand was committed as this one was dealt (issue 28), and marked as the table's next.
        (ahead,) = set(world.fairness.hands.values()) - {hand_id}
        assert await log_a.next_hand(TABLE) == ahead
        await a.stop()  # killed: no settlement, nothing more written
        log_b = await move_to_b(client, registry, redis_prefix)
        with pytest.raises(FailedPrecondition) as fenced:
            await log_a.append(ROOM.room_id, hand_id, [{"seat": 0, "action": "FOLD"}])
        assert fenced.value.reason == "SHARD_NOT_OWNER"

        b = world.table(log_b)
        at_b = await until(b, playing)
        after = await every_view(b)
        # The same hand, as it was: cards (each player's own hole cards in their view), board, stacks,
        # bets, pots, the player to act and what they may do, every time bank.
        assert at_b.hand_id == hand_id
        for name in NAMES.values():
            assert without_clock(after[name]) == without_clock(before[name]), name
            mine = next(s for s in after[name].seats if s.player_id == name)
            assert len(mine.hole_cards) == 2
        # The player to act: what was left of the turn plus the grace (5 s), on the wall clock.
        deadline_at_b = after["ann"].to_act_deadline.ToNanoseconds() / 1e9
        assert 4.0 <= deadline_at_b - deadline_at_a <= 6.0
        # The commitment a made ahead is voided (never dealt: nothing opens); the hand goes on.
        assert world.fairness.revealed == {ahead: True}
        assert world.fairness.seen.get(ahead) is None
        assert await log_b.next_hand(TABLE) != ahead

        await play.to_the_end(b, world, hand_id)
        assert world.cashier.applied == [hand_id]
        await asyncio.sleep(0)
        assert world.fairness.revealed == {ahead: True, hand_id: False}  # FINISHED, not VOIDED
        (job,) = [r for r in world.records if r.hand_id == hand_id]
        # Who saw which card is known (the deck came with the log): each player's own two cards.
        assert job.seen is not None
        assert all(len(p) == 2 for _, p in job.seen.seen)
        assert record_decisions(job) == play.made
        assert world.chips() == 3 * BUY_IN
        assert not await log_b.read(hand_id), "the settled hand's log is dropped"
        # And the table deals on.
        await until(b, lambda v: playing(v) and v.hand_id != hand_id)
    finally:
        await world.close()
        await client.aclose()


@pytest.mark.redis
async def test_a_fenced_shard_that_runs_on_can_neither_act_nor_settle_the_hand_it_lost(
    redis_server_url: str, redis_prefix: str
) -> None:
    world = World()
    world.seat_players(2)
    client, registry, log_a = await registry_and_logs(redis_server_url, redis_prefix)
    try:
        # A's way to the cashier is cut as the hand ends: A holds a finished hand it cannot settle.
        a_cashier = WayTo(world.cashier, "cashier")
        a = world.table(log_a, cashier=a_cashier)
        play = Play()
        view = await until(a, playing)
        hand_id = view.hand_id
        a_cashier.down = True
        await play.decide(a, A.ACTION_KIND_FOLD)  # heads-up: the fold ends the hand
        assert hand_id not in world.cashier.settled
        # Partitioned: the room moves to B while A runs on, retrying its settlement.
        log_b = await move_to_b(client, registry, redis_prefix)
        b = world.table(log_b)
        await until(b, lambda v: v.hand_id != hand_id and v.hand_id != "")
        assert world.cashier.applied == [hand_id], "B settles the hand A finished"
        a_cashier.down = False
        # A's next try: its fenced write comes first, so A settles nothing and stops serving.
        for _ in range(500):
            if a.fenced:
                break
            await asyncio.sleep(0.01)
        assert a.fenced
        with pytest.raises(FailedPrecondition):
            await view_of(a)
        assert world.cashier.applied == [hand_id]
        assert world.fairness.revealed[hand_id] is False
        assert world.chips() == 2 * BUY_IN
    finally:
        await world.close()
        await client.aclose()


@pytest.mark.redis
async def test_a_shard_cut_off_as_its_hand_ends_leaves_no_record_of_it_behind_the_new_owner(
    redis_server_url: str, redis_prefix: str
) -> None:
    """A partition as the e2e run makes one (tests/e2e/test_faults_partition.py): A's hand is over but A cannot
    reach the cashier, then not Redis either (its hand log and the record outbox), and retries the
    settlement; B takes the room over, settles the hand and records it. When A's network comes back,
    its next try is refused by the fenced log before A writes anything: the outbox holds no record of
    A's for the table that opens next to send to history as the settled hand's (it did: history
    refused it, IDEMPOTENCY_CONFLICT beside B's record)."""
    world = World()
    world.seat_players(2)
    client, registry, log_a = await registry_and_logs(redis_server_url, redis_prefix)
    try:
        a_cashier, a_log, a_outbox = (
            WayTo(world.cashier, "cashier"),
            WayTo(log_a, "redis"),
            WayTo(world.outbox, "redis"),
        )
        a = world.table(a_log, cashier=a_cashier, outbox=a_outbox)
        hand_id = (await until(a, playing)).hand_id
        a_cashier.down = True
        await Play().decide(a, A.ACTION_KIND_FOLD)  # heads-up: the fold ends the hand
        a_log.down = a_outbox.down = True
        log_b = await move_to_b(client, registry, redis_prefix)
        b = world.table(log_b)
        await until(b, lambda v: v.hand_id != hand_id and v.hand_id != "")
        assert world.cashier.applied == [hand_id], "B settles the hand A finished"
        await asyncio.gather(*world.reveals)
        assert hand_id not in await world.outbox.kept(TABLE), "history has B's record"
        a_cashier.down = a_log.down = a_outbox.down = False
        for _ in range(500):
            if a.fenced:
                break
            await asyncio.sleep(0.01)
        assert a.fenced
        assert world.cashier.applied == [hand_id]
        assert hand_id not in await world.outbox.kept(TABLE), "A left its record of the hand behind B"
    finally:
        await world.close()
        await client.aclose()


@pytest.mark.redis
async def test_a_partitioned_shard_s_decision_after_the_takeover_is_refused_and_b_plays_on(
    redis_server_url: str, redis_prefix: str
) -> None:
    world = World()
    world.seat_players()
    client, registry, log_a = await registry_and_logs(redis_server_url, redis_prefix)
    try:
        a = world.table(log_a)
        play = Play()
        view = await play.decide(a)
        hand_id = view.hand_id
        log_b = await move_to_b(client, registry, redis_prefix)
        b = world.table(log_b)
        at_b = await until(b, playing)
        assert (at_b.hand_id, at_b.to_act_seat) == (hand_id, view.to_act_seat)
        # The player to act still talks to A (their client has not re-routed yet): refused, fenced.
        with pytest.raises(FailedPrecondition) as refused:
            await a.call(lambda: a.act(NAMES[view.to_act_seat], "late", hand_id, A.ACTION_KIND_FOLD, 0))
        assert refused.value.reason == "SHARD_NOT_OWNER"
        assert a.fenced
        await play.to_the_end(b, world, hand_id)
        (job,) = [r for r in world.records if r.hand_id == hand_id]
        assert record_decisions(job) == play.made
        assert world.cashier.applied == [hand_id]
        assert world.chips() == 3 * BUY_IN
    finally:
        await world.close()
        await client.aclose()


async def test_a_restarted_single_shard_goes_on_with_its_hand_from_the_file_log(tmp_path: Path) -> None:
    path = tmp_path / "table-hands.jsonl"
    world = World()
    world.seat_players()
    first = FileEventLog(path)
    a = world.table(first)
    play = Play()
    try:
        at_a = await play.to_flop_with_a_bet(a)
        hand_id = at_a.hand_id
        before = await every_view(a)
        await a.stop()
        first.close()
        # Every line is a JSON object: the commitment's mark as the next hand, the hand's mark with its
        # config and table entries, the next hand's commitment (asked for as this one was dealt), then
        # one line per decision; beside them the table's seats' log (the players the table seated
        # from their sessions as it opened).
        read = [json.loads(line) for line in path.read_text().splitlines()]
        seats = [line for line in read if line["op"] == "seats"]
        assert seats
        assert all(e["type"] == "seats" for line in seats for e in line["entries"])
        lines = [line for line in read if line["op"] != "seats"]
        assert [(line["op"], line["hand_id"] == hand_id) for line in lines[:2]] == [
            ("next", True),
            ("live", True),
        ]
        assert [e["type"] for e in lines[1]["entries"]] == ["config", "table"]
        (ahead,) = [line["hand_id"] for line in lines if line["op"] == "next" and line["hand_id"] != hand_id]
        assert len(lines) == 3 + len(play.made)

        again = FileEventLog(path)  # the process starts again: the file is read and compacted
        assert (await again.live_hand(TABLE), await again.next_hand(TABLE)) == (hand_id, ahead)
        assert [json.loads(line)["op"] for line in path.read_text().splitlines()] == ["live", "next", "seats"]
        b = world.table(again)
        await until(b, playing)
        after = await every_view(b)
        for name in NAMES.values():
            assert without_clock(after[name]) == without_clock(before[name]), name
        await play.to_the_end(b, world, hand_id)
        assert world.cashier.applied == [hand_id]
        await asyncio.sleep(0)
        assert world.fairness.revealed == {ahead: True, hand_id: False}
        (job,) = [r for r in world.records if r.hand_id == hand_id]
        assert record_decisions(job) == play.made
        assert world.chips() == 3 * BUY_IN
        # The hand's live mark goes once its settlement is answered, off the clock's path: a moment
        # after the cashier has it, later on a loaded machine (CI under two busy loops read it first).
        for _ in range(1000):  # 10 s at most
            if await again.live_hand(TABLE) != hand_id:
                break
            await asyncio.sleep(0.01)
        again.close()
        assert await FileEventLog(path).live_hand(TABLE) != hand_id
    finally:
        await world.close()


async def test_the_player_to_act_keeps_their_time_bank_and_gets_the_rest_of_the_turn_plus_the_grace() -> None:
    """On simulated time (issue 42: no wall-clock sleep, exact figures): the bank A's player spent
    is spent at B, and B's player to act gets the rest of the turn that began at A plus the grace."""
    event_log = LocalEventLog()
    world = World()
    world.seat_players()
    clock = SimulatedClock()
    a = world.table(event_log, action_seconds=0.3, time_bank_seconds=4.0, grace=1.0, clock=clock)
    play = Play()
    try:
        view = await until(a, playing)
        slow = view.to_act_seat
        await clock.run_for(0.8)  # 0.5 s of the bank spent
        view = await play.decide(a)
        bank = next(s.time_bank_seconds for s in view.seats if s.seat == slow)
        assert bank == 3  # whole seconds in the view
        turn_started = clock.now()
        await a.stop()
        await clock.run_for(0.5)
        b = world.table(event_log, action_seconds=0.3, time_bank_seconds=4.0, grace=1.0, clock=clock)
        at_b = await until(b, playing)
        assert next(s.time_bank_seconds for s in at_b.seats if s.seat == slow) == 3
        # The next player's turn: 0.3 s + their full 4 s bank from when it began at A, + 1 s grace.
        live = b._live  # the table's core: its deadline is on the table's clock
        assert live is not None
        assert live.deadline() == pytest.approx(turn_started + 0.3 + 4.0 + 1.0)
        assert b._players[slow - 1].time_bank == pytest.approx(3.5)
    finally:
        await world.close()


async def test_a_hand_only_committed_when_the_shard_died_is_voided_and_nothing_moves() -> None:
    event_log = LocalEventLog()
    world = World()
    world.seat_players(2)
    a = world.table(event_log, countdown=30.0)
    try:
        committed = await until(a, lambda v: v.phase == A.TABLE_PHASE_BETWEEN_HANDS and v.hand_id != "")
        await a.stop()
        b = world.table(event_log, countdown=30.0)
        await until(b, lambda v: v.hand_id != committed.hand_id and v.hand_id != "")
        assert world.fairness.revealed[committed.hand_id] is True  # VOIDED: it was never dealt
        assert world.cashier.settled == {}
        assert world.chips() == 2 * BUY_IN
    finally:
        await world.close()


@pytest.mark.parametrize("damage", ["lost", "unreadable"])
async def test_a_hand_whose_log_is_lost_or_unreadable_is_voided_with_the_stacks_before_it(
    damage: str,
) -> None:
    event_log = LocalEventLog()
    world = World()
    world.seat_players(2)
    a = world.table(event_log)
    try:
        view = await until(a, playing)
        await a.stop()
        if damage == "lost":
            await event_log.forget(view.hand_id)
        else:
            await event_log.append(ROOM.room_id, view.hand_id, [{"seat": 99, "action": "RAISE", "to": "x"}])
        b = world.table(event_log)
        await until(b, lambda v: v.hand_id != view.hand_id and v.hand_id != "")
        assert world.fairness.revealed[view.hand_id] is True
        assert world.cashier.settled == {}
        assert sorted(s.stack for s in world.cashier.sessions.values()) == [BUY_IN, BUY_IN]
    finally:
        await world.close()


async def test_a_player_who_left_mid_hand_is_cashed_out_after_the_continued_hand() -> None:
    event_log = LocalEventLog()
    world = World()
    world.seat_players()
    a = world.table(event_log)
    play = Play()
    try:
        view = await until(a, playing)
        leaver = next(seat for seat in NAMES if seat != view.to_act_seat)
        left = await a.leave(NAMES[leaver], "bye")
        assert left.folded_mid_hand
        await a.stop()
        b = world.table(event_log)
        await until(b, playing)
        await play.to_the_end(b, world, view.hand_id)
        session = f"{TABLE}:{NAMES[leaver]}"
        for _ in range(500):
            if session in world.cashier.cashed_out:
                break
            await asyncio.sleep(0.01)
        assert session in world.cashier.cashed_out
        assert world.chips() + sum(world.cashier.cashed_out.values()) == 3 * BUY_IN
    finally:
        await world.close()


async def random_decision(actor: TableActor, play: Play, rng: random.Random) -> table_pb2.TableView:
    view = await until(actor, playing)
    own = await view_of(actor, NAMES[view.to_act_seat])
    kind = rng.choice(list(own.legal_actions.actions))
    amount = own.legal_actions.min_amount if kind in (A.ACTION_KIND_BET, A.ACTION_KIND_RAISE) else 0
    return await play.decide(actor, kind, amount)


@pytest.mark.parametrize("seed", range(12))
async def test_seeded_hands_cut_at_a_random_decision_go_on_exactly_and_settle_once(seed: int) -> None:
    """A seeded simulation through the actors: random players and decisions, the shard killed after a
    random number of them; the next owner's views equal the dead one's, the hand settles once, with
    every decision in its record and every chip where it belongs."""
    rng = random.Random(seed)
    event_log = LocalEventLog()
    world = World()
    players = rng.randint(2, 3)
    world.seat_players(players)
    a = world.table(event_log)
    play = Play()
    try:
        view = await until(a, playing)
        hand_id = view.hand_id
        for _ in range(rng.randint(0, 6)):
            view = await view_of(a)
            if not playing(view) or view.hand_id != hand_id:
                break
            await random_decision(a, play, rng)
        before = await every_view(a)
        over = hand_id in world.cashier.settled
        await a.stop()
        b = world.table(event_log)
        if not over:
            at_b = await until(b, lambda v: v.phase != A.TABLE_PHASE_PAUSED)
            if playing(at_b) and at_b.hand_id == hand_id:
                after = await every_view(b)
                for name in NAMES.values():
                    assert without_clock(after[name]) == without_clock(before[name]), (seed, name)
            while hand_id not in world.cashier.settled:
                view = await view_of(b)
                if playing(view) and view.hand_id == hand_id:
                    await random_decision(b, play, rng)
                else:
                    await asyncio.sleep(0.01)
        assert world.cashier.applied[:1] == [hand_id]
        await asyncio.sleep(0)
        assert world.fairness.revealed.get(hand_id) is False
        (job,) = [r for r in world.records if r.hand_id == hand_id]
        recorded = record_decisions(job)
        assert [s for s, _ in recorded] == [s for s, _ in play.made]
        # An all-in is recorded as the bet, raise or call it was.
        assert all(k == m or m == "ALL_IN" for (_, k), (_, m) in zip(recorded, play.made, strict=True))
        assert world.chips() == players * BUY_IN
    finally:
        await world.close()


async def test_a_decision_retried_at_the_next_owner_gets_its_first_answer(tmp_path: Path) -> None:
    """Idempotency across a takeover: a decision the dead owner took (and logged) but whose answer
    the player never got is retried at the next owner with the same request id: it gets the first
    answer again (the same event), nothing is applied twice, and the same id with other fields is
    IDEMPOTENCY_CONFLICT."""
    path = tmp_path / "table-hands.jsonl"
    world = World()
    world.seat_players()
    first = FileEventLog(path)
    a = world.table(first)
    play = Play()
    try:
        await play.to_flop_with_a_bet(a)
        seat, request_id, hand_id, kind, amount = play.last
        player = NAMES[seat]
        at_a = await a.call(lambda: a.act(player, request_id, hand_id, kind, amount))  # the first answer
        await a.stop()
        first.close()
        b = world.table(FileEventLog(path))
        await until(b, playing)
        before = await view_of(b)
        at_b = await b.call(lambda: b.act(player, request_id, hand_id, kind, amount))
        assert at_b.event.WhichOneof("kind") == at_a.event.WhichOneof("kind") == "action"
        assert (at_b.event.seat, at_b.event.action) == (at_a.event.seat, at_a.event.action)
        assert without_clock(await view_of(b)) == without_clock(before)  # applied once, not twice
        with pytest.raises(AlreadyExists) as conflict:
            await b.call(lambda: b.act(player, request_id, hand_id, kind, amount + 10))
        assert conflict.value.reason == "IDEMPOTENCY_CONFLICT"
        await play.to_the_end(b, world, hand_id)
        assert world.cashier.applied == [hand_id]
        assert world.chips() == 3 * BUY_IN
    finally:
        await world.close()


@pytest.mark.redis
async def test_a_player_sitting_out_one_away_and_a_kept_time_bank_outlive_a_takeover(
    redis_server_url: str, redis_prefix: str
) -> None:
    """The seats' log (docs/table.md "The hand's log"): the next owner replays it, so a player sitting
    out is still sitting out (since the same moment), an away player is still away (their reserve
    running from when their stream ended at A), and the time bank a player who stood up had spent is
    still kept for them; the cashier's open sessions are the same."""
    world = World()
    world.seat_players()
    client, registry, log_a = await registry_and_logs(redis_server_url, redis_prefix)
    try:
        clock = SimulatedClock()
        a = world.table(log_a, action_seconds=0.3, time_bank_seconds=4.0, clock=clock)
        play = Play()
        view = await until(a, playing)
        hand_id = view.hand_id
        slow = view.to_act_seat
        await clock.run_for(0.8)  # 0.5 s of the bank spent
        await play.decide(a)
        out, away = (seat for seat in NAMES if seat != slow)
        await a.call(lambda: a.sit_out(NAMES[out], "rest", False, False))
        watcher = await a.call(lambda: a.watch(NAMES[away]))
        a.unwatch(watcher)
        left = await a.leave(NAMES[slow], "bye")
        assert left.folded_mid_hand
        await play.to_the_end(a, world, hand_id)
        # The hand over, the leaver cashed out: nobody left to deal to (one sits out, one is away).
        for _ in range(500):
            if slow - 1 not in a._players and not a._seats_unlogged:
                break
            await asyncio.sleep(0.01)
        players, _, kept, *_ = a._seats.durable()
        assert [seat for seat, *_ in players] == [out - 1, away - 1]
        assert a._players[out - 1].presence.sitting_out
        assert a._players[away - 1].presence.disconnected
        ((keeper, (bank, _)),) = kept
        assert keeper == NAMES[slow]
        assert bank == pytest.approx(3.5)
        await a.stop()

        log_b = await move_to_b(client, registry, redis_prefix)
        b = world.table(log_b, action_seconds=0.3, time_bank_seconds=4.0, clock=clock)
        for _ in range(500):
            if len(b._players) == 2:
                break
            await asyncio.sleep(0.01)
        at_b, _, kept_at_b, *_ = b._seats.durable()
        assert at_b == players
        assert kept_at_b == kept
        assert b._players[out - 1].presence.sitting_out
        assert b._players[away - 1].presence.disconnected
        view_b = await view_of(b, NAMES[out])
        assert view_b.phase != A.TABLE_PHASE_HAND_IN_PROGRESS
    finally:
        await world.close()
        await client.aclose()


class DiesAfterSettling(Cashier):
    """Settles the hand, then never answers: the shard dies between the cashier's settlement and
    anything the table does after it (the hand's result in the seats' log, its log dropped)."""

    def __init__(self, shared: Cashier) -> None:
        super().__init__()
        self.__dict__ = shared.__dict__  # the same ledger
        self.died = asyncio.Event()

    async def settle_hand(self, **fields: Any) -> None:
        await Cashier.settle_hand(self, **fields)
        self.died.set()
        await asyncio.Event().wait()


def big_blind_of(job: AfterHand) -> int:
    return next(a.seat for a in job.record.actions if a.kind == "POST_BIG_BLIND")


async def test_the_blinds_move_on_after_a_shard_dies_between_the_settlement_and_the_seats_log() -> None:
    """Found by the whole-table simulator (tests/table/table_simulator.py, seed 1331762146): a shard
    that died after the cashier settled a hand and before the hand's result reached the seats' log
    left the next owner dealing from the seating before that hand: the same button and big blind
    again. The big blind moves on by one player every hand (rules, dead button)."""
    event_log = LocalEventLog()
    world = World()
    world.seat_players(3)
    dying = DiesAfterSettling(world.cashier)
    a = world.table(event_log, cashier=dying)
    play = Play()
    try:
        view = await until(a, playing)
        first = view.hand_id
        # Three-handed preflop: the button folds, the small blind folds; the big blind wins.
        await play.decide(a, A.ACTION_KIND_FOLD)
        now = await view_of(a)
        folding = NAMES[now.to_act_seat]
        # The last fold: answered, then the table settles and dies (no view after it).
        await a.call(lambda: a.act(folding, "fold-last", first, A.ACTION_KIND_FOLD, 0))
        await asyncio.wait_for(dying.died.wait(), timeout=5)
        assert first in world.cashier.settled
        await a.stop()
        b = world.table(event_log)
        second = await until(b, lambda v: playing(v) and v.hand_id not in ("", first))
        await play.to_the_end(b, world, second.hand_id)
        await asyncio.sleep(0)
        jobs = {job.hand_id: job for job in world.records}
        (first_job, second_job) = jobs[first], jobs[second.hand_id]
        seats = sorted(s.seat for s in first_job.record.seats)
        assert seats == sorted(s.seat for s in second_job.record.seats) == [0, 1, 2]
        assert big_blind_of(second_job) == (big_blind_of(first_job) + 1) % 3
        assert world.chips() == 3 * BUY_IN
    finally:
        await world.close()


class DiesAfterDroppingTheHand(LocalEventLog):
    """A hand's log and live mark dropped, then the shard dies before anything else is written (at
    the `armed`th drop)."""

    def __init__(self, armed: int) -> None:
        super().__init__()
        self.died = asyncio.Event()
        self.armed = armed

    async def forget_live(self, table_id: str, hand_id: str) -> None:
        await super().forget_live(table_id, hand_id)
        self.armed -= 1
        if self.armed == 0:
            self.died.set()
            await asyncio.Event().wait()

    async def append_seats(self, room_id: str, table_id: str, entries: Any) -> None:
        if self.died.is_set():
            await asyncio.Event().wait()  # a dead shard writes nothing more (no `finally` of it runs)
        await super().append_seats(room_id, table_id, entries)

    async def rewrite_seats(self, room_id: str, table_id: str, entries: Any) -> None:
        if self.died.is_set():
            await asyncio.Event().wait()
        await super().rewrite_seats(room_id, table_id, entries)

    def revive(self) -> None:
        """The next owner's log: the same entries, writes go through again."""
        self.died.clear()


async def test_the_blinds_move_on_after_a_shard_dies_right_after_dropping_a_settled_hands_log() -> None:
    """The settled hand's result is in the seats' log before its hand log and live mark go: a shard
    that dies between the two leaves the next owner nothing else to learn the blinds' move from."""
    event_log = DiesAfterDroppingTheHand(armed=2)
    world = World()
    world.seat_players(3)
    a = world.table(event_log)
    play = Play()
    try:
        # One hand played through first, so the seats' log holds more than the table's first write.
        opening = (await until(a, playing)).hand_id
        await play.to_the_end(a, world, opening)
        first = (await until(a, lambda v: playing(v) and v.hand_id != opening)).hand_id
        await play.decide(a, A.ACTION_KIND_FOLD)
        now = await view_of(a)
        folding = NAMES[now.to_act_seat]
        await a.call(lambda: a.act(folding, "fold-last", first, A.ACTION_KIND_FOLD, 0))
        await asyncio.wait_for(event_log.died.wait(), timeout=5)
        assert first in world.cashier.settled
        await a.stop()
        event_log.revive()
        b = world.table(event_log)
        second = await until(b, lambda v: playing(v) and v.hand_id not in ("", first))
        await play.to_the_end(b, world, second.hand_id)
        await asyncio.sleep(0)
        jobs = {job.hand_id: job for job in world.records}
        assert big_blind_of(jobs[second.hand_id]) == (big_blind_of(jobs[first]) + 1) % 3
        assert world.chips() == 3 * BUY_IN
    finally:
        await world.close()


async def test_a_close_asked_before_the_shard_died_is_carried_out_by_the_next_owner() -> None:
    """Issue 38: CloseTable is an operator's decision, answered once it is in the seats' log. The
    shard dies with the closing hand still running: the next owner plays the hand out, deals none
    after it, cashes every seat out and closes (it had forgotten the close and dealt on). A table
    opened again after it closed is an ordinary table."""
    event_log = LocalEventLog()
    world = World()
    world.seat_players()
    a = world.table(event_log)
    play = Play()
    try:
        view = await until(a, playing)
        answer = await a.call(lambda: a.close_after_hand("close-1"))
        assert answer.hand_running
        await a.stop()
        b = world.table(event_log)
        await until(b, playing)
        assert await b.call(lambda: asyncio.sleep(0, b.closing))
        # A player who connects to the next owner sees it in the view, not only in a notice they
        # never heard (an outside tester's finding: the next owner's TABLE_CLOSING went out before
        # any stream was attached).
        assert (await view_of(b)).closing
        await play.to_the_end(b, world, view.hand_id)
        for _ in range(500):
            if len(world.cashier.cashed_out) == 3:
                break
            await asyncio.sleep(0.01)
        assert sorted(world.cashier.cashed_out) == sorted(f"{TABLE}:{name}" for name in NAMES.values())
        assert list(world.cashier.settled) == [view.hand_id]  # no hand after it
        assert world.chips() + sum(world.cashier.cashed_out.values()) == 3 * BUY_IN
        for _ in range(100):  # the shard's rounds (a commitment of the closed table voided first)
            if await b.call(lambda: b.close_if_done(lambda: None)):
                break
            await asyncio.sleep(0.01)
        assert b.closed
        # Opened again (a player asks for the room's table): not closing, it seats and deals.
        c = world.table(event_log)
        await until(c, lambda v: v.table_id == TABLE)
        assert not await c.call(lambda: asyncio.sleep(0, c.closing))
        seated = await c.sit_down("ann", "sit-again", 1, BUY_IN, False)
        assert seated.seat == 1
        assert not (await view_of(c)).closing
        # The operator's client retries the close with its request id (its answer was lost; the
        # shard's memory of it died with the shard): the first answer, and the table stays open.
        retried = await c.call(lambda: c.close_after_hand("close-1"))
        assert retried == answer
        assert not await c.call(lambda: asyncio.sleep(0, c.closing))
    finally:
        await world.close()
