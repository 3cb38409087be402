"""Slow connections cannot hold the gateway (slowloris): uvicorn's HTTP/1.1 protocol with read
deadlines and a cap of open connections per client address.

uvicorn closes a connection idle between requests (its keep-alive timeout) but gives a request that
has begun no deadline: 60 connections sending a header byte now and then, or a body slowly, stayed
open 40 s and more. Here:

- a request's head must be complete within `head_seconds` of its connection (or of its first byte,
  on a kept-alive connection), else the connection is closed;
- its body must be complete within `body_seconds` of its head, else the connection is closed (the
  handler sees the client gone);
- one client address holds at most `per_address` open connections; one more is closed at once.
  Behind trusted proxies (POKER_GATEWAY_FORWARDED_HOPS > 0) every connection comes from a proxy, so
  there the proxy limits connections per client and this cap is not applied.

A response, a table stream included, has no deadline: it lasts as long as its call.

Each close is counted by why (`poker_gateway_edge_refusals_total{reason}`: HEAD_TIMEOUT,
BODY_TIMEOUT, CONNECTION_LIMIT), and the connections open now are `poker_gateway_open_connections`.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from services.gateway import metrics as gateway_metrics


@dataclass(frozen=True)
class ConnectionLimits:
    head_seconds: float
    body_seconds: float
    per_address: int  # 0: no cap


def guarded_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """An H11Protocol class (uvicorn's `http=`) keeping `limits`; one count of open connections per
    address is shared by every connection of the server."""
    open_by_address: Counter[str] = Counter()

    class GuardedProtocol(H11Protocol):
        _counted = ""
        _open = False
        _deadline: asyncio.TimerHandle | None = None
        _reading_body = False

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            address = self.client[0] if self.client else ""
            if limits.per_address and address:
                if open_by_address[address] >= limits.per_address:
                    gateway_metrics.count_edge_refusal(gateway_metrics.CONNECTION_LIMIT)
                    transport.abort()
                    return
                open_by_address[address] += 1
                self._counted = address
            self._open = True
            gateway_metrics.open_connections.inc()
            self._arm(limits.head_seconds)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._open:
                self._open = False
                gateway_metrics.open_connections.dec()
            if self._counted:
                open_by_address[self._counted] -= 1
                if open_by_address[self._counted] <= 0:
                    del open_by_address[self._counted]
                self._counted = ""
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            idle = self.cycle is None or self.cycle.response_complete
            if idle and self._deadline is None:
                # The first byte of a request on a kept-alive connection: its head's deadline.
                self._arm(limits.head_seconds)
            super().data_received(data)
            self._follow()

        def _follow(self) -> None:
            """Move the deadline on with the request: head read, body read."""
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                return
            if not self._reading_body and cycle.more_body:
                self._reading_body = True
                self._arm(limits.body_seconds)
            elif not cycle.more_body:
                self._reading_body = False
                self._disarm()

        def on_response_complete(self) -> None:
            self._reading_body = False
            self._disarm()
            super().on_response_complete()

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                gateway_metrics.count_edge_refusal(
                    gateway_metrics.BODY_TIMEOUT if self._reading_body else gateway_metrics.HEAD_TIMEOUT
                )
                self.transport.abort()

    return GuardedProtocol
