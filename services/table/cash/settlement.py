"""Settling a cash table's finished hand with the cashier (docs/table.md), and what the table does
when the cashier refuses a settlement for good.

The order is the money's: a fenced write of the hand's live mark first (a shard that lost the room
must not settle behind the new owner), the hand's record kept durably in the record outbox, then the
cashier's settlement (one linked batch, id = the hand id, retried with the same id until it is
acknowledged). The table actor (services/table/cash/actor.py) decides what follows from the answer (the
hand's core, services/table/cash/core.py, gives the effects); this module does the calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from poker_engine.events import HandEnded
from service_runtime.errors import DomainError
from service_runtime.structured_logging import get_logger
from services.table import hand_trace
from services.table import metrics as table_metrics
from services.table.cash import core
from services.table.cash.hand_record import SeenPositions
from services.table.log.event_log import HandEventLog
from services.table.log.record_outbox import RecordOutbox
from services.table.ports.dependencies import CashierClient, FairnessClient
from services.table.ports.remote import is_unavailable
from services.table.ports.rooms import Room

log = get_logger("table.actor")


def wagered(result: HandEnded) -> int:
    """What the hand's pots held before rake: the chips its players bet and called."""
    return sum(pot.amount + pot.rake for pot in result.pots)


@dataclass(frozen=True, slots=True)
class AfterHand:
    """What the after-hand queues need: the hand to reveal, its record for history."""

    hand_id: str
    record: Any  # history_pb2.HandRecord
    # The table whose record outbox holds the record until history has it ("": none).
    table_id: str = ""
    # Who saw which deal positions (fairness version 3 opens them per reader); None when the deck is
    # no longer known (a record sent again after a takeover): the reveal then opens nothing.
    seen: SeenPositions | None = None


class Settlement:
    """The settlement calls of one table: its hand's log, record outbox, cashier and fairness."""

    def __init__(
        self,
        *,
        table_id: str,
        cashier: CashierClient,
        fairness: FairnessClient,
        event_log: HandEventLog,
        outbox: RecordOutbox,
    ) -> None:
        self._table_id = table_id
        self._cashier = cashier
        self._fairness = fairness
        self._log = event_log
        self._outbox = outbox

    async def send(self, live: core.HandState, settle: core.Settle, room: Room) -> None:
        """Run the core's `Settle` effect of the finished hand `live` (a DomainError: the cashier did
        not acknowledge it, or the room is fenced)."""
        # A fenced write first: a shard that lost the room must not settle behind the new owner,
        # nor keep its record of the hand beside the new owner's (cut off from Redis and back, it
        # did: the table that opened next sent it to history as the settled hand's).
        await self._log.mark_live(room.room_id, self._table_id, live.config.hand_id)
        # Settled means history gets the record, whatever becomes of this process: it is kept
        # durably before the cashier hears of the hand; whoever opens the table next sends it if the
        # cashier settled the hand and drops it if not.
        await self._outbox.keep(self._table_id, live.hand_id, settle.record.SerializeToString())
        with hand_trace.phase(self._table_id, "settle"):
            await self._cashier.settle_hand(
                hand_id=live.hand_id,
                table_id=self._table_id,
                pool=room.pool,
                nets=list(settle.nets),
                rake=settle.rake,
            )

    def settled(self, live: core.HandState, room: Room) -> tuple[core.HandState, core.Finish]:
        """The cashier acknowledged the hand: the core's hand after it, and what finishes it (its
        record and who saw what, for the after-hand queues); counted and traced."""
        step = core.feed(live, core.SettleAnswer(live.hand_id, core.Outcome.SETTLED))
        (finished,) = step.effects
        assert isinstance(finished, core.Finish)
        live = step.state
        assert live.hand.result is not None
        table_metrics.hand_settled(
            self._table_id, room.room_id, room.variant.value, room.pool, wagered(live.hand.result)
        )
        hand_trace.settled(self._table_id, live.hand_id)
        return live, finished

    async def forget(self, hand_id: str) -> None:
        """Drop the settled hand's log and live mark (never raises a DomainError)."""
        try:
            await self._log.forget_live(self._table_id, hand_id)
        except DomainError as error:
            # Settled all the same: the next hand's live mark replaces this one (a table that opens
            # before that finds the hand settled and ends it so), and the log is only garbage.
            log.warning(
                "settled hand's log not dropped",
                table_id=self._table_id,
                hand_id=hand_id,
                reason=error.reason,
            )

    async def refused_for_good(
        self, live: core.HandState, error: DomainError, room: Room, leavers: Sequence[str]
    ) -> None:
        """The cashier refuses the hand's settlement for good (a seat session closed behind this
        table's back: another copy of the table cashed it out, say; the refusal is recorded, so every
        retry gets it again). Waiting would hold the table and the hand for ever: the hand is voided
        unless the cashier settled it after all, and the players who left during it (`leavers`, their
        seat sessions) are cashed out. The actor then reads the seats again from the cashier."""
        step = core.feed(live, core.SettleAnswer(live.hand_id, core.Outcome.REFUSED))
        (void,) = step.effects
        assert isinstance(void, core.Void)
        hand_id = live.hand_id
        log.error(
            "settlement refused for good; the hand is voided and the seats read again",
            table_id=self._table_id,
            hand_id=hand_id,
            reason=error.reason,
        )
        settled = await self._cashier.hand_settled(hand_id)
        if not settled:
            try:
                # Its players saw their cards all the same: each still gets the openings of them.
                await self._fairness.reveal(hand_id, voided=True, seen=void.seen)
            except DomainError as reveal_error:
                if is_unavailable(reveal_error):
                    raise
                log.warning("refused hand not revealed", table_id=self._table_id, reason=reveal_error.reason)
            await self._outbox.done(self._table_id, hand_id)
        # Players who left during the hand leave now (the void moved nothing: a cash-out returns
        # their stack as it was before the hand); the seats read again would seat them once more.
        for session_id in leavers:
            await self._cashier.cash_out(session_id)
        await self._log.forget_live(self._table_id, hand_id)
        # Counted and traced once the hand is done with (an outage above retries all of it): its
        # settlement is awaited no more, and the next hand is a trace of its own.
        if settled:
            result = live.hand.result
            table_metrics.hand_settled(
                self._table_id,
                room.room_id,
                room.variant.value,
                room.pool,
                0 if result is None else wagered(result),
            )
            hand_trace.settled(self._table_id, hand_id)
        else:
            table_metrics.hand_voided(table_metrics.VoidReason.SETTLEMENT_REFUSED)
            table_metrics.settlement_dropped(self._table_id)
            hand_trace.dropped(self._table_id, error.reason)
