"""Helpers of the presence tests (issue 15): seated players, a spectator client that stamps what it
receives, a player on autopilot, notices in a stream, the hidden-card scan of a public stream."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import grpc

from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata
from tests.table.conftest import TableWorld, nl_room, unique
from tests.table.players import EventUpdate, Player, per_event

A = table_pb2


def running(view: table_pb2.TableView) -> bool:
    return view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and view.to_act_seat != 0


async def seated(world: TableWorld, count: int, prefix: str, *, buy_in: int = 500) -> list[Player]:
    """`count` funded players watching a new table, seated at seats 1.. in order."""
    table_id = world.add_room(nl_room(unique(prefix)))
    players = [Player(unique(f"p{n}"), world.table_channel, table_id) for n in range(count)]
    for player in players:
        await world.fund(player.player_id, 1000)
        await player.watch()
    for number, player in enumerate(players, start=1):
        await player.sit(buy_in, seat=number)
    return players


def notices(player: Player, code: str, since: int = 0) -> list[table_pb2.TableEvent]:
    return [
        m.event
        for m in player.messages[since:]
        if m.HasField("event") and m.event.HasField("notice") and m.event.notice.code == code
    ]


def status_of(player: Player, view: table_pb2.TableView, seat: int) -> int:
    return int(player.seat_view(view, seat).status)


async def drop(player: Player) -> None:
    """Close the player's WatchTable stream (the client went away)."""
    await player.close()
    player._task = None


async def come_back(player: Player) -> int:
    """Open a new WatchTable stream; returns the index of its first message in `player.messages`."""
    first = len(player.messages)
    await player.watch()
    for _ in range(500):
        if len(player.messages) > first:
            return first
        await asyncio.sleep(0.01)
    raise AssertionError(f"{player.player_id}: the new stream sent nothing")


@contextlib.asynccontextmanager
async def autopilot(player: Player, *, fold: bool = False) -> AsyncIterator[None]:
    """Plays for `player` whenever it is their turn: fold, or check when allowed else call."""

    async def play() -> None:
        done: set[tuple[str, int]] = set()
        while True:
            view = await player.until(
                lambda v: (
                    running(v)
                    and v.to_act_seat == player.seat
                    and len(v.legal_actions.actions) > 0
                    and (v.hand_id, len(v.board), v.pots[0].amount if v.pots else 0) not in done
                ),  # type: ignore[comparison-overlap]
                within=3600,
            )
            key = (view.hand_id, len(view.board), view.pots[0].amount if view.pots else 0)
            done.add(key)  # type: ignore[arg-type]
            legal = set(view.legal_actions.actions)
            if fold and A.ACTION_KIND_FOLD in legal:
                kind = A.ACTION_KIND_FOLD
            elif A.ACTION_KIND_CHECK in legal:
                kind = A.ACTION_KIND_CHECK
            else:
                kind = A.ACTION_KIND_CALL
            with contextlib.suppress(grpc.aio.AioRpcError):
                await player.act(kind, hand_id=view.hand_id)

    task = asyncio.create_task(play())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, AssertionError):
            await task


@dataclass
class Spectator:
    """A SpectateTable client: every message with the wall time it arrived."""

    player_id: str
    channel: grpc.aio.Channel
    table_id: str
    role: Role = Role.PLAYER
    received: list[tuple[float, EventUpdate]] = field(default_factory=list)  # event by event
    sent: list[tuple[float, table_pb2.SpectateTableResponse]] = field(default_factory=list)  # as they came
    _task: asyncio.Task[None] | None = None
    _call: object = None

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return auth_metadata(self.player_id, self.role)

    async def start(self) -> None:
        stub = table_pb2_grpc.TableServiceStub(self.channel)
        call = stub.SpectateTable(A.SpectateTableRequest(table_id=self.table_id), metadata=self.metadata)
        self._call = call

        async def pump() -> None:
            async for message in call:
                now = time.time()
                self.sent.append((now, message))
                self.received.extend((now, update) for update in per_event(message))

        self._task = asyncio.create_task(pump())

    async def first_error(self, within: float = 5.0) -> grpc.aio.AioRpcError | None:
        assert self._task is not None
        try:
            async with asyncio.timeout(within):
                await asyncio.shield(self._task)
        except grpc.aio.AioRpcError as error:
            return error
        except TimeoutError:
            return None
        return None

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await self._task

    async def until(self, predicate: Callable[[EventUpdate], bool], within: float) -> None:
        end = time.monotonic() + within
        while not any(predicate(m) for _, m in self.received):
            if time.monotonic() > end:
                raise AssertionError(f"{self.player_id}: spectator condition not met")
            await asyncio.sleep(0.02)


def public_leaks(messages: list[EventUpdate]) -> list[str]:
    """Every face-up hole card in a public stream that no showdown showed, and any legal actions."""
    shown: dict[str, set[int]] = {}
    hand = ""
    for message in messages:
        if message.view.hand_id:
            hand = message.view.hand_id
        event = message.event
        if message.HasField("event") and event.HasField("cards") and event.cards.shown_by_player:
            shown.setdefault(hand, set()).add(event.seat)
    leaks = []
    hand = ""
    for message in messages:
        view = message.view
        if view.HasField("legal_actions"):
            leaks.append(f"legal actions in a public view of {view.hand_id}")
        for seat in view.seats:
            if seat.seat in shown.get(view.hand_id, set()):
                continue
            leaks.extend(
                f"{view.hand_id} seat {seat.seat}: {c.text}" for c in seat.hole_cards if not c.hidden
            )
        event = message.event
        if (
            message.HasField("event")
            and event.HasField("cards")
            and event.seat
            and not event.cards.shown_by_player
        ):
            leaks.extend(f"event {event.sequence}: {c.text}" for c in event.cards.cards if not c.hidden)
    return leaks


def request_id() -> str:
    return uuid.uuid4().hex


async def chat(
    player: Player, *, text: str | None = None, sticker: str | None = None
) -> table_pb2.SendChatResponse:
    request = A.SendChatRequest(request_id=request_id(), table_id=player.table_id)
    if text is not None:
        request.text = text
    if sticker is not None:
        request.sticker_id = sticker
    return await player.stub.SendChat(request, metadata=player.metadata)
