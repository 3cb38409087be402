"""Conversions between aware datetimes and google.protobuf.Timestamp, shared by every adapter."""

from __future__ import annotations

from datetime import datetime

from google.protobuf.timestamp_pb2 import Timestamp


def to_timestamp(moment: datetime | None) -> Timestamp | None:
    """The Timestamp of `moment`, or None (field left unset) when there is no moment."""
    if moment is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp
