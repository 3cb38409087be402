"""Readers of exported hand histories that this project did not write (issue 25, items 5-9).

PokerStars text: PokerKit's parser (`pokerkit_parsing.py`, replays every action) and the `poker`
package's `PokerStarsHandHistory` (pokerregion/poker on PyPI: a tracker-style reader that requires the
Eastern Time in the header, reads the summary's pot, rake, board and winners). Open Hand History: the
spec's storage format (one `{"ohh": ...}` object per hand, separated by one blank line) read as the
spec says, each object validated by `ohh-pydantic` (PyPI: the spec's objects as Pydantic models).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def read_ohh_stream(text: str) -> list[dict[str, Any]]:
    """The spec's storage format: JSON objects, each separated from the next by one blank line."""
    chunks = [chunk for chunk in text.split("\n\n") if chunk.strip()]
    return [json.loads(chunk) for chunk in chunks]


def validate_with_ohh_pydantic(document: dict[str, Any]) -> Any:
    """ohh-pydantic's model of the spec. Its BetLimit model requires an `action` field that is not in
    the spec (hh-specs.handhistory.org: bet_limit has bet_type and bet_cap only), so it is given the
    spec's own shape here; everything else is the package's model."""
    from open_hh_models import models

    class SpecBetLimit(models.BetLimit):
        action: Any = None

    class SpecHandHistory(models.OpenHandHistory):
        bet_limit: SpecBetLimit

    return SpecHandHistory.model_validate(document["ohh"])


READER_PATH = Path(__file__).resolve().parents[2] / ".tools" / "pokerstars-reader"


def parse_with_poker_package(text: str) -> list[dict[str, Any]]:
    """Each hand of a PokerStars text as the `poker` package reads it (tests/history/pokerstars_reader.py,
    run in its own interpreter: the package's import name is `poker`, like this project's code)."""
    if not (READER_PATH / "poker").is_dir():
        raise AssertionError(f"the poker package is not installed in {READER_PATH}: run `make test` once")
    done = subprocess.run(
        [sys.executable, "-S", str(Path(__file__).with_name("pokerstars_reader.py"))],
        input=text,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(READER_PATH), "PATH": os.environ.get("PATH", "")},
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    hands: list[dict[str, Any]] = json.loads(done.stdout)
    return hands


def as_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)
