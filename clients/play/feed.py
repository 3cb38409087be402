"""A table stream that stays open: after a dropped link it asks the lobby where the table is now,
re-opens the stream with backoff and says so (the table keeps the seat meanwhile: a seat is held by
its cashier session, not by the stream)."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from clients.play.gateway import PlayError
from clients.play.texts import t
from poker.table.v1 import table_pb2

# One stream message: every event of one table step (none for a full view alone), the view after them.
Update = tuple[Sequence[table_pb2.TableEvent], table_pb2.TableView]


class Link(enum.Enum):
    CONNECTING = "connecting"
    LIVE = "live"
    RECONNECTING = "reconnecting"
    # The server does not serve this stream (UNIMPLEMENTED), or refused it for good.
    UNSUPPORTED = "unsupported"
    FAILED = "failed"


@dataclass(frozen=True)
class LinkState:
    link: Link
    text: str
    attempts: int = 0
    # Live again after a drop (the seat was kept meanwhile).
    reconnected: bool = False


def reconnect_delay(attempt: int, initial: float = 0.2, ceiling: float = 3.0) -> float:
    """Seconds to wait before re-opening after the `attempt`-th failure in a row (from 1)."""
    return float(min(ceiling, initial * 2 ** max(0, attempt - 1)))


def link_text(state: Link, attempts: int, reason: str, reconnected: bool) -> str:
    if state is Link.LIVE:
        return t("link.reconnected") if reconnected else t("link.connected")
    if state is Link.RECONNECTING:
        return t("link.reconnecting", reason=reason, attempt=attempts)
    if state is Link.UNSUPPORTED:
        return t("link.unsupported", reason=reason)
    if state is Link.FAILED:
        return t("link.failed", reason=reason)
    return t("link.connecting")


class TableFeed:
    """Runs until cancelled or refused: each update goes to `on_update`, each link change to `on_link`."""

    def __init__(
        self,
        open_stream: Callable[[str], AsyncIterator[Update]],
        locate: Callable[[], Awaitable[str]],
        address: str,
        on_update: Callable[[Update], None],
        on_link: Callable[[LinkState], None],
        *,
        delay: Callable[[int], float] = reconnect_delay,
    ) -> None:
        self._open = open_stream
        self._locate = locate
        self.address = address
        self._on_update = on_update
        self._on_link = on_link
        self._delay = delay
        self.reconnects = 0

    async def run(self) -> None:
        failures = 0
        was_live = False
        renewing = False
        self._on_link(LinkState(Link.CONNECTING, link_text(Link.CONNECTING, 0, "", False)))
        while True:
            try:
                live = False
                async for update in self._open(self.address):
                    if not live and renewing:
                        live, renewing = True, False
                    elif not live:
                        live = True
                        if was_live or failures:
                            self.reconnects += 1
                        again = was_live or failures > 0
                        self._on_link(
                            LinkState(Link.LIVE, link_text(Link.LIVE, 0, "", again), reconnected=again)
                        )
                        failures = 0
                        was_live = True
                    self._on_update(update)
                # The server ended the stream (it is draining for a restart): the table moves on.
                reason = t("link.stream_closed")
            except PlayError as error:
                if error.reason == "TOKEN_EXPIRED" and live:
                    # The stream ended with the token it was opened with (no stream outlives its
                    # token); the next opens at once with the renewed one, its first message a full
                    # view, so the player sees no break.
                    renewing = True
                    continue
                if error.unimplemented:
                    self._on_link(
                        LinkState(Link.UNSUPPORTED, link_text(Link.UNSUPPORTED, 0, error.code, False))
                    )
                    return
                if not error.transient:
                    text = f"{error.code} {error.reason}".strip()
                    self._on_link(LinkState(Link.FAILED, link_text(Link.FAILED, 0, text, False)))
                    return
                reason = f"{error.code} {error.reason}".strip()
            renewing = False  # a break the player is told of, and then of the way back
            failures += 1
            self._on_link(
                LinkState(Link.RECONNECTING, link_text(Link.RECONNECTING, failures, reason, False), failures)
            )
            await asyncio.sleep(self._delay(failures))
            # The shard that runs the table may have changed (a restart, a takeover): ask the lobby.
            with contextlib.suppress(PlayError):
                self.address = await self._locate()
