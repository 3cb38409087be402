"""Every text the terminal client shows, in Russian and English: one plain dict per area, keyed by a
stable key, each entry `{"ru": ..., "en": ...}` with the same `{parameters}` in both
(tests/play/test_texts.py holds every entry to that). `clients.play.texts` picks the language.

The services' stable codes (balance reasons, house-round phases, refusal reasons) are entries too,
keyed `code.<CODE>`: `clients.play.words` reads them.
"""

from __future__ import annotations

from clients.play.catalogue import codes, common, hands, history, house, lobby, table

Entry = dict[str, str]

_AREAS: tuple[dict[str, Entry], ...] = (
    common.TEXTS,
    lobby.TEXTS,
    table.TEXTS,
    history.TEXTS,
    house.TEXTS,
    hands.TEXTS,
    {f"code.{code}": entry for code, entry in codes.CODES.items()},
    codes.TEXTS,
)


def _merged() -> dict[str, Entry]:
    merged: dict[str, Entry] = {}
    for area in _AREAS:
        twice = merged.keys() & area.keys()
        if twice:
            raise ValueError(f"catalogue keys listed twice: {sorted(twice)}")
        merged.update(area)
    return merged


CATALOGUE: dict[str, Entry] = _merged()
