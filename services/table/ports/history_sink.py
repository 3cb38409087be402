"""Where completed hand records go: the history service's RecordHand, behind a one-method interface."""

from __future__ import annotations

from typing import Protocol

import grpc

from poker.history.v1 import history_pb2, history_pb2_grpc
from services.table.ports.remote import translate_rpc_error


class HandRecordSink(Protocol):
    async def record(self, hand: history_pb2.HandRecord) -> None:
        """Store the record; Unavailable when history is down (the queue retries), other errors drop it."""


class HistoryRecordSink:
    """RecordHand with the table's service token; idempotent by hand id on the history side."""

    def __init__(self, stub: history_pb2_grpc.HistoryServiceStub) -> None:
        self._stub = stub

    async def record(self, hand: history_pb2.HandRecord) -> None:
        try:
            await self._stub.RecordHand(history_pb2.RecordHandRequest(hand=hand))
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "history") from error
