"""Holds of the history service (rules 17, docs/integrity.md "Holds" and "Automatic holds").

The cashier keeps every hold; history sets them over `HoldKeeper` (the gRPC client is
`cashier_holds.CashierHolds`) and audits them. An operator's HoldPlayer / ReleasePlayer is a full
hold (`fair_play_cases.FairPlayUseCases.set_hold`). This module is the automatic side:

- RecordHand's transaction records, with a CHIP_DUMPING case whose score reached
  `POKER_HISTORY_AUTO_HOLD_MIN_SCORE`, that the case's players (its suspects and its beneficiary)
  are due a withdrawals hold (`hold_storage.record_due`), so RecordHand never waits for the cashier
  and a hold is never lost;
- `AutoHolds` applies due holds after the commit, in the background: SetPlayerHold with the
  withdrawals scope and the request id `auto:<case_id>:<player_id>` (a retry can never hold twice;
  a player whose withdrawals are already held counts as held), retried with backoff while the
  cashier is away and picked up again after a restart; each applied hold is audited PLAYER_HELD
  (actor `history-detectors`) in the transaction that marks it held;
- `AutoHolds.resolve` is ResolveCase: RELEASE is recorded and waits for finance's approval
  (releases.py: four-eyes), then `carry_out_release` lifts the case's holds (unless another case
  still holds the player) and audits PLAYER_RELEASED with the asker as actor; CONFIRM keeps them (a
  confirmed case may still be released later; a released one is final); each decision is audited
  FAIR_PLAY_CASE_RESOLVED and recorded once per case.

One lock of the process serialises applying and resolving, so a release never crosses an apply.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from poker.history.v1 import history_pb2
from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition, Unavailable
from service_runtime.structured_logging import get_logger
from service_runtime.tasks import cancel_and_wait
from services.history import hold_storage, storage
from services.history.cases import CaseKind
from services.history.hold_storage import AutoHold, CaseResolution, HoldState, Resolution

log = get_logger("history.holds")

DETECTOR_ACTOR = "history-detectors"
PLAYER_HELD = "PLAYER_HELD"
PLAYER_RELEASED = "PLAYER_RELEASED"
CASE_RESOLVED = "FAIR_PLAY_CASE_RESOLVED"
# The cashier's request ids and the audit's event ids are at most 128 characters.
MAX_DERIVED_ID_LENGTH = 128
# Due holds read per query by the background task.
DUE_BATCH = 100
RETRY_INITIAL_SECONDS = 0.5
RETRY_MAX_SECONDS = 30.0
# How often the task looks for due holds when nobody told it of new ones (another process, a missed
# wake-up); a restart looks at once.
POLL_SECONDS = 30.0
ATTEMPTS = 4


@dataclass(frozen=True)
class Hold:
    """A player's hold in one scope as the cashier answered a change of it."""

    player_id: str
    held: bool
    reason: str
    change_time: datetime
    existing: bool


class HoldKeeper(Protocol):
    async def set_hold(
        self, request_id: str, player_id: str, held: bool, reason: str, *, withdrawals_only: bool = False
    ) -> Hold: ...


def timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def _micros(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def _moment(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1_000_000, UTC)


def derived_id(prefix: str, case_id: str, player_id: str) -> str:
    """`<prefix>:<case_id>:<player_id>`, with a digest of the player id when that is too long."""
    plain = f"{prefix}:{case_id}:{player_id}"
    if len(plain) <= MAX_DERIVED_ID_LENGTH:
        return plain
    return f"{prefix}:{case_id}:{hashlib.sha256(player_id.encode()).hexdigest()[:32]}"


def hold_reason(case_id: str, role: str) -> str:
    """The reason the cashier keeps with an automatic hold (the same on every retry of it)."""
    return f"automatic: strong chip-dumping case {case_id} ({role.lower()})"


def is_strong_dumping(kind: CaseKind, score: float, min_score: float) -> bool:
    """Does a case of this kind and score hold its players' withdrawals automatically? Only chip
    dumping, from `min_score` (0: never); the other kinds wait for an operator."""
    return kind is CaseKind.CHIP_DUMPING and min_score > 0 and score >= min_score


_STATES_PB = {
    HoldState.DUE: history_pb2.CASE_HOLD_STATE_DUE,
    HoldState.HELD: history_pb2.CASE_HOLD_STATE_HELD,
    HoldState.RELEASED: history_pb2.CASE_HOLD_STATE_RELEASED,
    HoldState.FAILED: history_pb2.CASE_HOLD_STATE_FAILED,
}
_RESOLUTIONS_PB = {
    Resolution.RELEASE: history_pb2.CASE_RESOLUTION_RELEASE,
    Resolution.CONFIRM: history_pb2.CASE_RESOLUTION_CONFIRM,
}
RESOLUTIONS: dict[int, Resolution] = {int(value): resolution for resolution, value in _RESOLUTIONS_PB.items()}


def with_holds(
    case: history_pb2.FairPlayCase, holds: list[AutoHold], resolution: CaseResolution | None
) -> history_pb2.FairPlayCase:
    """The case as operators see it: with its automatic holds and the decision on them."""
    del case.holds[:]
    for hold in holds:
        shown = history_pb2.CaseHold(
            player_id=hold.player_id,
            role=history_pb2.CaseRole.Value(f"CASE_ROLE_{hold.role}"),
            state=_STATES_PB[hold.state],
            due_time=timestamp(_moment(hold.due_us)),
            note=hold.note,
        )
        if hold.held_us is not None:
            shown.hold_time.CopyFrom(timestamp(_moment(hold.held_us)))
        if hold.released_us is not None:
            shown.release_time.CopyFrom(timestamp(_moment(hold.released_us)))
        case.holds.append(shown)
    if resolution is not None:
        case.resolution = _RESOLUTIONS_PB[resolution.resolution]
        case.resolved_by = resolution.actor
        case.resolution_reason = resolution.reason
        case.resolve_time.CopyFrom(timestamp(_moment(resolution.resolved_us)))
    return case


async def _insert_event_once(session: AsyncSession, event: history_pb2.AuditEvent) -> None:
    if await storage.audit_event_bytes(session, event.event_id) is None:
        await storage.insert_audit_event(session, event, storage.serialise(event))


class AutoHolds:
    """Applies due automatic holds in the background and resolves cases for operators."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        writing: Callable[[], AbstractAsyncContextManager[AsyncSession]],
        holds: HoldKeeper | None,
        clock: Callable[[], datetime],
        *,
        retry_initial_seconds: float = RETRY_INITIAL_SECONDS,
        retry_max_seconds: float = RETRY_MAX_SECONDS,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self._sessions = sessions
        self._writing = writing
        self._holds = holds
        self._clock = clock
        self._retry_initial = retry_initial_seconds
        self._retry_max = retry_max_seconds
        self._poll = poll_seconds
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._cashier_away = False

    # --- The background task. ---

    def start(self) -> None:
        """Start applying due holds (those left from before a restart at once)."""
        if self._holds is not None and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="automatic-holds")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    def notify(self) -> None:
        """New holds are due (their transaction committed): apply them now."""
        self._wake.set()

    async def _run(self) -> None:
        delay = self._retry_initial
        while True:
            self._wake.clear()
            try:
                done = await self.apply_due()
            except Exception as error:  # the database is away, or a bug: keep trying, say so once
                log.warning("automatic holds not applied; retrying", error=type(error).__name__)
                done = False
            if done:
                delay, wait = self._retry_initial, self._poll
            else:
                wait = delay * random.uniform(0.8, 1.2)
                delay = min(delay * 2, self._retry_max)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()

    async def apply_due(self) -> bool:
        """Apply every due hold; False when the cashier is away (some are left for the next try)."""
        if self._holds is None:
            return True
        while True:
            async with self._sessions() as session:
                due = await hold_storage.due_holds(session, DUE_BATCH)
            for hold in due:
                try:
                    await self._apply(hold)
                except Unavailable:
                    if not self._cashier_away:
                        log.warning("the cashier is away; automatic holds wait", due=len(due))
                    self._cashier_away = True
                    return False
            if self._cashier_away:
                log.info("the cashier is back; automatic holds applied")
                self._cashier_away = False
            if len(due) < DUE_BATCH:
                return True

    async def _apply(self, due: AutoHold) -> None:
        assert self._holds is not None
        async with self._lock:
            async with self._sessions() as session:
                current = await hold_storage.hold_of(session, due.case_id, due.player_id)
                resolution = (await hold_storage.resolutions_of_cases(session, [due.case_id])).get(
                    due.case_id
                )
            if current is None or current.state is not HoldState.DUE:
                return
            if resolution is not None and resolution.resolution is Resolution.RELEASE and resolution.done:
                return
            reason = hold_reason(due.case_id, due.role)
            note = ""
            try:
                hold = await self._holds.set_hold(
                    derived_id("auto", due.case_id, due.player_id),
                    due.player_id,
                    True,
                    reason,
                    withdrawals_only=True,
                )
                held_at = hold.change_time
            except Unavailable:
                raise
            except FailedPrecondition as error:
                if error.reason != "PLAYER_ALREADY_ON_HOLD":
                    await self._fail(due, error)
                    return
                note = "the player's withdrawals were already held (another case); counted as held"
                held_at = self._clock()
            except DomainError as error:
                await self._fail(due, error)
                return
            event = history_pb2.AuditEvent(
                event_id=derived_id("auto-hold", due.case_id, due.player_id),
                time=timestamp(held_at),
                actor=DETECTOR_ACTOR,
                kind=PLAYER_HELD,
                subject=due.player_id,
                details=(
                    f"withdrawals held automatically (scope WITHDRAWALS; seats go on) for case "
                    f"{due.case_id}: {reason}; the case's score reached the automatic-hold strength"
                    + (f"; {note}" if note else "")
                ),
                player_ids=[due.player_id],
            )
            async with self._writing() as session:
                await hold_storage.set_state(
                    session,
                    due.case_id,
                    due.player_id,
                    HoldState.HELD,
                    note=note,
                    held_us=_micros(held_at),
                )
                await _insert_event_once(session, event)

    async def _fail(self, due: AutoHold, error: DomainError) -> None:
        """The cashier refused the hold for good (not a player it knows, a conflicting id)."""
        log.warning("automatic hold refused by the cashier", case_id=due.case_id, reason=error.reason)
        async with self._writing() as session:
            await hold_storage.set_state(
                session,
                due.case_id,
                due.player_id,
                HoldState.FAILED,
                note=f"the cashier refused the hold: {error.reason}",
            )

    # --- ResolveCase. ---

    async def resolve(
        self, admin: str, request_id: str, case_id: str, resolution: Resolution, reason: str
    ) -> bool:
        """Record and carry out the decision; True when this request id was applied before. The
        caller checked the fields and that the case exists."""
        async with self._lock:
            for attempt in range(ATTEMPTS):
                try:
                    earlier = await self._decide(admin, request_id, case_id, resolution, reason)
                    break
                except IntegrityError:
                    # Another process recorded a decision at the same moment: look again.
                    await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
            else:
                raise AlreadyExists(
                    "IDEMPOTENCY_CONFLICT", "concurrent decisions kept racing; retry", {"case_id": case_id}
                )
            # A RELEASE is carried out only once finance approves it (releases.py, four-eyes).
            return earlier is not None

    async def carry_out_release(self, asker: str, request_id: str, case_id: str, reason: str) -> None:
        """An approved RELEASE (DecideRelease): lift the case's holds as its asker decided it, once
        (a retry after the cashier was away finishes it)."""
        async with self._lock:
            async with self._sessions() as session:
                decided = await hold_storage.resolution_by_request(session, request_id)
            if decided is None or decided.done:
                return
            await self._release(asker, request_id, case_id, reason)

    async def _decide(
        self, admin: str, request_id: str, case_id: str, resolution: Resolution, reason: str
    ) -> CaseResolution | None:
        """The earlier decision of this request id, or None after recording this one."""
        async with self._writing() as session:
            earlier = await hold_storage.resolution_by_request(session, request_id)
            if earlier is not None:
                for field, value, asked in (
                    ("case_id", earlier.case_id, case_id),
                    ("resolution", earlier.resolution, resolution),
                    ("reason", earlier.reason, reason),
                ):
                    if value != asked:
                        raise AlreadyExists(
                            "IDEMPOTENCY_CONFLICT",
                            "this request id was used for another decision",
                            {"field": field},
                        )
                return earlier
            decided = (await hold_storage.resolutions_of_cases(session, [case_id])).get(case_id)
            # A confirmed case may still be released (an appeal upheld); a released one is final.
            appeal = (
                decided is not None
                and decided.resolution is Resolution.CONFIRM
                and resolution is Resolution.RELEASE
            )
            if decided is not None and not appeal:
                raise FailedPrecondition(
                    "CASE_NOT_RESOLVABLE",
                    f"the case was already resolved ({decided.resolution.value})",
                    {"case_id": case_id, "resolution": decided.resolution.value},
                )
            holds = (await hold_storage.holds_of_cases(session, [case_id])).get(case_id, [])
            if not any(hold.state in hold_storage.ACTIVE for hold in holds):
                raise FailedPrecondition(
                    "CASE_NOT_RESOLVABLE",
                    "the case has no automatic hold to release or confirm",
                    {"case_id": case_id},
                )
            now = self._clock()
            confirm = resolution is Resolution.CONFIRM
            await hold_storage.insert_resolution(
                session,
                CaseResolution(request_id, case_id, resolution, reason, admin, _micros(now), done=confirm),
            )
            if confirm:
                held = sorted(hold.player_id for hold in holds if hold.state in hold_storage.ACTIVE)
                await _insert_event_once(
                    session,
                    history_pb2.AuditEvent(
                        event_id=f"case-resolved:{case_id}:{resolution.value}",
                        time=timestamp(now),
                        actor=admin,
                        kind=CASE_RESOLVED,
                        subject=case_id,
                        details=f"CONFIRM by {admin}: the automatic withdrawal holds stay: {reason}",
                        player_ids=held,
                    ),
                )
            return None

    async def _release(self, admin: str, request_id: str, case_id: str, reason: str) -> None:
        """Lift the case's holds at the cashier, then mark them and audit it, in one transaction. A
        cashier that cannot be reached leaves the decision unfinished; its retry finishes it."""
        async with self._sessions() as session:
            holds = [
                hold
                for hold in (await hold_storage.holds_of_cases(session, [case_id])).get(case_id, [])
                if hold.state in hold_storage.ACTIVE
            ]
            others = {
                hold.player_id: await hold_storage.other_active_cases(session, hold.player_id, case_id)
                for hold in holds
            }
        released: dict[str, datetime] = {}
        for hold in holds:
            if others[hold.player_id]:
                continue
            if self._holds is None:
                raise Unavailable("UNAVAILABLE", "this history service has no cashier to keep holds")
            try:
                answer = await self._holds.set_hold(
                    derived_id("auto-release", case_id, hold.player_id),
                    hold.player_id,
                    False,
                    reason,
                    withdrawals_only=True,
                )
            except FailedPrecondition as error:
                if error.reason != "PLAYER_NOT_ON_HOLD":
                    raise
                continue  # never applied, or lifted already: nothing held
            released[hold.player_id] = answer.change_time
        now = self._clock()
        async with self._writing() as session:
            for hold in holds:
                kept = others[hold.player_id]
                if kept:
                    note = f"withdrawals stay held by case {kept[0]}"
                elif hold.player_id in released:
                    note = ""
                else:
                    note = "nothing was held at the cashier"
                await hold_storage.set_state(
                    session,
                    case_id,
                    hold.player_id,
                    HoldState.RELEASED,
                    note=note,
                    released_us=_micros(released.get(hold.player_id, now)),
                )
                if hold.player_id in released:
                    await _insert_event_once(
                        session,
                        history_pb2.AuditEvent(
                            event_id=derived_id("auto-release", case_id, hold.player_id),
                            time=timestamp(released[hold.player_id]),
                            actor=admin,
                            kind=PLAYER_RELEASED,
                            subject=hold.player_id,
                            details=f"withdrawals released by {admin} (scope WITHDRAWALS, ResolveCase "
                            f"RELEASE of case {case_id}): {reason}",
                            player_ids=[hold.player_id],
                        ),
                    )
            kept_players = sorted(player for player, cases in others.items() if cases)
            await _insert_event_once(
                session,
                history_pb2.AuditEvent(
                    event_id=f"case-resolved:{case_id}:{Resolution.RELEASE.value}",
                    time=timestamp(now),
                    actor=admin,
                    kind=CASE_RESOLVED,
                    subject=case_id,
                    details=f"RELEASE by {admin}: {reason}; released: {', '.join(sorted(released)) or 'none'}"
                    + (f"; still held by other cases: {', '.join(kept_players)}" if kept_players else ""),
                    player_ids=sorted(hold.player_id for hold in holds),
                ),
            )
            await hold_storage.mark_resolution_done(session, request_id)
