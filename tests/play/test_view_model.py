"""What the client shows, from the wire messages: the pure view model, without a terminal."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clients.play import texts
from clients.play import view_model as vm
from clients.play.catalogue.codes import CODES
from clients.play.words import note_text, words
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker.lobby.v1 import lobby_pb2
from poker.table.v1 import table_pb2
from services.fairness.deck_commitment import CardOpening
from services.fairness.shuffle import card_index, card_text

HIDDEN = common_pb2.Card(hidden=True)


def card(text: str) -> common_pb2.Card:
    return common_pb2.Card(index=card_index(text), text=text)


def legal(**fields: object) -> table_pb2.LegalActions:
    values: dict[str, object] = {
        "min_amount": 20,
        "max_amount": 995,
        "step": 5,
        "call_amount": 10,
        "all_in_amount": 995,
    }
    values.update(fields)
    return table_pb2.LegalActions(
        actions=[table_pb2.ACTION_KIND_FOLD, table_pb2.ACTION_KIND_CALL, table_pb2.ACTION_KIND_RAISE],
        **values,  # type: ignore[arg-type]
    )


def test_cards_read_as_rank_and_suit_and_a_face_down_card_shows_nothing_of_itself() -> None:
    assert vm.cards_text([card("As"), card("Td")]) == "A♠ T♦"
    assert vm.card_text(HIDDEN) == vm.HIDDEN_CARD
    assert vm.chips(1234567) == "1,234,567"


def test_a_room_row_names_the_stakes_of_its_kind_and_its_free_seats() -> None:
    room = lobby_pb2.Room(
        room_id="nlhe-gram-duel",
        variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
        pool=common_pb2.CHIP_POOL_GRAM,
        seats_per_table=2,
        blinds=lobby_pb2.BlindStakes(small_blind=5, big_blind=10, step=5),
        min_buy_in=1000,
        max_buy_in=1000,
        occupancy=lobby_pb2.RoomOccupancy(seats_taken=1, seats_free=3),
    )
    row = vm.room_row(room)
    assert (row.stakes, row.buy_in, row.pool, row.free_seats) == ("5/10", "1,000", "GRAM", 3)
    assert "1 taken, 3 free" in row.seats
    limit = lobby_pb2.Room(
        limits=lobby_pb2.LimitStakes(small_bet=10, big_bet=20), min_buy_in=200, max_buy_in=1000
    )
    assert vm.stakes_text(limit) == "10/20 limit"
    assert vm.buy_in_text(limit) == "200-1,000"
    house = lobby_pb2.Room(
        variant=common_pb2.GAME_VARIANT_RUSSIAN_POKER,
        seats_per_table=7,
        antes=lobby_pb2.AnteStakes(min_ante=10, max_ante=1000),
    )
    assert vm.stakes_text(house) == "ante 10-1,000"
    assert vm.room_row(house).house
    assert vm.buy_in_text(house) == "from wallet"


def test_the_buy_in_offered_is_the_most_the_wallet_covers_within_the_room() -> None:
    room = lobby_pb2.Room(min_buy_in=200, max_buy_in=2000)
    assert vm.default_buy_in(room, 5000) == 2000
    assert vm.default_buy_in(room, 700) == 700
    assert vm.default_buy_in(room, 50) == 200


def a_view() -> table_pb2.TableView:
    return table_pb2.TableView(
        table_id="nlhe-gram-duel.1",
        variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
        pool=common_pb2.CHIP_POOL_GRAM,
        phase=table_pb2.TABLE_PHASE_HAND_IN_PROGRESS,
        hand_id="h-1",
        street=table_pb2.STREET_FLOP,
        button_seat=2,
        to_act_seat=1,
        seats=[
            table_pb2.SeatView(
                seat=1,
                player_id="ann",
                display_name="ann",
                stack=900,
                hole_cards=[card("As"), card("Ks")],
                time_bank_seconds=12,
            ),
            table_pb2.SeatView(
                seat=2,
                player_id="bob",
                display_name="bob",
                stack=880,
                bet_this_round=20,
                hole_cards=[HIDDEN, HIDDEN],
            ),
            table_pb2.SeatView(seat=3),
        ],
        board=[card("2c"), card("7d"), card("Jh")],
        pots=[table_pb2.Pot(amount=200), table_pb2.Pot(amount=40)],
        legal_actions=legal(deadline={"seconds": 1_000_030}),
    )


def test_seat_lines_mark_me_the_player_to_act_the_button_and_show_only_the_cards_received() -> None:
    lines = vm.seat_lines(a_view(), "ann")
    assert [line.seat for line in lines] == [1, 2, 3]
    mine, other, empty = lines
    assert mine.me
    assert mine.to_act
    assert "(you)" in mine.text
    assert "A♠ K♠" in mine.text
    assert not other.me
    assert "button" in other.text
    assert "bet 20" in other.text
    assert vm.HIDDEN_CARD in other.text
    assert "(empty)" in empty.text
    assert vm.pots_text(a_view()) == "main pot 200, side pot 40"  # one side pot: "side pot"
    assert vm.board_text(a_view()) == "2♣ 7♦ J♥"


def test_my_turn_counts_down_to_the_deadline_and_another_players_turn_shows_their_time_bank() -> None:
    view = a_view()
    assert vm.turn_text(view, "ann", now=1_000_012.4) == "YOUR TURN - 18s left (time bank 12s included)"
    assert vm.turn_text(view, "ann", now=1_000_040).startswith("YOUR TURN - 0s left")
    view.to_act_seat = 2
    view.seats[1].time_bank_seconds = 9
    assert vm.turn_text(view, "ann", now=0) == "seat 2 (bob) to act - time bank 9s"
    # With the table's clock of the seat to act, everybody sees its countdown.
    view.to_act_deadline.FromSeconds(1_000_020)
    assert vm.turn_text(view, "ann", now=1_000_012.4) == "seat 2 (bob) to act - 8s left (time bank 9s)"
    view.phase = table_pb2.TABLE_PHASE_BETWEEN_HANDS
    assert vm.turn_text(view, "ann", now=0) == ""


@given(st.floats(min_value=-1e6, max_value=1e6), st.floats(min_value=-1e6, max_value=1e6))
def test_a_countdown_is_never_negative_and_never_behind_the_time_left(deadline: float, now: float) -> None:
    left = vm.seconds_left(deadline, now)
    assert left >= 0
    if deadline > now:
        # Rounded up: the whole seconds shown cover the time left, and less than one more.
        assert left - 1 < deadline - now <= left
    else:
        assert left == 0


def test_the_legal_actions_become_buttons_in_a_fixed_order_with_their_amounts() -> None:
    legal_actions = table_pb2.LegalActions(
        actions=[
            table_pb2.ACTION_KIND_ALL_IN,
            table_pb2.ACTION_KIND_RAISE,
            table_pb2.ACTION_KIND_CALL,
            table_pb2.ACTION_KIND_FOLD,
        ],
        call_amount=10,
        min_amount=20,
        max_amount=995,
        step=5,
        all_in_amount=995,
    )
    choices = vm.action_choices(legal_actions)
    assert [c.label for c in choices] == ["fold", "call 10", "raise to 20-995", "all-in 995"]
    assert [c.needs_amount for c in choices] == [False, False, True, False]
    fixed = table_pb2.LegalActions(actions=[table_pb2.ACTION_KIND_BET], min_amount=20, max_amount=20, step=20)
    assert vm.action_choices(fixed)[0].label == "bet 20"


@pytest.mark.parametrize(
    ("typed", "accepted"),
    [
        ("20", 20),
        ("1,000", None),
        ("995", 995),
        ("35", 35),
        ("37", None),
        ("15", None),
        ("abc", None),
        ("", None),
    ],
)
def test_a_typed_amount_is_taken_only_within_the_range_and_on_the_step(
    typed: str, accepted: int | None
) -> None:
    if accepted is None:
        with pytest.raises(vm.AmountError, match=r"20 to 995 in steps of 5|whole number"):
            vm.parse_amount(typed, legal())
    else:
        assert vm.parse_amount(typed, legal()) == accepted


def test_an_all_in_below_the_minimum_or_off_the_step_is_still_a_legal_amount() -> None:
    assert vm.parse_amount("13", legal(min_amount=20, max_amount=13, all_in_amount=13)) == 13


@given(
    low=st.integers(1, 10_000),
    width=st.integers(0, 50_000),
    step=st.integers(1, 100),
    current=st.integers(-10, 70_000),
    steps=st.integers(-50, 50),
)
def test_the_slider_stays_inside_the_range_and_on_the_step(
    low: int, width: int, step: int, current: int, steps: int
) -> None:
    legal_actions = table_pb2.LegalActions(min_amount=low, max_amount=low + width, step=step)
    moved = vm.nudge_amount(current, legal_actions, steps)
    assert low <= moved <= low + width
    assert moved == low + width or (moved - low) % step == 0
    if steps > 0 and current < low + width:
        assert moved > min(max(current, low), low + width) or moved == low + width


def test_pot_sized_bets_stay_legal() -> None:
    view = a_view()
    amount = vm.pot_sized_amount(view, view.legal_actions, 1.0)
    assert view.legal_actions.min_amount <= amount <= view.legal_actions.max_amount
    assert amount % view.legal_actions.step == 0


def test_events_read_as_lines_and_hole_cards_of_others_stay_face_down() -> None:
    names = {1: "ann", 2: "bob"}
    # Issue 25 item 4: a raise shows the raise-to total (the chips it added beside it), not the added.
    act = table_pb2.TableEvent(
        seat=2,
        action=table_pb2.ActionTaken(action=table_pb2.ACTION_KIND_RAISE, amount=475, to=480, timed_out=False),
    )
    assert vm.event_line(act, names) == "bob raises to 480 (+475)"
    timed = table_pb2.TableEvent(
        seat=1, action=table_pb2.ActionTaken(action=table_pb2.ACTION_KIND_FOLD, timed_out=True)
    )
    # The log says what a player did, as the hand detail and the web client do: `ann fold` and
    # `bob call 15` (the buttons' words) read as orders, next to `bob raises to 480`.
    assert vm.event_line(timed, names) == "ann folds (time ran out)"
    call = table_pb2.TableEvent(
        seat=2, action=table_pb2.ActionTaken(action=table_pb2.ACTION_KIND_CALL, amount=15)
    )
    assert vm.event_line(call, names) == "bob calls 15"
    check = table_pb2.TableEvent(seat=1, action=table_pb2.ActionTaken(action=table_pb2.ACTION_KIND_CHECK))
    assert vm.event_line(check, names) == "ann checks"
    # A bet's total is what it added: no `(+30)` beside `bets 30`.
    bet = table_pb2.TableEvent(
        seat=1, action=table_pb2.ActionTaken(action=table_pb2.ACTION_KIND_BET, amount=30, to=30)
    )
    assert vm.event_line(bet, names) == "ann bets 30"
    dealt = table_pb2.TableEvent(seat=2, cards=table_pb2.CardsRevealed(cards=[HIDDEN, HIDDEN]))
    assert vm.event_line(dealt, names) == f"bob is dealt {vm.HIDDEN_CARD} {vm.HIDDEN_CARD}"
    shown = table_pb2.TableEvent(
        seat=2, cards=table_pb2.CardsRevealed(cards=[card("Qh"), card("Qd")], shown_by_player=True)
    )
    assert vm.event_line(shown, names) == "bob shows Q♥ Q♦"
    board = table_pb2.TableEvent(cards=table_pb2.CardsRevealed(cards=[card("2c")]))
    assert vm.event_line(board, names) == "board: 2♣"
    sticker = table_pb2.TableEvent(
        seat=1, chat=table_pb2.ChatMessage(player_id="p-0a1b2c3d4e5f", seat=1, sticker_id="gg")
    )
    assert vm.event_line(sticker, names) == f"ann sent {vm.sticker_label('gg')}"
    chat = table_pb2.TableEvent(
        seat=3, chat=table_pb2.ChatMessage(player_id="p-5f4e3d2c1b0a", display_name="zed", seat=3, text="hi")
    )
    assert vm.event_line(chat, names) == "zed: hi"
    committed = table_pb2.TableEvent(notice=table_pb2.TableNotice(code="HAND_COMMITTED", text="next hand"))
    assert vm.event_line(committed, names) is None


HANDLE = "p-0a1b2c3d4e5f"  # what another player's seat and chat lines carry instead of their id


def test_chat_names_the_sender_by_display_name_or_seat_and_you_from_my_own_seat() -> None:
    """A chat line carries the sender's opaque handle, display name and seat: it reads as the name
    (spaces and all), as `seat N` when there is none, and as `you` from the reader's own seat (found by
    their player id in the view); never as the handle."""
    view = table_pb2.TableView(
        seats=[
            table_pb2.SeatView(seat=1, player_id=HANDLE, display_name="Ann Marie Lee"),
            table_pb2.SeatView(seat=2, player_id="tg:42", display_name="Me"),
            table_pb2.SeatView(seat=3, player_id="p-5f4e3d2c1b0a", display_name=""),
        ]
    )
    names = vm.seat_names(view)
    mine = vm.my_seat(view, "tg:42")
    assert names == {1: "Ann Marie Lee", 2: "Me", 3: "seat 3"}

    def said(seat: int, **fields: object) -> str | None:
        message = table_pb2.ChatMessage(seat=seat, **fields)  # type: ignore[arg-type]
        return vm.event_line(table_pb2.TableEvent(seat=seat, chat=message), names, mine)

    assert said(1, player_id=HANDLE, display_name="Ann Marie Lee", text="hello") == "Ann Marie Lee: hello"
    assert said(2, player_id="p-aaaaaaaaaaaa", display_name="Me", text="hi all") == "you: hi all"
    assert said(3, player_id="p-5f4e3d2c1b0a", text="gl") == "seat 3: gl"
    assert said(3, player_id="p-5f4e3d2c1b0a", sticker_id="gg") == f"seat 3 sent {vm.sticker_label('gg')}"
    seats = [line.text for line in vm.seat_lines(view, "tg:42")]
    assert "Ann Marie Lee" in seats[0]
    assert "seat 3" in seats[2]
    assert not any("p-" in line for line in seats)


def test_a_player_notice_names_the_seat_even_when_the_name_has_spaces() -> None:
    """The table starts a player notice with the seat's display name (or `seat N`): the line names the
    player once, and its words are found past the name."""
    names = {1: "Ann Marie Lee", 3: "seat 3"}

    def notice_line(seat: int, code: str, text: str) -> str | None:
        event = table_pb2.TableEvent(seat=seat, notice=table_pb2.TableNotice(code=code, text=text))
        return vm.event_line(event, names)

    assert notice_line(1, "PLAYER_SAT_DOWN", "Ann Marie Lee sat at seat 1") == "· Ann Marie Lee sat at seat 1"
    assert notice_line(1, "PLAYER_SAT_OUT", "Ann Marie Lee timed out 2 hands in a row") == (
        "· Ann Marie Lee timed out 2 hands in a row"
    )
    assert notice_line(3, "PLAYER_RECONNECTED", "seat 3 is back") == "· seat 3 is back"
    with texts.using("ru"):
        assert (
            notice_line(1, "PLAYER_LEFT", "Ann Marie Lee left seat 1")
            == "· Ann Marie Lee освобождает место 1"
        )


def _record(
    button: int, seats: list[int], deck: list[str], me: int, board_cards: int
) -> history_pb2.HandRecord:
    """A record dealt from `deck` in the documented order; only seat `me`'s hole cards face up."""
    order = sorted(seats)
    start = next((i for i, s in enumerate(order) if s > button), 0)
    order = order[start:] + order[:start]
    n = len(order)
    record = history_pb2.HandRecord(hand_id="h", button_seat=button)
    for k, seat in enumerate(order):
        cards = [card(deck[k]), card(deck[n + k])]
        record.seats.add(seat=seat, hole_cards=cards if seat == me else [HIDDEN, HIDDEN])
    positions = [2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7][:board_cards]
    record.board.extend(card(deck[p]) for p in positions)
    return record


def test_the_cards_a_player_saw_map_to_their_deck_positions_and_face_down_cards_are_left_out() -> None:
    deck = [card_text(i) for i in range(52)]
    record = _record(button=2, seats=[0, 2, 5], deck=deck, me=0, board_cards=5)
    # Seat 5 is left of the button, then 0, then 2: seat 0 gets positions 1 and 4.
    assert vm.dealt_positions(record) == [
        (1, card_index(deck[1])),
        (4, card_index(deck[4])),
        (7, card_index(deck[7])),
        (8, card_index(deck[8])),
        (9, card_index(deck[9])),
        (11, card_index(deck[11])),
        (13, card_index(deck[13])),
    ]


@given(
    st.permutations(range(52)),
    st.sets(st.integers(0, 9), min_size=2, max_size=10),
    st.integers(0, 9),
    st.integers(0, 5),
)
def test_every_card_a_player_saw_comes_back_at_the_position_it_was_dealt_from(
    deck_order: list[int], seat_set: set[int], button: int, board_cards: int
) -> None:
    seats = sorted(seat_set)
    me = seats[len(seats) // 2]
    deck = [card_text(i) for i in deck_order]
    for position, index in vm.dealt_positions(_record(button, seats, deck, me, board_cards)):
        assert deck_order[position] == index
    assert len(vm.dealt_positions(_record(button, seats, deck, me, board_cards))) == 2 + board_cards


def test_the_fairness_verdict_is_the_local_recomputation_beside_the_servers() -> None:
    passed = vm.fairness_report(
        hand_id="h",
        commitment="c" * 64,
        shuffle_version=2,
        client_seed_seats=[1],
        mismatch=None,
        dealt_checked=7,
        computed_commitment="c" * 64,
        server_verdict_pass=True,
    )
    assert passed.passed
    assert passed.lines[-1].startswith("VERDICT: PASS")
    failed = vm.fairness_report(
        hand_id="h",
        commitment="c" * 64,
        shuffle_version=2,
        client_seed_seats=[],
        mismatch="DEALT_CARD at deck position 3",
        dealt_checked=3,
        computed_commitment="c" * 64,
        server_verdict_pass=True,
    )
    assert not failed.passed
    assert failed.lines[-1] == "VERDICT: FAIL - DEALT_CARD at deck position 3"
    # Issue 25 item 13: nothing the player saw was checked (a house round before the fix): no PASS.
    nothing = vm.fairness_report(
        hand_id="h",
        commitment="c" * 64,
        shuffle_version=2,
        client_seed_seats=[],
        mismatch=None,
        dealt_checked=0,
        computed_commitment="c" * 64,
        server_verdict_pass=True,
    )
    assert not nothing.passed
    assert not any("PASS -" in line for line in nothing.lines)
    assert nothing.lines[-1].startswith("VERDICT: NOT VERIFIED")


def test_a_version_3_verdict_names_the_cards_fixed_before_the_deal() -> None:
    report = vm.fairness_report(
        hand_id="h",
        commitment="c" * 64,
        shuffle_version=3,
        client_seed_seats=[1],
        mismatch=None,
        dealt_checked=7,
        computed_commitment="c" * 64,
        server_verdict_pass=True,
        openings_checked=9,
    )
    assert report.passed
    assert "openings checked against the commitment: 9" in report.lines
    assert "cards you saw checked against the openings: 7" in report.lines
    assert report.lines[-1] == "VERDICT: PASS - the 7 cards you saw were fixed before the deal"


def test_a_house_round_card_not_among_the_openings_fails() -> None:
    record = history_pb2.HandRecord(
        board=[common_pb2.Card(index=51, text="As"), common_pb2.Card(index=0, text="2c")]
    )
    opened = [CardOpening(0, 3, 51, bytes(32), ())]
    mismatch, checked = vm.house_cards_opened(record, opened)
    assert mismatch is not None
    assert (mismatch.kind.value, checked) == ("NOT_OPENED", 0)
    both = [*opened, CardOpening(1, 4, 0, bytes(32), ())]
    assert vm.house_cards_opened(record, both) == (None, 2)


def test_history_rows_sign_the_amounts() -> None:
    summary = history_pb2.HandSummary(
        hand_id="h", table_id="t.1", net_result=-25, pool=common_pb2.CHIP_POOL_MPX
    )
    assert vm.hand_row(summary)[3:] == ("-25", "MPX")
    change = history_pb2.BalanceChange(
        reason="CASH_OUT",
        change=common_pb2.Chips(pool=common_pb2.CHIP_POOL_GRAM, amount=1040),
        balance_after=2040,
        account_id="wallet:GRAM:ann",
        reference="t.1",
    )
    assert vm.balance_row(change)[1:] == ("cash-out", "+1,040 GRAM", "wallet 2,040", "t.1")


def test_cards_to_exchange_count_from_one_as_a_person_counts_them() -> None:
    # Issue 25 item 15: typed 1 to 5 from the left; the wire's positions are 0 to 4.
    assert vm.parse_card_positions("1, 4 5") == [0, 3, 4]
    for bad in ("", "0", "6", "1 1", "x"):
        with pytest.raises(vm.AmountError):
            vm.parse_card_positions(bad)


def test_my_client_seed_must_be_in_the_reveal_at_my_seat_exactly_as_i_set_it() -> None:
    entries = [(1, "ann", b"ann-seed"), (2, "", b"someone-else")]
    assert vm.own_seed_check(entries, "ann", "ann-seed") == (
        True,
        "your client seed: in the shuffle at seat 1",
    )
    changed, line = vm.own_seed_check(entries, "ann", "other")
    assert not changed
    assert "NOT the seed you set" in line
    missing, _ = vm.own_seed_check(entries[1:], "ann", "ann-seed")
    assert not missing


def test_a_version_3_hand_seed_is_fresh_each_hand_starts_with_mine_and_fits_the_table() -> None:
    seeds = {vm.fresh_hand_seed("x" * 64) for _ in range(20)}
    assert len(seeds) == 20
    for seed in seeds:
        assert seed.startswith("x" * vm.TYPED_SEED_PART + ".")
        assert vm.check_client_seed(seed) == seed  # 1 to 64 printable characters, no spaces
    assert vm.fresh_hand_seed("ann").startswith("ann.")


def test_the_reveals_seeds_must_each_match_a_hash_of_the_set_closed_before_the_seeds() -> None:
    commitment = "ab" * 32
    kept = [(1, vm.seed_hash_of(commitment, 1, "ann.1")), (3, vm.seed_hash_of(commitment, 3, "cat.3"))]
    # Seat 3 withheld its seed (listed with none): left out of the deal, no problem.
    assert vm.hash_set_check(kept, [(1, b"ann.1"), (3, b"")], commitment) is None
    assert vm.hash_set_check(kept, [(1, b"ann.1"), (3, b"cat.3")], commitment) is None
    # A seed at a seat that had no hash in the closed set could have been chosen after mine.
    late = vm.hash_set_check(kept, [(1, b"ann.1"), (2, b"bob.2")], commitment)
    assert late == "the seed at seat 2 was not in the hash set closed before the seeds"
    swapped = vm.hash_set_check(kept, [(3, b"cat.other")], commitment)
    assert swapped == "the seed at seat 3 does not match its hash shown before the seeds"
    # The hash binds the seat: the same seed at another seat is another hash.
    assert vm.hash_set_check([(2, kept[0][1])], [(2, b"ann.1")], commitment) is not None


def test_a_client_seed_is_one_to_64_printable_characters() -> None:
    assert vm.check_client_seed(" abc~1 ") == "abc~1"
    for bad in ("", "a b", "x" * 65, "é"):
        with pytest.raises(vm.AmountError):
            vm.check_client_seed(bad)


def test_a_house_round_shows_cards_options_with_costs_deadline_and_every_settlement_line() -> None:
    card = common_pb2.Card
    dealing = table_pb2.HouseRoundView(
        round_id="r1",
        phase="DECISIONS",
        dealer_cards=[card(index=51, text="As")],
        board=[card(index=0, text="2c"), card(index=1, text="2d"), card(index=2, text="2h")],
        boxes=[
            table_pb2.HouseBoxView(
                box=1,
                cards=[card(index=3, text="2s"), card(index=4, text="3c")],
                options=[
                    table_pb2.HouseDecisionOption(decision=table_pb2.HOUSE_DECISION_KIND_CALL, cost=20),
                    table_pb2.HouseDecisionOption(decision=table_pb2.HOUSE_DECISION_KIND_FOLD),
                ],
            )
        ],
    )
    dealing.deadline.FromSeconds(1_000_020)
    lines = vm.house_round_lines(dealing, 1_000_000.5)
    assert "dealer: A♠" in lines
    assert "board: 2♣ 2♦ 2♥" in lines
    assert any(line.startswith("box 1: 2♠ 3♣") for line in lines)
    assert any("call (20)" in line and "fold" in line for line in lines)
    assert "decide within 20s (then the rules' default)" in lines
    settled = table_pb2.HouseRoundView(round_id="r1", phase="COMPLETE", staked=30, paid_out=70)
    settled.boxes.add(
        box=1,
        settlement=[
            table_pb2.HouseSettlementLine(item="ante", outcome="win", amount=10, stake=10),
            table_pb2.HouseSettlementLine(item="bet", outcome="win", amount=30, withheld=5, stake=20),
            # Issue 25 item 15: a returned bet says what came back and why, not "returned 0".
            table_pb2.HouseSettlementLine(
                item="bet", outcome="RETURNED", amount=0, stake=100, reason="DEALER_DOES_NOT_QUALIFY"
            ),
            # Russian Poker's exchange fee: the live round read `exchange_fee: ...` (history's detail
            # already said `exchange fee`); the item is words on both screens.
            table_pb2.HouseSettlementLine(
                item="exchange_fee", outcome="LOSE", amount=-10, stake=10, reason="EXCHANGE_FEE"
            ),
        ],
    )
    lines = vm.house_round_lines(settled, 1_000_030)
    assert "  exchange fee: staked 10, lose - back 0 (-10) - exchange fee" in lines
    assert "  ante: staked 10, win - back 20 (+10)" in lines
    assert "  bet: staked 20, win - back 50 (+30) (withheld 5)" in lines
    assert "  bet: staked 100, returned - back 100 (0) - dealer does not qualify" in lines
    assert "staked 30, paid out 70" in lines
    assert not any(line.startswith("decide within") for line in lines)


def test_side_pots_show_who_can_win_them_and_awards_name_winner_and_hand() -> None:
    view = table_pb2.TableView(
        pots=[
            table_pb2.Pot(amount=40, eligible_seats=[1, 2, 3, 4]),
            table_pb2.Pot(amount=1950, eligible_seats=[1, 4]),
        ],
        seats=[table_pb2.SeatView(seat=4, player_id="dan", display_name="Dan")],
        awards=[
            table_pb2.PotAward(
                pot_index=0, seats=[4], amounts=[1945], hand_description="Two pair, Aces and Kings"
            )
        ],
    )
    assert vm.pots_text(view) == "main pot 40 (seats 1 2 3 4), side pot 1,950 (seats 1 4)"
    assert vm.awards_text(view) == "last hand - pot 1,945 won by Dan with Two pair, Aces and Kings"
    notice = table_pb2.TableEvent(
        notice=table_pb2.TableNotice(code="POT_AWARDED", text="pot 0: seat 4 wins 1945")
    )
    assert vm.event_line(notice, {}) is None  # the awards line above replaces the table's raw notice


def test_a_spectator_is_told_the_view_runs_late() -> None:
    view = table_pb2.TableView()
    view.as_of.FromSeconds(1_000_000)
    assert vm.spectator_text(view, 1_000_021.2).startswith("SPECTATING: you see the table 21 s late")


def _seat(seat: int, name: str, start: int, final: int, cards: list[common_pb2.Card]) -> history_pb2.HandSeat:
    return history_pb2.HandSeat(
        seat=seat,
        player_id=name,
        display_name=name.capitalize(),
        starting_stack=start,
        final_stack=final,
        net_result=final - start,
        hole_cards=cards,
    )


def test_the_hand_detail_gives_the_blinds_every_action_in_words_and_the_pots_by_name() -> None:
    # Issue 25 items 13 and 15: the detail of a hand lists its actions (a raise as its raise-to total,
    # a timeout marked, the uncalled bet given back), the blinds as posted and who won each pot.
    def act(kind: str, seat: int, amount: int = 0, **fields: object) -> history_pb2.HandAction:
        return history_pb2.HandAction(kind=kind, seat=seat, amount=amount, **fields)  # type: ignore[arg-type]

    record = history_pb2.HandRecord(
        hand_id="h1",
        table_id="t.1",
        variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
        pool=common_pb2.CHIP_POOL_GRAM,
        small_blind=5,
        big_blind=10,
        rake=1,
        seats=[
            _seat(0, "ann", 1000, 1029, [card("Ah"), card("Kh")]),
            _seat(1, "bob", 1000, 970, [HIDDEN, HIDDEN]),
        ],
        actions=[
            act("POST_SMALL_BLIND", 0, 5, street="PREFLOP"),
            act("POST_BIG_BLIND", 1, 10, street="PREFLOP"),
            act("RAISE", 0, 25, to=30, street="PREFLOP"),
            act("CALL", 1, 20, street="PREFLOP"),
            act("DEAL_BOARD", 0, street="FLOP", cards=[card("2c"), card("7d"), card("Ts")]),
            act("CHECK", 1, street="FLOP"),
            act("BET", 0, 1000 - 30, to=970, all_in=True, street="FLOP"),
            act("FOLD", 1, street="FLOP", cause=history_pb2.ACTION_CAUSE_TIMEOUT),
            act("UNCALLED_RETURN", 0, 970, street="FLOP"),
        ],
        board=[card("2c"), card("7d"), card("Ts")],
        pots=[history_pb2.HandPot(amount=59, rake=1, winner_seats=[0], winner_amounts=[59])],
    )
    lines = vm.hand_lines(record, "ann")
    assert "blinds 5/10, rake 1" in lines
    assert "  seat 1: Ann (you) [A♥ K♥] 1,000 -> 1,029 (+29)" in lines
    assert f"  seat 2: Bob [{vm.HIDDEN_CARD} {vm.HIDDEN_CARD}] 1,000 -> 970 (-30)" in lines
    start = lines.index("  actions:")
    assert lines[start + 1 : start + 10] == [
        "    Ann posts the small blind 5",
        "    Bob posts the big blind 10",
        "    Ann raises to 30",
        "    Bob calls 20",
        "    flop: 2♣ 7♦ T♠",
        "    Bob checks",
        "    Ann bets 970 all-in",
        "    Bob folds (time ran out)",
        "    Ann gets back uncalled 970",
    ]
    assert "  pot 59: Ann +59" in lines
    assert not any("blinds 0/0" in line or "[]" in line for line in lines)


def test_a_house_round_in_history_shows_its_cards_decisions_and_what_each_line_gave_back() -> None:
    # Issue 25 items 13 and 15: no "[] cards" and no "blinds 0/0" for a house round; every line says
    # what was staked, what came back and why; boxes are numbered as they were played.
    record = history_pb2.HandRecord(
        hand_id="r1",
        table_id="casino-holdem-gram.1",
        variant=common_pb2.GAME_VARIANT_CASINO_HOLDEM,
        pool=common_pb2.CHIP_POOL_GRAM,
        seats=[_seat(0, "ann", 30, 40, [])],
        board=[card("2c"), card("7d"), card("Ts"), card("9s"), card("3h")],
        house_game=history_pb2.HouseGameRound(
            dealer_cards=[card("Qc"), card("4d")],
            boxes=[
                history_pb2.HouseGameBox(
                    box=1,
                    seat=0,
                    cards=[card("Ah"), card("Kh")],
                    lines=[
                        history_pb2.HouseGameLine(item="ANTE", stake=10, outcome="WON", player_change=10),
                        history_pb2.HouseGameLine(
                            item="BET",
                            stake=20,
                            outcome="RETURNED",
                            player_change=0,
                            reason="DEALER_DOES_NOT_QUALIFY",
                        ),
                    ],
                )
            ],
            decisions=[history_pb2.HouseGameDecision(box=1, decision="CALL", amount=20)],
        ),
        seed_commitment="c" * 64,
    )
    lines = vm.hand_lines(record, "ann")
    assert "  dealer: Q♣ 4♦" in lines
    assert "  board: 2♣ 7♦ T♠ 9♠ 3♥" in lines
    assert "  box 1: A♥ K♥" in lines
    assert "    ante: staked 10, won - back 20 (+10)" in lines
    assert "    bet: staked 20, returned - back 20 (0) - dealer does not qualify" in lines
    assert "  box 1 decided: call 20" in lines
    assert not any("blinds" in line or "[]" in line or "box 2" in line for line in lines)


def test_the_last_hands_awards_name_each_pot_its_winners_and_their_hands() -> None:
    # Issue 25 item 15: not `pot 0: seat 4 wins 1945`: pots by name, winners by name, separators.
    view = table_pb2.TableView(
        seats=[
            table_pb2.SeatView(seat=1, player_id="ann", display_name="Ann"),
            table_pb2.SeatView(seat=4, player_id="dan", display_name="Dan"),
        ],
        awards=[
            table_pb2.PotAward(
                pot_index=0, seats=[1, 4], amounts=[1000, 1000], hand_description="a straight"
            ),
            table_pb2.PotAward(pot_index=1, seats=[4], amounts=[1945], hand_description="a flush"),
        ],
    )
    assert vm.awards_text(view) == (
        "last hand - main pot 2,000 split: Ann 1,000, Dan 1,000 with a straight; "
        "side pot 1,945 won by Dan with a flush"
    )


def test_sitting_out_says_a_hand_already_dealt_plays_on() -> None:
    """QA: pressing `s` during one's own turn read "sitting out (dealt no hand)" while the turn was
    still the player's: sitting out applies from the next hand."""
    text = vm.seat_state_text(table_pb2.SEAT_STATUS_SITTING_OUT)
    assert "no new hand" in text
    assert "plays on" in text


# ------------------------------------------------------------------------------------------- issue 39

ENUM_NAME = re.compile(r"\b[A-Z]{2,}_[A-Z_]+\b|\b(PURCHASE|WITHDRAWAL|RAKE|ADJUSTMENT|COMPLETE|DECISIONS)\b")


def _duel(
    phase: int, street: int, stacks: dict[int, tuple[str, int, int]], **fields: object
) -> table_pb2.TableView:
    return table_pb2.TableView(
        hand_id="h1",
        phase=phase,  # type: ignore[arg-type]
        street=street,  # type: ignore[arg-type]
        seats=[
            table_pb2.SeatView(seat=seat, player_id=who, display_name=who, stack=stack, bet_this_round=bet)
            for seat, (who, stack, bet) in stacks.items()
        ],
        **fields,  # type: ignore[arg-type]
    )


def test_the_last_hand_says_what_each_player_netted_not_the_pot_they_won() -> None:
    """Issue 39 item 2: `alice +880` was the pot; alice netted +445 (her 435 back, bob's 445 less the
    rake). The line says each player's net, the player as `you`, then the pot and who won it."""
    running = table_pb2.TABLE_PHASE_HAND_IN_PROGRESS
    dealt = _duel(
        running,
        table_pb2.STREET_PREFLOP,
        {1: ("alice", 995, 5), 2: ("bob", 990, 10)},
        pots=[table_pb2.Pot(amount=15, eligible_seats=[1, 2])],
    )
    starts = vm.starting_stacks(dealt)
    assert starts == {1: ("alice", 1000), 2: ("bob", 1000)}
    ended = _duel(
        running,
        table_pb2.STREET_SHOWDOWN,
        {1: ("alice", 1445, 0), 2: ("bob", 555, 0)},
        awards=[table_pb2.PotAward(pot_index=0, seats=[1], amounts=[880], hand_description="a flush")],
    )
    results = vm.hand_results(ended, starts)
    assert [(r.player_id, r.net) for r in results] == [("alice", 445), ("bob", -445)]
    assert (
        vm.awards_text(ended, results, "alice")
        == "last hand - you +445, bob -445 - pot 880 won by you with a flush"
    )
    assert (
        vm.awards_text(ended, results, "bob")
        == "last hand - alice +445, you -445 - pot 880 won by alice with a flush"
    )
    # Without the starting stacks nothing is passed off as a net: the pot is named as a pot.
    assert vm.awards_text(ended) == "last hand - pot 880 won by alice with a flush"
    assert "+880" not in vm.awards_text(ended)
    # History's record gives the same figures (net_result = final - starting stack).
    record = history_pb2.HandRecord(seats=[_seat(0, "alice", 1000, 1445, []), _seat(1, "bob", 1000, 555, [])])
    assert vm.results_text(vm.record_results(record), "alice") == "you +445, Bob -445"


def test_starting_stacks_are_read_only_where_the_view_can_tell_them() -> None:
    running = table_pb2.TABLE_PHASE_HAND_IN_PROGRESS
    seats = {1: ("alice", 995, 5), 2: ("bob", 990, 10)}
    # A dead blind is in the pot but in no seat's bet: the view cannot tell who started with what.
    dead = _duel(running, table_pb2.STREET_PREFLOP, seats, pots=[table_pb2.Pot(amount=20)])
    assert vm.starting_stacks(dead) is None
    # After the first betting round the bets in front of the seats are no longer all they put in.
    flop = _duel(running, table_pb2.STREET_FLOP, seats, pots=[table_pb2.Pot(amount=15)])
    assert vm.starting_stacks(flop) is None
    between = _duel(table_pb2.TABLE_PHASE_BETWEEN_HANDS, 0, seats)
    assert vm.starting_stacks(between) is None


def _change(
    reason: str, amount: int, after: int, reference: str, account: str = "seat:s1"
) -> history_pb2.BalanceChange:
    return history_pb2.BalanceChange(
        reason=reason,
        change=common_pb2.Chips(pool=common_pb2.CHIP_POOL_GRAM, amount=amount),
        balance_after=after,
        reference=reference,
        account_id=account,
        table_id="nlhe-gram-duel.1",
    )


def test_the_statement_reads_in_words_with_one_line_per_hand() -> None:
    """Issue 39 item 5: `HOUSE_GAME_RESULT -10 GRAM`, and one won hand as two HAND_RESULT lines (+435
    and +10): words, and a hand's transfers on one account summed into one line (newest first)."""
    changes = [  # newest first, as history gives them
        _change("CASH_OUT", -1445, 0, "s1"),
        _change("CASH_OUT", 1445, 2445, "s1", "wallet:GRAM:ann"),
        _change("HAND_RESULT", 10, 1445, "h2"),
        _change("HAND_RESULT", 435, 1435, "h2"),
        _change("HAND_RESULT", -400, 1000, "h1"),
        _change("RAKE", -10, 1400, "h1"),
        _change("BUY_IN", 1410, 1410, "s1"),
        _change("BUY_IN", -1410, 590, "s1", "wallet:GRAM:ann"),
        _change("HOUSE_GAME_RESULT", 40, 2000, "r1:box1", "wallet:GRAM:ann"),
        _change("HOUSE_GAME_RESULT", -20, 1960, "r1:box1:CALL", "wallet:GRAM:ann"),
        _change("HOUSE_GAME_RESULT", -10, 1980, "r1:box1", "wallet:GRAM:ann"),
        _change("PURCHASE", 1990, 1990, "play-1", "wallet:GRAM:ann"),
    ]
    rows = vm.balance_rows(changes)
    assert [row[1:] for row in rows] == [
        ("cash-out", "-1,445 GRAM", "seat 0", "s1"),
        ("cash-out", "+1,445 GRAM", "wallet 2,445", "s1"),
        ("hand result", "+445 GRAM", "seat 1,445", "h2"),
        ("hand result", "-410 GRAM", "seat 1,000", "h1"),
        ("buy-in", "+1,410 GRAM", "seat 1,410", "s1"),
        ("buy-in", "-1,410 GRAM", "wallet 590", "s1"),
        ("house game", "+10 GRAM", "wallet 2,000", "r1"),
        ("purchase", "+1,990 GRAM", "wallet 1,990", "play-1"),
    ]
    assert not any(ENUM_NAME.search(cell) for row in rows for cell in row)
    # A change that is not a hand's is never merged, even with the same reference.
    assert len(vm.balance_rows([_change("PURCHASE", 5, 5, "p"), _change("PURCHASE", 5, 10, "p")])) == 2


def test_every_code_a_person_reads_is_in_words() -> None:
    # The catalogue holds the words, in English and Russian (tests/play/test_texts.py: in Russian).
    for code in ("HOUSE_GAME_RESULT", "HAND_RESULT", "PURCHASE", "BUY_IN", "CASH_OUT", "WITHDRAWAL", "RAKE"):
        assert words(code) == CODES[code]["en"]
    assert (words("HOUSE_GAME_RESULT"), words("BUY_IN"), words("CASH_OUT")) == (
        "house game",
        "buy-in",
        "cash-out",
    )
    assert words("DEALER_DOES_NOT_QUALIFY") == "dealer does not qualify"  # not listed: still words
    assert note_text("TIMEOUT box 1 FOLD") == "box 1: time ran out - fold (the rules' default)"
    round_view = table_pb2.HouseRoundView(
        round_id="r1", phase="NO_GAME_CHOICES", notes=["TIMEOUT box 2 TAKE_ANTE"]
    )
    round_view.boxes.add(box=1, status="CALLED")
    round_view.boxes.add(
        box=2,
        status="WAITING",
        settlement=[
            table_pb2.HouseSettlementLine(
                item="BUY_GAME_FEE", stake=10, outcome="LOST", amount=-10, reason="DEALER_NO_GAME"
            )
        ],
    )
    lines = vm.house_round_lines(round_view, 0)
    assert lines[0] == "round r1 (the dealer has no game: take the ante or buy a game)"
    assert "box 1: - [played]" in lines
    assert "  buy-a-game fee: staked 10, lost - back 0 (-10) - dealer no game" in lines
    assert "note: box 2: time ran out - take the ante (the rules' default)" in lines
    assert not any(ENUM_NAME.search(line) for line in lines)


def test_the_lobby_lists_rooms_grouped_by_game_each_group_headed_once() -> None:
    """Issue 39 item 3: rooms grouped by game (Russian Poker no longer scattered below the fold)."""

    def room(room_id: str, variant: int, big: int, pool: int = common_pb2.CHIP_POOL_GRAM) -> lobby_pb2.Room:
        stakes: dict[str, object]
        if variant in vm.HOUSE_VARIANTS:
            stakes = {"antes": lobby_pb2.AnteStakes(min_ante=big, max_ante=big * 100)}
        else:
            stakes = {"blinds": lobby_pb2.BlindStakes(small_blind=big // 2, big_blind=big)}
        return lobby_pb2.Room(room_id=room_id, variant=variant, pool=pool, **stakes)  # type: ignore[arg-type]

    rooms = [
        room("russian-poker-gram", common_pb2.GAME_VARIANT_RUSSIAN_POKER, 10),
        room("nlhe-gram-high", common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM, 100),
        room("casino-holdem-gram", common_pb2.GAME_VARIANT_CASINO_HOLDEM, 10),
        room("nlhe-mpx-low", common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM, 2, common_pb2.CHIP_POOL_MPX),
        room("nlhe-gram-low", common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM, 10),
        room("russian-poker-mpx", common_pb2.GAME_VARIANT_RUSSIAN_POKER, 10, common_pb2.CHIP_POOL_MPX),
    ]
    listed = vm.rooms_by_game(rooms)
    assert [(heading, r.room_id) for heading, r in listed] == [
        (True, "nlhe-gram-low"),
        (False, "nlhe-gram-high"),
        (False, "nlhe-mpx-low"),
        (True, "casino-holdem-gram"),
        (True, "russian-poker-gram"),
        (False, "russian-poker-mpx"),
    ]
