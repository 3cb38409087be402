"""The table figures a shard publishes in Redis for the lobby (libs/service_runtime/table_directory.py):
a round trip keeps every field, the players the lobby's routing reads among them, and a lobby reads
figures of a newer shard that carry fields it does not know (mid-rollout) instead of failing."""

from __future__ import annotations

import json

from service_runtime.table_directory import SeatFigures, TableFigures, figures_to_summary


def test_figures_round_trip_with_their_players() -> None:
    figures = TableFigures(
        table_id="r.1",
        room_id="r",
        shard_id="s",
        seats=6,
        taken_seats=(SeatFigures(1, "Ann", 500), SeatFigures(3, "", 0, sitting_out=True)),
        published_at=1_800_000_000.5,
        player_ids=("ann", "cat"),
    )
    assert TableFigures.from_json(figures.to_json()) == figures


def test_fields_a_newer_shard_adds_are_skipped_not_fatal() -> None:
    raw = json.loads(TableFigures(table_id="r.1", room_id="r", shard_id="s", seats=6).to_json())
    raw["a_field_of_tomorrow"] = 1
    raw["taken_seats"] = [{"seat": 1, "display_name": "Ann", "stack": 5, "sitting_out": False, "later": 2}]
    read = TableFigures.from_json(json.dumps(raw))
    assert read.taken_seats == (SeatFigures(1, "Ann", 5),)
    assert read.player_ids == ()


def test_the_summary_players_and_staff_read_names_no_player() -> None:
    summary = figures_to_summary(
        TableFigures(table_id="r.1", room_id="r", shard_id="s", seats=6, player_ids=("ann",))
    )
    assert "ann" not in str(summary)
