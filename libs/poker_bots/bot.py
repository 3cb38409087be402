"""One bot player: routes through the lobby, keeps a WatchTable stream, sits, acts, leaves, rejoins.

A bot never trusts its route: a stream that ends, UNAVAILABLE, or SHARD_NOT_OWNER sends it back to
the lobby's JoinTable, which names the room's current owner, so bots follow a room to another shard.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from poker_bots.credentials import Metadata
from poker_bots.stats import RunStats
from poker_bots.strategies import Strategy, situation_of
from service_runtime.clients import KEEPALIVE_OPTIONS, reason_of
from service_runtime.tls import TlsFiles, channel_credentials

T = TypeVar("T")
ROUTE_LOST = frozenset({"SHARD_NOT_OWNER", "NO_SHARD_AVAILABLE"})
# Minor units per chip (docs/cashier.md, Rates).
MINOR_PER_CHIP = {common_pb2.CHIP_POOL_GRAM: 10**6, common_pb2.CHIP_POOL_MPX: 10**8}
SOURCE_OF_POOL = {
    common_pb2.CHIP_POOL_GRAM: cashier_pb2.PAYMENT_SOURCE_GRAM,
    common_pb2.CHIP_POOL_MPX: cashier_pb2.PAYMENT_SOURCE_MPX,
}


class Credentials(Protocol):
    def player(self, player_id: str) -> Metadata: ...

    def payments(self) -> Metadata | None: ...


class Connections:
    """Channels shared by all bots: the lobby, the cashier, and one per table shard address."""

    def __init__(
        self, lobby: str, cashier: str, timeout_seconds: float = 10.0, tls: TlsFiles | None = None
    ) -> None:
        self.timeout = timeout_seconds
        self._tls = tls
        self._channels: dict[str, grpc.aio.Channel] = {}
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self.channel(lobby))
        self.cashier = cashier_pb2_grpc.CashierServiceStub(self.channel(cashier))

    def channel(self, address: str) -> grpc.aio.Channel:
        if address not in self._channels:
            # Keepalive: a frozen shard's stream fails in seconds and the bot asks the lobby again.
            self._channels[address] = (
                grpc.aio.insecure_channel(address, options=KEEPALIVE_OPTIONS)
                if self._tls is None
                else grpc.aio.secure_channel(
                    address, channel_credentials(self._tls.read()), options=KEEPALIVE_OPTIONS
                )
            )
        return self._channels[address]

    def table(self, address: str) -> table_pb2_grpc.TableServiceStub:
        return table_pb2_grpc.TableServiceStub(self.channel(address))

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()


async def purchase(
    connections: Connections,
    credentials: Credentials,
    stats: RunStats,
    player_id: str,
    pool: common_pb2.ChipPool.ValueType,
    chips: int,
) -> bool:
    """Buy `chips` for `player_id` with the payments identity; False if there is none or it fails."""
    payments = credentials.payments()
    if payments is None:
        return False
    request = cashier_pb2.PurchaseRequest(
        payment_reference=f"bots-{player_id}-{uuid.uuid4().hex[:12]}",
        player_id=player_id,
        source=SOURCE_OF_POOL[pool],
        amount_minor=chips * MINOR_PER_CHIP[pool],
    )
    started = time.perf_counter()
    try:
        await connections.cashier.Purchase(request, metadata=payments, timeout=connections.timeout)
    except grpc.aio.AioRpcError as error:
        stats.error("purchase", error.code().name, reason_of(error))
        return False
    stats.latency("purchase", time.perf_counter() - started)
    stats.purchases += 1
    return True


@dataclass(frozen=True)
class Behaviour:
    """How often a bot lets the clock act, leaves between hands, and how it buys chips."""

    timeout_rate: float = 0.02
    leave_rate: float = 0.02
    rest_seconds: tuple[float, float] = (0.5, 2.0)
    buy_ins_per_purchase: int = 5
    max_purchases: int = 20


@dataclass(frozen=True)
class RoomTerms:
    room_id: str
    pool: common_pb2.ChipPool.ValueType
    buy_in: int


class RouteLost(Exception):
    pass


@dataclass
class Bot:
    player_id: str
    terms: RoomTerms
    table_id: str
    strategy: Strategy
    connections: Connections
    credentials: Credentials
    stats: RunStats
    behaviour: Behaviour
    rng: random.Random
    # What this bot saw: hands it was dealt into, and per hand the seats of other players whose hole
    # cards reached it face up (for a check against the seats that showed them).
    dealt_hands: set[str] = field(default_factory=set)
    exposed: dict[str, set[int]] = field(default_factory=dict)
    # Per hand, how each exposure reached the bot ("view <phase> seat n" or "event seat n").
    exposure_sources: dict[str, set[str]] = field(default_factory=dict)
    purchases: int = 0
    broke: bool = False
    view: table_pb2.TableView | None = None
    _address: str = ""
    _stub: table_pb2_grpc.TableServiceStub | None = None
    _watch: asyncio.Task[None] | None = None
    _stream_error: str = ""
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _done_key: tuple[object, ...] | None = None
    _last_hand: str = ""
    _rest_until: float = 0.0
    _left: bool = False
    _seated: bool = False  # as of the last view: the bot holds a seat at `table_id`
    # How `finish` ended (for a run's report when a seat stays open): "left <table>", "not seated
    # at <table>", "refused <code> <reason>" or "gave up after <n> tries: <last error>".
    finished: str = ""

    # ------------------------------------------------------------------ the loop

    async def run(self, stop: asyncio.Event) -> None:
        backoff = 0.2
        while not stop.is_set():
            try:
                await self._step()
                backoff = 0.2
            except RouteLost:
                await self._drop_route()
                await self._sleep(stop, backoff)
                backoff = min(backoff * 2, 2.0)
            except grpc.aio.AioRpcError:
                # Counted by reason where it happened; the next view decides what to do.
                await self._sleep(stop, 0.2)

    async def finish(self, within: float = 30.0) -> None:
        """Leave the table (cashing out) and close the stream; a refusal is counted, never raised.
        A leave or a route that fails for a while (UNAVAILABLE, a deadline: a loaded or restarting
        cluster) is tried again, backing off, for up to `within` seconds: a bot that gave up would
        keep its seat until the table's seat reserve ran out."""
        deadline = time.monotonic() + within
        backoff = 0.25
        tries = 0
        last = ""
        moved = False
        while True:
            tries += 1
            try:
                if self._stub is None:
                    await self._route()
                seated = await self._call("leave", self._leave_once())
                self.finished = f"{'left' if seated else 'not seated at'} {self.table_id}"
                if seated or moved:
                    break
                # Not seated where it thought: a seat it lost track of (its SitDown's answer lost as
                # a shard died) is where the lobby sends a player of the room who holds one.
                moved = True
                if not await self._seat_elsewhere():
                    break
                continue
            except RouteLost as lost:
                last = _described(lost.__cause__) or "route lost"
                await self._drop_route()
            except grpc.aio.AioRpcError as error:
                if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    self.finished = f"refused at {self.table_id}: {_described(error)}"
                    break
                last = _described(error)
            if time.monotonic() + backoff > deadline:
                self.finished = f"gave up at {self.table_id} after {tries} tries: {last}"
                break
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 4.0)
        await self._drop_route()

    async def _seat_elsewhere(self) -> bool:
        """Whether the lobby names another table of the room for this player (the one where it holds
        a seat); if so, the bot's table becomes that one."""
        try:
            joined = await self._timed(
                "join",
                self.connections.lobby.JoinTable(
                    lobby_pb2.JoinTableRequest(room_id=self.terms.room_id),
                    metadata=self.credentials.player(self.player_id),
                    timeout=self.connections.timeout,
                ),
            )
        except grpc.aio.AioRpcError as error:
            self._error("join", error)
            return False
        if not joined.table_id or joined.table_id == self.table_id:
            return False
        await self._drop_route()
        self.table_id = joined.table_id
        return True

    async def _step(self) -> None:
        # Cleared before the view is read, so a message that arrives meanwhile ends the next wait.
        self._changed.clear()
        if self._stub is None:
            await self._route()
        if self._watch is None or self._watch.done():
            if self._watch is not None:
                raise RouteLost
            self._start_watch()
            await self._wait(2.0)
            return
        view = self.view
        if view is None or view.phase == table_pb2.TABLE_PHASE_PAUSED:
            await self._wait(0.5)
            return
        seat = self._seat(view)
        if seat is None:
            if self.broke or time.monotonic() < self._rest_until:
                await self._wait(0.5)
                return
            await self._sit()
            return
        if self._sitting_out(view, seat):
            await self._sit_in()
            return
        if view.hand_id and view.hand_id != self._last_hand:
            self._last_hand = view.hand_id
            if self._left is False and self.rng.random() < self.behaviour.leave_rate:
                await self._leave_and_rest()
                return
        if view.to_act_seat == seat and view.legal_actions.actions:
            key = _decision_key(view)
            if key != self._done_key:
                self._done_key = key
                await self._decide(view, seat)
                return
        await self._wait(1.0)

    # ------------------------------------------------------------------ routing and the stream

    async def _route(self) -> None:
        lobby = self.connections.lobby
        metadata = self.credentials.player(self.player_id)
        room = self.terms.room_id
        try:
            joined = await self._timed(
                "join",
                lobby.JoinTable(
                    lobby_pb2.JoinTableRequest(room_id=room, table_id=self.table_id),
                    metadata=metadata,
                    timeout=self.connections.timeout,
                ),
            )
        except grpc.aio.AioRpcError as error:
            if reason_of(error) not in {"TABLE_NOT_FOUND", "TABLE_FULL"}:
                self._error("join", error)
                raise RouteLost from error
            # A table the lobby does not run (not standing, nobody opened it) or a full one: the
            # lobby picks the table (opening one if every table is full), and a bot with no seat
            # plays there, as a player's client does (watching the table it asked for would answer
            # TABLE_NOT_FOUND for ever: bench_cluster counted 1,470 such watches in 28 s). A bot
            # seated at its table keeps asking for it: its seat is there.
            try:
                joined = await self._timed(
                    "join",
                    lobby.JoinTable(
                        lobby_pb2.JoinTableRequest(room_id=room),
                        metadata=metadata,
                        timeout=self.connections.timeout,
                    ),
                )
            except grpc.aio.AioRpcError as again:
                self._error("join", again)
                raise RouteLost from again
        if joined.table_id and not self._seated:
            self.table_id = joined.table_id
        self._address = joined.address
        self._stub = self.connections.table(joined.address)

    def _start_watch(self) -> None:
        assert self._stub is not None
        call = self._stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=self.table_id),
            metadata=self.credentials.player(self.player_id),
        )

        async def pump() -> None:
            try:
                async for message in call:
                    self._seen(message)
                    self._changed.set()
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.CANCELLED:
                    self._error("watch", error)
            finally:
                self._changed.set()

        self._watch = asyncio.create_task(pump())

    async def _drop_route(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        self._watch, self._stub, self.view = None, None, None
        self._done_key = None

    def _seen(self, message: table_pb2.WatchTableResponse) -> None:
        view = message.view
        self.view = view
        own = {s.seat for s in view.seats if s.player_id == self.player_id}
        self._seated = bool(own)
        for seat in view.seats:
            if seat.seat in own:
                if (
                    view.phase == table_pb2.TABLE_PHASE_HAND_IN_PROGRESS
                    and any(not c.hidden for c in seat.hole_cards)
                    and view.hand_id not in self.dealt_hands
                ):
                    self.dealt_hands.add(view.hand_id)
                    self.stats.hands.add(view.hand_id)
                    self.stats.hand_tables.setdefault(view.hand_id, self.table_id)
                continue
            if any(not c.hidden and c.text for c in seat.hole_cards):
                self.exposed.setdefault(view.hand_id, set()).add(seat.seat)
                self.exposure_sources.setdefault(view.hand_id, set()).add(
                    f"view {table_pb2.TablePhase.Name(view.phase)} seat {seat.seat}"
                )
        # One message per table step: every event it caused, then the view after them (issue 28).
        now = time.time()
        self.stats.saw_message(self.table_id, now)
        if view.phase == table_pb2.TABLE_PHASE_HAND_IN_PROGRESS and view.hand_id:
            self.stats.saw_hand_in_play(view.hand_id, now)
        for event in message.events:
            self.stats.saw_event(self.table_id, view.hand_id, event.sequence, now)
            face_up = event.WhichOneof("kind") == "cards" and any(not c.hidden for c in event.cards.cards)
            if face_up and event.seat and event.seat not in own:
                self.exposed.setdefault(view.hand_id, set()).add(event.seat)
                self.exposure_sources.setdefault(view.hand_id, set()).add(f"event seat {event.seat}")

    # ------------------------------------------------------------------ seats and chips

    def _seat(self, view: table_pb2.TableView) -> int | None:
        return next((s.seat for s in view.seats if s.player_id == self.player_id), None)

    async def _sit(self) -> None:
        assert self._stub is not None
        request = table_pb2.SitDownRequest(
            request_id=uuid.uuid4().hex, table_id=self.table_id, buy_in=self.terms.buy_in
        )
        try:
            await self._call(
                "sit",
                self._stub.SitDown(request, **self._as_player()),
            )
            self.stats.sits += 1
            # The table said yes: the seat is the bot's whether or not a view has shown it yet.
            self._seated = True
            if self._left:
                self.stats.rejoins += 1
                self._left = False
            await self._wait(1.0)
        except grpc.aio.AioRpcError as error:
            if reason_of(error) == "INSUFFICIENT_FUNDS":
                if not await self.buy_chips():
                    self.broke = True
                return
            if reason_of(error) == "TABLE_FULL":
                # Another player took the last seat first: the lobby routes to a table with a free
                # seat (or opens one), as for a player's client.
                raise RouteLost from error
            self._rest(0.5, 1.5)

    def _sitting_out(self, view: table_pb2.TableView, seat: int) -> bool:
        return any(s.seat == seat and s.status == table_pb2.SEAT_STATUS_SITTING_OUT for s in view.seats)

    async def _sit_in(self) -> None:
        """Back from sitting out (the table sat the bot out after turns lost to the clock, say, while
        it was routing again after a shard's death), as a player presses "I'm back": a bot never
        sits out by choice, and a table of bots all sat out would never deal again."""
        assert self._stub is not None
        request = table_pb2.SitInRequest(request_id=uuid.uuid4().hex, table_id=self.table_id)
        if await _seated(self._call("sit_in", self._stub.SitIn(request, **self._as_player()))):
            self.stats.sit_ins += 1
            await self._wait(1.0)

    async def buy_chips(self) -> bool:
        """Buy `buy_ins_per_purchase` buy-ins with the payments identity; False if it cannot."""
        if self.purchases >= self.behaviour.max_purchases:
            return False
        chips = self.terms.buy_in * self.behaviour.buy_ins_per_purchase
        if not await purchase(
            self.connections, self.credentials, self.stats, self.player_id, self.terms.pool, chips
        ):
            return False
        self.purchases += 1
        return True

    async def _leave_and_rest(self) -> None:
        await self._call("leave", self._leave_once())
        self.stats.leaves += 1
        self._left = True
        self._rest(*self.behaviour.rest_seconds)
        # Rejoin goes through the lobby again, as a new client would.
        raise RouteLost

    async def _leave_once(self) -> bool:
        """Leave the table; False when the table answered that the bot holds no seat there."""
        assert self._stub is not None
        request = table_pb2.LeaveTableRequest(request_id=uuid.uuid4().hex, table_id=self.table_id)
        seated = await _seated(self._timed("leave", self._stub.LeaveTable(request, **self._as_player())))
        self._seated = False
        if not seated:
            self._rest(0, 0)
        return seated

    def _as_player(self) -> dict[str, Any]:
        """A unary call's options as this bot: its player token and the connections' deadline."""
        return {"metadata": self.credentials.player(self.player_id), "timeout": self.connections.timeout}

    def _rest(self, low: float, high: float) -> None:
        self._rest_until = time.monotonic() + self.rng.uniform(low, high)

    # ------------------------------------------------------------------ decisions

    async def _decide(self, view: table_pb2.TableView, seat: int) -> None:
        if self.table_id in self.stats.hold_turns_at and view.HasField("to_act_deadline"):
            # A fault run wants a hand held in play here: the clock acts for us at the deadline.
            deadline = view.to_act_deadline.seconds + view.to_act_deadline.nanos / 1e9
            self.stats.held_turns[self.table_id] = (view.hand_id, deadline)
            return
        if self.rng.random() < self.behaviour.timeout_rate:
            # Let the clock act for us (check, else fold); the turn passes without a call.
            self.stats.timeouts_let_run += 1
            return
        decision = self.strategy.decide(situation_of(view, seat), self.rng)
        assert self._stub is not None
        request = table_pb2.ActRequest(
            request_id=uuid.uuid4().hex,
            table_id=self.table_id,
            hand_id=view.hand_id,
            action=decision.kind,  # type: ignore[arg-type]
            amount=decision.amount,
        )
        call = self._stub.Act(request, **self._as_player())
        try:
            await self._timed("act", call)
        except grpc.aio.AioRpcError as error:
            if error.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT):
                # A refusal of a decision the table had already moved past (the clock acted while the
                # bot was slow, then the turn came back on a later street) is stale, not a bug.
                key = _decision_key(view)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        while self.view is not None and _decision_key(self.view) == key:
                            self._changed.clear()
                            await self._changed.wait()
                if self.view is None or _decision_key(self.view) != key:
                    self._error("act-stale", error)
                    return
            self._error("act", error)
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED) or (
                reason_of(error) in ROUTE_LOST
            ):
                raise RouteLost from error
            return
        self.stats.actions += 1

    # ------------------------------------------------------------------ plumbing

    async def _call(self, method: str, call: Awaitable[T]) -> T:
        """Time `call`; record a refusal by reason; a lost route raises RouteLost, others re-raise."""
        try:
            return await self._timed(method, call)
        except grpc.aio.AioRpcError as error:
            self._error(method, error)
            if (
                error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
                or reason_of(error) in ROUTE_LOST
            ):
                raise RouteLost from error
            raise

    async def _timed(self, method: str, call: Awaitable[T]) -> T:
        started = time.perf_counter()
        result = await call
        self.stats.latency(method, time.perf_counter() - started)
        return result

    def _error(self, method: str, error: grpc.aio.AioRpcError) -> None:
        self.stats.error(method, error.code().name, reason_of(error))

    async def _wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._changed.wait()

    @staticmethod
    async def _sleep(stop: asyncio.Event, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await stop.wait()


def _decision_key(view: table_pb2.TableView) -> tuple[object, ...]:
    """Changes with every action of the hand: the bot decides once per turn."""
    return (
        view.hand_id,
        view.street,
        view.to_act_seat,
        tuple((s.seat, s.bet_this_round, s.stack, s.folded) for s in view.seats),
    )


def _described(error: BaseException | None) -> str:
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name} {reason_of(error)} {error.details() or ''}".strip()
    return repr(error) if error is not None else ""


async def _seated(call: Awaitable[Any]) -> bool:
    """Run a seat command; False when the table answers that the bot holds no seat there (its seat
    went meanwhile: the command has nothing left to do)."""
    try:
        await call
    except grpc.aio.AioRpcError as error:
        if reason_of(error) != "NOT_SEATED":
            raise
        return False
    return True
