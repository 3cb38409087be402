"""The Telegram photo a sign-in gave, told to the lobby (RecordSignInPhoto), which keeps it for the
player's seats where they allow it (docs/lobby.md, "Player profiles").

The photo comes from the initData Telegram signed and the gateway verified; the call is made as the
player, with the token the sign-in has just issued, and no browser can make it (the gateway does not
forward it). The lobby judges the URL (only Telegram's own photo URLs are kept). A sign-in never
fails for it: a lobby that does not answer in time leaves the photo it had, and the next sign-in
tells it again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import grpc
import structlog

from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc

log = structlog.get_logger("gateway.sessions")
# How long a sign-in waits for the lobby at most (it answers in milliseconds).
RECORD_TIMEOUT_SECONDS = 2.0


class SignInPhotos(Protocol):
    async def record(self, token: str, request_id: str, photo_url: str) -> None:
        """Tell the lobby the photo the player signed in with; never raises."""


class NoPhotos:
    """Where no lobby is told (the gateway's own tests of sessions)."""

    async def record(self, token: str, request_id: str, photo_url: str) -> None:
        return None


class LobbyPhotos:
    def __init__(
        self,
        stub: Callable[[], lobby_pb2_grpc.LobbyServiceStub],
        timeout_seconds: float = RECORD_TIMEOUT_SECONDS,
    ) -> None:
        self._stub = stub
        self._timeout = timeout_seconds

    async def record(self, token: str, request_id: str, photo_url: str) -> None:
        request = lobby_pb2.RecordSignInPhotoRequest(request_id=request_id, photo_url=photo_url)
        try:
            await self._stub().RecordSignInPhoto(
                request, metadata=(("authorization", f"Bearer {token}"),), timeout=self._timeout
            )
        except grpc.aio.AioRpcError as error:
            log.warning("the sign-in's photo was not recorded", code=error.code().name)
