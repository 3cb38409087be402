"""One table actor in-process with the stand-ins of tests/table/fakes.py: ann, bob (and cat) seated
at the cashier with 500 each, no countdown, fast retries; and a wait for a hand someone must act in.
Used by the tests that drive the shell's own paths (a refused log append, a refused settlement)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from poker.table.v1 import table_pb2
from service_runtime.table_directory import MaintenanceSwitches
from services.table.cash.actor import TableActor
from services.table.cash.settlement import AfterHand
from services.table.log.event_log import HandEventLog, LocalEventLog
from services.table.ports.clock import WALL_CLOCK, Clock
from services.table.ports.rooms import Room
from services.table.streams.chat import ChatGuard
from services.table.timings import Timings
from tests.table.fakes import ROOM, FakeCashier, FakeFairness, FakeRooms

TABLE = f"{ROOM.room_id}.1"
PLAYERS = ("ann", "bob", "cat")


def seated_table(
    cashier: FakeCashier,
    log: HandEventLog | None = None,
    *,
    action_seconds: float = 30,
    players: int = 2,
    fairness: FakeFairness | None = None,
    room: Room = ROOM,
    after_hand: Callable[[AfterHand], None] = lambda job: None,
    showdown_seconds: float = 0.0,
    clock: Clock = WALL_CLOCK,
    countdown_seconds: float = 0,
    maintenance: Callable[[str], MaintenanceSwitches] | None = None,
) -> TableActor:
    """`room`: another room than `ROOM` (its table is still `TABLE`); `after_hand`: gets each settled
    hand's record and reveal job; `clock`: the table's time (a `SimulatedClock` moves only when the
    test moves it)."""
    for seat, name in enumerate(PLAYERS[:players], start=1):
        cashier.seat(TABLE, name, seat, 500)
    timings = Timings(
        action_seconds=action_seconds,
        time_bank_seconds=0,
        countdown_seconds=countdown_seconds,
        retry_initial_seconds=0.01,
        retry_max_seconds=0.05,
        command_queue_size=16,
        watch_queue_size=16,
        showdown_seconds=showdown_seconds,
    )
    return TableActor(
        TABLE,
        room,
        cashier=cashier,  # type: ignore[arg-type]
        fairness=fairness or FakeFairness(),  # type: ignore[arg-type]
        event_log=log if log is not None else LocalEventLog(),
        after_hand=after_hand,
        rooms=FakeRooms({room.room_id: room}),  # type: ignore[arg-type]
        timings=timings,
        chat=ChatGuard(),
        clock=clock,
        **({"maintenance": maintenance} if maintenance is not None else {}),
    )


async def running_view(actor: TableActor, exclude: frozenset[str] = frozenset()) -> table_pb2.TableView:
    """The first view of a hand in progress, with a seat to act, that is not one of `exclude`."""
    for _ in range(1000):
        async with asyncio.timeout(5):
            view = await actor.call(lambda: actor.snapshot("ann"))
        if (
            view.phase == table_pb2.TABLE_PHASE_HAND_IN_PROGRESS
            and view.to_act_seat
            and view.hand_id not in exclude
        ):
            return view
        await asyncio.sleep(0.01)
    raise AssertionError("no hand running")
