"""Committing and dealing a cash table's next hand (docs/table.md "A hand, start to end"): the
fairness commitment, marked live in the hand's log before anyone sees it; the seal, which gives the
deck once the countdown ends; the engine's config and the hand's first log entries (one fenced write
with the live mark), from which the hand's core (services/table/cash/core.py) runs the hand.

The table actor (services/table/cash/actor.py) decides when (the countdown, services/table/cash/countdown.py)
and what follows; this module makes the calls.
"""

from __future__ import annotations

from collections.abc import Mapping

from poker_engine.seating import HandPlan
from service_runtime.errors import DomainError
from service_runtime.structured_logging import get_logger
from services.table import hand_trace
from services.table.cash import core
from services.table.cash.countdown import Countdown
from services.table.cash.table_core import PlayerSeat
from services.table.log.event_log import HandEventLog
from services.table.ports.clock import WALL_CLOCK, Clock
from services.table.ports.dependencies import Commitment, FairnessClient
from services.table.ports.remote import is_unavailable
from services.table.ports.rooms import Room

log = get_logger("table.actor")


class Dealer:
    """The commitments and deals of one table's hands, against fairness and the hand's log."""

    def __init__(
        self,
        *,
        table_id: str,
        fairness: FairnessClient,
        event_log: HandEventLog,
        action_seconds: float,
        full_reveal_rooms: frozenset[str],
        clock: Clock = WALL_CLOCK,
        retry_seconds: tuple[float, float] = (0.5, 10.0),
    ) -> None:
        self._clock = clock
        self._retry_initial, self._retry_max = retry_seconds
        self._table_id = table_id
        self._fairness = fairness
        self._log = event_log
        self._action_seconds = action_seconds
        self._full_reveal_rooms = full_reveal_rooms
        # This opening of the table: a table closed and opened again in the same process (its room
        # lost and won back, an empty extra table reused) must not send the `CommitHand` request ids
        # of its earlier life again, or fairness answers with those hands, long revealed.
        self._life = clock.new_id()[:16]
        self._hand_counter = 0

    def terms(self, room: Room) -> tuple[bool, int]:
        """What a commitment for `room` is asked on: private room, shuffle version (2: the room
        reveals the whole seed; 0: the default)."""
        return room.private, 2 if room.room_id in self._full_reveal_rooms else 0

    async def commit(self, room: Room, *, ahead: bool = False) -> Countdown | None:
        """The next hand's commitment, marked as the table's next hand before anyone sees it (if this
        shard dies now, the next owner voids it), as the countdown to run; None: fairness refused or
        is away (retry). A mark the log refused raises (fenced, or away): the request id is kept, so
        the retry gets the same hand from fairness and marks it, and leaves no commitment unmarked.
        `ahead`: asked for while the running hand plays (its trace is the next hand's)."""
        request_id = f"{self._table_id}:{self._life}:{self._hand_counter + 1}"
        private, version = self.terms(room)
        try:
            with hand_trace.phase(self._table_id, "commit", ahead=ahead):
                commitment = await self._fairness.commit(
                    request_id, self._table_id, private_room=private, shuffle_version=version
                )
        except DomainError as error:
            if not is_unavailable(error):
                self._hand_counter += 1  # refused for good: the retry asks with a new request id
            log.warning("commit failed; retrying", table_id=self._table_id, reason=error.reason)
            return None
        await self._log.mark_next(room.room_id, self._table_id, commitment.hand_id)
        self._hand_counter += 1
        return Countdown(commitment, terms=(private, version))

    async def void(self, pending: Countdown, *, until_answered: bool = False) -> None:
        """A commitment that will not be dealt (the room's terms or the seats changed before its
        deal, the table closes): voided at fairness (nothing was dealt, nothing opens) and its mark
        cleared. `until_answered`: asked again after a backoff while fairness or the log is away (a
        sealed hand the table moved on from has no mark left to the next owner: once given up, it
        stays sealed for ever); a caller that stops the table cancels it. Otherwise best effort:
        left as it is, the next owner of the table voids it if its mark is still the table's."""
        hand_id = pending.commitment.hand_id
        backoff = self._retry_initial
        while True:
            try:
                await self._fairness.reveal(hand_id, voided=True)
                await self._log.forget_live(self._table_id, hand_id)
                return
            except DomainError as error:
                if not (until_answered and is_unavailable(error)):
                    log.warning(
                        "commitment not voided", table_id=self._table_id, hand_id=hand_id, reason=error.reason
                    )
                    return
                log.info("commitment not voided yet; asking again", table_id=self._table_id, hand_id=hand_id)
            await self._clock.sleep(backoff)
            backoff = min(self._retry_max, backoff * 2)

    async def seal(self, pending: Countdown, plan: HandPlan) -> tuple[int, ...]:
        """The deck of the committed hand, for the players of `plan` (a DomainError: no deck)."""
        with hand_trace.phase(self._table_id, "deal"):
            return await self._fairness.seal(pending.commitment.hand_id, [s.player_id for s in plan.seats])

    def dealt(
        self,
        plan: HandPlan,
        commitment: Commitment,
        deck: tuple[int, ...],
        room: Room,
        players: Mapping[int, PlayerSeat],
    ) -> core.Step:
        """The core deals the hand: the config for the engine's replay, then what the shell needs to go
        on with the hand at a next owner (services/table/cash/takeover.py), in the hand's log in one fenced
        write with the live mark before anyone hears of it."""
        config = plan.hand_config(
            deck,
            variant=room.variant,
            step=room.step,
            rake=room.rake,
            hand_id=commitment.hand_id,
            small_bet=room.small_bet,
            big_bet=room.big_bet,
        )
        step = core.deal(
            config=config,
            commitment=commitment.commitment,
            at=self._clock.now(),
            seating=plan.table_after,
            sessions={s.seat: players[s.seat].session_id for s in config.seats},
            signals={s.player_id: (players[s.seat].device, players[s.seat].network) for s in config.seats},
            names={
                s.player_id: players[s.seat].display_name
                for s in config.seats
                if players[s.seat].display_name
            },
            banks={seat: player.time_bank for seat, player in players.items()},
            action_seconds=self._action_seconds,
            room=room,
            table_id=self._table_id,
        )
        return step

    async def write_deal(self, room: Room, step: core.Step) -> None:
        """The dealt hand's first entries into its log, with the live mark, in one fenced write,
        before anyone hears of it (raises the log's refusal: UNAVAILABLE may have been written)."""
        hand_id = step.state.config.hand_id
        await self._log.append_live(room.room_id, self._table_id, hand_id, list(step.entries))
