"""Four-eyes on releasing held chips (issue 38; docs/integrity.md "Holds", docs/backoffice.md).

A hold keeps a player's withdrawals (and, an operator's hold, their seats), so ending one is a money
operation: risk asks (ReleasePlayer for an operator's hold, ResolveCase RELEASE for a case's
automatic withdrawal holds), which records a pending release request and changes no hold; another
staff member, of finance, decides (DecideRelease). An approval carries the release out at once
through the paths that did it alone before (`FairPlayUseCases.set_hold` under the asker's request
id, `AutoHolds.carry_out_release`), each idempotent, so a retry of the decision after the cashier
was away completes it once; a rejection changes no hold (a rejected case may be resolved again).
The decider is never the asker (PERMISSION_DENIED FOUR_EYES_REQUIRED, and a CHECK of the table),
and each decision is audited RELEASE_DECIDED (actor the decider) beside the release's own events.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from poker.history.v1 import history_pb2
from service_runtime.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from service_runtime.four_eyes import staff_person
from services.history import hold_storage, release_storage, storage
from services.history.holds import AutoHolds, timestamp
from services.history.page_tokens import PageTokens, keyset_position, page_size_of
from services.history.records import check_id
from services.history.release_storage import ReleaseRow, ReleaseState

RELEASE_DECIDED = "RELEASE_DECIDED"
ATTEMPTS = 4

_STATES_PB = {
    ReleaseState.PENDING: history_pb2.RELEASE_REQUEST_STATE_PENDING,
    ReleaseState.APPROVED: history_pb2.RELEASE_REQUEST_STATE_APPROVED,
    ReleaseState.REJECTED: history_pb2.RELEASE_REQUEST_STATE_REJECTED,
}
_STATES: dict[int, ReleaseState] = {int(v): k for k, v in _STATES_PB.items()}


def _micros(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def _moment(micros: int) -> datetime:
    return datetime.fromtimestamp(micros / 1_000_000, UTC)


def release_pb(row: ReleaseRow) -> history_pb2.ReleaseRequest:
    shown = history_pb2.ReleaseRequest(
        request_id=row.request_id,
        player_id=row.player_id,
        case_id=row.case_id,
        case_release=row.case_release,
        reason=row.reason,
        asked_by=row.asked_by,
        ask_time=timestamp(_moment(row.asked_us)),
        state=_STATES_PB[row.state],
        decided_by=row.decided_by or "",
        decision_reason=row.decision_reason,
        decision_id=row.decision_id or "",
    )
    if row.decided_us is not None:
        shown.decide_time.CopyFrom(timestamp(_moment(row.decided_us)))
    return shown


def _conflict(field: str) -> AlreadyExists:
    return AlreadyExists("IDEMPOTENCY_CONFLICT", "this id was used for another request", {"field": field})


class Releases:
    """The release requests' use cases (mixed into HistoryApplication beside FairPlayUseCases)."""

    _sessions: async_sessionmaker[AsyncSession]
    _tokens: PageTokens
    _clock: Callable[[], datetime]
    _auto_holds: AutoHolds
    _writing: Callable[[], AbstractAsyncContextManager[AsyncSession]]

    # The hold's own path (FairPlayUseCases, the subclass): claim, cashier, audit, idempotent.
    async def set_hold(
        self, admin: str, request_id: str, player_id: str, reason: str, case_id: str, *, held: bool
    ) -> tuple[history_pb2.PlayerHold, bool]:
        raise NotImplementedError

    async def ask_release(self, asked: ReleaseRow) -> tuple[ReleaseRow, bool]:
        """Record a pending release (the fields checked by the caller); the earlier one of the same
        id if it asked the same (a retry: True), else IDEMPOTENCY_CONFLICT."""
        for attempt in range(ATTEMPTS):
            try:
                async with self._writing() as session:
                    earlier = await release_storage.release(session, asked.request_id)
                    if earlier is None:
                        await release_storage.insert_release(session, asked)
                        return asked, False
            except IntegrityError:
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
                continue
            for field, was, now in (
                ("request_id", earlier.case_release, asked.case_release),
                ("player_id", earlier.player_id, asked.player_id),
                ("case_id", earlier.case_id, asked.case_id),
                ("reason", earlier.reason, asked.reason),
            ):
                if was != now:
                    raise _conflict(field)
            return earlier, True
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT", "concurrent requests kept racing; retry", {"field": "request_id"}
        )

    async def decide_release(
        self, admin: str, decision_id: str, request_id: str, approve: bool, reason: str
    ) -> tuple[ReleaseRow, bool]:
        """DecideRelease (see the module docstring); the request as decided, and whether this
        decision id was applied before."""
        for value, field in ((decision_id, "decision_id"), (request_id, "request_id")):
            check_id(value, field)
            if len(value) > 64:
                raise InvalidArgument("FIELD_INVALID", f"{field} is at most 64 characters", {"field": field})
        _check_reason(reason)
        person = staff_person(admin)
        row, existing = await self._record_decision(admin, person, decision_id, request_id, approve, reason)
        if row.state is ReleaseState.APPROVED and not row.done:
            await self._carry_out(row)
            async with self._writing() as session:
                await release_storage.mark_done(session, row.request_id)
            async with self._sessions() as session:
                done = await release_storage.release(session, row.request_id)
            assert done is not None
            row = done
        return row, existing

    async def _record_decision(
        self, admin: str, person: str, decision_id: str, request_id: str, approve: bool, reason: str
    ) -> tuple[ReleaseRow, bool]:
        for attempt in range(ATTEMPTS):
            try:
                async with self._writing() as session:
                    earlier = await release_storage.release_by_decision(session, decision_id)
                    if earlier is not None:
                        want = ReleaseState.APPROVED if approve else ReleaseState.REJECTED
                        for field, was, asked in (
                            # A decision id is its decider's: another person's retry of it is not theirs.
                            ("decision_id", (earlier.decided_by or "").casefold(), person),
                            ("request_id", earlier.request_id, request_id),
                            ("approve", earlier.state, want),
                            ("reason", earlier.decision_reason, reason),
                        ):
                            if was != asked:
                                raise _conflict(field)
                        return earlier, True
                    row = await release_storage.release(session, request_id, for_update=True)
                    if row is None:
                        raise NotFound(
                            "RELEASE_REQUEST_NOT_FOUND",
                            "no release request with this id",
                            {"request_id": request_id},
                        )
                    if row.state is not ReleaseState.PENDING:
                        raise FailedPrecondition(
                            "RELEASE_ALREADY_DECIDED",
                            f"this release was already {row.state.value.lower()}",
                            {"state": row.state.value},
                        )
                    if row.asked_by.casefold() == person:
                        raise PermissionDenied(
                            "FOUR_EYES_REQUIRED",
                            "another member of finance must decide a release you asked for",
                            {"request_id": request_id},
                        )
                    if approve and not row.case_release:
                        # Approvals of the hold take turns (its claim row locked; SQLite writes one at
                        # a time anyway): of two requests about one hold, approved at once, one is.
                        await hold_storage.lock_hold_request(session, row.hold_request_id)
                        current = await hold_storage.latest_hold_change(session, row.player_id)
                        if (
                            current is None
                            or current.request_id != row.hold_request_id
                            or not current.held
                            or await release_storage.approved_for_hold(session, row.hold_request_id)
                        ):
                            # Released since (another request), or held again: this request was about
                            # a hold that is no longer the player's; reject it, and ask again if need be.
                            raise FailedPrecondition(
                                "RELEASE_OUTDATED",
                                "the hold this release was asked for was released or replaced since",
                                {"request_id": request_id},
                            )
                    now_us = _micros(self._clock())
                    state = ReleaseState.APPROVED if approve else ReleaseState.REJECTED
                    await release_storage.decide(
                        session,
                        request_id,
                        decision_id=decision_id,
                        state=state,
                        by=admin,
                        reason=reason,
                        at_us=now_us,
                    )
                    if not approve and row.case_release:
                        # The case is open to a decision again.
                        await hold_storage.delete_resolution(session, request_id)
                    event = history_pb2.AuditEvent(
                        event_id=f"release-decided:{request_id}",
                        time=timestamp(_moment(now_us)),
                        actor=admin,
                        kind=RELEASE_DECIDED,
                        subject=row.case_id if row.case_release else row.player_id,
                        details=(
                            f"{'APPROVED' if approve else 'REJECTED'} by {admin} the release asked by "
                            f"{row.asked_by} ({'case ' + row.case_id + ' automatic holds' if row.case_release else 'hold of ' + row.player_id}): {reason}"
                        ),
                        player_ids=[row.player_id] if row.player_id else [],
                    )
                    await storage.insert_audit_event(session, event, storage.serialise(event))
                decided = await self._read(request_id)
                return decided, False
            except IntegrityError:
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT", "concurrent decisions kept racing; retry", {"field": "decision_id"}
        )

    async def _read(self, request_id: str) -> ReleaseRow:
        async with self._sessions() as session:
            row = await release_storage.release(session, request_id)
        assert row is not None
        return row

    async def _carry_out(self, row: ReleaseRow) -> None:
        """The approved release, as the asker asked it (each step idempotent by the asker's id)."""
        if row.case_release:
            await self._auto_holds.carry_out_release(row.asked_by, row.request_id, row.case_id, row.reason)
            return
        await self.set_hold(row.asked_by, row.request_id, row.player_id, row.reason, row.case_id, held=False)

    async def list_releases(
        self, state: int, *, page_size: int, page_token: str
    ) -> tuple[list[history_pb2.ReleaseRequest], str]:
        if state and state not in _STATES:
            raise InvalidArgument("FIELD_INVALID", "unknown release request state", {"field": "state"})
        size = page_size_of(page_size)
        scope = f"releases\x00{state}"
        after = None
        if page_token:
            asked_us, request_id = keyset_position(self._tokens.read(page_token, scope), (int, str))
            after = (asked_us, request_id)
        async with self._sessions() as session:
            rows = await release_storage.page(session, state=_STATES.get(state), after=after, limit=size + 1)
        token = ""
        if len(rows) > size:
            last = rows[size - 1]
            token = self._tokens.issue(scope, [last.asked_us, last.request_id])
        return [release_pb(row) for row in rows[:size]], token


def _check_reason(reason: str) -> None:
    from services.history.records import check_text

    check_text(reason, "reason", 128, required=True)
    if not reason.isascii():
        raise InvalidArgument("FIELD_INVALID", "reason is printable ASCII", {"field": "reason"})
