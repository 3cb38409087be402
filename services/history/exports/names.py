"""Player names for exports: what each seat is called, safe for line-based hand-history formats."""

from __future__ import annotations

import re

from poker.history.v1 import history_pb2

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def export_names(record: history_pb2.HandRecord) -> dict[int, str]:
    """Seat number -> a unique name of letters, digits, `_`, `.`, `-` (trackers split lines on `: `)."""
    names: dict[int, str] = {}
    taken: set[str] = set()
    for seat in record.seats:
        name = _UNSAFE.sub("_", seat.display_name or seat.player_id)[:32] or f"Seat{seat.seat + 1}"
        if name in taken:
            name = f"{name}_{seat.seat + 1}"
        taken.add(name)
        names[seat.seat] = name
    return names
