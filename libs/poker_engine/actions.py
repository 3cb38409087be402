"""What the player to act may do: one LegalActions value drives both the client's buttons and validation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poker_engine.events import ActionKind


@dataclass(frozen=True, slots=True)
class LegalActions:
    """Legal actions of the player to act.

    Amounts are "to" amounts: the player's total bet this street after the action. ``min_to`` ..
    ``max_to`` is the range for BET (when ``can_bet``) or RAISE (when ``can_raise``); valid amounts in
    that range are multiples of ``step``, plus ``all_in_to`` exactly when it is at most ``max_to`` (the
    rest of the stack, which may be off the step or below ``min_to``; in no-limit ``max_to`` is the
    all-in). ``call_amount`` is what a call adds (capped at the stack).
    """

    seat: int
    can_fold: bool
    can_check: bool
    can_call: bool
    call_amount: int
    can_bet: bool
    can_raise: bool
    min_to: int
    max_to: int
    step: int
    all_in_to: int

    @property
    def kinds(self) -> tuple[ActionKind, ...]:
        flags = (
            (ActionKind.FOLD, self.can_fold),
            (ActionKind.CHECK, self.can_check),
            (ActionKind.CALL, self.can_call),
            (ActionKind.BET, self.can_bet),
            (ActionKind.RAISE, self.can_raise),
        )
        return tuple(kind for kind, allowed in flags if allowed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "actions": [kind.value for kind in self.kinds],
            "call_amount": self.call_amount,
            "min_to": self.min_to,
            "max_to": self.max_to,
            "step": self.step,
            "all_in_to": self.all_in_to,
        }


@dataclass(frozen=True, slots=True)
class Action:
    """An action request, as the table service or a replay file gives it. ``to`` only for BET/RAISE."""

    seat: int
    kind: ActionKind
    to: int | None = None
