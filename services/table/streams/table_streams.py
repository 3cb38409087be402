"""A cash table's streams: the fan-out of its events and views to the players' WatchTable streams,
and the spectators' delayed feed (rules 14) to its SpectateTable streams.

The table actor (services/table/cash/actor.py) publishes a step's events here as they happen (each
redacted once per seat, once for the public) and flushes them at the end of the step (issue 28): one
message per stream with every event the step caused and the view after them, the waiting view to
those without a seat whose view changed, one public update into the spectators' delay line
(services/table/streams/spectators.py). Everything here runs inside the actor, except `unwatch` and
`unspectate`, which only take note of a stream that ended.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from poker.table.v1 import table_pb2
from poker_engine.events import Event
from service_runtime.errors import ResourceExhausted
from services.table import metrics as table_metrics
from services.table.cash.views import (
    TableState,
    event_body,
    notice,
    personal_view,
    public_seat,
    redact_for,
    table_view,
)
from services.table.ports.clock import WALL_CLOCK, Clock
from services.table.streams.spectators import DelayLine

# Spectators get the updates that came due within this window in one message (issue 28): a hand's
# quick steps reach a table's spectators in a few messages, not one per step; each update is at most
# this much later than the delay.
SPECTATOR_BATCH_SECONDS = 0.25


class Watcher:
    """One WatchTable stream: a bounded queue of updates for one caller."""

    def __init__(self, player_id: str, size: int) -> None:
        self.player_id = player_id
        self.queue: asyncio.Queue[table_pb2.WatchTableResponse] = asyncio.Queue(maxsize=size)
        self.snapshots_sent = 0
        # The last waiting view sent while the caller has no seat (sent again only when it changes).
        self.waiting = b""


@dataclass(slots=True)
class PublicUpdate:
    """One step's update of the public view: its events (none for a bare view) and the table they left.
    The view is rendered only when a spectator needs it (the last update of a released batch, or
    the base a new spectator starts from), and then once."""

    events: list[table_pb2.TableEvent]
    state: TableState
    rendered: table_pb2.TableView | None = None
    snapshot_bytes: bytes = b""

    def view(self) -> table_pb2.TableView:
        if self.rendered is None:
            self.rendered = table_view(self.state, None)
        return self.rendered

    def snapshot(self) -> bytes:
        """The view alone, serialised (once) for every spectator who starts from it."""
        if not self.snapshot_bytes:
            self.snapshot_bytes = table_pb2.SpectateTableResponse(view=self.view()).SerializeToString()
        return self.snapshot_bytes


def public_batch(updates: Sequence[PublicUpdate]) -> bytes:
    """The updates that came due together as one spectator message (every event in order, the view
    after the last), serialised once for all the table's spectators: the stream writes the bytes."""
    events = [event for update in updates for event in update.events]
    return table_pb2.SpectateTableResponse(events=events, view=updates[-1].view()).SerializeToString()


# Put in a stream's queue when the table stops (closed, room lost, fenced): the stream then ends with
# UNAVAILABLE and the stream's `closed_reason`, so its client re-routes through the lobby instead of
# waiting for a table that will never speak again.
STREAM_CLOSED = table_pb2.WatchTableResponse()
SPECTATOR_STREAM_CLOSED = table_pb2.SpectateTableResponse()


def close_stream(queue: asyncio.Queue[Any], sentinel: Any) -> None:
    while not queue.empty():
        queue.get_nowait()
    queue.put_nowait(sentinel)


def offer(stream: Watcher | Spectator, update: Any, snapshot: Callable[[], Any]) -> None:
    """Queue `update` on a stream. A stream too slow to keep up loses what it has not read and gets
    `snapshot()` instead (the table as it is now; None: nothing), counted in `snapshots_sent`."""
    kind = "spectator" if isinstance(stream, Spectator) else "watcher"
    table_metrics.update_offered(kind, stream.queue.qsize())
    try:
        stream.queue.put_nowait(update)
    except asyncio.QueueFull:
        table_metrics.update_dropped(kind)
        while not stream.queue.empty():
            stream.queue.get_nowait()
        stream.snapshots_sent += 1
        replacement = snapshot()
        if replacement is not None:
            stream.queue.put_nowait(replacement)


class Spectator:
    """One SpectateTable stream: a bounded queue of delayed public updates, each already serialised
    (the same bytes for every spectator of the table; SPECTATOR_STREAM_CLOSED ends it)."""

    def __init__(self, player_id: str, size: int) -> None:
        self.player_id = player_id
        self.queue: asyncio.Queue[bytes | table_pb2.SpectateTableResponse] = asyncio.Queue(maxsize=size)
        self.snapshots_sent = 0


def waiting_key(view: table_pb2.TableView) -> bytes:
    """A waiting view as compared with the last one a watcher got: all of it but the time it was made."""
    timeless = table_pb2.TableView()
    timeless.CopyFrom(view)
    timeless.ClearField("as_of")
    return timeless.SerializeToString(deterministic=True)


def put_latest(watcher: Watcher, update: table_pb2.WatchTableResponse) -> None:
    """Queue `update`; a watcher too slow for it gets it alone (it is the latest)."""
    offer(watcher, update, lambda: update)


class TableStreams:
    """The open streams of one table, the events of the running step not yet sent, and the
    spectators' delay line. `seat_of` tells a player's seat now; `waiting_view` cuts a table state
    down to what a caller without a seat sees."""

    def __init__(
        self,
        *,
        queue_size: int,
        max_streams_per_player: int,
        max_spectators: int,
        spectator_delay_seconds: float,
        seat_of: Callable[[str], int | None],
        waiting_view: Callable[[TableState], table_pb2.TableView],
        clock: Clock = WALL_CLOCK,
    ) -> None:
        self._clock = clock
        self._queue_size = queue_size
        self._max_streams_per_player = max_streams_per_player
        self._max_spectators = max_spectators
        self._seat_of = seat_of
        self._waiting_view = waiting_view
        self.watchers: set[Watcher] = set()
        self.spectators: set[Spectator] = set()
        # The players whose WatchTable stream ended, for the actor to take note of on its next turn.
        self.closed: collections.deque[str] = collections.deque()
        self._sequence = 0
        # The events of the running command or timer step, not yet delivered: each as the player in
        # each seat when it happened may see it, by player id (None: the public version, for everybody
        # else). `flush` sends them at the end of the step, one message per stream (issue 28): the
        # actor's `_run` calls it after each command, `_guarded` after each step; code that publishes
        # anywhere else (outside a command or a guarded step) calls it itself.
        self._unsent: list[dict[str | None, table_pb2.TableEvent]] = []
        # Rules 14: the public view reaches spectators `spectator_delay_seconds` late (spectators.py).
        self.feed: DelayLine[PublicUpdate] = DelayLine(
            spectator_delay_seconds, batch_seconds=SPECTATOR_BATCH_SECONDS
        )

    # ------------------------------------------------------------------ events of a step

    def publish(
        self, events: Sequence[Event], holders: Sequence[tuple[int, str]]
    ) -> dict[int, list[table_pb2.TableEvent]]:
        """Redact each engine event once per seat of `holders` (seat, player id) and once for the
        public, and keep it for the end of the step (`flush`); returns each seat's version."""
        by_seat: dict[int, list[table_pb2.TableEvent]] = {}
        if not events:
            return by_seat
        versions_of: list[tuple[int | None, str | None]] = [*holders, (None, None)]
        for raw in events:
            self._sequence += 1
            nanos = int(self._clock.now() * 1e9)
            versions: dict[str | None, table_pb2.TableEvent] = {}
            for seat, holder in versions_of:
                (redacted,) = redact_for([raw], seat)
                where, body = event_body(redacted, seat)
                message = table_pb2.TableEvent(sequence=self._sequence, seat=where, **body)  # type: ignore[arg-type]
                message.time.FromNanoseconds(nanos)
                versions[holder] = message
                if seat is not None:
                    by_seat.setdefault(seat, []).append(message)
            self._unsent.append(versions)
        return by_seat

    def publish_notice(self, code: str, text: str, *, seat: int | None = None) -> None:
        self.broadcast({None: {"notice": notice(code, text)}}, seat=seat)

    def broadcast(self, body: dict[None, dict[str, Any]], *, seat: int | None) -> table_pb2.TableEvent:
        """A table event that is the same for everybody (notices, chat), sent at the end of the step."""
        self._sequence += 1
        message = table_pb2.TableEvent(
            sequence=self._sequence, seat=public_seat(seat) if seat is not None else 0, **body[None]
        )
        message.time.FromNanoseconds(int(self._clock.now() * 1e9))
        self._unsent.append({None: message})
        return message

    def flush(self, state_of: Callable[[], TableState], *, stopping: bool) -> None:
        """The end of a command or timer step: one message per stream with every event the step
        caused (each as its recipient may see it) and the view after them (`state_of()`); the waiting
        view to those without a seat whose view changed; one public update for the spectators' delay
        line. A table stopping sends nothing more."""
        unsent, self._unsent = self._unsent, []
        if not unsent or stopping:
            return
        state = state_of()
        views: dict[int, table_pb2.TableView] = {}
        public: table_pb2.TableView | None = None
        for watcher, seat in {w: self._seat_of(w.player_id) for w in self.watchers}.items():
            if seat is None:
                continue  # no seat, no live play: the waiting view below
            if seat not in views:
                # The public view once per step, a personalised copy per seat.
                public = public or table_view(state, None)
                views[seat] = personal_view(public, state, seat)
            # A player without a version of their own (seated after the event) gets the public one.
            events = [versions.get(watcher.player_id, versions[None]) for versions in unsent]
            self._deliver(watcher, events, views[seat], state)
        self._update_waiting(state)
        self._feed_push([versions[None] for versions in unsent], state)

    def _deliver(
        self,
        watcher: Watcher,
        events: list[table_pb2.TableEvent],
        view: table_pb2.TableView,
        state: TableState,
    ) -> None:
        def now() -> table_pb2.WatchTableResponse:
            # A slow client: the table as it is now, instead of what it did not read.
            seat = self._seat_of(watcher.player_id)
            return table_pb2.WatchTableResponse(
                view=self._waiting_view(state) if seat is None else table_view(state, seat)
            )

        offer(watcher, table_pb2.WatchTableResponse(events=events, view=view), now)

    def _update_waiting(self, state: TableState) -> None:
        """Send the waiting view to every watcher without a seat whose view it changes."""
        waiting = [w for w in self.watchers if self._seat_of(w.player_id) is None]
        if not waiting:
            return
        view = self._waiting_view(state)
        key = waiting_key(view)
        for watcher in waiting:
            if watcher.waiting != key:
                watcher.waiting = key
                put_latest(watcher, table_pb2.WatchTableResponse(view=view))

    # ------------------------------------------------------------------ WatchTable streams

    def new_watcher(self, player_id: str) -> Watcher:
        """A WatchTable stream for `player_id`, not open yet (`open_watcher`), unless they have too many."""
        open_streams = sum(1 for w in self.watchers if w.player_id == player_id)
        if open_streams >= self._max_streams_per_player:
            # A client reconnecting in a loop without closing its streams must not fill the table.
            raise ResourceExhausted(
                "WATCH_STREAMS_EXCEEDED",
                f"at most {self._max_streams_per_player} WatchTable streams per player at a table; "
                "close one first",
                {"max_streams_per_player": str(self._max_streams_per_player)},
            )
        return Watcher(player_id, self._queue_size)

    def open_watcher(self, watcher: Watcher, first: table_pb2.WatchTableResponse) -> None:
        """The stream starts from `first` (the full view) and gets every step's update from now on."""
        watcher.queue.put_nowait(first)
        self.watchers.add(watcher)
        table_metrics.stream_opened("watcher")

    def unwatch(self, watcher: Watcher) -> bool:
        """The stream ended: forgotten, its player noted in `closed` (False: it was not open)."""
        if watcher not in self.watchers:
            return False
        self.watchers.discard(watcher)
        table_metrics.stream_closed("watcher")
        self.closed.append(watcher.player_id)
        return True

    def watching(self, player_id: str) -> bool:
        return any(w.player_id == player_id for w in self.watchers)

    # ------------------------------------------------------------------ spectators (rules 14)

    def start_feed(self, state: TableState) -> None:
        """The spectators' first view: `state`, the table as it opens (no seat yet), which is also what
        it was `delay` ago, so a spectator who comes early gets a start not younger than the delay."""
        self.feed.push(self._clock.now() - self.feed.delay, PublicUpdate([], state))

    def feed_due(self) -> float | None:
        """The time the next delayed update is due, while anybody spectates."""
        if not self.spectators:
            return None
        return self.feed.next_due()

    def _feed_push(self, events: list[table_pb2.TableEvent], state: TableState) -> None:
        if not self.spectators:
            # Nobody to deliver to: keep the base (a new spectator's start) current and the line short.
            self.feed.release(self._clock.now())
        # With spectators the actor's timer releases them (`release_feed`), every due update at once.
        self.feed.push(self._clock.now(), PublicUpdate(events, state))

    def release_feed(self) -> None:
        """Every update now due, in one message, serialised once for all the spectators."""
        released = self.feed.release(self._clock.now())
        if not released or not self.spectators:
            return
        message = public_batch([update.item for update in released])
        for spectator in list(self.spectators):
            # A slow spectator gets the newest delayed view instead of what it did not read.
            offer(spectator, message, self._delayed_snapshot)

    def _delayed_snapshot(self) -> bytes | None:
        base = self.feed.base
        return None if base is None else base.item.snapshot()

    def spectate(self, player_id: str) -> Spectator:
        """A SpectateTable stream: the public view the delay late, starting from a snapshot that is
        itself that old."""
        if len(self.spectators) >= self._max_spectators:
            raise ResourceExhausted(
                "SPECTATORS_FULL",
                f"this table has its {self._max_spectators} spectators; try again later",
                {"max_spectators": str(self._max_spectators)},
            )
        self.release_feed()
        spectator = Spectator(player_id, self._queue_size)
        snapshot = self._delayed_snapshot()
        if snapshot is not None:
            spectator.queue.put_nowait(snapshot)
        self.spectators.add(spectator)
        table_metrics.stream_opened("spectator")
        return spectator

    def unspectate(self, spectator: Spectator) -> None:
        if spectator in self.spectators:
            table_metrics.stream_closed("spectator")
        self.spectators.discard(spectator)

    # ------------------------------------------------------------------ the table stops

    def close_all(self) -> None:
        """Every open stream ends (its client asks the lobby again where the table lives)."""
        for watcher in list(self.watchers):
            close_stream(watcher.queue, STREAM_CLOSED)
        for spectator in list(self.spectators):
            close_stream(spectator.queue, SPECTATOR_STREAM_CLOSED)
