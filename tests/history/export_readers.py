"""Readers of exported hand histories that this project did not write (issue 25, items 5-9).

PokerStars text: PokerKit's parser (`pokerkit_parsing.py`, replays every action) and the `poker`
package's `PokerStarsHandHistory` (pokerregion/poker on PyPI: a tracker-style reader that requires the
Eastern Time in the header, reads the summary's pot, rake, board and winners). Open Hand History: the
spec's storage format (one `{"ohh": ...}` object per hand, separated by one blank line) read as the
spec says, each object validated by `ohh-pydantic` (PyPI: the spec's objects as Pydantic models).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
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


def parse_with_poker_package(text: str) -> Iterator[Any]:
    """Each hand of a PokerStars text read by the `poker` package (hands split as PokerStars files are:
    by blank lines between hands)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from poker.room.pokerstars import PokerStarsHandHistory

        for chunk in text.split("\n\n\n"):
            if chunk.strip():
                hand = PokerStarsHandHistory(chunk.strip() + "\n")
                hand.parse()
                yield hand


def Card(text: str) -> Any:  # noqa: N802 - the poker package's own card type, to compare with
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from poker.card import Card as PokerCard

    return PokerCard(text)


def as_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)
