"""The staff audit trail's writer at the gateway (services/gateway/staff_audit.py, issue 38): a staff
action history could not take (away, slow) is kept and written later, in order, once; one history
refuses for good is dropped loudly without blocking the rest; the queue is bounded; shutdown makes one
last bounded try. History stands in as an async recorder that answers as the channel would."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from poker.history.v1 import history_pb2
from services.gateway import staff_audit
from services.gateway.staff_audit import StaffAudit


def _rpc_error(code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=code.name)


class History:
    """Takes events once it is `up`; `refuse` names events it refuses for good (INVALID_ARGUMENT)."""

    def __init__(self) -> None:
        self.up = False
        self.written: list[str] = []
        self.refuse: set[str] = set()
        self.calls = 0

    async def record(self, event: history_pb2.AuditEvent, _seconds: float) -> None:
        self.calls += 1
        if event.event_id in self.refuse:
            raise _rpc_error(grpc.StatusCode.INVALID_ARGUMENT)
        if not self.up:
            raise _rpc_error(grpc.StatusCode.UNAVAILABLE)
        self.written.append(event.event_id)


def _event(n: int) -> history_pb2.AuditEvent:
    return history_pb2.AuditEvent(event_id=f"staff-{n}")


async def _until(condition: object, seconds: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not condition():  # type: ignore[operator]
        assert loop.time() < end, "not within the bound"
        await asyncio.sleep(0.01)


async def test_actions_history_missed_are_written_later_in_order_once() -> None:
    history = History()
    audit = StaffAudit(history.record, retry_seconds=0.01)
    for n in range(5):
        await audit.record(_event(n))
    assert audit.pending == 5
    assert history.written == []
    history.up = True
    await _until(lambda: audit.pending == 0)
    assert history.written == [f"staff-{n}" for n in range(5)]
    await audit.record(_event(5))  # history is up: written at once
    assert history.written[-1] == "staff-5"
    await audit.close()
    assert history.written.count("staff-0") == 1


async def test_an_action_refused_for_good_is_dropped_and_the_rest_go_on() -> None:
    history = History()
    audit = StaffAudit(history.record, retry_seconds=0.01)
    history.refuse = {"staff-1"}
    for n in range(3):
        await audit.record(_event(n))
    history.up = True
    await _until(lambda: audit.pending == 0)
    assert history.written == ["staff-0", "staff-2"]
    assert audit.dropped == 1
    await audit.close()


async def test_the_queue_is_bounded_and_shutdown_makes_one_last_try(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(staff_audit, "MAX_PENDING", 3)
    history = History()
    audit = StaffAudit(history.record, retry_seconds=3600)  # no retry before the close
    for n in range(5):
        await audit.record(_event(n))
    assert audit.pending == 3
    assert audit.dropped == 2  # the oldest two
    history.up = True
    await audit.close(flush_seconds=5)
    assert history.written == ["staff-2", "staff-3", "staff-4"]
    assert audit.pending == 0


async def test_a_history_still_away_at_shutdown_ends_the_close_in_bounded_time() -> None:
    history = History()
    audit = StaffAudit(history.record, retry_seconds=3600)
    await audit.record(_event(1))
    loop = asyncio.get_running_loop()
    started = loop.time()
    await audit.close(flush_seconds=0.5)
    assert loop.time() - started < 5
    assert audit.pending == 1  # said in the log, not lost silently
