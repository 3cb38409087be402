"""Which table JoinTable routes a player to (issue 41: the history probe's bots sat alone at second
tables; check that routing never opens one while a table of the room has a free seat): the fullest
table that has a free seat, the lowest number on a tie; a new table only when every table is full,
numbered with the lowest free number."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from service_runtime.table_directory import SeatFigures, TableFigures
from services.lobby.floor import TableView
from services.lobby.joining import next_table_number, pick_table

ROOM = "nlhe-gram-classic"


def _view(number: int, seats: int, seated: int) -> TableView:
    taken = tuple(SeatFigures(seat=s, display_name=f"p{s}", stack=100) for s in range(1, seated + 1))
    figures = TableFigures(
        table_id=f"{ROOM}.{number}", room_id=ROOM, shard_id="a", seats=seats, taken_seats=taken
    )
    return TableView(figures, True)


tables = st.lists(
    st.tuples(st.integers(1, 30), st.integers(2, 10), st.integers(0, 10)),
    max_size=8,
    unique_by=lambda t: t[0],
).map(lambda rows: [_view(n, seats, min(seated, seats)) for n, seats, seated in rows])


@given(tables)
def test_a_table_with_a_free_seat_is_always_chosen_before_a_new_one_and_the_fullest_first(
    views: list[TableView],
) -> None:
    picked = pick_table(views)
    open_tables = [v for v in views if v.figures.free_seats > 0]
    if not open_tables:
        assert picked is None
        number = next_table_number(views)
        assert number not in {int(v.figures.table_id.rsplit(".", 1)[1]) for v in views}
        assert all(n in {int(v.figures.table_id.rsplit(".", 1)[1]) for v in views} for n in range(1, number))
        return
    assert picked is not None
    assert picked.figures.free_seats > 0
    assert picked.figures.seated_players == max(v.figures.seated_players for v in open_tables)


def test_a_player_alone_at_a_second_table_is_where_the_next_player_goes_when_the_first_is_full() -> None:
    """The probe's case: table 1 full, one player waiting alone at table 2: the next player joins
    them there (not a third table), and once table 1 has a seat again the fuller table wins."""
    full, alone = _view(1, 6, 6), _view(2, 6, 1)
    picked = pick_table([full, alone])
    assert picked is not None
    assert picked.figures.table_id == f"{ROOM}.2"
    picked = pick_table([_view(1, 6, 5), alone])
    assert picked is not None
    assert picked.figures.table_id == f"{ROOM}.1"
