"""`table_core.restore` and `reopen` keep the seating and the seats in step when a table opens
between hands from its log's seating (issue 42): a player the log's seating holds whose seat session
cannot be seated (no chips left: a bust the last owner did not cash out yet) stands up, so no hand is
planned with a seat nobody holds (a shard-kill run dealt one: KeyError 0, and a sit-down at that seat
answered INTERNAL)."""

from __future__ import annotations

from services.table.cash import table_core
from tests.table.test_table_core_simulation import RULES, Session


def logged_table() -> table_core.Seats:
    state = table_core.Seats.empty(RULES, 5, 10)
    for seat, player in enumerate(("ann", "bob", "cat")):
        step = table_core.feed(
            state, table_core.SessionOpened(player, seat, f"s-{player}", 500, False, 1.0), RULES
        )
        state = step.state
    plan = state.seating.plan_next_hand()
    assert plan is not None
    state.seating = plan.table_after
    return table_core.feed(
        state, table_core.hand_result(state.seating, ((0, 0), (1, 1000), (2, 500))), RULES
    ).state


def test_a_bust_player_the_log_seats_stands_up_when_the_table_opens() -> None:
    logged = logged_table()
    sessions = [
        Session("s-ann", "ann", 1, 0),
        Session("s-bob", "bob", 2, 1000),
        Session("s-cat", "cat", 3, 500),
    ]
    seating = table_core.seating_to_reopen(logged, RULES, 5, 10)
    state, owed, _ = table_core.reopen(logged, RULES, seating, sessions, {}, 2.0)
    assert owed == (table_core.CashOut(0, "s-ann"),)
    assert {p.seat for p in state.seating.players} == set(state.players) == {1, 2}
    # The button and the blinds go on from the log's (ann's seat stays the dead seat it was).
    assert state.seating.button == logged.seating.button
    plan = state.seating.plan_next_hand()
    assert plan is not None
    assert {s.seat for s in plan.seats} <= set(state.players)
    # A new player can take ann's seat.
    step = table_core.feed(state, table_core.SessionOpened("dan", 0, "s-dan", 500, False, 3.0), RULES)
    assert step.state.seating.player_at(0) is not None
