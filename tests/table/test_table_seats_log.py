"""The table's seats' log as the actor writes it (issue 30): a player's own seats' command (SitOut,
SitIn) is in the log before it takes effect, so a log that is away refuses it (UNAVAILABLE, nothing
changed, the retry does it); and the log is trimmed to a snapshot of the seats as it grows (and at
the table's first write after it opens), so a table that runs for months replays a few hundred
entries, not every input it ever took. In-process, with the in-memory log."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import Unavailable
from services.table.cash import actor as actor_module
from services.table.cash import table_core
from services.table.log.event_log import LocalEventLog
from tests.table.fakes import FakeCashier
from tests.table.inprocess_table import TABLE, running_view, seated_table

A = table_pb2


class SeatsLogAway(LocalEventLog):
    """The in-memory log whose seats' writes fail while `away` (Redis gone for a moment)."""

    def __init__(self) -> None:
        super().__init__()
        self.away = False
        self.rewrites = 0

    def _check(self) -> None:
        if self.away:
            raise Unavailable("UNAVAILABLE", "the hand log is unavailable", {"dependency": "redis"})

    async def append_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        self._check()
        await super().append_seats(room_id, table_id, entries)

    async def rewrite_seats(self, room_id: str, table_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        self._check()
        self.rewrites += 1
        await super().rewrite_seats(room_id, table_id, entries)


async def opened(log: SeatsLogAway) -> actor_module.TableActor:
    actor = seated_table(FakeCashier(), log)
    actor.start()
    for _ in range(500):
        view = await actor.call(lambda: actor.snapshot("ann"))
        if view.phase != A.TABLE_PHASE_UNSPECIFIED and any(s.player_id == "ann" for s in view.seats):
            return actor
        await asyncio.sleep(0.01)
    raise AssertionError("the table did not open")


def status_of(view: table_pb2.TableView, player: str) -> int:
    return next(s.status for s in view.seats if s.player_id == player)


async def test_a_sit_out_the_seats_log_refused_changed_nothing_and_its_retry_takes() -> None:
    log = SeatsLogAway()
    actor = await opened(log)
    try:
        before = await log.read_seats(TABLE)
        log.away = True
        with pytest.raises(Unavailable):
            await actor.call(lambda: actor.sit_out("ann", "out-1", back_in=False, wait=False))
        view = await actor.call(lambda: actor.snapshot("ann"))
        assert status_of(view, "ann") != A.SEAT_STATUS_SITTING_OUT
        assert await log.read_seats(TABLE) == before
        log.away = False
        status = await actor.call(lambda: actor.sit_out("ann", "out-1", back_in=False, wait=False))
        assert status == A.SEAT_STATUS_SITTING_OUT
        # In the log before anyone heard of it: a replay has ann sitting out.
        replayed = table_core.replay(await log.read_seats(TABLE), actor._rules, 5, 10)
        ann = replayed.players[replayed.seat_of("ann")]  # type: ignore[index]
        assert ann.presence.sitting_out
    finally:
        await actor.stop()


async def test_the_seats_log_is_trimmed_to_a_snapshot_as_it_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actor_module, "SEATS_LOG_TRIM_AT", 6)
    log = SeatsLogAway()
    actor = await opened(log)
    try:
        # The table's first write after it opened is a snapshot (whatever a last owner wrote goes).
        assert log.rewrites == 1
        for n in range(20):
            back_in = n % 2 == 1
            await actor.call(lambda n=n, back_in=back_in: actor.sit_out("bob", f"r{n}", back_in, False))
            entries = await log.read_seats(TABLE)
            assert len(entries) <= 6
            assert entries[0]["input"] == "Snapshot"
            # The seats, their presence and banks, and the kept banks (the seating's button and
            # stacks move with the hands, which a table that opens takes from the hand and the
            # cashier: table_core.reopen).
            players, _, kept, *_ = table_core.replay(entries, actor._rules, 5, 10).durable()
            assert (players, kept) == (actor._seats.durable()[0], actor._seats.durable()[2])
        assert log.rewrites > 3
    finally:
        await actor.stop()


async def test_a_table_opened_again_between_hands_deals_on_from_its_button_and_blinds() -> None:
    """Issue 42: a table reopened between hands (a drain, a rolling restart, a handover) started from
    an empty seating: the button went back to the first playable seat and blind debts were forgotten.
    The seats' log carries them with each hand's result, so the next owner deals on from them."""
    cashier, log = FakeCashier(), SeatsLogAway()
    actor = seated_table(cashier, log, players=3)
    actor.start()
    try:
        first = await running_view(actor)
        actor.hand_over()  # no next hand here: the room moves once this one is over
        view = first
        while view.hand_id == first.hand_id and view.to_act_seat:
            player = {1: "ann", 2: "bob", 3: "cat"}[view.to_act_seat]
            await actor.call(
                lambda p=player, v=view: actor.act(
                    p, f"fold-{v.to_act_seat}", v.hand_id, A.ACTION_KIND_FOLD, 0
                )
            )
            view = await actor.call(lambda: actor.snapshot("ann"))
        for _ in range(500):
            if first.hand_id in cashier.settled and actor.between_hands:
                break
            await asyncio.sleep(0.01)
        assert actor.between_hands
        left = actor._seats.seating
        assert left.button is not None
    finally:
        await actor.stop()
    # The next owner: the same log and the same open seat sessions.
    again = seated_table(cashier, log, players=0)
    again.start()
    try:
        second = await running_view(again, frozenset({first.hand_id}))
        plan = left.plan_next_hand()
        assert plan is not None
        assert second.button_seat == plan.button + 1 != first.button_seat
    finally:
        await again.stop()
