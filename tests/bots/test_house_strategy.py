"""The house bots' pure part: their decisions are the library's basic strategy played on the same
cards (so a bot's round settles exactly like the simulator's round on that deck), and the deck
positions they record for a round are the positions the library dealt those cards from."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from house_games import (
    BoxWager,
    CasinoHoldemRound,
    CasinoHoldemSettings,
    RussianPhase,
    RussianPokerRound,
    RussianPokerSettings,
)
from poker_bots.house_bot import RoundBudget
from poker_bots.house_strategy import (
    RussianDeal,
    holdem_calls,
    holdem_dealt,
    russian_buys_game,
    russian_exchange,
    russian_plays,
)
from poker_bots.stats import RunStats

decks = st.permutations(list(range(52)))


@settings(max_examples=200, deadline=None)
@given(decks)
def test_a_holdem_round_shows_the_cards_at_the_positions_the_bot_records(deck: list[int]) -> None:
    game = CasinoHoldemRound(deck, [BoxWager(1, "bot", 10)], CasinoHoldemSettings())
    hole, flop = game.hole_cards(1), game.flop
    if holdem_calls(hole, flop):
        game.call(1)
    else:
        game.fold(1)
    settlement = game.settle()
    assert settlement.boxes[0].player_delta >= -30
    # What the settled view shows: the box's cards, the dealer's two, the full board.
    dealt = holdem_dealt(hole, deck[2:4], deck[4:9])
    assert dealt == [(i, deck[i]) for i in range(9)]
    assert list(hole) == deck[0:2]
    assert list(flop) == deck[4:7]


@settings(max_examples=200, deadline=None)
@given(decks)
def test_a_russian_round_played_by_the_bot_matches_the_library_and_its_positions(deck: list[int]) -> None:
    game = RussianPokerRound(deck, [BoxWager(1, "bot", 10)], RussianPokerSettings())
    first = tuple(game.hand(1).cards)
    assert first == tuple(deck[0:5])
    deal = RussianDeal(first, deck[5])
    indexes = russian_exchange(first)
    assert all(0 <= i < 5 for i in indexes)
    assert len(set(indexes)) == len(indexes)
    if indexes:
        game.exchange(1, tuple(first[i] for i in indexes))
        now = list(first)
        replacement = iter(deck[10:])
        for i in sorted(indexes):
            now[i] = next(replacement)
        # The bot's model of the box after the exchange: the same cards as the library's.
        assert sorted(now) == sorted(game.hand(1).cards)
        deal.exchanged(indexes, now)
    cards = list(game.hand(1).cards)
    if russian_plays(cards):
        game.play(1)
    else:
        game.fold(1)
    bought = False
    if game.phase is RussianPhase.NO_GAME_CHOICES:
        bought = russian_buys_game(cards)
        if bought:
            game.buy_game(1)
        else:
            game.take_ante(1)
    game.settle()
    dealt = deal.settled(deck[5:10], bought)
    # Every recorded position holds the recorded card, and no position is recorded twice.
    assert all(deck[position] == card for position, card in dealt)
    assert len({position for position, _ in dealt}) == len(dealt)
    assert (5, deck[5]) in dealt


def card(text: str) -> int:
    """4 * rank + suit (docs/house-games.md, Card encoding)."""
    return 4 * "23456789TJQKA".index(text[0]) + "cdhs".index(text[1])


def test_the_basic_strategy_on_known_hands() -> None:
    # Casino Hold'em: ace high calls, 7-2 off a dry flop folds.
    assert holdem_calls([card("Ah"), card("Kh")], [card("2c"), card("2d"), card("7s")])
    assert not holdem_calls([card("7h"), card("2s")], [card("Jc"), card("Qd"), card("4c")])
    # Russian Poker: a pair of aces is kept and played; four to a flush exchanges the odd card;
    # three of a kind buys the dealer a game.
    aces = [card(c) for c in ("Ah", "Ac", "3c", "5d", "9h")]
    assert russian_exchange(aces) == ()
    assert russian_plays(aces)
    flush_draw = [card(c) for c in ("2h", "7h", "9h", "Jh", "4s")]
    assert russian_exchange(flush_draw) == (4,)
    assert not russian_plays(flush_draw)
    assert russian_buys_game([card(c) for c in ("9h", "9c", "9d", "5d", "2h")])
    assert not russian_buys_game(aces)


@given(st.integers(min_value=0, max_value=50), st.integers(min_value=0, max_value=60))
def test_the_round_budget_hands_out_exactly_its_rounds(rounds: int, failures: int) -> None:
    budget = RoundBudget(rounds)
    taken = 0
    failed = 0
    while budget.take():
        if failed < failures:
            failed += 1
            budget.give_back()
            continue
        taken += 1
    assert taken == rounds
    assert not budget.take()


def test_the_summary_counts_house_rounds() -> None:
    stats = RunStats()
    stats.house_rounds, stats.house_staked, stats.house_paid_out = 3, 30, 25
    stats.latency("house-round", 0.01)
    data = stats.as_dict()
    assert (data["house_rounds"], data["house_staked"], data["house_paid_out"]) == (3, 30, 25)
    assert "house rounds 3, staked 30, paid out 25" in stats.summary()
    assert data["latency_ms"]["house-round"]["count"] == 1
