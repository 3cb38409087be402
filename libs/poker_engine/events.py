"""Immutable events: every state change of a hand returns some, and their list is the hand's record.

Each event is a frozen record with a stable ``kind`` and a JSON-ready ``to_dict``; cards appear in text
form there. Hidden information (hole cards, mucked cards) only ever appears in HoleCardsDealt and
CardsMucked, which ``views`` redacts per recipient.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from poker_engine.cards import cards_text
from poker_engine.config import PostKind, Variant


class Street(StrEnum):
    PREFLOP = "PREFLOP"
    FLOP = "FLOP"
    TURN = "TURN"
    RIVER = "RIVER"
    SHOWDOWN = "SHOWDOWN"
    COMPLETE = "COMPLETE"


class ActionKind(StrEnum):
    FOLD = "FOLD"
    CHECK = "CHECK"
    CALL = "CALL"
    BET = "BET"
    RAISE = "RAISE"


class ActionCause(StrEnum):
    PLAYER = "PLAYER"
    # Rules 9: on timeout the server checks when a check is allowed, otherwise folds; never calls.
    TIMEOUT = "TIMEOUT"
    # Rules 12: leaving during a hand is a fold at once; chips already in stay in the pot.
    LEFT_TABLE = "LEFT_TABLE"


@dataclass(frozen=True, slots=True)
class SeatInfo:
    seat: int
    player_id: str
    stack: int


@dataclass(frozen=True, slots=True)
class HandStarted:
    kind: ClassVar[str] = "HAND_STARTED"
    hand_id: str
    variant: Variant
    button: int
    small_blind: int
    big_blind: int
    small_bet: int
    big_bet: int
    step: int
    rake_basis_points: int
    rake_cap: int
    seats: tuple[SeatInfo, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "hand_id": self.hand_id,
            "variant": self.variant.value,
            "button": self.button,
            "small_blind": self.small_blind,
            "big_blind": self.big_blind,
            "small_bet": self.small_bet,
            "big_bet": self.big_bet,
            "step": self.step,
            "rake_basis_points": self.rake_basis_points,
            "rake_cap": self.rake_cap,
            "seats": [{"seat": s.seat, "player_id": s.player_id, "stack": s.stack} for s in self.seats],
        }


@dataclass(frozen=True, slots=True)
class BlindPosted:
    kind: ClassVar[str] = "BLIND_POSTED"
    seat: int
    post: PostKind
    amount: int
    all_in: bool

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "post": self.post.value, "amount": self.amount,
                "all_in": self.all_in}  # fmt: skip


@dataclass(frozen=True, slots=True)
class HoleCardsDealt:
    """``cards`` is empty in a view for anyone but the owner."""

    kind: ClassVar[str] = "HOLE_CARDS_DEALT"
    seat: int
    cards: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "cards": cards_text(self.cards) if self.cards else None}


@dataclass(frozen=True, slots=True)
class PlayerActed:
    """``added`` chips moved from the stack this action; ``to`` is the player's total bet this street."""

    kind: ClassVar[str] = "PLAYER_ACTED"
    seat: int
    action: ActionKind
    added: int
    to: int
    all_in: bool
    cause: ActionCause = ActionCause.PLAYER

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "action": self.action.value, "added": self.added,
                "to": self.to, "all_in": self.all_in, "cause": self.cause.value}  # fmt: skip


@dataclass(frozen=True, slots=True)
class BoardDealt:
    kind: ClassVar[str] = "BOARD_DEALT"
    street: Street
    cards: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "street": self.street.value, "cards": cards_text(self.cards)}


@dataclass(frozen=True, slots=True)
class UncalledBetReturned:
    kind: ClassVar[str] = "UNCALLED_BET_RETURNED"
    seat: int
    amount: int

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "amount": self.amount}


@dataclass(frozen=True, slots=True)
class CardsShown:
    kind: ClassVar[str] = "CARDS_SHOWN"
    seat: int
    cards: tuple[int, ...]
    description: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "cards": cards_text(self.cards),
                "description": self.description}  # fmt: skip


@dataclass(frozen=True, slots=True)
class CardsMucked:
    """A losing hand not shown; ``cards`` is kept for the full record and empty in other views."""

    kind: ClassVar[str] = "CARDS_MUCKED"
    seat: int
    cards: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "cards": cards_text(self.cards) if self.cards else None}


@dataclass(frozen=True, slots=True)
class PotAwarded:
    """One pot after rake; ``winners`` are (seat, amount) clockwise from the left of the button.

    ``hand_description`` names the hand that won it at a showdown ("Two pair, Aces and Kings"); it is
    empty when everyone else folded (nothing was shown)."""

    kind: ClassVar[str] = "POT_AWARDED"
    index: int
    amount: int
    rake: int
    eligible: tuple[int, ...]
    winners: tuple[tuple[int, int], ...]
    hand_description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, "amount": self.amount, "rake": self.rake,
                "eligible": list(self.eligible),
                "winners": [{"seat": seat, "amount": amount} for seat, amount in self.winners],
                "hand_description": self.hand_description}  # fmt: skip


@dataclass(frozen=True, slots=True)
class SeatResult:
    seat: int
    player_id: str
    starting_stack: int
    final_stack: int

    @property
    def net(self) -> int:
        return self.final_stack - self.starting_stack


@dataclass(frozen=True, slots=True)
class HandEnded:
    """The settlement: one linked cashier batch moves each ``net`` between seat accounts plus ``rake``.

    ``sum(r.net for r in results) + rake == 0`` always.
    """

    kind: ClassVar[str] = "HAND_ENDED"
    results: tuple[SeatResult, ...]
    rake: int
    pots: tuple[PotAwarded, ...]
    uncalled: tuple[UncalledBetReturned, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "rake": self.rake,
            "results": [
                {
                    "seat": r.seat,
                    "player_id": r.player_id,
                    "starting_stack": r.starting_stack,
                    "final_stack": r.final_stack,
                    "net": r.net,
                }
                for r in self.results
            ],
        }


Event = (
    HandStarted | BlindPosted | HoleCardsDealt | PlayerActed | BoardDealt | UncalledBetReturned | CardsShown
    | CardsMucked | PotAwarded | HandEnded
)  # fmt: skip
