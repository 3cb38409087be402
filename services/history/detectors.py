"""Fair-play detectors over recorded hands (rules 17): chip dumping and two accounts on one device.

Pure: no I/O. The application runs them on every hand it records (the full record, never a
player's view) and stores what they find as audit events for operators.

Chip dumping ("передача фишек заранее выбранному игроку"): a player repeatedly loses large pots to
the same opponent in ways that make no sense for a player trying to win. One hand is a *signal*
when a player loses at least `LARGE_LOSS_BIG_BLINDS` big blinds, most of it to one opponent, and
either folds to a bet of that opponent that was small next to the pot (`FOLD_TO_SMALL_BET`), or
called off and reached the showdown with hole cards that do not improve the board
(`HOPELESS_CALL`). Single signals happen in honest play; the pair is flagged only when signals
repeat: at least `MIN_SIGNALS` of them, in at least `MIN_SIGNAL_SHARE` of the hands the two played
together, moving at least `MIN_TOTAL_BIG_BLINDS` big blinds one way, all within the loser's last
`WINDOW_HANDS` hands.

Shared device ("игра с нескольких аккаунтов за одним столом"): two different players dealt into
one hand with the same client fingerprint (which the gateway derives from the device or address).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from poker.history.v1 import history_pb2
from poker_engine.evaluator import category_of, strength_of
from services.history.records import POKER_VARIANTS

LARGE_LOSS_BIG_BLINDS = 10
# A call that costs at most this share of the pot is "small": folding to it throws the pot away.
SMALL_BET_POT_SHARE = 0.25
MIN_SIGNALS = 3
MIN_SIGNAL_SHARE = 0.2
MIN_TOTAL_BIG_BLINDS = 30
# The verdict looks at the loser's most recent hands only, so its cost is bounded.
WINDOW_HANDS = 1000

SUSPECTED_CHIP_DUMPING = "SUSPECTED_CHIP_DUMPING"
SHARED_CLIENT_FINGERPRINT = "SHARED_CLIENT_FINGERPRINT"
DETECTOR_ACTOR = "history-detectors"


@dataclass(frozen=True)
class DumpingSignal:
    """One hand in which `loser_id` lost `amount` chips to `winner_id` in a suspicious way."""

    loser_id: str
    winner_id: str
    amount: int
    pattern: str


@dataclass(frozen=True)
class PairHistory:
    """What the store knows about a (loser, winner) pair, for the verdict."""

    signals: int
    hands_together: int
    total_amount: int
    big_blind: int


def _last_decision(record: history_pb2.HandRecord, seat: int) -> history_pb2.HandAction | None:
    decisions = [
        a for a in record.actions if a.seat == seat and a.kind in ("FOLD", "CHECK", "CALL", "BET", "RAISE")
    ]
    return decisions[-1] if decisions else None


def _fold_faced_small_bet(record: history_pb2.HandRecord, seat: int, winner_seat: int) -> bool:
    """Did `seat` fold, in person, facing a bet of `winner_seat` that cost little next to the pot?"""
    pot = 0
    bets: dict[int, int] = {}
    last_aggressor = -1
    for action in record.actions:
        if action.kind == "DEAL_BOARD":
            bets = {}
            continue
        if action.kind == "UNCALLED_RETURN":
            pot -= action.amount
            continue
        if action.kind == "FOLD" and action.seat == seat:
            to_call = max(bets.values(), default=0) - bets.get(seat, 0)
            return (
                action.cause == history_pb2.ACTION_CAUSE_PLAYER
                and last_aggressor == winner_seat
                and 0 < to_call <= SMALL_BET_POT_SHARE * pot
            )
        if action.amount and action.kind != "POST_DEAD_SMALL_BLIND":
            bets[action.seat] = bets.get(action.seat, 0) + action.amount
        pot += action.amount
        if action.kind in ("BET", "RAISE"):
            last_aggressor = action.seat
    return False


def _hopeless_call(record: history_pb2.HandRecord, seat: history_pb2.HandSeat) -> bool:
    """Did the player call off and show down hole cards that add nothing to the board?"""
    if seat.folded or len(record.board) != 5 or len(seat.hole_cards) != 2:
        return False
    last = _last_decision(record, seat.seat)
    if last is None or last.kind != "CALL":
        return False
    board = [card.index for card in record.board]
    own = category_of(strength_of([*(card.index for card in seat.hole_cards), *board]))
    return own <= category_of(strength_of(board))


def dumping_signals(record: history_pb2.HandRecord) -> list[DumpingSignal]:
    """The chip-dumping signals of one full hand record (none for voided or house-game hands)."""
    if record.voided or record.variant not in POKER_VARIANTS or record.big_blind <= 0:
        return []
    winners = sorted((s for s in record.seats if s.net_result > 0), key=lambda s: -s.net_result)
    if not winners:
        return []
    winner = winners[0]
    signals = []
    for seat in record.seats:
        loss = -seat.net_result
        if seat is winner or loss < LARGE_LOSS_BIG_BLINDS * record.big_blind:
            continue
        if _fold_faced_small_bet(record, seat.seat, winner.seat):
            pattern = "FOLD_TO_SMALL_BET"
        elif _hopeless_call(record, seat):
            pattern = "HOPELESS_CALL"
        else:
            continue
        signals.append(DumpingSignal(seat.player_id, winner.player_id, min(loss, winner.net_result), pattern))
    return signals


def is_chip_dumping(history: PairHistory) -> bool:
    """The verdict over a pair's signals: repeated, frequent and large enough to be no accident."""
    if history.signals < MIN_SIGNALS or history.hands_together <= 0:
        return False
    return (
        history.signals >= MIN_SIGNAL_SHARE * history.hands_together
        and history.total_amount >= MIN_TOTAL_BIG_BLINDS * history.big_blind
    )


def chip_dumping_event_id(pool: int, loser_id: str, winner_id: str) -> str:
    """One event per pair and pool: the operator reviews the pair, not every later hand."""
    digest = hashlib.sha256(f"{pool}\x00{loser_id}\x00{winner_id}".encode()).hexdigest()[:32]
    return f"chip-dumping:{digest}"


@dataclass(frozen=True)
class SharedFingerprint:
    player_ids: tuple[str, ...]
    fingerprint: str


def shared_fingerprints(record: history_pb2.HandRecord) -> list[SharedFingerprint]:
    """Groups of two or more players of one hand that came with the same client fingerprint."""
    groups: dict[str, list[str]] = {}
    for seat in record.seats:
        if seat.client_fingerprint:
            groups.setdefault(seat.client_fingerprint, []).append(seat.player_id)
    return [
        SharedFingerprint(tuple(sorted(players)), fingerprint)
        for fingerprint, players in sorted(groups.items())
        if len(players) > 1
    ]


def shared_fingerprint_event_id(table_id: str, found: SharedFingerprint) -> str:
    """One event per table and group of players."""
    key = "\x00".join((table_id, *found.player_ids))
    return f"shared-fingerprint:{hashlib.sha256(key.encode()).hexdigest()[:32]}"
