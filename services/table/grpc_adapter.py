"""The gRPC face of a table shard: validates fields, names the caller, and hands commands to the table.

Handlers never touch a table's state: each finds the table's actor and enqueues a command (or, for
WatchTable, registers a watcher through one). The caller's player id is the token's subject. Which
table a call reaches, who may read it and which calls may open one: `table_access.TableAccess`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from poker.table.v1 import table_pb2
from service_runtime.auth import Role, current_caller
from service_runtime.errors import InvalidArgument, Unavailable
from service_runtime.table_directory import figures_to_summary
from services.table.cash.actor import TableActor
from services.table.house.house_round import BoxBet
from services.table.house.house_table import HouseTable
from services.table.house.house_views import DECISION_OF_PB
from services.table.ownership.shard import TableShard
from services.table.ownership.table_access import (
    AnyTable,
    TableAccess,
    cash_table,
    holds_own_stream,
    house_table,
)
from services.table.streams.chat import EVERYWHERE
from services.table.streams.mute_board import RedisMuteBoard
from services.table.streams.stream_budget import ViewerStreams
from services.table.streams.table_streams import SPECTATOR_STREAM_CLOSED, STREAM_CLOSED

SERVICE_NAME = "poker.table.v1.TableService"

_PRINTABLE = re.compile(r"[\x20-\x7e]+")
_SEED_HASH = re.compile(r"[0-9a-f]{64}")
MAX_ID_LENGTH = 128
MAX_SEED_LENGTH = 64
MAX_AMOUNT = 2**62
MAX_MUTE_SECONDS = 30 * 24 * 3600
MAX_HOUSE_BOXES = 10


def _stream_ended(reason: str) -> Unavailable:
    """The table behind a stream stopped here: ask the lobby where it lives now, and watch again."""
    return Unavailable(reason or "TABLE_CLOSED", "the table closed on this shard; ask the lobby where it is")


def _printable_id(value: str, field: str, max_length: int = MAX_ID_LENGTH) -> str:
    if not value:
        raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", {"field": field})
    if len(value) > max_length or not _PRINTABLE.fullmatch(value):
        raise InvalidArgument(
            "FIELD_INVALID", f"{field} is 1 to {max_length} printable ASCII characters", {"field": field}
        )
    return value


def _seed_or_hash(request: table_pb2.SetPlayerSeedRequest) -> tuple[bytes, str]:
    """SetPlayerSeed's client seed or (version 3, first step) its hash: exactly one of them."""
    if request.client_seed and request.client_seed_hash:
        raise InvalidArgument(
            "FIELD_INVALID", "send the client seed or its hash, not both", {"field": "client_seed_hash"}
        )
    if not request.client_seed_hash:
        return _printable_id(request.client_seed, "client_seed", MAX_SEED_LENGTH).encode("ascii"), ""
    if not _SEED_HASH.fullmatch(request.client_seed_hash):
        raise InvalidArgument(
            "FIELD_INVALID", "client_seed_hash is 64 lower-case hex digits", {"field": "client_seed_hash"}
        )
    return b"", request.client_seed_hash


def _amount(value: int, field: str, *, allow_zero: bool) -> int:
    if value < 0 or value > MAX_AMOUNT or (value == 0 and not allow_zero):
        raise InvalidArgument("AMOUNT_INVALID", f"{field} is out of range", {"field": field})
    return value


class ShardDirectoryServicer(shard_directory_pb2_grpc.ShardDirectoryServiceServicer):
    """What the lobby asks a shard without Redis: the live figures of its tables (no card)."""

    def __init__(self, shard: TableShard, access: TableAccess) -> None:
        self._shard = shard
        self._access = access

    async def OpenTable(  # noqa: N802
        self, request: shard_directory_pb2.OpenTableRequest, context: Any
    ) -> shard_directory_pb2.OpenTableResponse:
        table_id = _printable_id(request.table_id, "table_id")
        await self._access.open_routed(table_id)
        return shard_directory_pb2.OpenTableResponse(table_id=table_id)

    async def ListShardTables(  # noqa: N802
        self, request: shard_directory_pb2.ListShardTablesRequest, context: Any
    ) -> shard_directory_pb2.ListShardTablesResponse:
        room_id = request.room_id
        if len(room_id) > MAX_ID_LENGTH or (room_id and not _PRINTABLE.fullmatch(room_id)):
            raise InvalidArgument(
                "FIELD_INVALID", "room_id is at most 128 printable characters", {"field": "room_id"}
            )
        figures = self._shard.figures(room_id)
        return shard_directory_pb2.ListShardTablesResponse(
            tables=[figures_to_summary(f) for f in figures],
            players=[
                shard_directory_pb2.TablePlayers(table_id=f.table_id, player_ids=f.player_ids)
                for f in figures
            ],
        )


class TableServicer:
    """The served RPCs; the rest of the contract answers UNIMPLEMENTED (see assembly.py)."""

    def __init__(
        self,
        shard: TableShard,
        access: TableAccess,
        viewers: ViewerStreams,
        mutes: RedisMuteBoard | None = None,
        *,
        view_recheck_seconds: float = 5.0,
    ) -> None:
        self._shard = shard
        self._access = access
        self._viewers = viewers
        self._mutes = mutes  # with Redis: chat mutes shared by every shard
        # How often an open stream of a reader without a seat is checked against the room's rule.
        self._view_recheck_seconds = view_recheck_seconds

    async def _table(self, table_id: str) -> TableActor:
        return cash_table(await self._any_table(table_id))

    async def _house(self, table_id: str) -> HouseTable:
        return house_table(await self._any_table(table_id))

    async def _any_table(self, table_id: str) -> AnyTable:
        return await self._access.for_player_command(current_caller(), _printable_id(table_id, "table_id"))

    async def _readable(self, table_id: str) -> AnyTable:
        return await self._access.for_read(current_caller(), _printable_id(table_id, "table_id"))

    async def PlaceHouseBets(  # noqa: N802
        self, request: table_pb2.PlaceHouseBetsRequest, context: Any
    ) -> table_pb2.PlaceHouseBetsResponse:
        player = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        if len(request.boxes) > MAX_HOUSE_BOXES:
            raise InvalidArgument("TOO_MANY_BOXES", "too many boxes", {"field": "boxes"})
        bets = tuple(
            BoxBet(
                box=int(b.box),
                ante=_amount(b.ante, "boxes.ante", allow_zero=False),
                dark=bool(b.dark),
                bonus=_amount(b.bonus_bet, "boxes.bonus_bet", allow_zero=True),
            )
            for b in request.boxes
        )
        house = await self._house(request.table_id)
        return await house.place_bets(player, request_id, bets)

    async def MakeHouseDecision(  # noqa: N802
        self, request: table_pb2.MakeHouseDecisionRequest, context: Any
    ) -> table_pb2.MakeHouseDecisionResponse:
        player = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        round_id = _printable_id(request.round_id, "round_id")
        decision = DECISION_OF_PB.get(int(request.decision))
        if decision is None:
            reason = "FIELD_REQUIRED" if request.decision == 0 else "FIELD_INVALID"
            raise InvalidArgument(reason, "a house decision is needed", {"field": "decision"})
        if len(request.card_indexes) > 5 or any(not 0 <= i <= 4 for i in request.card_indexes):
            raise InvalidArgument(
                "BAD_EXCHANGE_CARDS", "1 to 5 card positions 0..4", {"field": "card_indexes"}
            )
        amount = _amount(request.amount, "amount", allow_zero=True)
        house = await self._house(request.table_id)
        return await house.make_decision(
            player, request_id, round_id, int(request.box), decision, tuple(request.card_indexes), amount
        )

    async def SitDown(self, request: table_pb2.SitDownRequest, context: Any) -> table_pb2.SitDownResponse:  # noqa: N802
        caller = current_caller()
        player = caller.subject
        # Fair play (rules 17): the token's signed device and network signals stay with the seat.
        signals = (caller.device, caller.network)
        request_id = _printable_id(request.request_id, "request_id")
        buy_in = _amount(request.buy_in, "buy_in", allow_zero=False)
        if request.seat < 0:
            raise InvalidArgument("FIELD_INVALID", "seat is 0 (any) or a seat number", {"field": "seat"})
        actor = await self._table(request.table_id)
        # Outside the actor: it waits for the lobby and the cashier off the table's clock.
        return await actor.sit_down(
            player,
            request_id,
            int(request.seat),
            buy_in,
            request.wait_for_big_blind,
            signals,
            caller.suggested_name,
        )

    async def LeaveTable(  # noqa: N802
        self, request: table_pb2.LeaveTableRequest, context: Any
    ) -> table_pb2.LeaveTableResponse:
        player = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        actor = await self._table(request.table_id)
        return await actor.leave(player, request_id)

    async def Act(self, request: table_pb2.ActRequest, context: Any) -> table_pb2.ActResponse:  # noqa: N802
        player = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        hand_id = _printable_id(request.hand_id, "hand_id")
        if request.action == table_pb2.ACTION_KIND_UNSPECIFIED:
            raise InvalidArgument("FIELD_REQUIRED", "action is required", {"field": "action"})
        amount = _amount(request.amount, "amount", allow_zero=True)
        actor = await self._table(request.table_id)
        return await actor.call(lambda: actor.act(player, request_id, hand_id, int(request.action), amount))

    async def SitOut(self, request: table_pb2.SitOutRequest, context: Any) -> table_pb2.SitOutResponse:  # noqa: N802
        player = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        actor = await self._table(request.table_id)
        status = await actor.call(lambda: actor.sit_out(player, request_id, False, False))
        return table_pb2.SitOutResponse(status=status)  # type: ignore[arg-type]

    async def SitIn(self, request: table_pb2.SitInRequest, context: Any) -> table_pb2.SitInResponse:  # noqa: N802
        player = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        actor = await self._table(request.table_id)
        status = await actor.call(lambda: actor.sit_out(player, request_id, True, request.wait_for_big_blind))
        return table_pb2.SitInResponse(status=status)  # type: ignore[arg-type]

    async def SetPlayerSeed(  # noqa: N802
        self, request: table_pb2.SetPlayerSeedRequest, context: Any
    ) -> table_pb2.SetPlayerSeedResponse:
        player = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        seed, seed_hash = _seed_or_hash(request)
        # At a house table it opens the caller's next round: only for a room the caller may see.
        actor = await self._readable(request.table_id)
        return await actor.call(lambda: actor.set_player_seed(player, request_id, seed, seed_hash))

    async def SendChat(self, request: table_pb2.SendChatRequest, context: Any) -> table_pb2.SendChatResponse:  # noqa: N802
        player = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        which = request.WhichOneof("content")
        if which is None:
            raise InvalidArgument("FIELD_REQUIRED", "text or sticker_id is required", {"field": "content"})
        # The content's own checks (chat.py) run in the table, after the seat check (rules 14).
        text = request.text if which == "text" else ""
        sticker = request.sticker_id if which == "sticker_id" else ""
        actor = await self._table(request.table_id)
        return await actor.call(lambda: actor.chat(player, request_id, text, sticker))

    async def GetTableSnapshot(  # noqa: N802
        self, request: table_pb2.GetTableSnapshotRequest, context: Any
    ) -> table_pb2.GetTableSnapshotResponse:
        player = current_caller().subject
        actor = await self._readable(request.table_id)
        view = await actor.call(lambda: actor.snapshot(player))
        return table_pb2.GetTableSnapshotResponse(view=view)

    async def SpectateTable(  # noqa: N802
        self, request: table_pb2.SpectateTableRequest, context: Any
    ) -> AsyncIterator[table_pb2.SpectateTableResponse | bytes]:
        """Writes the table's serialised public updates as they are (see assembly: SpectateTable's
        serializer passes bytes through), so the shard serialises each once, not per spectator."""
        caller = current_caller()
        actor = cash_table(await self._readable(request.table_id))
        if caller.has(Role.PLAYER):
            await actor.authorize_spectator(caller.subject)
        ticket = self._viewers.admit(caller.subject, actor.table_id)
        try:
            spectator = await actor.call(lambda: actor.spectate(caller.subject))
        except BaseException:
            self._viewers.release(ticket)
            raise
        guard = self._access.view_guard(caller, actor, self._view_recheck_seconds)
        try:
            while True:
                update = await spectator.queue.get()
                if update is SPECTATOR_STREAM_CLOSED:
                    raise _stream_ended(actor.closed_reason)
                await guard.check()
                yield update
        finally:
            actor.unspectate(spectator)
            self._viewers.release(ticket)

    async def MutePlayer(  # noqa: N802
        self, request: table_pb2.MutePlayerRequest, context: Any
    ) -> table_pb2.MutePlayerResponse:
        admin = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        player = _printable_id(request.player_id, "player_id")
        if not 0 <= request.duration_seconds <= MAX_MUTE_SECONDS:
            raise InvalidArgument(
                "FIELD_INVALID", "duration_seconds is 0 to 2,592,000", {"field": "duration_seconds"}
            )
        table_id = EVERYWHERE
        if request.table_id:
            table_id = (await self._table(request.table_id)).table_id
        until = self._shard.chat.mute_once(
            (admin, request_id), player, table_id, float(request.duration_seconds), self._shard.clock.now()
        )
        if self._mutes is not None:
            await self._mutes.publish(player, table_id, until)
        response = table_pb2.MutePlayerResponse()
        if until is not None:
            response.muted_until.FromNanoseconds(int(until * 1e9))
        return response

    async def CloseTable(  # noqa: N802
        self, request: table_pb2.CloseTableRequest, context: Any
    ) -> table_pb2.CloseTableResponse:
        staff = current_caller().subject
        request_id = _printable_id(request.request_id, "request_id")
        table_id = _printable_id(request.table_id, "table_id")
        return await self._shard.close_after_hand(staff, request_id, table_id, lambda: self._table(table_id))

    async def WatchTable(  # noqa: N802
        self, request: table_pb2.WatchTableRequest, context: Any
    ) -> AsyncIterator[table_pb2.WatchTableResponse]:
        caller = current_caller()
        player = caller.subject
        actor = await self._readable(request.table_id)
        # A seated player's own stream (a player with a round, at a house table) comes out of the
        # reserve no viewer can take; anyone else's is a viewer, at a house table too, though it shows
        # them only their own (no) rounds: else free accounts could take the reserve there.
        ticket = None
        if not holds_own_stream(actor, player):
            ticket = self._viewers.admit(player, actor.table_id)
        try:
            watcher = await actor.call(lambda: actor.watch(player))
        except BaseException:
            self._viewers.release(ticket)
            raise
        guard = self._access.view_guard(caller, actor, self._view_recheck_seconds)
        try:
            while True:
                update = await watcher.queue.get()
                if update is STREAM_CLOSED:
                    raise _stream_ended(getattr(actor, "closed_reason", "TABLE_CLOSED"))
                await guard.check()
                yield update
        finally:
            actor.unwatch(watcher)
            self._viewers.release(ticket)
