"""The per-recipient table views (services/table/cash/views.py) cut from a real engine hand, no servers:
the pots as the hand runs (issue 25 item 4b), the winning hand named in every award (4c) and both
the chips added and the raise-to total of every action on the wire (4)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker.table.v1 import table_pb2
from poker_engine.cards import parse_cards
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.events import PlayerActed
from poker_engine.hand import Hand
from services.table.cash.views import SeatState, TableState, event_body, personal_view, table_view
from services.table.ports.rooms import Room

ROOM = Room("views-room", Variant.NO_LIMIT, 1, 4, 5, 10, 5, 10, 1000, RakeRule())


def _deck(order: str) -> tuple[int, ...]:
    given = parse_cards(order)
    return given + tuple(card for card in range(52) if card not in given)


def _hand(stacks: dict[int, int], deck: str = "") -> Hand:
    return Hand(
        HandConfig(
            Variant.NO_LIMIT,
            tuple(SeatConfig(seat, f"p{seat}", stack) for seat, stack in stacks.items()),
            0,
            5,
            10,
            _deck(deck),
            step=5,
        )
    )


def _state(hand: Hand) -> TableState:
    running = not hand.is_over
    result = hand.result
    return TableState(
        table_id="views-room.1",
        room=ROOM,
        phase=table_pb2.TABLE_PHASE_HAND_IN_PROGRESS,
        hand_id="h",
        commitment="",
        street=0,
        button=0,
        to_act=hand.actor_seat,
        seats=tuple(
            SeatState(
                seat, f"p{seat}", 0, stack, hand.bets[seat], not hand.in_hand(seat), stack == 0, True, 0
            )
            for seat, stack in hand.stacks.items()
        ),
        board=hand.board,
        pots=hand.pots() if running else (),
        awards=result.pots if result is not None else (),
        events=hand.events,
        legal=hand.legal_actions(),
        all_in_allowed=False,
        deadline=None,
        as_of=0.0,
    )


def test_every_view_shows_each_pot_with_its_amount_and_the_seats_that_can_win_it() -> None:
    # The table: the big blind (seat 2) all-in for 10, the others bet on.
    hand = _hand({0: 1000, 1: 1000, 2: 10, 3: 1000})
    hand.raise_to(3, 30)
    hand.call(0)
    hand.call(1)
    for recipient in (None, 0, 1, 2, 3):
        view = table_view(_state(hand), recipient)
        # Wire seats start at 1: the all-in big blind is seat 3 and can win only the main pot.
        assert [(p.amount, list(p.eligible_seats)) for p in view.pots] == [
            (40, [1, 2, 3, 4]),
            (60, [1, 2, 4]),
        ]


def test_a_showdown_award_names_the_winning_hand_and_a_fold_win_does_not() -> None:
    # Seat 2 (wire seat 3; dealt second and fifth, left of the button first) holds aces; all check down.
    hand = _hand({0: 1000, 1: 1000, 2: 1000}, "7c As 8d 2c Ad 3h Jc Kh Qs Td Jd 5s Jh 6s")
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        hand.call(legal.seat) if legal.can_call else hand.check(legal.seat)
    (award,) = table_view(_state(hand), None).awards
    assert list(award.seats) == [3]
    assert award.hand_description == "One pair, Aces"
    # The five cards that make it (the shown aces and the board's K Q T; the burns were jacks), for
    # every recipient: the winner showed them, the board is everyone's.
    for recipient in (None, 0, 1, 2):
        (award,) = table_view(_state(hand), recipient).awards
        assert sorted(c.text for c in award.winning_cards) == sorted(["As", "Ad", "Kh", "Qs", "Td"])
    folded = _hand({0: 1000, 1: 1000, 2: 1000})
    folded.fold(0)
    folded.fold(1)
    (award,) = table_view(_state(folded), None).awards
    assert award.hand_description == ""
    assert list(award.winning_cards) == []  # nothing was shown: no card of the winner is told


def test_an_action_carries_the_chips_it_added_and_the_raise_to_total() -> None:
    hand = _hand({0: 1000, 1: 1000, 2: 1000})
    events = [*hand.raise_to(0, 60), *hand.raise_to(1, 200)]
    taken = [event_body(e, None)[1]["action"] for e in events if isinstance(e, PlayerActed)]
    assert [(a.action, a.amount, a.to) for a in taken] == [
        (table_pb2.ACTION_KIND_RAISE, 60, 60),
        (table_pb2.ACTION_KIND_RAISE, 195, 200),  # the small blind had 5 in: adds 195, raises to 200
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stacks=st.lists(st.integers(min_value=5, max_value=400), min_size=2, max_size=3),
    choices=st.lists(st.integers(min_value=0, max_value=4), max_size=40),
    deadline=st.one_of(st.none(), st.floats(min_value=1.0, max_value=2e9)),
)
def test_a_seats_view_made_from_the_public_one_is_the_view_rendered_for_it(
    stacks: list[int], choices: list[int], deadline: float | None
) -> None:
    """The streams render the public view once per step and personalise a copy per seat
    (views.personal_view); at every point of random hands (folds, all-ins, showdowns), for every
    seat of the room (one of four always empty), that copy is exactly the view rendered for the seat."""
    hand = _hand(dict(enumerate(stacks)))
    moves = iter(choices)

    def check() -> None:
        state = replace(_state(hand), deadline=deadline)
        public = table_view(state, None)
        for seat in range(ROOM.seats):
            assert personal_view(public, state, seat) == table_view(state, seat), seat
        assert public == table_view(state, None)  # left as it was

    check()
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        move = next(moves, 1)
        if move == 0 and legal.can_call:
            hand.fold(legal.seat)
        elif move in (0, 1):
            hand.call(legal.seat) if legal.can_call else hand.check(legal.seat)
        elif move == 2 and (legal.can_bet or legal.can_raise):
            (hand.bet if legal.can_bet else hand.raise_to)(legal.seat, legal.min_to)
        elif legal.all_in_to is not None and (legal.can_bet or legal.can_raise):
            (hand.bet if legal.can_bet else hand.raise_to)(legal.seat, legal.all_in_to)
        else:
            hand.call(legal.seat) if legal.can_call else hand.check(legal.seat)
        check()
