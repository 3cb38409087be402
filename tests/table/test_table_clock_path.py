"""A table's clock never waits for another service (issue 42): a player's SitDown or LeaveTable waits
for the lobby and the cashier outside the table, so a turn's deadline fires on time while the
cashier is slow, and the seat it chose is held for it meanwhile (nobody else gets it). In-process,
with the stand-ins of tests/table/fakes.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from poker.table.v1 import table_pb2
from service_runtime.errors import AlreadyExists, FailedPrecondition, Unavailable
from services.table.ports.clock import SimulatedClock
from services.table.ports.dependencies import SeatSession
from tests.table.fakes import FakeCashier, FakeFairness
from tests.table.inprocess_table import running_view, seated_table

A = table_pb2


class SlowCashier(FakeCashier):
    """Opens seat sessions and cashes out only once `gate` is set (a cashier that answers late)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.waiting = 0

    async def _slow(self) -> None:
        self.waiting += 1
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1

    async def open_seat_session(self, **fields: Any) -> SeatSession:
        await self._slow()
        return await super().open_seat_session(**fields)

    async def cash_out(self, session_id: str) -> int:
        await self._slow()
        return await super().cash_out(session_id)


async def view(actor: Any, player: str) -> table_pb2.TableView:
    """The player's snapshot, bounded: a table stuck in another service's call does not answer."""
    return await asyncio.wait_for(actor.call(lambda: actor.snapshot(player)), timeout=5)  # type: ignore[no-any-return]


async def until(predicate: Any, within: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("not within the bound")
        await asyncio.sleep(0.01)


async def test_a_turn_times_out_on_time_while_a_sit_down_waits_for_the_cashier() -> None:
    cashier = SlowCashier()
    actor = seated_table(cashier, action_seconds=0.3)
    actor.start()
    try:
        first = await running_view(actor)
        cashier.gate.clear()
        sitting = asyncio.create_task(actor.sit_down("cat", "sit-cat", 3, 500, False))
        await until(lambda: cashier.waiting == 1)
        # The player to act does nothing: the clock acts for them while cat's seat is being opened.
        settled: list[str] = []

        async def hand_over() -> bool:
            now = await view(actor, "ann")
            return now.hand_id != first.hand_id or now.phase != A.TABLE_PHASE_HAND_IN_PROGRESS

        for _ in range(1000):
            if await hand_over():
                settled.append(first.hand_id)
                break
            await asyncio.sleep(0.01)
        assert settled, "the turn's clock waited for the cashier"
        assert not sitting.done()
        # The seat the sit-down chose is held for it: nobody else sits there meanwhile.
        with pytest.raises(FailedPrecondition) as taken:
            await actor.sit_down("dan", "sit-dan", 3, 500, False)
        assert taken.value.reason == "SEAT_TAKEN"
        cashier.gate.set()
        seated = await asyncio.wait_for(sitting, timeout=10)
        assert seated.seat == 3
        cats = await view(actor, "cat")
        assert any(s.player_id == "cat" and s.seat == 3 for s in cats.seats)
        # The same request again: its first answer, no second seat session.
        again = await actor.sit_down("cat", "sit-cat", 3, 500, False)
        assert again == seated
        assert [s.player_id for s in cashier.sessions.values()].count("cat") == 1
    finally:
        cashier.gate.set()
        await actor.stop()


class RefusesOnce(FakeCashier):
    """Refuses the first seat session for good (the wallet cannot cover the buy-in)."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 1

    async def open_seat_session(self, **fields: Any) -> SeatSession:
        if self.refusals:
            self.refusals -= 1
            raise FailedPrecondition("INSUFFICIENT_FUNDS", "the wallet cannot cover the buy-in")
        return await super().open_seat_session(**fields)


async def test_a_sit_down_the_cashier_refuses_frees_the_seat_it_held() -> None:
    cashier = RefusesOnce()
    actor = seated_table(cashier)
    actor.start()
    try:
        await running_view(actor)
        with pytest.raises(FailedPrecondition) as refused:
            await actor.sit_down("cat", "sit-cat", 3, 500, False)
        assert refused.value.reason == "INSUFFICIENT_FUNDS"
        seated = await actor.sit_down("dan", "sit-dan", 3, 500, False)
        assert seated.seat == 3
    finally:
        await actor.stop()


async def test_a_sit_down_the_cashier_does_not_answer_holds_its_seat_until_it_does() -> None:
    """An UNAVAILABLE cashier may have opened the session (its reply lost): the caller hears
    UNAVAILABLE after `seat_answer_seconds` (simulated here), the seat stays held, and the table asks
    again with the same seat and session id until the cashier answers."""
    clock = SimulatedClock()
    cashier = FakeCashier()
    actor = seated_table(cashier, clock=clock)
    actor.start()
    try:
        await running_view(actor)
        cashier.down = True
        sitting = asyncio.create_task(actor.sit_down("cat", "sit-cat", 3, 500, False))
        await clock.run_for(5.1)
        with pytest.raises(Unavailable):
            await sitting
        with pytest.raises(FailedPrecondition) as taken:
            await actor.sit_down("dan", "sit-dan", 3, 500, False)
        assert taken.value.reason == "SEAT_TAKEN"
        cashier.down = False
        await clock.run_for(1.0)
        again = await actor.sit_down("cat", "sit-cat", 3, 500, False)
        assert again.seat == 3
        assert [s.player_id for s in cashier.sessions.values()].count("cat") == 1
    finally:
        await actor.stop()


async def test_a_turn_times_out_on_time_while_a_leave_waits_for_its_cash_out() -> None:
    cashier = SlowCashier()
    actor = seated_table(cashier, action_seconds=0.3, players=3)
    actor.start()
    try:
        first = await running_view(actor)
        # cat folds at once (its turn or not: leaving mid-hand folds), then ann and bob's hand goes
        # on; the next hand deals without cat. cat's cash-out is slow.
        cashier.gate.clear()
        leaving = asyncio.create_task(actor.leave("cat", "leave-cat"))

        async def hands_after() -> bool:
            now = await view(actor, "ann")
            return now.hand_id not in ("", first.hand_id) and now.phase == A.TABLE_PHASE_HAND_IN_PROGRESS

        for _ in range(1000):
            if await hands_after():
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the table waited for the cash-out")
        cashier.gate.set()
        left = await asyncio.wait_for(leaving, timeout=10)
        assert left.folded_mid_hand
    finally:
        cashier.gate.set()
        await actor.stop()


class LosesTheFirstOpening(FakeCashier):
    """Opens a seat session and loses the answer the first time (the cashier did it; its reply never
    came); a session id asked again with another seat is a conflict, as the real cashier says."""

    def __init__(self) -> None:
        super().__init__()
        self.lost = 1

    async def open_seat_session(self, **fields: Any) -> SeatSession:
        earlier = self.sessions.get(fields["session_id"])
        if earlier is not None and earlier.seat != fields["seat"]:
            raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the session id was used with different fields")
        session = await super().open_seat_session(**fields)
        if self.lost:
            self.lost -= 1
            raise Unavailable("UNAVAILABLE", "the cashier's answer was lost", {"dependency": "cashier"})
        return session


async def test_a_seat_session_whose_answer_was_lost_is_the_players_seat_never_an_orphan() -> None:
    """Found by the whole-table simulator: the cashier opened cat's seat session and its answer was
    lost; the table freed the seat, dan sat there, cat's retry chose another seat and the cashier
    refused it (the session id with another seat): cat's chips sat in a session no seat held. Now
    the table asks again with the same seat and session id until the cashier says yes or no, and
    holds the seat meanwhile."""
    cashier = LosesTheFirstOpening()
    actor = seated_table(cashier, action_seconds=30)
    actor.start()
    try:
        await running_view(actor)
        sitting = asyncio.create_task(actor.sit_down("cat", "sit-cat", 0, 500, False))
        await until(lambda: cashier.lost == 0)
        with pytest.raises(FailedPrecondition) as taken:
            await actor.sit_down("dan", "sit-dan", 3, 500, False)
        assert taken.value.reason == "SEAT_TAKEN"
        seated = await asyncio.wait_for(sitting, timeout=10)
        assert seated.seat == 3
        again = await actor.sit_down("cat", "sit-cat", 0, 500, False)
        assert again == seated
        assert sorted((s.seat, s.player_id) for s in cashier.sessions.values()) == [
            (1, "ann"),
            (2, "bob"),
            (3, "cat"),
        ]
        cats = await view(actor, "cat")
        assert any(s.player_id == "cat" and s.seat == 3 for s in cats.seats)
    finally:
        await actor.stop()


async def test_a_seat_held_for_a_sit_down_counts_as_taken_in_the_lobbys_figures() -> None:
    """The lobby sends a player to the fullest table with a free seat, counting those it sent there
    only until the table's figures are newer than the routing. Figures published while the cashier
    opens a seat session must count the seat held for it, or the lobby sees the seat free and sends
    the next player to a full table (`make bench` at 64 heads-up tables: the lobby named a table
    where a pair sat)."""
    cashier = SlowCashier()
    actor = seated_table(cashier, players=2)
    actor.start()
    try:
        await running_view(actor)
        before = actor.figures("shard-a")
        cashier.gate.clear()
        sitting = asyncio.create_task(actor.sit_down("cat", "sit-cat", 3, 500, False))
        await until(lambda: cashier.waiting == 1)
        held = actor.figures("shard-a")
        assert held.seated_players == before.seated_players + 1
        assert held.free_seats == before.free_seats - 1
        (cat,) = [s for s in held.taken_seats if s.seat == 3]
        # Nobody's name yet (the lobby's profile names the seat once it is opened), no chips.
        assert (cat.display_name, cat.stack, cat.sitting_out) == ("", 0, True)
        cashier.gate.set()
        await asyncio.wait_for(sitting, timeout=10)
        seated = actor.figures("shard-a")
        assert seated.seated_players == before.seated_players + 1
        (cat,) = [s for s in seated.taken_seats if s.seat == 3]
        assert cat.stack == 500
    finally:
        cashier.gate.set()
        await actor.stop()


class SlowSeal(FakeFairness):
    """Seals a deck only once `gate` is set (fairness that answers late at the end of a countdown);
    `sealed_for`: the players each seal was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.waiting = 0
        self.sealed_for: list[tuple[str, ...]] = []

    async def seal(self, hand_id: str, participants: Any = ()) -> tuple[int, ...]:
        self.sealed_for.append(tuple(participants))
        self.waiting += 1
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1
        return await super().seal(hand_id, participants)


async def test_the_table_answers_while_fairness_is_slow_to_seal_and_deals_the_seats_it_sealed_for() -> None:
    """Issue 42: the seal at the end of a countdown waits for fairness outside the table, so reads,
    sit-downs and leaves are answered meanwhile (they waited for fairness, up to its deadline). A seat
    change while the seal is out makes the sealed deck one for other players: that commitment is
    voided (nothing was dealt, nothing opens) and the next hand is committed for the seats as they
    are; a seal for unchanged seats is dealt as before."""
    fairness = SlowSeal()
    cashier = FakeCashier()
    actor = seated_table(cashier, fairness=fairness, players=2)
    actor.start()
    try:
        fairness.gate.clear()
        await until(lambda: fairness.waiting == 1)
        (first,) = fairness.sealed_for
        assert sorted(first) == ["ann", "bob"]
        # The table answers while the seal is out: a read, and a sit-down (the cashier is quick).
        before = await view(actor, "ann")
        assert before.phase != A.TABLE_PHASE_HAND_IN_PROGRESS
        seated = await asyncio.wait_for(actor.sit_down("cat", "sit-cat", 3, 500, False), timeout=5)
        assert seated.seat == 3
        fairness.gate.set()
        # The deck sealed for ann and bob is not dealt to three: voided, and the next hand is
        # committed and sealed for the three of them.
        await until(lambda: len(fairness.sealed_for) >= 2)
        playing = await running_view(actor)
        dealt = sorted(s.seat for s in playing.seats if s.status == A.SEAT_STATUS_ACTIVE)
        assert dealt == [1, 2, 3]  # cat posts at once (POST_NOW): dealt in
        assert sorted(fairness.sealed_for[-1]) == ["ann", "bob", "cat"]
        voided = [hand for hand, void in fairness.revealed.items() if void]
        assert len(voided) == 1
        assert voided[0] != playing.hand_id
    finally:
        fairness.gate.set()
        await actor.stop()


async def test_a_seal_for_unchanged_seats_is_dealt_once_it_comes() -> None:
    fairness = SlowSeal()
    cashier = FakeCashier()
    actor = seated_table(cashier, fairness=fairness, players=2)
    actor.start()
    try:
        fairness.gate.clear()
        await until(lambda: fairness.waiting == 1)
        await view(actor, "ann")  # answered meanwhile
        fairness.gate.set()
        playing = await running_view(actor)
        assert len(fairness.sealed_for) == 1
        assert fairness.revealed == {}
        assert playing.hand_id in fairness.decks
    finally:
        fairness.gate.set()
        await actor.stop()


class StrictSeal(SlowSeal):
    """Fairness as the service is: a hand sealed for some players and asked again for others is a
    conflict (the request binds its participants). `lose`: the next seals land and their answers are
    lost; `refuse_voids`: the next voids are refused (UNAVAILABLE)."""

    def __init__(self) -> None:
        super().__init__()
        self.participants: dict[str, tuple[str, ...]] = {}
        self.lose = 0
        self.refuse_voids = 0

    async def seal(self, hand_id: str, participants: Any = ()) -> tuple[int, ...]:
        deck = await super().seal(hand_id, participants)
        first = self.participants.setdefault(hand_id, tuple(participants))
        if first != tuple(participants):
            raise AlreadyExists("IDEMPOTENCY_CONFLICT", "sealed for other participants")
        if self.lose:
            self.lose -= 1
            raise Unavailable("UNAVAILABLE", "the answer was lost", {"dependency": "fairness"})
        return deck

    async def reveal(self, hand_id: str, *, voided: bool = False, seen: Any = None) -> None:
        if voided and self.refuse_voids:
            self.refuse_voids -= 1
            raise Unavailable("UNAVAILABLE", "fairness is away", {"dependency": "fairness"})
        await super().reveal(hand_id, voided=voided, seen=seen)


def stranded(fairness: StrictSeal, dealt: set[str]) -> set[str]:
    """Hands sealed at fairness that were neither dealt nor voided: a deck nobody will ever open."""
    return {h for h in fairness.participants if h not in dealt and h not in fairness.revealed}


async def test_a_seal_whose_answer_was_lost_is_voided_if_the_seats_changed_never_sealed_again() -> None:
    """An outside tester's case: the seal landed at fairness but its answer was lost (UNAVAILABLE),
    and a player sat down before the retry. Sealing again for the new players is a conflict, and the
    table dropped the hand: sealed for ann and bob, never dealt, never voided. A seal that may have
    landed for other players is voided instead; the next hand is committed for the seats as they are."""
    fairness = StrictSeal()
    cashier = FakeCashier()
    actor = seated_table(cashier, fairness=fairness, players=2)
    actor.start()
    try:
        fairness.gate.clear()
        fairness.lose = 1
        await until(lambda: fairness.waiting == 1)
        await asyncio.wait_for(actor.sit_down("cat", "sit-cat", 3, 500, False), timeout=5)
        fairness.gate.set()
        playing = await running_view(actor)
        assert sorted(fairness.participants[playing.hand_id]) == ["ann", "bob", "cat"]
        assert stranded(fairness, {playing.hand_id}) == set()
    finally:
        fairness.gate.set()
        await actor.stop()


async def test_a_void_fairness_refuses_is_asked_again_until_it_is_done() -> None:
    """A seat change during the seal voids the sealed hand; fairness refused that void once (away),
    and the hand stayed sealed for ever (the table's one next-hand mark had moved on). The void is
    asked again until fairness answers."""
    clock = SimulatedClock()
    fairness = StrictSeal()
    cashier = FakeCashier()
    actor = seated_table(cashier, fairness=fairness, players=2, clock=clock)
    actor.start()
    try:
        fairness.gate.clear()
        fairness.refuse_voids = 2
        for _ in range(200):
            if fairness.waiting == 1:
                break
            await asyncio.sleep(0)
        await asyncio.wait_for(actor.sit_down("cat", "sit-cat", 3, 500, False), timeout=5)
        fairness.gate.set()
        for _ in range(50):
            await clock.run_for(0.5)
            view = await actor.call(lambda: actor.snapshot("ann"))
            if view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and not stranded(fairness, {view.hand_id}):
                break
        assert fairness.refuse_voids == 0
        assert stranded(fairness, {view.hand_id}) == set()
    finally:
        fairness.gate.set()
        await actor.stop()
