"""Redis client factory: one async client per process, every key under a configurable prefix.

The connections' socket writes honour a cancel. redis-py bounds each write with `asyncio.wait_for`,
which on Python 3.11 drops a cancel that lands after the write finished but before the writer woke
(CPython gh-86296, fixed in 3.12). A task writing to Redis in a loop sits in that moment most of the
time once the event loop is busy: on a loaded machine 17 of 20 plain cancels were lost and
`cancel_and_wait`, cancelling again every 50 ms, needed up to 11 s to stop one task
(tests/runtime/test_cancel_and_wait.py). `asyncio.timeout` bounds the same write and keeps the cancel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import redis.asyncio as redis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service_runtime.storage_metrics import TimedRedis


class _CancelSafeWrites(AbstractConnection):
    """redis-py's `send_packed_command` with `asyncio.timeout` in place of `asyncio.wait_for`."""

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        if not self.socket_timeout:
            await super().send_packed_command(command, check_health)
            return
        if not self.is_connected:
            await self.connect_check_health(check_health=False)
        if check_health:
            await self.check_health()  # type: ignore[no-untyped-call]
        try:
            if isinstance(command, str):
                command = command.encode()
            if isinstance(command, bytes):
                command = [command]
            async with asyncio.timeout(self.socket_timeout):
                await self._send_packed_command(command)
        except TimeoutError:
            await self.disconnect(nowait=True)
            raise RedisTimeoutError("Timeout writing to socket") from None
        except OSError as e:
            await self.disconnect(nowait=True)
            err_no, errmsg = ("UNKNOWN", e.args[0]) if len(e.args) == 1 else (e.args[0], e.args[1])
            raise RedisConnectionError(f"Error {err_no} while writing to socket. {errmsg}.") from e
        except BaseException:
            # As the library: a write cut short (a cancel) leaves the connection unusable.
            await self.disconnect(nowait=True)
            raise


_SAFE: dict[type[Any], type[Any]] = {}


def cancel_safe(connection_class: type[Any]) -> type[Any]:
    """`connection_class` (plain, TLS or Unix socket, as the URL chose) with cancel-safe writes."""
    if issubclass(connection_class, _CancelSafeWrites):
        return connection_class
    if connection_class not in _SAFE:
        _SAFE[connection_class] = type(
            f"CancelSafe{connection_class.__name__}", (_CancelSafeWrites, connection_class), {}
        )
    return _SAFE[connection_class]


def create_redis(url: str) -> redis.Redis:
    """A pooled async client; decode_responses off because event logs store bytes. Every command's
    latency goes to the metrics (storage_metrics)."""
    pool = redis.ConnectionPool.from_url(url, decode_responses=False, health_check_interval=30)
    pool.connection_class = cancel_safe(pool.connection_class)
    return TimedRedis.from_pool(pool)
