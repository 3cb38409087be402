"""Typed engine errors: every refusal carries a stable UPPER_SNAKE ``reason`` the services map to gRPC."""

from __future__ import annotations


class EngineError(ValueError):
    """Base of every error the engine raises; ``reason`` is stable, the message is for people."""

    reason: str = "ENGINE_ERROR"

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class InvalidCardError(EngineError):
    """A card int outside 0..51, bad card text, or a duplicated card."""

    reason = "INVALID_CARD"


class InvalidHandSizeError(EngineError):
    """The evaluator takes exactly 5, 6 or 7 distinct cards."""

    reason = "INVALID_HAND_SIZE"


class InvalidConfigError(EngineError):
    """A hand or table configuration that cannot be played (bad stacks, blinds, deck, seats)."""

    reason = "INVALID_CONFIG"


class IllegalActionError(EngineError):
    """An action refused in the current state; the state is left unchanged.

    ``reason`` is one of NOT_YOUR_TURN, CHECK_NOT_ALLOWED, NOTHING_TO_CALL, BET_NOT_ALLOWED,
    RAISE_NOT_ALLOWED, BET_TOO_SMALL, RAISE_TOO_SMALL, AMOUNT_TOO_LARGE, AMOUNT_NOT_ON_STEP,
    NOT_IN_HAND, HAND_IS_OVER, SHOWDOWN_NOT_PENDING, UNKNOWN_SEAT.
    """

    reason = "ILLEGAL_ACTION"


class SeatingError(EngineError):
    """A seating change refused between hands (seat taken, unknown seat, ...)."""

    reason = "SEATING_ERROR"
