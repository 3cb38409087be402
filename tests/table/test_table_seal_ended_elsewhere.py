"""A countdown's commitment that fairness already ended (HAND_ALREADY_REVEALED at the seal) is dropped
with a warning, not an error, and the table commits and deals a fresh hand. It is what a stale owner
meets after a partition heals: the room's next owner voided the commitment it had marked (the
partition fault run logged it as an error, stop 49). In-process, with the stand-ins of fakes.py."""

from __future__ import annotations

from typing import Any

import pytest

from services.table.cash import hand_cycle
from services.table.ports.dependencies import Commitment
from tests.table.fakes import FakeCashier, FakeFairness
from tests.table.inprocess_table import running_view, seated_table


class Said:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        def record(event: str, **fields: Any) -> None:
            self.lines.append((level, event, fields))

        return record


class EndedElsewhere(FakeFairness):
    """The first commitment is ended (voided) before the table seals it, as a next owner does."""

    async def commit(self, request_id: str, table_id: str, **kwargs: Any) -> Commitment:
        commitment = await super().commit(request_id, table_id, **kwargs)
        if len(self.hands) == 1:
            self.revealed.setdefault(commitment.hand_id, True)
        return commitment


async def test_a_commitment_ended_elsewhere_is_dropped_with_a_warning_and_a_fresh_hand_dealt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    said = Said()
    monkeypatch.setattr(hand_cycle, "log", said)
    fairness = EndedElsewhere()
    actor = seated_table(FakeCashier(), fairness=fairness)
    actor.start()
    try:
        view = await running_view(actor)
        first = next(iter(fairness.hands.values()))
        assert view.hand_id != first
        refused = [line for line in said.lines if line[1].startswith("seal refused")]
        assert refused
        assert {level for level, _, _ in refused} == {"warning"}
        assert refused[0][2]["reason"] == "HAND_ALREADY_REVEALED"
        assert not [line for line in said.lines if line[0] in ("error", "exception", "critical")]
    finally:
        await actor.stop()
