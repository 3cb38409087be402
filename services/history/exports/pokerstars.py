"""PokerStars-style hand-history text, the format trackers (PokerTracker, HM3) and solvers import.

Rendered from a reader's view of the record (`records.view_for`), so the text holds exactly the
cards that reader may see: "Dealt to" only for the reader (every seat for an admin), shown cards,
and never a mucked or unshown hand of someone else. Seats are numbered from 1 as PokerStars does;
amounts are whole chips. Hands are separated by two blank lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker_engine.config import standard_blind_seats
from poker_engine.evaluator import strength_of
from services.history.exports.names import export_names
from services.history.exports.pokerstars_words import hand_name, header_time

CONTENT_TYPE = "text/plain; charset=utf-8"
_STREET_HEADERS = {"FLOP": "FLOP", "TURN": "TURN", "RIVER": "RIVER"}


def _cards(cards: Iterable[common_pb2.Card]) -> str:
    return " ".join(card.text for card in cards)


def _visible(cards: Iterable[common_pb2.Card]) -> bool:
    cards = list(cards)
    return bool(cards) and not any(card.hidden for card in cards)


def _game(record: history_pb2.HandRecord) -> str:
    if record.variant == common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM:
        return f"Hold'em Limit ({record.small_bet}/{record.big_bet})"
    return f"Hold'em No Limit ({record.small_blind}/{record.big_blind})"


def _description(record: history_pb2.HandRecord, cards: Iterable[common_pb2.Card]) -> str:
    every = [card.index for card in cards] + [card.index for card in record.board]
    return hand_name(strength_of(every)) if len(every) >= 5 else ""


def pot_labels(count: int) -> list[str]:
    """PokerStars' pot names: `pot` alone; else `main pot`, then `side pot` when there is one side pot
    and `side pot-1`, `side pot-2`, ... from two on."""
    if count <= 1:
        return ["pot"][:count]
    if count == 2:
        return ["main pot", "side pot"]
    return ["main pot"] + [f"side pot-{i}" for i in range(1, count)]


def render_hand(record: history_pb2.HandRecord, number: int, hero_id: str | None) -> str:
    """One hand as PokerStars text; `hero_id` is the reader (None for an admin's full record)."""
    names = export_names(record)
    when = header_time(record.start_time.ToDatetime(tzinfo=UTC))
    lines = [
        f"PokerStars Hand #{number}: {_game(record)} - {when}",
        f"Table '{record.table_id}' {record.table_size or len(record.seats)}-max "
        f"Seat #{record.button_seat + 1} is the button",
    ]
    lines += [f"Seat {s.seat + 1}: {names[s.seat]} ({s.starting_stack} in chips)" for s in record.seats]
    bets: dict[int, int] = {}
    board: list[common_pb2.Card] = []
    dealt = False
    showdown = False

    def deal_hole_cards() -> None:
        lines.append("*** HOLE CARDS ***")
        for seat in record.seats:
            if (hero_id is None or seat.player_id == hero_id) and _visible(seat.hole_cards):
                lines.append(f"Dealt to {names[seat.seat]} [{_cards(seat.hole_cards)}]")

    walk = _walk_without_pot(record)
    for action in record.actions:
        name = names.get(action.seat, "")
        kind = action.kind
        if kind.startswith("POST_"):
            blind = "small" if kind in ("POST_SMALL_BLIND", "POST_DEAD_SMALL_BLIND") else "big"
            lines.append(
                f"{name}: posts {blind} blind {action.amount}" + (" and is all-in" if action.all_in else "")
            )
            if kind != "POST_DEAD_SMALL_BLIND":
                bets[action.seat] = bets.get(action.seat, 0) + action.amount
            continue
        if not dealt:
            deal_hole_cards()
            dealt = True
        all_in = " and is all-in" if action.all_in else ""
        if kind == "FOLD":
            lines.append(f"{name}: folds")
        elif kind == "CHECK":
            lines.append(f"{name}: checks")
        elif kind == "CALL":
            lines.append(f"{name}: calls {action.amount}{all_in}")
            bets[action.seat] = bets.get(action.seat, 0) + action.amount
        elif kind == "BET":
            lines.append(f"{name}: bets {action.amount}{all_in}")
            bets[action.seat] = action.to
        elif kind == "RAISE":
            lines.append(f"{name}: raises {action.to - max(bets.values(), default=0)} to {action.to}{all_in}")
            bets[action.seat] = action.to
        elif kind == "DEAL_BOARD":
            header = _STREET_HEADERS[action.street]
            earlier = f" [{_cards(board)}]" if board else ""
            board.extend(action.cards)
            lines.append(f"*** {header} ***{earlier} [{_cards(action.cards)}]")
            bets = {}
        elif kind == "UNCALLED_RETURN":
            if walk is None:
                lines.append(f"Uncalled bet ({action.amount}) returned to {name}")
        elif kind in ("SHOW", "MUCK"):
            if not showdown:
                lines.append("*** SHOW DOWN ***")
                showdown = True
            if kind == "SHOW" and _visible(action.cards):
                words = _description(record, action.cards)
                lines.append(f"{name}: shows [{_cards(action.cards)}]" + (f" ({words})" if words else ""))
            else:
                lines.append(f"{name}: mucks hand")
    if not dealt:
        deal_hole_cards()
    pots = list(record.pots) if walk is None else [walk]
    labels = pot_labels(len(pots))
    for label, pot in zip(labels, pots, strict=True):
        for seat, amount in zip(pot.winner_seats, pot.winner_amounts, strict=True):
            lines.append(f"{names[seat]} collected {amount} from {label}")
    total = sum(pot.amount + pot.rake for pot in pots)
    lines.append("*** SUMMARY ***")
    if len(pots) > 1:
        parts = " ".join(
            f"{label[0].upper() + label[1:]} {pot.amount + pot.rake}."
            for label, pot in zip(labels, pots, strict=True)
        )
        lines.append(f"Total pot {total} {parts} | Rake {record.rake}")
    else:
        lines.append(f"Total pot {total} | Rake {record.rake}")
    if record.board:
        lines.append(f"Board [{_cards(record.board)}]")
    won = {seat: 0 for seat in names}
    for pot in pots:
        for seat, amount in zip(pot.winner_seats, pot.winner_amounts, strict=True):
            won[seat] += amount
    for player in record.seats:
        outcome = _outcome(record, player, won[player.seat])
        lines.append(f"Seat {player.seat + 1}: {names[player.seat]}{_position(record, player)} {outcome}")
    return "\n".join(lines)


def _walk_without_pot(record: history_pb2.HandRecord) -> history_pb2.HandPot | None:
    """The pot PokerStars writes for a walk that has none in the record, else None.

    With no small blind this hand (a dead small blind) and everyone folding to the big blind, the big
    blind's bet comes back uncalled whole and the record has no pot. PokerStars writes a walk as the
    big blind collecting the pot, its own blind back included (`collected 10 from pot`, `Total pot
    10`, `collected (10)`); here that pot is the blind alone, so it is written so, without the
    uncalled-bet line (the chips would be given back twice), and the big blind's result stays 0."""
    if record.pots:
        return None
    returned = [a for a in record.actions if a.kind == "UNCALLED_RETURN"]
    if len(returned) != 1:
        return None
    (back,) = returned
    return history_pb2.HandPot(
        amount=back.amount, winner_seats=[back.seat], winner_amounts=[back.amount], eligible_seats=[back.seat]
    )


def _blind_seats(record: history_pb2.HandRecord) -> tuple[set[int], set[int]]:
    """Seats that posted the small blind and the big blind (the summary marks them)."""
    small = {a.seat for a in record.actions if a.kind == "POST_SMALL_BLIND"}
    big = {a.seat for a in record.actions if a.kind == "POST_BIG_BLIND"}
    if not small and not big and len(record.seats) >= 2:
        standard = standard_blind_seats([s.seat for s in record.seats], record.button_seat)
        return {standard[0]}, {standard[1]}
    return small, big


def _position(record: history_pb2.HandRecord, seat: history_pb2.HandSeat) -> str:
    """` (button)`, ` (small blind)`, ` (big blind)` as PokerStars marks them (heads-up the button is
    also the small blind: ` (button) (small blind)`)."""
    small, big = _blind_seats(record)
    marks = [
        mark
        for mark, holds in (
            ("button", seat.seat == record.button_seat),
            ("small blind", seat.seat in small),
            ("big blind", seat.seat in big),
        )
        if holds
    ]
    return "".join(f" ({mark})" for mark in marks)


_FOLDED_ON = {"PREFLOP": "before Flop", "FLOP": "on the Flop", "TURN": "on the Turn", "RIVER": "on the River"}


def _outcome(record: history_pb2.HandRecord, seat: history_pb2.HandSeat, won: int) -> str:
    """The summary line's ending, in PokerStars' words."""
    if seat.folded:
        street = next(
            (a.street for a in record.actions if a.seat == seat.seat and a.kind == "FOLD"), "PREFLOP"
        )
        put_in = any(a.seat == seat.seat and a.amount and a.kind != "UNCALLED_RETURN" for a in record.actions)
        quiet = " (didn't bet)" if street == "PREFLOP" and not put_in else ""
        return f"folded {_FOLDED_ON.get(street, 'before Flop')}{quiet}"
    if seat.shown and _visible(seat.hole_cards):
        shown = f"showed [{_cards(seat.hole_cards)}]"
        words = _description(record, seat.hole_cards)
        with_hand = f" with {words}" if words else ""
        return f"{shown} and won ({won}){with_hand}" if won else f"{shown} and lost{with_hand}"
    if seat.mucked:
        # Only the reader's own mucked cards are visible in their view (history's privacy rule).
        return f"mucked [{_cards(seat.hole_cards)}]" if _visible(seat.hole_cards) else "mucked"
    return f"collected ({won})" if won else "lost"


def render(records: Iterable[tuple[int, history_pb2.HandRecord]], hero_id: str | None) -> str:
    """Several hands, oldest first, each with its number."""
    return "\n\n\n".join(render_hand(record, number, hero_id) for number, record in records) + "\n"
