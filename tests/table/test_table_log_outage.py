"""A decision the hand log could not keep (Redis away for a moment) changed nothing (issue 30).

Found in the fault run: after Redis was killed for 3.5 s and started again, some tables never dealt
again. A decision (a player's action, the clock's timeout) was applied to the hand before its log
entry was appended; the append failed, the caller heard UNAVAILABLE, but the hand had moved on
while the turn's clock still pointed at the seat that had just folded: every wake-up tried to time
that seat out again (IllegalActionError "seat N has folded"), for ever. Driven here in-process with
a log whose next append fails.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import Unavailable
from service_runtime.redis_client import create_redis
from services.table.cash import core
from services.table.cash.actor import TableActor
from services.table.log.event_log import LocalEventLog, RedisEventLog
from tests.ports import free_port
from tests.table.fakes import ROOM, FakeCashier, FlakyLog
from tests.table.inprocess_table import TABLE, running_view, seated_table

A = table_pb2


def table_with(log: FlakyLog, action_seconds: float, players: int = 2) -> tuple[TableActor, FakeCashier]:
    cashier = FakeCashier()
    return seated_table(cashier, log, action_seconds=action_seconds, players=players), cashier


async def test_an_action_the_log_refused_leaves_the_hand_as_it_was_and_its_retry_plays_it() -> None:
    log = FlakyLog()
    actor, cashier = table_with(log, action_seconds=30)
    actor.start()
    try:
        view = await running_view(actor)
        player = {1: "ann", 2: "bob", 3: "cat"}[view.to_act_seat]
        log.fail = 1
        with pytest.raises(Unavailable):
            await actor.call(lambda: actor.act(player, "r1", view.hand_id, A.ACTION_KIND_FOLD, 0))
        assert log.refused, "the append was not even tried"
        after = await actor.call(lambda: actor.snapshot(player))
        assert (after.hand_id, after.to_act_seat) == (view.hand_id, view.to_act_seat)
        assert [s.folded for s in after.seats] == [s.folded for s in view.seats]
        # The retry (same request id: an UNAVAILABLE answer is not kept) plays the fold.
        await actor.call(lambda: actor.act(player, "r1", view.hand_id, A.ACTION_KIND_FOLD, 0))
        for _ in range(500):
            if view.hand_id in cashier.settled:
                break
            await asyncio.sleep(0.01)
        assert view.hand_id in cashier.settled
        await running_view(actor, frozenset({view.hand_id}))
    finally:
        await actor.stop()


async def test_a_timeout_the_log_refused_is_taken_again_and_the_table_deals_on() -> None:
    log = FlakyLog()
    # Three players: the refused timeout folds a player and the hand goes on without them.
    actor, cashier = table_with(log, action_seconds=0.05, players=3)
    actor.start()
    try:
        view = await running_view(actor)
        log.fail = 1  # the clock's timeout of the player to act is refused once
        for _ in range(500):
            if log.refused:
                break
            await asyncio.sleep(0.01)
        assert log.refused
        assert log.refused[0][0]["action"] == "TIMEOUT"
        # The table goes on: the hand ends by timeouts, settles, and the next one is dealt.
        for _ in range(1000):
            if view.hand_id in cashier.settled:
                break
            await asyncio.sleep(0.01)
        assert view.hand_id in cashier.settled, "the table is stuck on the refused timeout"
        await running_view(actor, frozenset({view.hand_id}))
    finally:
        await actor.stop()


class ForgetFails(FlakyLog):
    """The log whose dropping of a settled hand fails once (Redis away the moment the hand ended)."""

    def __init__(self) -> None:
        super().__init__()
        self.forget_fails = 1

    async def forget_live(self, table_id: str, hand_id: str) -> None:
        if self.forget_fails:
            self.forget_fails -= 1
            raise Unavailable("UNAVAILABLE", "the hand log is unavailable", {"dependency": "redis"})
        await super().forget_live(table_id, hand_id)


async def test_a_settled_hand_whose_log_was_not_dropped_is_still_announced_and_counted() -> None:
    """The partition fault run: a shard settled a hand the instant before it was cut off, and dropping
    the hand's log failed; everything after the settlement was skipped (the HAND_SETTLED notice, the
    hand's count towards the sit-out streak) and the table logged the step as failed, with a trace."""
    log = ForgetFails()
    actor, cashier = table_with(log, action_seconds=30)
    actor.start()
    try:
        watcher = await actor.call(lambda: actor.watch("ann"))
        view = await running_view(actor)
        player = {1: "ann", 2: "bob"}[view.to_act_seat]
        await actor.call(lambda: actor.act(player, "r1", view.hand_id, A.ACTION_KIND_FOLD, 0))
        await running_view(actor, frozenset({view.hand_id}))
        assert view.hand_id in cashier.settled
        assert log.forget_fails == 0, "dropping the log never failed"
        notices = []
        while not watcher.queue.empty():
            notices += [e.notice.text for e in watcher.queue.get_nowait().events if e.HasField("notice")]
        assert f"hand {view.hand_id} settled" in notices, notices
    finally:
        await actor.stop()


@pytest.mark.redis
async def test_the_redis_log_away_is_unavailable_for_every_call_never_a_raw_redis_error() -> None:
    """Every call of the Redis hand log answers UNAVAILABLE while Redis is away (the table retries or
    waits on that), never a raw Redis error that fails the table's step with a trace."""
    client = create_redis(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    log = RedisEventLog(client, shard_id="table-a", prefix="poker-test-away:")
    log.own(ROOM.room_id, 1)
    try:
        calls = {
            "append": lambda: log.append(ROOM.room_id, "h1", [{"seat": 0}]),
            "mark_live": lambda: log.mark_live(ROOM.room_id, TABLE, "h1"),
            "append_live": lambda: log.append_live(ROOM.room_id, TABLE, "h1", [{"seat": 0}]),
            "forget_live": lambda: log.forget_live(TABLE, "h1"),
            "live_hand": lambda: log.live_hand(TABLE),
            "mark_next": lambda: log.mark_next(ROOM.room_id, TABLE, "h2"),
            "next_hand": lambda: log.next_hand(TABLE),
            "clear_live": lambda: log.clear_live(TABLE, "h1"),
            "read": lambda: log.read("h1"),
            "forget": lambda: log.forget("h1"),
        }
        answers = {}
        for name, call in calls.items():
            try:
                await call()
                answers[name] = "answered"
            except Unavailable:
                answers[name] = "UNAVAILABLE"
            except Exception as error:
                answers[name] = repr(error)
        assert answers == dict.fromkeys(calls, "UNAVAILABLE")
    finally:
        await client.aclose()


class LosingLog(FlakyLog):
    """The hand log whose next `lose` appends are written and then answered UNAVAILABLE (Redis ran
    the script, its reply never came: the client's timeout), and whose next `blind` reads fail."""

    def __init__(self) -> None:
        super().__init__()
        self.lose = 0
        self.blind = 0

    async def append(self, room_id: str, hand_id: str, entries: Any) -> None:
        await super().append(room_id, hand_id, entries)
        if self.lose:
            self.lose -= 1
            raise Unavailable("UNAVAILABLE", "the hand log's answer was lost", {"dependency": "redis"})

    async def read(self, hand_id: str) -> list[dict[str, Any]]:
        if self.blind:
            self.blind -= 1
            raise Unavailable("UNAVAILABLE", "the hand log is unavailable", {"dependency": "redis"})
        return await super().read(hand_id)


@pytest.mark.parametrize("blind", [0, 1])
async def test_a_decision_the_log_kept_but_whose_answer_was_lost_is_played_once_and_the_log_replays(
    blind: int,
) -> None:
    """Found by the whole-table simulator: an append whose answer was lost (written, then the
    client's timeout) was taken as refused; the clock's timeout for the same turn then went into
    the log after it, and the next owner could not replay the hand ("the hand is over"): voided.
    Now the table reads the log back before it decides anything else for the hand. `blind`: that
    read fails first too (the log away): nothing is decided until the log says what it holds."""
    log = LosingLog()
    actor, _ = table_with(log, action_seconds=30)
    actor.start()
    try:
        view = await running_view(actor)
        player = {1: "ann", 2: "bob", 3: "cat"}[view.to_act_seat]
        log.lose, log.blind = 1, blind
        try:
            await actor.call(lambda: actor.act(player, "r1", view.hand_id, A.ACTION_KIND_CALL, 0))
        except Unavailable:
            assert blind, "the log held the decision: it was played"
            # The retry finds it in the log: played once, answered as the first time.
            await actor.call(lambda: actor.act(player, "r1", view.hand_id, A.ACTION_KIND_CALL, 0))
        entries = await LocalEventLog.read(log, view.hand_id)
        calls = [e for e in entries if e.get("action") == "CALL"]
        assert len(calls) == 1, entries
        replayed = core.replay(entries, action_seconds=30, room=ROOM, table_id=TABLE)
        assert replayed is not None, "the log does not replay"
        live = actor._live
        assert live is not None
        assert replayed.hand.events == live.hand.events
    finally:
        await actor.stop()
