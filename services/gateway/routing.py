"""Where a table lives: the lobby's routing, remembered per table, and moved when a shard says so.

The gateway asks the lobby (`JoinTable` as a spectator, with the player's own token: no seat is
taken and seat maintenance does not apply) which shard serves a table, and remembers the answer. A
shard that no longer owns the room answers SHARD_NOT_OWNER with the owner's address, which replaces
the remembered one; a stopped table (UNAVAILABLE) or an unreachable shard makes the gateway forget it
and ask the lobby again. Every table mutation is idempotent by its request id, so a call sent again
to the table's new shard returns the first answer if the first attempt had landed.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable

import grpc

from poker.lobby.v1 import lobby_pb2
from service_runtime.errors import InvalidArgument, NotFound
from service_runtime.table_directory import parse_table_id
from services.gateway.connect_errors import backend_info

_PRINTABLE = re.compile(r"[\x20-\x7e]{1,128}")
MAX_ROUTES = 50_000
# How often one call follows a moved table before it gives up and reports the last answer.
MAX_REROUTES = 3
# The shard's own reasons for "not here (any more)"; SHARD_DRAINING: the room is being handed to
# another shard (docs/table.md "Drains and handovers"), which the lobby names once it is released.
MOVED_REASONS = frozenset({"SHARD_NOT_OWNER", "TABLE_CLOSED", "SHARD_DRAINING", "UNAVAILABLE", ""})

Locate = Callable[[lobby_pb2.JoinTableRequest, str], Awaitable[lobby_pb2.JoinTableResponse]]


def check_table_id(table_id: str) -> str:
    if not table_id:
        raise InvalidArgument("FIELD_REQUIRED", "table_id is required", {"field": "table_id"})
    if not _PRINTABLE.fullmatch(table_id):
        raise InvalidArgument(
            "FIELD_INVALID", "table_id is 1 to 128 printable ASCII characters", {"field": "table_id"}
        )
    return table_id


def moved(error: grpc.aio.AioRpcError) -> tuple[bool, str]:
    """Whether a failed table call says the table is elsewhere now, and the owner's address if named."""
    info = backend_info(error)
    reason = info.reason if info is not None else ""
    if reason == "SHARD_NOT_OWNER":
        return True, info.metadata.get("address", "") if info is not None else ""
    return error.code() == grpc.StatusCode.UNAVAILABLE and reason in MOVED_REASONS, ""


class TableRoutes:
    def __init__(self, locate: Locate, max_routes: int = MAX_ROUTES) -> None:
        self._locate = locate
        self._max = max_routes
        self._routes: OrderedDict[str, str] = OrderedDict()

    async def address(self, table_id: str, token: str) -> str:
        known = self._routes.get(table_id)
        if known is not None:
            return known
        parsed = parse_table_id(table_id)
        if parsed is None:
            raise NotFound("TABLE_NOT_FOUND", "no such table", {"field": "table_id"})
        reply = await self._locate(
            lobby_pb2.JoinTableRequest(room_id=parsed[0], table_id=table_id, spectate=True), token
        )
        self.learn(table_id, reply.address)
        return reply.address

    def learn(self, table_id: str, address: str) -> None:
        if not address:
            return
        self._routes[table_id] = address
        self._routes.move_to_end(table_id)
        while len(self._routes) > self._max:
            self._routes.popitem(last=False)

    def forget(self, table_id: str, address: str) -> None:
        if self._routes.get(table_id) == address:
            del self._routes[table_id]

    def follow(self, table_id: str, address: str, error: grpc.aio.AioRpcError) -> bool:
        """After a failed call at `address`: True when the table moved (the route is updated)."""
        is_moved, owner = moved(error)
        if not is_moved:
            return False
        self.forget(table_id, address)
        if owner and owner != address:
            self.learn(table_id, owner)
        return True
