"""The player's share of the lobby, table, cashier, history and fairness services, forwarded as is.

One generic forwarder per service: each Connect method the front door let in is sent to the service
behind as the same gRPC method with the same message and the player's own token, and its answer (or
its status, reason included) comes back unchanged, except that the lobby's JoinTable answer loses the
shard's internal address (the gateway keeps it as the table's route). Table calls go to the shard
the routes name and follow a table that moved (`routing.py`). No request naming another player is
sent on: a `player_id` that is not the caller's is PERMISSION_DENIED NOT_YOUR_RESOURCE here.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message

from poker.lobby.v1 import lobby_pb2
from service_runtime.clients import create_channel
from service_runtime.errors import PermissionDenied, Unauthenticated
from service_runtime.interceptors import until_expiry
from service_runtime.tls import TlsFiles
from services.gateway import connect_errors
from services.gateway.call_telemetry import counted_messages
from services.gateway.front_door import FrontDoor
from services.gateway.revocations import SessionRevocations
from services.gateway.routing import MAX_REROUTES, TableRoutes, check_table_id

TABLE_SERVICE = "poker.table.v1.TableService"
LOBBY_SERVICE = "poker.lobby.v1.LobbyService"
_PLAYER_FIELDS = frozenset({"player_id", "player_ids"})


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Backends:
    """One channel per backend address, made on first use (table shards come and go)."""

    def __init__(
        self, timeout_seconds: float, tls: TlsFiles | None = None, tls_check_seconds: float = 30.0
    ) -> None:
        self._timeout = timeout_seconds
        # Mutual TLS to the services with the gateway's own certificate (docs/deploy.md).
        self._tls = tls
        self._tls_check_seconds = tls_check_seconds
        self._channels: dict[str, grpc.aio.Channel] = {}

    def channel(self, address: str) -> grpc.aio.Channel:
        channel = self._channels.get(address)
        if channel is None:
            channel = create_channel(
                address,
                timeout_seconds=self._timeout,
                tls=self._tls,
                tls_check_seconds=self._tls_check_seconds,
            )
            self._channels[address] = channel
        return channel

    async def close(self) -> None:
        for channel in self._channels.values():
            with contextlib.suppress(Exception):
                await channel.close()
        self._channels.clear()


def names_other_player(message: Message, player: str) -> bool:
    """True when any `player_id` / `player_ids` field anywhere in `message` names someone else."""
    for field, value in message.ListFields():
        if field.name in _PLAYER_FIELDS:
            values = value if field.is_repeated else [value]
            if any(v and v != player for v in values):
                return True
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            items = value if field.is_repeated else [value]
            if any(isinstance(item, Message) and names_other_player(item, player) for item in items):
                return True
    return False


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


class Forwarder:
    """Connect handlers (`list_rooms`, `sit_down`, ...) for every method of one service."""

    def __init__(
        self,
        service: str,
        door: FrontDoor,
        backends: Backends,
        *,
        address: str = "",
        revocations: SessionRevocations,
        routes: TableRoutes | None = None,
    ) -> None:
        descriptor = descriptor_pool.Default().FindServiceByName(service)
        self._service = service
        self._methods = {snake_case(m.name): m for m in descriptor.methods}
        self._door = door
        self._backends = backends
        self._address = address
        self._routes = routes
        self._revocations = revocations

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = self._methods.get(name)
        if method is None:
            raise AttributeError(name)
        handler = self._stream if method.server_streaming else self._unary
        return functools.partial(handler, method)

    def _callable(self, method: MethodDescriptor, address: str, streaming: bool) -> Any:
        path = f"/{self._service}/{method.name}"
        response = message_factory.GetMessageClass(method.output_type)
        channel = self._backends.channel(address)
        make = channel.unary_stream if streaming else channel.unary_unary
        return make(
            path,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response.FromString,
        )

    def _checked(self, request: Message, ctx: Any) -> str:
        call = self._door.call_of(ctx)
        player = call.player
        if names_other_player(request, player.subject):
            raise PermissionDenied("NOT_YOUR_RESOURCE", "a player may name only themselves")
        return call.token

    async def _before_forwarding(self, ctx: Any) -> None:
        """After the checks, before the call goes on (the staff door records a change here)."""

    async def _unary(self, method: MethodDescriptor, request: Message, ctx: Any) -> Message:
        token = self._checked(request, ctx)
        await self._before_forwarding(ctx)
        if self._service != TABLE_SERVICE or self._routes is None:
            try:
                reply: Message = await self._callable(method, self._address, False)(
                    request, metadata=_auth(token)
                )
            except grpc.aio.AioRpcError as error:
                raise connect_errors.from_backend(error) from None
            return self._after(method, request, reply)
        table_id = check_table_id(getattr(request, "table_id", ""))
        for attempt in range(MAX_REROUTES + 1):
            address = await self._routes.address(table_id, token)
            try:
                routed: Message = await self._callable(method, address, False)(request, metadata=_auth(token))
                return routed
            except grpc.aio.AioRpcError as error:
                if not self._routes.follow(table_id, address, error) or attempt == MAX_REROUTES:
                    raise connect_errors.from_backend(error) from None
        raise AssertionError("unreachable")

    def _after(self, method: MethodDescriptor, request: Message, reply: Message) -> Message:
        if self._service == LOBBY_SERVICE and method.name == "JoinTable" and self._routes is not None:
            assert isinstance(reply, lobby_pb2.JoinTableResponse)
            self._routes.learn(reply.table_id, reply.address)
            reply.address = ""
        return reply

    def _stream(self, method: MethodDescriptor, request: Message, ctx: Any) -> AsyncIterator[Message]:
        """The table's stream until the caller's token expires (the shard ends it then too) or its
        session is signed out: it ends UNAUTHENTICATED TOKEN_EXPIRED (the page re-opens it with its
        renewed token) or SESSION_REVOKED. Each message relayed is counted as one the gateway sent."""
        token = self._checked(request, ctx)
        player = self._door.call_of(ctx).player
        relay = self._relay(method, request, token, player.session)
        return counted_messages(
            until_expiry(relay, player.expires_at - time.time()), f"/{self._service}/{method.name}"
        )

    async def _relay(
        self, method: MethodDescriptor, request: Message, token: str, session: str
    ) -> AsyncIterator[Message]:
        assert self._routes is not None, "only table streams are served"
        table_id = check_table_id(getattr(request, "table_id", ""))
        attempt = 0
        calls: list[Any] = []
        revoked = False

        def end() -> None:
            nonlocal revoked
            revoked = True
            if calls:
                calls[-1].cancel()

        stop_watching = self._revocations.on_revoked(session, end) if session else (lambda: None)
        try:
            # Asked again once watching: a sign-out between the front door's check and the watch
            # would otherwise leave this stream open until the token expires.
            if session and await self._revocations.is_revoked(session):
                revoked = True
            while not revoked:
                address = await self._routes.address(table_id, token)
                call = self._callable(method, address, True)(request, metadata=_auth(token))
                calls.append(call)
                delivered = False
                try:
                    async for message in call:
                        delivered = True
                        yield message
                    return
                except grpc.aio.AioRpcError as error:
                    followed = self._routes.follow(table_id, address, error)
                    # Before the first update the page has seen nothing: follow the table quietly.
                    # After it, the page re-opens (and gets a full view first), so the break is never
                    # silent.
                    if revoked:
                        break
                    if delivered or not followed or attempt >= MAX_REROUTES:
                        raise connect_errors.from_backend(error) from None
                    attempt += 1
                except asyncio.CancelledError:
                    # grpc.aio raises CancelledError from a call cancelled here (`end`), not only
                    # when this task is cancelled.
                    if not revoked:
                        raise
                finally:
                    call.cancel()
            raise Unauthenticated("SESSION_REVOKED", "this session was signed out; sign in again")
        finally:
            stop_watching()


def lobby_locator(
    backends: Backends, lobby_address: str
) -> Callable[[lobby_pb2.JoinTableRequest, str], Awaitable[lobby_pb2.JoinTableResponse]]:
    """How the table routes ask the lobby, with the player's token, where a table lives."""

    async def locate(request: lobby_pb2.JoinTableRequest, token: str) -> lobby_pb2.JoinTableResponse:
        call = backends.channel(lobby_address).unary_unary(
            f"/{LOBBY_SERVICE}/JoinTable",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=lobby_pb2.JoinTableResponse.FromString,
        )
        try:
            reply: lobby_pb2.JoinTableResponse = await call(request, metadata=_auth(token))
        except grpc.aio.AioRpcError as error:
            raise connect_errors.from_backend(error) from None
        return reply

    return locate
