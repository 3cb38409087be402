"""Application layer of the history service: one method per use case, one short transaction each.

It checks requests (`records.check_hand_record`), stores records and their players, runs the
fair-play detectors inside the same transaction as the hand they look at (so a hand and what it
revealed are stored together or not at all), and answers reads through `records.view_for`, so
no code path returns a card the reader may not see. Who may call which RPC is the access policy's
business; whose data a reader may see is decided here.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from service_runtime.errors import AlreadyExists, InvalidArgument, NotFound, PermissionDenied
from services.history import detectors, fair_play_storage, storage
from services.history.audit_writers import AuditWriter, check_staff_action, check_writer
from services.history.cashier_statements import StatementLine
from services.history.exports import open_hand_history, pokerstars
from services.history.fair_play_cases import FairPlayUseCases, additions, weigh_hand
from services.history.holds import AutoHolds, HoldKeeper
from services.history.page_tokens import PageTokens, keyset_position, page_size_of
from services.history.records import (
    POOLS,
    Viewer,
    check_code,
    check_hand_record,
    check_id,
    check_text,
    check_time,
    summary_of,
    view_for,
)
from services.history.staff_directory import StaffDirectory

MAX_EXPORT_HANDS = 500
MAX_DETAILS_LENGTH = 4000
MAX_AUDIT_PLAYERS = 20
# The longest actor the trail's search takes (the column's width).
MAX_ACTOR_LENGTH = 160
# A unique-key race (two first attempts of one hand, or two hands raising one detector event at
# once) is settled by running the unit of work again, which then sees the other's row.
ATTEMPTS = 4
# Hands stored in one SQLite transaction at most (group commit).
GROUP_COMMIT_LIMIT = 64


def utc_now() -> datetime:
    return datetime.now(UTC)


class StatementSource(Protocol):
    async def page(
        self, player_id: str, pool: common_pb2.ChipPool.ValueType, page_size: int, page_token: str
    ) -> tuple[list[StatementLine], str]: ...


def listed_summary(hand: storage.HandListed) -> history_pb2.HandSummary:
    """A player's summary of a hand from its columns: what `summary_of` makes of the record (the
    times to the microsecond, as the columns keep them)."""
    summary = history_pb2.HandSummary(
        hand_id=hand.hand_id,
        table_id=hand.table_id,
        room_id=hand.room_id,
        variant=hand.variant,  # type: ignore[arg-type]
        pool=hand.pool,  # type: ignore[arg-type]
        net_result=hand.net_result,
    )
    summary.start_time.FromMicroseconds(hand.start_us)
    summary.end_time.FromMicroseconds(hand.end_us)
    return summary


def _timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


class HistoryApplication(FairPlayUseCases, StaffDirectory):
    """The history use cases over a session factory, page tokens, the cashier (statements and
    holds) and a clock."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        page_tokens: PageTokens,
        statements: StatementSource,
        *,
        clock: Callable[[], datetime] = utc_now,
        holds: HoldKeeper | None = None,
        permitted_automation: tuple[str, ...] = (),
        auto_hold_min_score: float = 0.0,
        auto_hold_retry_seconds: tuple[float, float] = (0.5, 30.0),
    ) -> None:
        """`auto_hold_min_score`: the score from which a chip-dumping case holds its players'
        withdrawals automatically (0: never; the process passes POKER_HISTORY_AUTO_HOLD_MIN_SCORE);
        `auto_hold_retry_seconds`: the first and the longest wait between tries while the cashier is
        away. `start` begins applying due holds, `stop` ends it."""
        self._sessions = sessions
        self._holds = holds
        self._auto_hold_min_score = auto_hold_min_score
        # Player-id prefixes the operator allows to automate (rules 17): not judged on timing.
        self._permitted_automation = permitted_automation
        bind = sessions.kw.get("bind")
        # SQLite has one writer at a time: queue writers here rather than in SQLite's busy loop (the
        # cashier's unit of work does the same). PostgreSQL runs them concurrently.
        sqlite = bind is not None and bind.dialect.name == "sqlite"
        self._write_lock: asyncio.Lock | None = asyncio.Lock() if sqlite else None
        # SQLite: hands waiting for the writer share one transaction (one BEGIN, one COMMIT, one
        # disk sync), so the table shards' bursts do not queue behind one fsync per hand.
        self._pending: list[tuple[history_pb2.HandRecord, bytes, asyncio.Future[bool]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._tokens = page_tokens
        self._statements = statements
        self._clock = clock
        first, longest = auto_hold_retry_seconds
        self._auto_holds = AutoHolds(
            sessions,
            self._writing,
            holds,
            clock,
            retry_initial_seconds=first,
            retry_max_seconds=longest,
        )

    def start(self) -> None:
        """Start the background work: applying due automatic holds (docs/integrity.md)."""
        self._auto_holds.start()

    async def stop(self) -> None:
        await self._auto_holds.stop()

    # --- Recording (service role: the table). ---

    async def record_hand(self, record: history_pb2.HandRecord) -> bool:
        """Store a hand; True when an identical record was already stored (a retry)."""
        check_hand_record(record)
        data = storage.serialise(record)
        for attempt in range(ATTEMPTS):
            try:
                if await self._insert_hand(record, data):
                    # Committed with automatic holds due: apply them now, not at the next poll.
                    self._auto_holds.notify()
                return False
            except IntegrityError:
                async with self._sessions() as session:
                    existing = await storage.recorded_bytes(session, record.hand_id)
                if existing is not None:
                    if existing == data:
                        return True
                    raise AlreadyExists(
                        "IDEMPOTENCY_CONFLICT",
                        "this hand id was recorded with a different record",
                        {"hand_id": record.hand_id},
                    ) from None
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT", "concurrent writes kept racing; retry", {"hand_id": record.hand_id}
        )

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncSession]:
        """One write transaction (queued behind the others on SQLite)."""
        if self._write_lock is None:
            async with self._sessions.begin() as session:
                yield session
            return
        async with self._write_lock, self._sessions.begin() as session:
            yield session

    async def _insert_hand(self, record: history_pb2.HandRecord, data: bytes) -> bool:
        """Store the hand (committed on return); True when it made automatic holds due."""
        if self._write_lock is None:
            async with self._sessions.begin() as session:
                due = await self._store_hand(session, record, data, alone=True)
            return due
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending.append((record, data, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_pending())
        return await future

    async def _flush_pending(self) -> None:
        """Group commit (SQLite): the hands queued so far in one transaction, in arrival order.

        If any of them fails (a duplicate hand id, a detector event raced), nothing of that
        transaction is kept and each hand runs again in a transaction of its own, which decides its
        answer, exactly as without grouping."""
        assert self._write_lock is not None
        try:
            while self._pending:
                batch, self._pending = self._pending[:GROUP_COMMIT_LIMIT], self._pending[GROUP_COMMIT_LIMIT:]
                async with self._write_lock:
                    together = await self._store_together(batch) if len(batch) > 1 else None
                    if together is not None:
                        for (_, _, future), due in zip(batch, together, strict=True):
                            if not future.done():
                                future.set_result(due)
                        continue
                    for record, data, future in batch:
                        try:
                            async with self._sessions.begin() as session:
                                due = await self._store_hand(session, record, data)
                        except Exception as error:
                            if not future.done():
                                future.set_exception(error)
                        else:
                            if not future.done():
                                future.set_result(due)
        except BaseException:
            # Cancelled (the process is stopping): nobody may be left waiting for an answer.
            for _, _, future in self._pending:
                future.cancel()
            self._pending = []
            raise

    async def _store_together(
        self, batch: list[tuple[history_pb2.HandRecord, bytes, asyncio.Future[bool]]]
    ) -> list[bool] | None:
        """The batch in one transaction: per hand whether it made automatic holds due; None when
        the transaction failed (nothing of it kept)."""
        try:
            async with self._sessions.begin() as session:
                return [await self._store_hand(session, record, data) for record, data, _ in batch]
        except Exception:
            return None

    async def _store_hand(
        self, session: AsyncSession, record: history_pb2.HandRecord, data: bytes, *, alone: bool = False
    ) -> bool:
        """The hand, its players, and what the detectors saw in it, in the caller's transaction.

        `alone`: the transaction holds this hand only, so when there is nothing for the detectors
        to weigh (house games), the insert may commit it in the same round trip (PostgreSQL).
        True when a case the hand made strong made automatic holds due (applied after the commit)."""
        now = self._clock()
        now_us = int(now.timestamp() * 1_000_000)
        evidence = detectors.hand_evidence(record)
        if evidence is None:
            await storage.insert_hand(session, record, data, now_us, commit=alone)
            return False
        increments, timings = additions(evidence, self._permitted_automation)
        weighed = await fair_play_storage.insert_weighed_hand(
            session, record, data, now_us, increments, timings
        )
        return await weigh_hand(session, record, evidence, weighed, now, self._auto_hold_min_score)

    # --- Reads (players see their own hands; admins everything). ---

    def _position(self, token: str, scope: str) -> storage.Position | None:
        if not token:
            return None
        time_us, number = keyset_position(self._tokens.read(token, scope), (int, int))
        return time_us, number

    async def list_my_hands(
        self, viewer: Viewer, *, page_size: int = 0, page_token: str = "", player_id: str = ""
    ) -> tuple[list[history_pb2.HandSummary], str]:
        """The caller's hands; staff name a player to list theirs (a player only themselves)."""
        check_id(player_id, "player_id", required=False)
        whose = player_id or viewer.subject
        if whose != viewer.subject and not viewer.admin:
            raise PermissionDenied(
                "NOT_YOUR_RESOURCE", "a player lists only their own hands", {"field": "player_id"}
            )
        size = page_size_of(page_size)
        scope = f"my-hands\x00{viewer.subject}\x00{whose}"
        after = self._position(page_token, scope)
        async with self._sessions() as session:
            listed = await storage.player_hand_list(
                session, whose, table_id=None, after=after, limit=size + 1
            )
        return self._listed_page(listed, size, scope)

    async def list_table_hands(
        self, viewer: Viewer, table_id: str, *, page_size: int = 0, page_token: str = ""
    ) -> tuple[list[history_pb2.HandSummary], str]:
        check_id(table_id, "table_id")
        size = page_size_of(page_size)
        scope = f"table-hands\x00{viewer.subject}\x00{int(viewer.admin)}\x00{table_id}"
        after = self._position(page_token, scope)
        async with self._sessions() as session:
            if viewer.admin:
                page = await storage.table_hands(session, table_id, after=after, limit=size + 1)
            else:
                listed = await storage.player_hand_list(
                    session, viewer.subject, table_id=table_id, after=after, limit=size + 1
                )
                if not listed and after is None:
                    # Rules 16: the room history is only for those who played there; a table where
                    # the caller never played is indistinguishable from one that does not exist.
                    raise NotFound(
                        "TABLE_NOT_FOUND", "no hands of this table for the caller", {"table_id": table_id}
                    )
                return self._listed_page(listed, size, scope)
        if not page and after is None:
            raise NotFound("TABLE_NOT_FOUND", "no hands of this table for the caller", {"table_id": table_id})
        return self._page(page, size, scope, viewer)

    def _page(
        self, page: Sequence[storage.StoredHand], size: int, scope: str, viewer: Viewer
    ) -> tuple[list[history_pb2.HandSummary], str]:
        shown = page[:size]
        token = ""
        if len(page) > size:
            last = shown[-1]
            token = self._tokens.issue(scope, [last.end_us, last.number])
        return [summary_of(stored.record, viewer) for stored in shown], token

    def _listed_page(
        self, listed: Sequence[storage.HandListed], size: int, scope: str
    ) -> tuple[list[history_pb2.HandSummary], str]:
        shown = listed[:size]
        token = ""
        if len(listed) > size:
            last = shown[-1]
            token = self._tokens.issue(scope, [last.end_us, last.number])
        return [listed_summary(hand) for hand in shown], token

    async def get_hand(self, viewer: Viewer, hand_id: str) -> history_pb2.HandRecord:
        check_id(hand_id, "hand_id")
        async with self._sessions() as session:
            stored = await storage.hand_by_id(session, hand_id)
        view = None if stored is None else view_for(stored.record, viewer)
        if view is None:
            raise NotFound("HAND_NOT_FOUND", "no hand with this id", {"hand_id": hand_id})
        return view

    async def export_hands(
        self, viewer: Viewer, hand_ids: Sequence[str], export_format: int
    ) -> tuple[str, str]:
        """The hands (oldest first) in the format, each in the caller's view; (content, media type)."""
        if export_format not in (
            history_pb2.EXPORT_FORMAT_POKERSTARS_TEXT,
            history_pb2.EXPORT_FORMAT_OPEN_HAND_HISTORY_JSON,
        ):
            raise InvalidArgument(
                "FIELD_REQUIRED",
                "format must be POKERSTARS_TEXT or OPEN_HAND_HISTORY_JSON",
                {"field": "format"},
            )
        if not hand_ids:
            raise InvalidArgument("FIELD_REQUIRED", "name at least one hand", {"field": "hand_ids"})
        if len(hand_ids) > MAX_EXPORT_HANDS or len(set(hand_ids)) != len(hand_ids):
            raise InvalidArgument(
                "FIELD_INVALID", f"1 to {MAX_EXPORT_HANDS} distinct hand ids", {"field": "hand_ids"}
            )
        for hand_id in hand_ids:
            check_id(hand_id, "hand_ids")
        async with self._sessions() as session:
            found = await storage.hands_by_ids(session, hand_ids)
        views = []
        for hand_id in hand_ids:
            stored = found.get(hand_id)
            view = None if stored is None else view_for(stored.record, viewer)
            if stored is None or view is None:
                raise NotFound("HAND_NOT_FOUND", "no hand with this id", {"hand_id": hand_id})
            views.append((stored.end_us, stored.number, view))
        views.sort(key=lambda item: (item[0], item[1]))
        hero = None if viewer.admin else viewer.subject
        numbered = [(number, view) for _, number, view in views]
        if export_format == history_pb2.EXPORT_FORMAT_POKERSTARS_TEXT:
            return pokerstars.render(numbered, hero), pokerstars.CONTENT_TYPE
        return open_hand_history.render(numbered, hero), open_hand_history.CONTENT_TYPE

    async def list_balance_changes(
        self, viewer: Viewer, pool: int, *, page_size: int = 0, page_token: str = ""
    ) -> tuple[list[StatementLine], str]:
        """The caller's own statement from the cashier; our token wraps the cashier's and is signed."""
        if pool != common_pb2.CHIP_POOL_UNSPECIFIED and pool not in POOLS:
            raise InvalidArgument(
                "POOL_INVALID", "pool must be GRAM, MPX or unset for both", {"field": "pool"}
            )
        size = page_size_of(page_size)
        scope = f"balance\x00{viewer.subject}\x00{pool}"
        cashier_token = ""
        if page_token:
            (cashier_token,) = keyset_position(self._tokens.read(page_token, scope), (str,))
        lines, next_cashier = await self._statements.page(
            viewer.subject, common_pb2.ChipPool.ValueType(pool), size, cashier_token
        )
        return lines, self._tokens.issue(scope, [next_cashier]) if next_cashier else ""

    # --- Audit log (each writer its own kinds, audit_writers.py; admins read). ---

    async def record_audit_event(self, writer: AuditWriter | None, event: history_pb2.AuditEvent) -> bool:
        """Append an event of `writer` (the verified caller; None: it records nothing); True when an
        identical event was already stored. Stored with the writer as actor and under its namespace."""
        check_id(event.event_id, "event.event_id")
        check_code(event.kind, "event.kind")
        check_id(event.actor, "event.actor", required=False)
        writer = check_writer(
            writer, event.event_id, event.kind, event.actor, staff_action=event.HasField("staff_action")
        )
        if event.HasField("staff_action"):
            check_staff_action(event.staff_action)
        check_id(event.subject, "event.subject", required=False)
        check_id(event.table_id, "event.table_id", required=False)
        check_text(event.details, "event.details", MAX_DETAILS_LENGTH)
        if len(event.player_ids) > MAX_AUDIT_PLAYERS or len(event.hand_ids) > MAX_EXPORT_HANDS:
            raise InvalidArgument("FIELD_INVALID", "too many players or hands", {"field": "event"})
        for player_id in event.player_ids:
            check_id(player_id, "event.player_ids")
        for hand_id in event.hand_ids:
            check_id(hand_id, "event.hand_ids")
        if event.HasField("time"):
            if not writer.dates_own_events:
                raise InvalidArgument(
                    "FIELD_INVALID",
                    "a staff member's record is dated by the server as it is recorded; send no time",
                    {"field": "event.time"},
                )
            check_time(event.time, "event.time")
        asked = history_pb2.AuditEvent()
        asked.CopyFrom(event)
        asked.event_id = writer.stored_id(event.event_id)
        asked.actor = writer.actor
        stored = history_pb2.AuditEvent()
        stored.CopyFrom(asked)
        if not stored.HasField("time"):
            stored.time.CopyFrom(_timestamp(self._clock()))
        for attempt in range(ATTEMPTS):
            try:
                async with self._writing() as session:
                    existing = await storage.audit_event_bytes(session, stored.event_id)
                    if existing is None:
                        await storage.insert_audit_event(session, stored, storage.serialise(stored))
                        return False
                break
            except IntegrityError:
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        else:
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT", "concurrent writes kept racing; retry", {"event_id": event.event_id}
            )
        recorded = history_pb2.AuditEvent.FromString(existing)
        if not event.HasField("time"):
            # A retry without a time matches the first attempt whatever time the server gave it.
            recorded.ClearField("time")
        if storage.serialise(recorded) == storage.serialise(asked):
            return True
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT",
            "this event id was recorded with different fields",
            {"event_id": event.event_id},
        )

    async def list_audit_events(
        self,
        viewer: Viewer,
        kind: str,
        *,
        page_size: int = 0,
        page_token: str = "",
        actor: str = "",
        player_id: str = "",
    ) -> tuple[list[history_pb2.AuditEvent], str]:
        """The trail newest first, optionally of one kind, by one actor, about one player."""
        if kind:
            check_code(kind, "kind")
        check_text(actor, "actor", MAX_ACTOR_LENGTH)
        check_id(player_id, "player_id", required=False)
        size = page_size_of(page_size)
        scope = f"audit\x00{viewer.subject}\x00{kind}\x00{actor}\x00{player_id}"
        after = self._position(page_token, scope)
        async with self._sessions() as session:
            rows = await storage.list_audit_events(
                session, kind=kind, after=after, limit=size + 1, actor=actor, player_id=player_id
            )
        token = ""
        if len(rows) > size:
            number, time_us, _ = rows[size - 1]
            token = self._tokens.issue(scope, [time_us, number])
        return [event for _, _, event in rows[:size]], token
