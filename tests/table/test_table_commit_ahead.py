"""The next hand committed while the running one plays (issue 28: fairness off the hand's critical
path). The table asks fairness for the next hand's commitment as it deals the running one and marks
it as the table's next hand in the log; once the running hand settles, its countdown begins at once
from that commitment (the settlement and the next commitment reach each player in one message). A
next owner voids a commitment it finds marked and never dealt; a log that refused the mark leaves
no commitment unmarked (the retry asks fairness with the same request id)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from poker.table.v1 import table_pb2
from services.table.cash.actor import TableActor
from services.table.log.event_log import LocalEventLog
from services.table.ports.clock import SimulatedClock
from services.table.ports.dependencies import Commitment
from tests.table.fakes import ROOM, FakeCashier, FakeFairness, down
from tests.table.inprocess_table import TABLE, running_view, seated_table

A = table_pb2


async def settled(cashier: FakeCashier, hand_id: str) -> None:
    for _ in range(500):
        if hand_id in cashier.settled:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"hand {hand_id} never settled")


async def fold(actor: TableActor, view: table_pb2.TableView, request_id: str) -> None:
    player = {1: "ann", 2: "bob", 3: "cat"}[view.to_act_seat]
    await actor.call(lambda: actor.act(player, request_id, view.hand_id, A.ACTION_KIND_FOLD, 0))


async def ahead_of(fairness: FakeFairness, dealt: str) -> str:
    """The one commitment fairness made besides the hands `dealt` (awaited: it is asked for in the
    background)."""
    for _ in range(500):
        others = set(fairness.hands.values()) - {dealt}
        if others:
            (ahead,) = others
            return ahead
        await asyncio.sleep(0.01)
    raise AssertionError("no commitment asked for ahead")


async def test_the_next_hand_is_committed_while_this_one_plays_and_dealt_next() -> None:
    fairness, cashier, log = FakeFairness(), FakeCashier(), LocalEventLog()
    actor = seated_table(cashier, log, fairness=fairness)
    actor.start()
    try:
        watcher = await actor.call(lambda: actor.watch("ann"))
        first = await running_view(actor)
        # No decision taken yet, and the next hand is committed and marked (a next owner voids it).
        ahead = await ahead_of(fairness, first.hand_id)
        assert await log.next_hand(TABLE) == ahead
        assert await log.live_hand(TABLE) == first.hand_id
        assert ahead not in fairness.decks, "not sealed: nothing of it is dealt before its countdown"
        snapshot = await actor.call(lambda: actor.snapshot("ann"))
        assert snapshot.hand_id == first.hand_id, "the running hand's view does not name the next one"

        await fold(actor, first, "r1")
        await settled(cashier, first.hand_id)
        second = await running_view(actor, frozenset({first.hand_id}))
        assert second.hand_id == ahead
        assert await log.next_hand(TABLE) != ahead, "the deal cleared its mark"
        # The settlement and the next hand's commitment reach the player in one message.
        messages: list[table_pb2.WatchTableResponse] = []
        while not watcher.queue.empty():
            messages.append(watcher.queue.get_nowait())
        codes = [[e.notice.code for e in m.events if e.HasField("notice")] for m in messages]
        (together,) = [c for c in codes if "HAND_SETTLED" in c]
        assert "HAND_COMMITTED" in together, codes
    finally:
        await actor.stop()


async def test_a_table_opened_again_voids_the_commitment_its_last_life_made_ahead() -> None:
    fairness, cashier, log = FakeFairness(), FakeCashier(), LocalEventLog()
    actor = seated_table(cashier, log, fairness=fairness)
    actor.start()
    try:
        first = await running_view(actor)
        ahead = await ahead_of(fairness, first.hand_id)
    finally:
        await actor.stop()
    # The table opens again (a restart, another shard): its players are still seated at the cashier.
    actor = seated_table(cashier, log, fairness=fairness, players=0)
    actor.start()
    try:
        await running_view(actor, frozenset({ahead}))
        assert fairness.revealed.get(ahead) is True, "voided"
        assert ahead not in fairness.seen, "nothing of it was dealt, nothing opens"
        assert ahead not in fairness.decks
        assert await log.next_hand(TABLE) != ahead
    finally:
        await actor.stop()


class MarkAway(LocalEventLog):
    """A log whose next-hand marks numbered in `away` (1 is the first) answer UNAVAILABLE (Redis away
    for a moment)."""

    def __init__(self, away: frozenset[int]) -> None:
        super().__init__()
        self.away = away
        self.marks = 0
        self.refused: list[str] = []

    async def mark_next(self, room_id: str, table_id: str, hand_id: str) -> None:
        self.marks += 1
        if self.marks in self.away:
            self.refused.append(hand_id)
            raise down("redis")
        await super().mark_next(room_id, table_id, hand_id)


class CountingFairness(FakeFairness):
    """Fairness that counts the commit requests, and answers UNAVAILABLE to those numbered in `away`
    (1 is the first)."""

    def __init__(self, away: frozenset[int] = frozenset()) -> None:
        super().__init__()
        self.requests: list[str] = []
        self.away = away

    async def commit(self, request_id: str, table_id: str, **terms: object) -> Commitment:
        self.requests.append(request_id)
        if len(self.requests) in self.away:
            raise down("fairness")
        return await super().commit(request_id, table_id, **terms)  # type: ignore[arg-type]


def unmarked(fairness: FakeFairness, dealt: Sequence[str], marked: str | None) -> set[str]:
    return set(fairness.hands.values()) - set(dealt) - {marked} - set(fairness.revealed)


async def test_a_mark_the_log_refused_leaves_no_commitment_unmarked_and_the_table_deals_on() -> None:
    # Refused: the first hand's mark (the countdown retries it), and the mark of the one asked ahead.
    fairness, cashier, log = CountingFairness(), FakeCashier(), MarkAway(away=frozenset({1, 3}))
    actor = seated_table(cashier, log, fairness=fairness)
    actor.start()
    try:
        first = await running_view(actor)
        assert log.refused[0] == first.hand_id, "the retry got the same hand from fairness"
        await fold(actor, first, "r1")
        second = await running_view(actor, frozenset({first.hand_id}))
        # The commitment asked for ahead was refused its mark: the next hand took it again (the same
        # request id, so the same hand) and marked it before its countdown.
        assert second.hand_id == log.refused[1]
        assert len(fairness.requests) - len(set(fairness.requests)) == 2, fairness.requests
        assert not unmarked(fairness, [first.hand_id, second.hand_id], await log.next_hand(TABLE))
    finally:
        await actor.stop()


async def test_fairness_away_when_asked_ahead_commits_the_next_hand_in_place_with_the_same_request() -> None:
    fairness, cashier = CountingFairness(away=frozenset({2})), FakeCashier()
    actor = seated_table(cashier, fairness=fairness)
    actor.start()
    try:
        first = await running_view(actor)
        await fold(actor, first, "r1")
        second = await running_view(actor, frozenset({first.hand_id}))
        assert second.hand_id != first.hand_id
        # The second request (asked ahead) met fairness away; the countdown asked again, same id.
        assert fairness.requests[1] == fairness.requests[2]
        assert fairness.hands[fairness.requests[2]] == second.hand_id
    finally:
        await actor.stop()


class SlowVoids(FakeFairness):
    """Voids (reveals) only once `gate` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def reveal(self, hand_id: str, *, voided: bool = False, seen: object = None) -> None:
        if voided:
            await self.gate.wait()
        await super().reveal(hand_id, voided=voided, seen=seen)  # type: ignore[arg-type]


async def test_a_commitment_asked_on_the_rooms_old_terms_is_voided_off_the_clock_and_the_next_deals() -> None:
    """The room turned private while the next hand's commitment was asked ahead on its public terms:
    that commitment is voided (never dealt) and a fresh one is committed on the room's terms. The
    void waits for fairness outside the table (it answers meanwhile); the next hand is committed only
    once the void is done (its mark stays the table's next hand until then, for a next owner)."""
    clock = SimulatedClock()
    fairness, cashier = SlowVoids(), FakeCashier()
    actor = seated_table(cashier, fairness=fairness, clock=clock, action_seconds=100)
    actor.start()
    try:
        first = await running_view(actor)
        stale = await ahead_of(fairness, first.hand_id)
        rooms = actor._rooms
        rooms.rooms[ROOM.room_id] = replace(ROOM, private=True)  # type: ignore[attr-defined]
        await clock.run_for(31)  # past the room's re-read interval: the next countdown reads it
        await fold(actor, first, "r1")
        for _ in range(20):
            await clock.run_for(1)
            between = await asyncio.wait_for(actor.call(lambda: actor.snapshot("ann")), timeout=5)
        # The table answers while fairness holds the void; the stale commitment is never dealt.
        assert between.phase != A.TABLE_PHASE_HAND_IN_PROGRESS
        assert stale not in fairness.revealed
        fairness.gate.set()
        second = await running_view(actor, frozenset({first.hand_id}))
        assert second.hand_id != stale, "a commitment on the old terms was dealt"
        assert fairness.revealed[stale] is True
    finally:
        fairness.gate.set()
        await actor.stop()
