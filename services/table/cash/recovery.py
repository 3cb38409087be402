"""Opening a cash table: what a previous owner left behind (docs/table.md "Takeover").

A table that opens (a shard restart, a room won from another shard) reads back the hand its previous
owner left running: dealt, unsettled and with a log read whole, it is continued by the actor
(services/table/cash/actor.py); otherwise it is ended here as the cashier says it was (voided, or
revealed as finished). The next hand it committed and never dealt is voided. Records of hands
settled but never acknowledged by history go to the after-hand queues again, and the seats' log and
open seat sessions are read for the actor to reopen the seats from (services/table/cash/table_core.py). The log's format is services/table/cash/takeover.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from poker.history.v1 import history_pb2
from poker_engine.errors import EngineError, SeatingError
from poker_engine.hand import Hand
from poker_engine.replay import apply_json_action, config_from_json
from service_runtime.errors import DomainError
from service_runtime.structured_logging import get_logger
from services.table import metrics as table_metrics
from services.table.cash import core, table_core
from services.table.cash.hand_record import SeenPositions, seen_positions, seen_so_far
from services.table.cash.settlement import AfterHand
from services.table.log.event_log import HandEventLog
from services.table.log.record_outbox import RecordOutbox
from services.table.ports.dependencies import CashierClient, FairnessClient
from services.table.ports.remote import is_unavailable
from services.table.ports.rooms import Room

log = get_logger("table.actor")


@dataclass(frozen=True, slots=True)
class Found:
    """What a table that opens found: the hand to go on with (None: none), the open seat sessions of
    the table, and the seats' log."""

    taken: core.HandState | None
    sessions: Sequence[Any]
    seats_log: list[dict[str, Any]]
    # The result of a hand the previous owner settled and never ended here (its live mark still
    # stands): the button, blind positions and debts its deal set, which the seats' log may not
    # hold yet (the owner died between the cashier's settlement and its seats' entry).
    ended: table_core.HandResult | None = None


def reopen_seats(
    found: Found, rules: table_core.Rules, room: Room, clock: Callable[[], float]
) -> tuple[table_core.Seats, tuple[table_core.CashOut, ...], tuple[table_core.Input, ...]]:
    """The seats of the table that opens (table_core.reopen): its seats' log replayed, reconciled
    with the open seat sessions as of `clock()` (read once the log is replayed); the cash-outs owed
    and the inputs that caught the log up."""
    # From scratch on every try (a try that failed half-way seated some players already). With a
    # hand to go on with: the seating as it began (button, blind positions, debts), with the
    # players the cashier still seats; those who sat down during the hand join, those gone go.
    # Between hands: the seating the log holds (the button, blind positions and debts the last
    # hand left, issue 42), in which the open sessions are seated.
    taken = found.taken
    logged = table_core.replay(found.seats_log, rules, room.small_blind, room.big_blind)
    ended: tuple[table_core.Input, ...] = ()
    if found.ended is not None and found.ended.positions != table_core.positions_of(logged.seating):
        # The deal of every hand moves the big blind on, so other positions mean the seats' log
        # never heard of that hand's end: it is fed (and logged) now, as its owner would have.
        try:
            logged = table_core.feed(logged, found.ended, rules).state
            ended = (found.ended,)
        except (DomainError, SeatingError):
            pass  # the log's seats cannot take it (another table size): the seats are the cashier's
    base = table_core.seating_to_reopen(logged, rules, room.small_blind, room.big_blind)
    seats, owed, corrections = table_core.reopen(
        logged,
        rules,
        taken.seating if taken is not None else base,
        found.sessions,
        taken.banks if taken is not None else {},
        clock(),
    )
    return seats, owed, ended + corrections


class Recovery:
    """The reads and clean-ups of a table that opens, against the hand's log, the cashier, fairness
    and the record outbox. `room()` is the table's room now; `action_seconds` the turn's time."""

    def __init__(
        self,
        *,
        table_id: str,
        room: Callable[[], Room],
        action_seconds: float,
        cashier: CashierClient,
        fairness: FairnessClient,
        event_log: HandEventLog,
        outbox: RecordOutbox,
        after_hand: Callable[[AfterHand], None],
    ) -> None:
        self._table_id = table_id
        self._room = room
        self._action_seconds = action_seconds
        self._cashier = cashier
        self._fairness = fairness
        self._log = event_log
        self._outbox = outbox
        self._after_hand = after_hand
        # The result of a settled hand the last `find` ended (Found.ended).
        self._ended: table_core.HandResult | None = None

    async def find(self, unlogged: Sequence[dict[str, Any]]) -> Found:
        """The hand a previous owner left running (ended here unless it can go on), the kept records
        sent again, the open seat sessions, and the seats' log with `unlogged` (what this table took
        and has not logged yet). A DomainError: the cashier (or the log) is away; try again."""
        self._ended = None
        taken = await self.take_over_hand()
        await self.void_next_hand()
        await self.resend_kept_records(taken.config.hand_id if taken is not None else "")
        sessions = await self._cashier.open_sessions(self._table_id)
        # The seats' log (presence, sit-outs, streaks, banks, kept banks), with what this table
        # took and has not logged yet: replayed, then cross-checked with the open sessions.
        seats_log = await self._log.read_seats(self._table_id) + list(unlogged)
        if taken is not None and not sessions_hold(taken, sessions):
            # The seat sessions moved on without the hand (cashed out, other stacks): it cannot
            # settle against them, so it is voided as a hand whose log was lost.
            log.warning(
                "dangling hand's seats are gone", table_id=self._table_id, hand_id=taken.config.hand_id
            )
            await self.end_dangling_hand(taken.config.hand_id, settled=False)
            taken = None
        return Found(taken, sessions, seats_log, self._ended)

    def replay(self, entries: Sequence[Any]) -> core.HandState | None:
        """The hand a log holds, as the core replays it (None: not whole)."""
        return core.replay(
            entries, action_seconds=self._action_seconds, room=self._room(), table_id=self._table_id
        )

    async def take_over_hand(self) -> core.HandState | None:
        """A hand a previous owner left running (its shard died, was fenced or let the room go in the
        middle of it): dealt and unsettled, with a log read whole, it is returned to be continued
        (docs/table.md "Takeover"). Otherwise it ends here: one only committed (never dealt) or whose
        log is lost or unreadable is voided; one settled but never revealed is revealed as finished."""
        hand_id = await self._log.live_hand(self._table_id)
        if hand_id is None:
            return None
        settled = await self._cashier.hand_settled(hand_id)
        entries = await self._log.read(hand_id)
        taken = self.replay(entries)
        if taken is not None and taken.config.hand_id != hand_id:
            taken = None
        if not settled:
            if taken is not None:
                return taken
            why = "only committed" if not entries else "log unreadable"
            log.warning(
                "dangling hand cannot be continued", table_id=self._table_id, hand_id=hand_id, why=why
            )
        if settled and taken is not None and taken.hand.result is not None:
            # Settled by the owner that died: the seats go on from where that hand left them.
            stacks = tuple((r.seat, r.final_stack) for r in taken.hand.result.results)
            self._ended = table_core.hand_result(taken.seating, stacks)
        await self.end_dangling_hand(hand_id, settled=settled)
        return None

    async def void_next_hand(self) -> None:
        """The next hand a previous owner committed (ahead of need, or for a countdown) and never
        dealt: voided at fairness, nothing was dealt so nothing opens, and its mark cleared; this table
        commits its own. Not counted as a voided hand: nobody played it."""
        hand_id = await self._log.next_hand(self._table_id)
        if hand_id is None:
            return
        try:
            await self._fairness.reveal(hand_id, voided=True)
        except DomainError as error:
            if is_unavailable(error):
                raise
            log.warning(
                "committed hand not voided", table_id=self._table_id, hand_id=hand_id, reason=error.reason
            )
        log.info("committed hand never dealt voided", table_id=self._table_id, hand_id=hand_id)
        await self._log.forget_live(self._table_id, hand_id)

    async def end_dangling_hand(self, hand_id: str, *, settled: bool) -> None:
        """Reveal a hand left behind as what the cashier says it was, so fairness's chain holds no
        open hand: voided if it never settled, finished (with who saw what) if it did."""
        try:
            if settled:
                seen = await self._seen_in_kept_record(hand_id)
            else:
                seen = await self._seen_in_live_log(hand_id)
            await self._fairness.reveal(hand_id, voided=not settled, seen=seen)
        except DomainError as error:
            if is_unavailable(error):
                raise
            log.warning("dangling hand not revealed", table_id=self._table_id, reason=error.reason)
        log.info("dangling hand ended", table_id=self._table_id, hand_id=hand_id, voided=not settled)
        if not settled:
            table_metrics.hand_voided(table_metrics.VoidReason.UNFINISHED_AFTER_TAKEOVER)
        await self._log.forget_live(self._table_id, hand_id)

    async def _seen_in_kept_record(self, hand_id: str) -> SeenPositions | None:
        """Who saw which position of a settled hand a previous owner never revealed: its record is
        still in the outbox, and fairness gives its deck again (the hand has not ended there)."""
        data = (await self._outbox.kept(self._table_id)).get(hand_id)
        if data is None:
            return None
        try:
            deck = await self._fairness.seal(hand_id)
        except DomainError as error:
            if is_unavailable(error):
                raise
            return None
        return seen_positions(history_pb2.HandRecord.FromString(data), deck)

    async def _seen_in_live_log(self, hand_id: str) -> SeenPositions | None:
        """Who saw which position of a hand voided after the deal: its log replays it as far as it
        was played (the config holds the deck). None when nothing was dealt (a commitment marked
        live and never sealed) or the log does not replay."""
        entries = await self._log.read(hand_id)
        if not entries:
            return None
        taken = self.replay(entries)
        if taken is not None:
            return seen_so_far(taken.config, taken.hand.events)
        try:
            config = config_from_json(entries[0])
            hand = Hand(config)
            for entry in entries[1:]:
                if entry.get("type") == "table":
                    continue  # the shell's state beside the engine's entries (takeover.py)
                apply_json_action(hand, entry)
        except (EngineError, KeyError, TypeError, ValueError) as error:
            log.warning("voided hand's log does not replay", table_id=self._table_id, error=repr(error))
            return None
        return seen_so_far(config, hand.events)

    async def resend_kept_records(self, running: str = "") -> None:
        """Records of hands this table settled that history never acknowledged (the shard that
        settled them died or lost the room): into the after-hand queues again. Runs after the
        dangling hand is ended, so a record the cashier never settled is of a voided hand (or of
        the hand `running`, continued here, whose settlement keeps its record again)."""
        for hand_id, data in sorted((await self._outbox.kept(self._table_id)).items()):
            if hand_id == running:
                continue
            if not await self._cashier.hand_settled(hand_id):
                # Kept before a settlement that never happened: the hand was voided, nothing moved.
                await self._outbox.done(self._table_id, hand_id)
                continue
            record = history_pb2.HandRecord.FromString(data)
            log.info("settled hand's record sent again", table_id=self._table_id, hand_id=hand_id)
            self._after_hand(AfterHand(hand_id, record, self._table_id))


def sessions_hold(taken: core.HandState, sessions: Sequence[Any]) -> bool:
    """Every seat dealt into the hand still has its seat session open, for the same player, with the
    stack the hand began with (it never settled): the hand can settle against them."""
    by_id = {s.session_id: s for s in sessions}
    for seat in taken.config.seats:
        session = by_id.get(taken.sessions[seat.seat])
        if session is None or session.player_id != seat.player_id or session.seat - 1 != seat.seat:
            return False
        if session.stack != seat.stack:
            return False
    return True
