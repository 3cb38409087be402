"""Hand records: what a valid record is, and what each reader may see of one (rules 16 and 17).

Pure: no I/O. The record is the `HandRecord` protobuf document the table sends (the server's record
is the source of truth in disputes, rules 17); `check_hand_record` refuses anything malformed or
inconsistent before it is stored, and `view_for` returns the copy a reader may see: an admin the
full record, a participant their own hole cards, the board, every action and the cards others
showed, never a card another player mucked or folded; anyone else nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from google.protobuf.timestamp_pb2 import Timestamp

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker_engine.cards import card_text
from service_runtime.errors import InvalidArgument

MAX_ID_LENGTH = 128
MAX_DISPLAY_NAME_LENGTH = 32
MAX_FINGERPRINT_LENGTH = 128
MAX_ACTIONS = 2000
MAX_SEATS = 10
MAX_CHIPS = 2**63 - 1
# A decision takes at most the action time plus the time bank; a day is far beyond any of them.
MAX_DECISION_MS = 86_400_000

POKER_VARIANTS = frozenset(
    {common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM, common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM}
)
HOUSE_VARIANTS = frozenset({common_pb2.GAME_VARIANT_CASINO_HOLDEM, common_pb2.GAME_VARIANT_RUSSIAN_POKER})
POOLS = frozenset({common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX})
STREETS = frozenset({"PREFLOP", "FLOP", "TURN", "RIVER", "SHOWDOWN"})
POSTS = frozenset({"POST_SMALL_BLIND", "POST_BIG_BLIND", "POST_EXTRA_BIG_BLIND", "POST_DEAD_SMALL_BLIND"})
DECISIONS = frozenset({"FOLD", "CHECK", "CALL", "BET", "RAISE"})
ACTION_KINDS = POSTS | DECISIONS | {"DEAL_BOARD", "SHOW", "MUCK", "UNCALLED_RETURN"}
HOUSE_LINE_OUTCOMES = frozenset({"WON", "LOST", "RETURNED"})
CAUSES = frozenset(history_pb2.ActionCause.values())

_ID = re.compile(r"[\x21-\x7e]+")
_COMMITMENT = re.compile(r"[0-9a-f]{64}")
_CODE = re.compile(r"[A-Z][A-Z0-9_]*")


def _invalid(field: str, message: str) -> InvalidArgument:
    return InvalidArgument("FIELD_INVALID", message, {"field": field})


def check_id(value: str, field: str, *, required: bool = True) -> str:
    """An id: 1-128 printable ASCII characters without spaces (empty only when not required)."""
    if not value:
        if required:
            raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", {"field": field})
        return value
    if len(value) > MAX_ID_LENGTH or not _ID.fullmatch(value):
        raise _invalid(field, f"{field} is 1-{MAX_ID_LENGTH} printable ASCII characters without spaces")
    return value


def check_text(value: str, field: str, max_length: int, *, required: bool = False) -> str:
    """Free text: at most `max_length` characters, no control characters."""
    if not value and required:
        raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", {"field": field})
    if len(value) > max_length or not value.isprintable():
        raise _invalid(field, f"{field} is at most {max_length} printable characters")
    return value


def check_code(value: str, field: str) -> str:
    if not value:
        raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", {"field": field})
    if len(value) > 64 or not _CODE.fullmatch(value):
        raise _invalid(field, f"{field} is an UPPER_SNAKE code of at most 64 characters")
    return value


# Timestamps from 2000-01-01 to 9999-12-31: every one converts to a datetime and fits the int64
# microseconds the storage indexes.
_EARLIEST_SECONDS = 946_684_800
_LATEST_SECONDS = 253_402_300_799


def check_time(stamp: Timestamp, field: str) -> None:
    if not _EARLIEST_SECONDS <= stamp.seconds <= _LATEST_SECONDS or not 0 <= stamp.nanos < 1_000_000_000:
        raise _invalid(field, f"{field} is a time between the years 2000 and 9999")


def _chips(value: int, field: str, *, signed: bool = False) -> None:
    if (value < 0 and not signed) or abs(value) > MAX_CHIPS:
        raise InvalidArgument("AMOUNT_INVALID", f"{field} is out of range", {"field": field})


def _cards(cards: Iterable[common_pb2.Card], field: str) -> list[int]:
    indexes = []
    for card in cards:
        if card.hidden or card.index > 51 or (card.text and card.text != card_text(card.index)):
            raise InvalidArgument(
                "INVALID_CARD", f"{field} holds a card that is not one of the 52", {"field": field}
            )
        indexes.append(int(card.index))
    return indexes


def _fill_card_text(cards: Iterable[common_pb2.Card]) -> None:
    for card in cards:
        card.text = card_text(card.index)


def check_hand_record(record: history_pb2.HandRecord) -> None:
    """Refuse a malformed or inconsistent record (INVALID_ARGUMENT with the field); fills card text."""
    check_id(record.hand_id, "hand.hand_id")
    check_id(record.table_id, "hand.table_id")
    check_id(record.room_id, "hand.room_id")
    check_id(record.seed_reveal_reference, "hand.seed_reveal_reference", required=False)
    if record.seed_commitment and not _COMMITMENT.fullmatch(record.seed_commitment):
        raise _invalid("hand.seed_commitment", "the commitment is 64 lower-case hex digits")
    poker = record.variant in POKER_VARIANTS
    if not poker and record.variant not in HOUSE_VARIANTS:
        raise InvalidArgument("FIELD_REQUIRED", "hand.variant is required", {"field": "hand.variant"})
    if record.pool not in POOLS:
        raise InvalidArgument("POOL_INVALID", "hand.pool must be GRAM or MPX", {"field": "hand.pool"})
    for name in ("start_time", "end_time"):
        if not record.HasField(name):
            raise InvalidArgument("FIELD_REQUIRED", f"hand.{name} is required", {"field": f"hand.{name}"})
        check_time(getattr(record, name), f"hand.{name}")
    if record.end_time.ToNanoseconds() < record.start_time.ToNanoseconds():
        raise _invalid("hand.end_time", "the hand cannot end before it started")
    for name in ("small_blind", "big_blind", "small_bet", "big_bet", "rake"):
        _chips(getattr(record, name), f"hand.{name}")
    if not 0 <= record.table_size <= MAX_SEATS:
        raise _invalid("hand.table_size", f"table_size is 0..{MAX_SEATS}")
    _check_seats(record, poker)
    seat_numbers = {seat.seat for seat in record.seats}
    # The button may be a seat nobody sits in this hand (a dead button), but it is a table seat.
    if not 0 <= record.button_seat < MAX_SEATS:
        raise _invalid("hand.button_seat", f"the button is a seat number 0..{MAX_SEATS - 1}")
    used = [card for seat in record.seats for card in _cards(seat.hole_cards, "hand.seats.hole_cards")]
    board = _cards(record.board, "hand.board")
    if len(board) not in ((0, 3, 4, 5) if poker else range(6)):
        raise _invalid("hand.board", "the board has 0, 3, 4 or 5 cards")
    used += board
    if len(set(used)) != len(used):
        raise InvalidArgument("INVALID_CARD", "a card appears twice in the hand", {"field": "hand"})
    _check_actions(record, seat_numbers)
    _check_pots(record, seat_numbers)
    if record.HasField("house_game"):
        _check_house_game(record, seat_numbers, poker)
    _check_conservation(record, poker)
    for seat in record.seats:
        _fill_card_text(seat.hole_cards)
    _fill_card_text(record.board)
    for action in record.actions:
        _fill_card_text(action.cards)
    for box in record.house_game.boxes:
        _fill_card_text(box.cards)
    _fill_card_text(record.house_game.dealer_cards)


def _check_seats(record: history_pb2.HandRecord, poker: bool) -> None:
    count = len(record.seats)
    if not (2 if poker else 1) <= count <= MAX_SEATS:
        raise _invalid("hand.seats", f"a hand has {2 if poker else 1} to {MAX_SEATS} players")
    if record.table_size and count > record.table_size:
        raise _invalid("hand.seats", "more players than seats at the table")
    numbers, players = set(), set()
    for seat in record.seats:
        if not 0 <= seat.seat < MAX_SEATS or seat.seat in numbers:
            raise _invalid("hand.seats.seat", f"seat numbers are distinct, 0..{MAX_SEATS - 1}")
        check_id(seat.player_id, "hand.seats.player_id")
        if seat.player_id in players:
            raise _invalid("hand.seats.player_id", "a player appears twice in the hand")
        numbers.add(seat.seat)
        players.add(seat.player_id)
        check_text(seat.display_name, "hand.seats.display_name", MAX_DISPLAY_NAME_LENGTH, required=True)
        check_id(seat.client_fingerprint, "hand.seats.client_fingerprint", required=False)
        check_id(seat.network_fingerprint, "hand.seats.network_fingerprint", required=False)
        _chips(seat.starting_stack, "hand.seats.starting_stack")
        _chips(seat.final_stack, "hand.seats.final_stack")
        if seat.net_result != seat.final_stack - seat.starting_stack:
            raise _invalid("hand.seats.net_result", "net_result must be final_stack - starting_stack")
        if len(seat.hole_cards) not in ((0, 2) if poker else (0,)):
            raise _invalid("hand.seats.hole_cards", "a seat holds two hole cards (none in house games)")
        if seat.shown and seat.mucked:
            raise _invalid("hand.seats.shown", "a hand is either shown or mucked")
        if (seat.shown or seat.mucked) and not seat.hole_cards:
            raise _invalid("hand.seats.shown", "shown or mucked cards must be recorded")


def _check_actions(record: history_pb2.HandRecord, seat_numbers: set[int]) -> None:
    if len(record.actions) > MAX_ACTIONS:
        raise _invalid("hand.actions", f"at most {MAX_ACTIONS} actions")
    holes = {seat.seat: [card.index for card in seat.hole_cards] for seat in record.seats}
    street_bets: dict[int, int] = {}  # chips each seat put in on the current street
    for position, action in enumerate(record.actions):
        if action.sequence != position:
            raise _invalid("hand.actions.sequence", "actions are numbered 0, 1, 2 ... in order")
        if action.street not in STREETS:
            raise _invalid("hand.actions.street", "street is PREFLOP, FLOP, TURN, RIVER or SHOWDOWN")
        if action.kind not in ACTION_KINDS:
            raise _invalid("hand.actions.kind", "unknown action kind")
        if action.kind == "DEAL_BOARD" and action.street not in ("FLOP", "TURN", "RIVER"):
            raise _invalid("hand.actions.street", "board cards are dealt on the flop, turn or river")
        if action.kind != "DEAL_BOARD" and action.seat not in seat_numbers:
            raise _invalid("hand.actions.seat", "the acting seat is not in the hand")
        if action.cause not in CAUSES or (action.cause and action.kind not in DECISIONS):
            raise _invalid("hand.actions.cause", "only player decisions have a cause")
        if not 0 <= action.decision_ms <= MAX_DECISION_MS or (
            action.decision_ms and action.cause != history_pb2.ACTION_CAUSE_PLAYER
        ):
            raise _invalid(
                "hand.actions.decision_ms", "only a player's own decision has a time, of at most a day"
            )
        _chips(action.amount, "hand.actions.amount")
        _chips(action.to, "hand.actions.to")
        cards = _cards(action.cards, "hand.actions.cards")
        if action.kind in ("SHOW", "MUCK") and cards != holes.get(action.seat):
            raise _invalid("hand.actions.cards", "shown or mucked cards are the seat's hole cards")
        if action.kind not in ("SHOW", "MUCK", "DEAL_BOARD") and cards:
            raise _invalid("hand.actions.cards", "only board deals, shows and mucks carry cards")
        if action.kind == "DEAL_BOARD":
            street_bets = {}
        elif action.kind == "UNCALLED_RETURN":
            # Only a bet of this street comes back, at most what the seat put in (the exporters and
            # the fair-play detectors take it off that seat's last wager).
            if action.amount > street_bets.get(action.seat, 0):
                raise _invalid("hand.actions.amount", "an uncalled return gives back at most the seat's bet")
            street_bets[action.seat] -= action.amount
        elif action.kind != "POST_DEAD_SMALL_BLIND":
            street_bets[action.seat] = street_bets.get(action.seat, 0) + action.amount


def _check_pots(record: history_pb2.HandRecord, seat_numbers: set[int]) -> None:
    rake = 0
    for pot in record.pots:
        _chips(pot.amount, "hand.pots.amount")
        _chips(pot.rake, "hand.pots.rake")
        rake += pot.rake
        if len(pot.winner_seats) != len(pot.winner_amounts) or not pot.winner_seats:
            raise _invalid("hand.pots.winner_amounts", "each winner seat has one amount")
        if not set(pot.winner_seats) <= seat_numbers or not set(pot.eligible_seats) <= seat_numbers:
            raise _invalid("hand.pots.winner_seats", "winners are seats of the hand")
        if any(amount < 0 for amount in pot.winner_amounts) or sum(pot.winner_amounts) != pot.amount:
            raise _invalid("hand.pots.winner_amounts", "the winners' amounts add up to the pot")
    if rake != record.rake:
        raise _invalid("hand.rake", "the rake is the sum of the pots' rake")


def _check_house_game(record: history_pb2.HandRecord, seat_numbers: set[int], poker: bool) -> None:
    if poker:
        raise _invalid("hand.house_game", "only house-game rounds have house-game fields")
    game = record.house_game
    _cards(game.dealer_cards, "hand.house_game.dealer_cards")
    _chips(game.house_bank_change, "hand.house_game.house_bank_change", signed=True)
    _chips(game.jackpot_change, "hand.house_game.jackpot_change", signed=True)
    nets: dict[int, int] = {}
    for box in game.boxes:
        if box.seat not in seat_numbers:
            raise _invalid("hand.house_game.boxes.seat", "a box belongs to a seat of the round")
        _cards(box.cards, "hand.house_game.boxes.cards")
        for line in box.lines:
            check_code(line.item, "hand.house_game.boxes.lines.item")
            check_code(line.reason, "hand.house_game.boxes.lines.reason")
            if line.outcome not in HOUSE_LINE_OUTCOMES:
                raise _invalid("hand.house_game.boxes.lines.outcome", "outcome is WON, LOST or RETURNED")
            _chips(line.stake, "hand.house_game.boxes.lines.stake")
            _chips(line.withheld, "hand.house_game.boxes.lines.withheld")
            _chips(line.player_change, "hand.house_game.boxes.lines.player_change", signed=True)
            nets[box.seat] = nets.get(box.seat, 0) + line.player_change
    for decision in game.decisions:
        check_code(decision.decision, "hand.house_game.decisions.decision")
        _chips(decision.amount, "hand.house_game.decisions.amount")
        _chips(decision.insurance, "hand.house_game.decisions.insurance")
    for seat in record.seats:
        if nets.get(seat.seat, 0) != seat.net_result:
            raise _invalid("hand.seats.net_result", "a seat's net result is the sum of its boxes' lines")


def _check_conservation(record: history_pb2.HandRecord, poker: bool) -> None:
    """Every chip is accounted for: the seats' results plus rake (or house bank and jackpot) are 0."""
    nets = sum(seat.net_result for seat in record.seats)
    if record.voided:
        if nets or record.rake or record.pots:
            raise _invalid("hand.voided", "a voided hand moves no chips")
        return
    if poker:
        if nets + record.rake != 0:
            raise _invalid("hand.seats.net_result", "the seats' results and the rake must add up to zero")
        return
    game = record.house_game
    if nets + game.house_bank_change + game.jackpot_change != 0:
        raise _invalid("hand.house_game.house_bank_change", "the round's changes must add up to zero")


@dataclass(frozen=True)
class Viewer:
    """Who reads: a player (their own hands only) or an admin (everything, rules 17)."""

    subject: str
    admin: bool = False


def participant_seat(record: history_pb2.HandRecord, player_id: str) -> history_pb2.HandSeat | None:
    return next((seat for seat in record.seats if seat.player_id == player_id), None)


def _hidden(count: int) -> list[common_pb2.Card]:
    return [common_pb2.Card(hidden=True) for _ in range(count)]


def view_for(record: history_pb2.HandRecord, viewer: Viewer) -> history_pb2.HandRecord | None:
    """The copy of the record `viewer` may see, or None when they may not see the hand at all."""
    if viewer.admin:
        view = history_pb2.HandRecord()
        view.CopyFrom(record)
        return view
    own = participant_seat(record, viewer.subject)
    if own is None:
        return None
    view = history_pb2.HandRecord()
    view.CopyFrom(record)
    visible = {seat.seat for seat in view.seats if seat.shown} | {own.seat}
    for seat in view.seats:
        # The device and network signals are fair-play evidence for operators only (rules 17).
        seat.client_fingerprint = ""
        seat.network_fingerprint = ""
        if seat.seat != own.seat:
            # Another player is their display name, never their id (a Telegram account). A record
            # written before tables sent names carried the id as the name (`tg:<account>`); no
            # display name holds a `:` (the lobby's rule), so such a seat is named by its number.
            if not seat.display_name or ":" in seat.display_name:
                seat.display_name = f"Seat {seat.seat + 1}"
            seat.player_id = ""
        if seat.seat not in visible:
            count = len(seat.hole_cards)
            del seat.hole_cards[:]
            seat.hole_cards.extend(_hidden(count))
    for action in view.actions:
        # Decision times are fair-play evidence (automation) for operators only, like the signals.
        action.decision_ms = 0
        # Rules 16: a mucked hand stays hidden from everyone but its owner.
        if action.kind == "MUCK" and action.seat not in visible:
            count = len(action.cards)
            del action.cards[:]
            action.cards.extend(_hidden(count))
    for box in view.house_game.boxes:
        if box.seat != own.seat and not box.shown:
            count = len(box.cards)
            del box.cards[:]
            box.cards.extend(_hidden(count))
    return view


def summary_of(record: history_pb2.HandRecord, viewer: Viewer) -> history_pb2.HandSummary:
    own = participant_seat(record, viewer.subject)
    return history_pb2.HandSummary(
        hand_id=record.hand_id,
        table_id=record.table_id,
        room_id=record.room_id,
        variant=record.variant,
        pool=record.pool,
        start_time=record.start_time,
        end_time=record.end_time,
        net_result=own.net_result if own is not None else 0,
    )
