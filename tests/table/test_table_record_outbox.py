"""The file outbox keeps exactly the records history has not acknowledged, across restarts, and its
file stays small however many hands went through it."""

from __future__ import annotations

from pathlib import Path

from services.table.log import record_outbox
from services.table.log.record_outbox import FileOutbox


async def test_open_records_survive_a_restart_and_the_file_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    outbox = FileOutbox(path)
    for n in range(3 * record_outbox.COMPACT_AFTER_LINES):
        await outbox.keep("t.1", f"h{n}", b"x" * 100)
        if n % 10:
            await outbox.done("t.1", f"h{n}")
    outbox.close()
    open_ones = {f"h{n}" for n in range(3 * record_outbox.COMPACT_AFTER_LINES) if n % 10 == 0}
    assert len(path.read_text().splitlines()) <= record_outbox.COMPACT_AFTER_LINES + len(open_ones)
    again = FileOutbox(path)
    assert set(await again.kept("t.1")) == open_ones
    again.close()
