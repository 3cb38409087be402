"""One trace per hand: a root span from the commitment to the settlement, a child span per phase
(commit, deal, play, settle, then reveal and record after the hand), and under each phase the
outgoing calls it makes, whose server spans in fairness, the cashier and history join the trace.

A hand is its own trace, not a part of whichever call opened its table, so the root starts a new
trace. The table code marks its phases with one call each; the live hand of a table is found by
table id, and a settled hand's context by hand id (for the after-hand queues), kept for a bounded
number of hands. Spans carry table and hand ids and phase names only (tracing.py); the play span's
events carry each decision's seat, action and who took it (the player, the clock, a leave).
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span

from poker_engine.events import ActionCause, Event, PlayerActed
from service_runtime import tracing

# Settled hands whose reveal and record may still be pending; the oldest are forgotten first.
KEPT_SETTLED_HANDS = 10_000

# Who took a decision, as the play span's events say it (the hand record's `cause`).
DECIDED_BY = {ActionCause.PLAYER: "player", ActionCause.TIMEOUT: "clock", ActionCause.LEFT_TABLE: "leave"}


@dataclass
class _LiveHand:
    root: Span
    play: Span | None = None


_live: dict[str, _LiveHand] = {}
# The next hand of a table whose commitment is asked for while its running hand plays (issue 28): its
# trace begins with that commit and becomes the live one once the running hand is settled.
_ahead: dict[str, _LiveHand] = {}
_settled: collections.OrderedDict[str, Span] = collections.OrderedDict()


def _new(table_id: str) -> _LiveHand:
    return _LiveHand(tracing.start_span("hand", root=True, attributes={"poker.table_id": table_id}))


def _hand(table_id: str) -> _LiveHand:
    hand = _live.get(table_id)
    if hand is None:
        ahead = _ahead.pop(table_id, None)
        hand = _live[table_id] = ahead if ahead is not None else _new(table_id)
    return hand


def _next_hand(table_id: str) -> _LiveHand:
    hand = _ahead.get(table_id)
    if hand is None:
        hand = _ahead[table_id] = _new(table_id)
    return hand


@contextlib.contextmanager
def phase(table_id: str, name: str, *, ahead: bool = False) -> Iterator[Span]:
    """A phase of the table's next or running hand, current for the block (its calls are children).
    `ahead`: of the hand after the running one (its commit, asked for while the running hand plays)."""
    hand = _next_hand(table_id) if ahead else _hand(table_id)
    span = tracing.start_span(f"hand.{name}", parent=_context(hand.root))
    try:
        with tracing.current(span):
            yield span
    finally:
        span.end()


def _context(span: Span) -> Context:
    return trace.set_span_in_context(span)


def playing(table_id: str, hand_id: str) -> None:
    """The hand is dealt: its id is known, and its play phase runs until it is over."""
    hand = _hand(table_id)
    hand.root.set_attribute("poker.hand_id", hand_id)
    hand.play = tracing.start_span(
        "hand.play", parent=_context(hand.root), attributes={"poker.hand_id": hand_id}
    )


def actions(table_id: str, events: Iterable[Event]) -> None:
    """The decisions among a step's engine events (a player's Act, the clock's check or fold at the
    turn's end, the fold of a player who left), each an event of the running hand's play span, as
    the hand's record has it: the seat (the engine's, from 0), the action, all-in, and who took it
    (the Act call is its own trace)."""
    hand = _live.get(table_id)
    if hand is None or hand.play is None:
        return
    for event in events:
        if isinstance(event, PlayerActed):
            hand.play.add_event(
                "action",
                {
                    "seat": event.seat,
                    "action": event.action.value,
                    "all_in": event.all_in,
                    # Never raises: the log has the decision already, whatever the span says.
                    "by": DECIDED_BY.get(event.cause, event.cause.value.lower()),
                },
            )


def over(table_id: str) -> None:
    hand = _live.get(table_id)
    if hand is not None and hand.play is not None:
        hand.play.end()
        hand.play = None


def settled(table_id: str, hand_id: str) -> None:
    """The cashier acknowledged the hand: the root ends; reveal and record join it by hand id."""
    over(table_id)
    hand = _live.pop(table_id, None)
    if hand is None:
        return
    hand.root.end()
    _settled[hand_id] = hand.root
    while len(_settled) > KEPT_SETTLED_HANDS:
        _settled.popitem(last=False)


def dropped(table_id: str, reason: str) -> None:
    """The table gave its next hand up before it was dealt (a refused seal, the table closed)."""
    hand = _live.pop(table_id, None)
    if hand is not None:
        if hand.play is not None:
            hand.play.end()
        tracing.mark_error(hand.root, reason)
        hand.root.end()


def closed(table_id: str, reason: str) -> None:
    """The table stopped: its running hand's trace and its next hand's end here."""
    dropped(table_id, reason)
    ahead = _ahead.pop(table_id, None)
    if ahead is not None:
        tracing.mark_error(ahead.root, reason)
        ahead.root.end()


@contextlib.contextmanager
def after_hand(hand_id: str, name: str) -> Iterator[None]:
    """A step after the settlement (reveal, record): a child of the hand's trace when it is known."""
    root = _settled.get(hand_id)
    if root is None:
        yield
        return
    span = tracing.start_span(f"hand.{name}", parent=_context(root), attributes={"poker.hand_id": hand_id})
    try:
        with tracing.current(span):
            yield
    finally:
        span.end()
    if name == "record":
        _settled.pop(hand_id, None)
