"""Typed errors of the house games, each with a stable UPPER_SNAKE reason for the gRPC mapping.

Every error subclasses :class:`HouseGameError` (itself a ``ValueError``), so a caller may catch the
generic one; the table service maps the subclasses to status codes (bad input INVALID_ARGUMENT,
illegal in the current state FAILED_PRECONDITION) and copies ``reason`` into ``ErrorInfo.reason``.
"""

from __future__ import annotations


class HouseGameError(ValueError):
    """Generic house-game error; ``reason`` is stable, the message is for humans only."""

    default_reason = "HOUSE_GAME_ERROR"

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or self.default_reason


class InvalidDeckError(HouseGameError):
    """The deck given by the caller is not a permutation of the 52 card codes 0..51 (INVALID_DECK),
    or ran out (DECK_EXHAUSTED, which the round's own checks prevent)."""

    default_reason = "INVALID_DECK"


class InvalidSettingsError(HouseGameError):
    """A pay table or table setting is out of range (negative odds, percentage over 100, ...).

    Reasons: INVALID_SETTINGS, INVALID_JACKPOT (a negative jackpot balance given to a round).
    """

    default_reason = "INVALID_SETTINGS"


class InvalidWagerError(HouseGameError):
    """The wagers placed before the deal break a rule (maps to INVALID_ARGUMENT).

    Reasons: NO_BOXES, TOO_MANY_BOXES, DUPLICATE_BOX, BAD_BOX, NON_POSITIVE_STAKE, NOT_IN_THIS_GAME,
    BOXES_NOT_ADJACENT, UNEQUAL_LIGHT_ANTES, TOO_MANY_LIGHT_BOXES, BONUS_ON_LIGHT_BOX,
    BONUS_AMOUNT_NOT_ALLOWED.
    """

    default_reason = "INVALID_WAGER"


class IllegalDecisionError(HouseGameError):
    """A decision that the rules do not allow now (maps to FAILED_PRECONDITION).

    Reasons: UNKNOWN_BOX, WRONG_PHASE, NOT_THIS_BOX_TURN, ALREADY_DECIDED, DARK_BOX, SECOND_EXCHANGE,
    EXCHANGE_ON_MULTI_BOX, BAD_EXCHANGE_CARDS, DECK_EXHAUSTED, INSURANCE_WITHOUT_THREE_OF_A_KIND,
    INSURANCE_ON_MULTI_BOX, INSURANCE_ON_DARK_BOX, INSURANCE_OUT_OF_RANGE, BUY_GAME_ON_MULTI_BOX,
    BOX_NOT_IN_PLAY, DECISIONS_PENDING.
    """

    default_reason = "ILLEGAL_DECISION"
