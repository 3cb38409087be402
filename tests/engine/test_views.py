"""Who may see what (rules 14-16)."""

from __future__ import annotations

from poker_engine.events import CardsMucked, CardsShown, HoleCardsDealt
from poker_engine.hand import Hand
from poker_engine.views import full_record, player_view, spectator_view
from tests.engine.conftest import HandBuilder


def showdown_hand(make_hand: HandBuilder) -> Hand:
    hand = make_hand(
        {0: 1000, 1: 1000, 2: 1000}, button=0, holes={0: "AsAd", 1: "7c2d", 2: "KsKd"}, board="3h 8c 9d Jh 4s"
    )
    hand.call(0)
    hand.call(1)
    hand.check(2)
    for _ in range(3):
        hand.check(1)
        hand.check(2)
        hand.check(0)
    return hand


def hidden_cards(events: tuple[object, ...]) -> set[tuple[int, int]]:
    seen = set()
    for event in events:
        if isinstance(event, HoleCardsDealt | CardsMucked | CardsShown):
            seen.update((event.seat, card) for card in event.cards)
    return seen


def test_spectator_never_sees_a_hidden_card(make_hand: HandBuilder) -> None:
    hand = showdown_hand(make_hand)
    view = spectator_view(hand.events)
    assert all(not e.cards for e in view if isinstance(e, HoleCardsDealt | CardsMucked))
    shown = {e.seat for e in view if isinstance(e, CardsShown)}
    assert shown == {0}  # only the winner showed
    assert {seat for seat, _ in hidden_cards(view)} == {0}


def test_player_sees_own_hole_cards_and_shown_cards_never_anothers_unshown(make_hand: HandBuilder) -> None:
    hand = showdown_hand(make_hand)
    view = player_view(hand.events, 1)
    assert {seat for seat, _ in hidden_cards(view)} == {0, 1}  # own cards, and the winner's shown cards
    assert all(not e.cards for e in view if isinstance(e, HoleCardsDealt) and e.seat != 1)
    mucked = [e for e in player_view(hand.events, 2) if isinstance(e, CardsMucked)]
    assert {(e.seat, bool(e.cards)) for e in mucked} == {(1, False), (2, True)}


def test_full_record_keeps_every_card_for_verification(make_hand: HandBuilder) -> None:
    hand = showdown_hand(make_hand)
    assert full_record(hand.events) == hand.events
    assert {seat for seat, _ in hidden_cards(full_record(hand.events))} == {0, 1, 2}


def test_views_are_json_ready(make_hand: HandBuilder) -> None:
    hand = showdown_hand(make_hand)
    dumped = [e.to_dict() for e in spectator_view(hand.events)]
    assert dumped[0]["kind"] == "HAND_STARTED"
    assert all(d["cards"] is None for d in dumped if d["kind"] == "HOLE_CARDS_DEALT")


def test_a_player_may_show_mucked_or_unshown_cards_after_the_hand(make_hand: HandBuilder) -> None:
    hand = showdown_hand(make_hand)
    with_muck = spectator_view(hand.events)
    assert not any(isinstance(e, CardsShown) and e.seat == 1 for e in with_muck)
    (shown,) = hand.show(1)
    assert isinstance(shown, CardsShown)
    assert shown.seat == 1
    assert shown.cards in [e.cards for e in spectator_view(hand.events) if isinstance(e, CardsShown)]
    assert not hand.can_show(1)  # already shown
    assert not hand.can_show(0)  # the winner showed at showdown


def test_cards_cannot_be_shown_by_choice_while_the_hand_runs(make_hand: HandBuilder) -> None:
    hand = make_hand({0: 1000, 1: 1000}, button=0)
    assert not hand.can_show(0)
    hand.fold(0)
    assert hand.can_show(1)  # won without showing; may show afterwards
