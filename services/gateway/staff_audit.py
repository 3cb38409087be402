"""The staff door's record of every staff action, written to history's audit trail (docs/backoffice.md,
"The audit trail").

Each call a staff member makes through the staff door that changes something, reads one person's or
one case's data, or is refused, becomes one STAFF_ACTION event: who (the staff member the door
verified), their roles, the method, what it named (players, room, table, case, hands, its request
id), why (the `x-staff-reason` header, required for every change), when, and the answer (status code
and catalogue reason). The gateway writes it as itself (`service:gateway`, a token of its own
`gateway`-scoped key); the history service keeps it append-only, under ids of the gateway's own
namespace.

A change is recorded twice: before it goes on to the service, as an event with the code `ASKED`
(who, what, why; `record_now`: written at once, and if history cannot take it the door refuses the
change UNAVAILABLE and nothing is changed), so no change happens that the trail does not hold; and
again with its answer. The answer's event (and every other one: reads of one person's data,
refusals, sign-ins) is written when the call has its answer, before the answer goes back to the
console; if history cannot take it then, it is kept in memory and written again every few seconds
(its id and time fixed, so a write that landed but whose answer was lost is not doubled), at most
`MAX_PENDING` of them (then the oldest is dropped, logged and counted): a gateway that dies with
events pending loses those answers, never the change's `ASKED` record; the services' own records
of the same actions stay too (the cashier's funding rows, the holds, the lobby's maintenance events).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import structlog
from google.protobuf import timestamp_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from poker.history.v1 import history_pb2
from service_runtime.auth import Caller, Role

log = structlog.get_logger("gateway.staff_audit")

MAX_PENDING = 10_000
RETRY_SECONDS = 5.0
RECORD_TIMEOUT_SECONDS = 2.0
# A change waits this long for its record to be written before it goes on (then it is refused).
RECORD_NOW_TIMEOUT_SECONDS = 5.0
# The code of a change's record written before the change (its answer follows in another event).
ASKED = "ASKED"
MAX_LISTED = 20
_PLAYER_FIELDS = ("player_id", "player_ids")
_HAND_FIELDS = ("hand_id", "hand_ids")


@dataclass
class Targets:
    """What a request names (found in its fields, at any depth up to three)."""

    player_ids: list[str] = field(default_factory=list)
    hand_ids: list[str] = field(default_factory=list)
    room_id: str = ""
    table_id: str = ""
    case_id: str = ""
    request_id: str = ""
    # What a decision decides (DecideRelease's, DecideHouseFunding's `request_id` beside its own
    # `decision_id`).
    decided: str = ""
    query: str = ""
    # The person a staff directory change is about (SetStaffMember's name beside its telegram_id).
    staff_name: str = ""
    _staff_account: str = ""

    @property
    def personal(self) -> bool:
        """One person's or one case's data: a read of it is recorded."""
        return bool(self.player_ids or self.hand_ids or self.case_id or self.query)

    @property
    def subject(self) -> str:
        for value in (
            self.case_id,
            *self.player_ids[:1],
            self.room_id,
            self.table_id,
            *self.hand_ids[:1],
            self.decided,
            self.staff_name,
        ):
            if value:
                return value
        return ""


def _add(values: list[str], value: Any) -> None:
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if isinstance(item, str) and item and item not in values and len(values) < MAX_LISTED:
            values.append(item)


def targets_of(request: Message, depth: int = 0, found: Targets | None = None) -> Targets:
    found = found if found is not None else Targets()
    for descriptor, value in request.ListFields():
        name = descriptor.name
        if descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            if depth < 3:
                items = value if descriptor.is_repeated else [value]
                for item in list(items)[:MAX_LISTED]:
                    if isinstance(item, Message):
                        targets_of(item, depth + 1, found)
            continue
        if name in _PLAYER_FIELDS:
            _add(found.player_ids, value)
        elif name in _HAND_FIELDS:
            _add(found.hand_ids, value)
        elif name == "room_id" and not found.room_id:
            found.room_id = str(value)
        elif name == "table_id" and not found.table_id:
            found.table_id = str(value)
        elif name == "case_id" and not found.case_id:
            found.case_id = str(value)
        elif name == "decision_id" and depth == 0:
            # A decision's own id is its idempotency key; the request it decides is what it concerns.
            if found.request_id and not found.decided:
                found.decided = found.request_id
            found.request_id = str(value)
        elif name == "request_id" and depth == 0:
            if found.request_id:
                found.decided = str(value)
            else:
                found.request_id = str(value)
        elif name == "query" and depth == 0:
            found.query = str(value)[:64]
        elif name == "telegram_id" and depth == 0:
            found._staff_account = str(value)
        elif name == "name" and depth == 0 and found._staff_account:
            found.staff_name = str(value)[:56]
    return found


def _printable_id(value: str) -> str:
    """An id as history takes it (1-128 printable ASCII without spaces), else left out."""
    return (
        value
        if 0 < len(value) <= 128 and value.isascii() and value.isprintable() and " " not in value
        else ""
    )


def staff_event(
    caller: Caller,
    method: str,
    *,
    targets: Targets,
    why: str,
    code: str,
    reason: str,
    mutating: bool,
    now: float,
) -> history_pb2.AuditEvent:
    """The STAFF_ACTION event of one staff call (`method`: `package.Service/Method`)."""
    moment = timestamp_pb2.Timestamp()
    moment.FromNanoseconds(int(now * 1e9))
    room = targets.room_id or (targets.table_id.rsplit(".", 1)[0] if "." in targets.table_id else "")
    details = f"looked up '{targets.query}'" if targets.query else ""
    return history_pb2.AuditEvent(
        event_id=uuid.uuid4().hex,
        time=moment,
        kind="STAFF_ACTION",
        actor=caller.subject,
        subject=_printable_id(targets.subject),
        details=details,
        player_ids=[p for p in map(_printable_id, targets.player_ids) if p],
        table_id=_printable_id(targets.table_id),
        hand_ids=[h for h in map(_printable_id, targets.hand_ids) if h],
        staff_action=history_pb2.StaffAction(
            roles=sorted(r.value for r in caller.roles if r is not Role.PLAYER and r is not Role.SERVICE),
            method=method.lstrip("/"),
            why=why,
            code=code,
            reason=reason,
            room_id=_printable_id(room),
            case_id=_printable_id(targets.case_id),
            request_id=_printable_id(targets.request_id),
            mutating=mutating,
        ),
    )


Recorder = Callable[[history_pb2.AuditEvent, float], Any]


class StaffAudit:
    """Writes STAFF_ACTION events to history, keeping those it could not write for a later try."""

    def __init__(self, record: Recorder, *, retry_seconds: float = RETRY_SECONDS) -> None:
        # `record(event, timeout)`: history's RecordAuditEvent as the gateway itself.
        self._record = record
        self._retry_seconds = retry_seconds
        self._pending: deque[history_pb2.AuditEvent] = deque()
        self._retrying: asyncio.Task[None] | None = None
        self.dropped = 0

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def record_now(self, event: history_pb2.AuditEvent) -> bool:
        """Write `event` at once (a change's record before the change): False if history did not
        take it (away, slow, refusing), which the door answers by refusing the change."""
        try:
            await self._record(event, RECORD_NOW_TIMEOUT_SECONDS)
        except Exception as error:
            log.warning(
                "staff change refused: its record could not be written first",
                event_id=event.event_id,
                error=type(error).__name__,
                code=error.code().name if isinstance(error, grpc.aio.AioRpcError) else None,
            )
            return False
        return True

    async def record(self, event: history_pb2.AuditEvent) -> None:
        try:
            await self._record(event, RECORD_TIMEOUT_SECONDS)
        except Exception as error:  # history away, slow, or refusing: kept, tried again
            log.warning(
                "staff action kept for a later write",
                event_id=event.event_id,
                error=type(error).__name__,
                code=error.code().name if isinstance(error, grpc.aio.AioRpcError) else None,
            )
            self._keep(event)

    def _keep(self, event: history_pb2.AuditEvent) -> None:
        if len(self._pending) >= MAX_PENDING:
            lost = self._pending.popleft()
            self.dropped += 1
            log.error("staff action dropped: too many pending", event_id=lost.event_id)
        self._pending.append(event)
        if self._retrying is None or self._retrying.done():
            self._retrying = asyncio.create_task(self._retry(), name="staff-audit-retry")

    async def _retry(self) -> None:
        while self._pending:
            await asyncio.sleep(self._retry_seconds)
            while self._pending:
                event = self._pending[0]
                try:
                    await self._record(event, RECORD_TIMEOUT_SECONDS)
                except grpc.aio.AioRpcError as error:
                    if error.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.ALREADY_EXISTS):
                        # Never writable as it is (a bug): dropped loudly rather than blocking the rest.
                        self._pending.popleft()
                        self.dropped += 1
                        log.error(
                            "staff action refused by history", event_id=event.event_id, code=error.code().name
                        )
                        continue
                    break
                except Exception:
                    break
                self._pending.popleft()

    async def close(self, *, flush_seconds: float = 2.0) -> None:
        """One last try for what is pending (bounded), then stop."""
        if self._retrying is not None:
            self._retrying.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._retrying
        deadline = time.monotonic() + flush_seconds
        while self._pending and time.monotonic() < deadline:
            try:
                await self._record(self._pending[0], max(0.1, deadline - time.monotonic()))
            except Exception:
                break
            self._pending.popleft()
        if self._pending:
            log.error("staff actions not written at shutdown", count=len(self._pending))
