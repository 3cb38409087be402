"""A test player: its token, its WatchTable stream (every message kept, for the hidden-card scan), and
the calls a client makes."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc

from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata


class StreamMessage(Protocol):
    """A WatchTableResponse or a SpectateTableResponse: the events of one table step and the view."""

    @property
    def events(self) -> Any: ...

    @property
    def view(self) -> table_pb2.TableView: ...


@dataclass(frozen=True)
class EventUpdate:
    """One event of a stream message with the view that message carried (the view after all its
    events); for a message that is a view alone, no event. The tests read streams event by event;
    the messages as sent are kept beside (`Player.sent`)."""

    view: table_pb2.TableView
    event: table_pb2.TableEvent = field(default_factory=table_pb2.TableEvent)
    has_event: bool = False

    def HasField(self, name: str) -> bool:  # noqa: N802 (reads like the message it stands for)
        return self.has_event if name == "event" else name == "view"


def per_event(message: StreamMessage) -> list[EventUpdate]:
    if not message.events:
        return [EventUpdate(message.view)]
    return [EventUpdate(message.view, event, True) for event in message.events]


class Player:
    def __init__(self, player_id: str, channel: grpc.aio.Channel, table_id: str) -> None:
        self.player_id = player_id
        self.table_id = table_id
        self.stub = table_pb2_grpc.TableServiceStub(channel)
        self.metadata = auth_metadata(player_id, Role.PLAYER)
        self.sent: list[table_pb2.WatchTableResponse] = []  # the stream's messages as they came
        self.messages: list[EventUpdate] = []  # the same, event by event
        self.view: table_pb2.TableView | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.seat = 0

    # ------------------------------------------------------------------ stream

    async def watch(self) -> None:
        call = self.stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=self.table_id), metadata=self.metadata
        )

        async def pump() -> None:
            async for message in call:
                self.sent.append(message)
                self.messages.extend(per_event(message))
                self.view = message.view
                self._changed.set()

        self._task = asyncio.create_task(pump())
        # A table that is still reading its seat sessions (PAUSED) answers UNAVAILABLE to a seat.
        await self.until(lambda v: v.phase != table_pb2.TABLE_PHASE_PAUSED)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await self._task

    async def until(
        self, predicate: Callable[[table_pb2.TableView], bool], within: float = 15.0
    ) -> table_pb2.TableView:
        loop = asyncio.get_running_loop()
        end = loop.time() + within
        while True:
            if self.view is not None and predicate(self.view):
                return self.view
            self._changed.clear()
            remaining = end - loop.time()
            if remaining <= 0:
                raise AssertionError(f"{self.player_id}: view condition not met; last view {self.view}")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._changed.wait()

    async def my_turn(self, within: float = 15.0) -> table_pb2.TableView:
        return await self.until(
            lambda v: v.to_act_seat == self.seat and len(v.legal_actions.actions) > 0, within
        )

    # ------------------------------------------------------------------ calls

    async def sit(
        self,
        buy_in: int,
        seat: int = 0,
        request_id: str | None = None,
        wait_for_bb: bool = False,
        *,
        retry_unavailable: bool = True,
    ) -> table_pb2.SitDownResponse:
        """SitDown as a client does it: an UNAVAILABLE answer ("the cashier has not answered yet;
        retry", a loaded machine) is tried again with the same request id, for up to 30 s (the
        table answers the retry with the first sit-down's outcome); any other refusal raises.
        `retry_unavailable=False`: the first answer whatever it is (a test of the refusal)."""
        request = table_pb2.SitDownRequest(
            request_id=request_id or uuid.uuid4().hex,
            table_id=self.table_id,
            seat=seat,
            buy_in=buy_in,
            wait_for_big_blind=wait_for_bb,
        )
        loop = asyncio.get_running_loop()
        end = loop.time() + 30.0
        pause = 0.1
        while True:
            try:
                reply = await self.stub.SitDown(request, metadata=self.metadata)
                break
            except grpc.aio.AioRpcError as error:
                if (
                    not retry_unavailable
                    or error.code() != grpc.StatusCode.UNAVAILABLE
                    or loop.time() + pause > end
                ):
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, 1.0)
        self.seat = reply.seat
        return reply

    async def act(
        self, kind: int, amount: int = 0, *, hand_id: str | None = None, request_id: str | None = None
    ) -> table_pb2.ActResponse:
        view = self.view
        assert view is not None
        return await self.stub.Act(
            table_pb2.ActRequest(
                request_id=request_id or uuid.uuid4().hex,
                table_id=self.table_id,
                hand_id=hand_id if hand_id is not None else view.hand_id,
                action=kind,  # type: ignore[arg-type]
                amount=amount,
            ),
            metadata=self.metadata,
        )

    async def leave(self, request_id: str | None = None) -> table_pb2.LeaveTableResponse:
        return await self.stub.LeaveTable(
            table_pb2.LeaveTableRequest(request_id=request_id or uuid.uuid4().hex, table_id=self.table_id),
            metadata=self.metadata,
        )

    async def snapshot(self) -> table_pb2.TableView:
        reply = await self.stub.GetTableSnapshot(
            table_pb2.GetTableSnapshotRequest(table_id=self.table_id), metadata=self.metadata
        )
        return reply.view

    def seat_view(self, view: table_pb2.TableView, seat: int) -> table_pb2.SeatView:
        return next(s for s in view.seats if s.seat == seat)


def face_up_cards_of_others(player: Player, message: Any, shown: dict[str, set[int]]) -> list[str]:
    """Every face-up hole card in `message` that belongs to another player's seat and was not shown."""
    leaks = []
    view = message.view
    for seat in view.seats:
        if seat.seat == player.seat and seat.player_id == player.player_id:
            continue
        if seat.seat in shown.get(view.hand_id, set()):
            continue
        for card in seat.hole_cards:
            if not card.hidden:
                leaks.append(f"{view.hand_id} seat {seat.seat}: {card.text}")
    return leaks
