"""Purchase and withdrawal rules (no I/O): exchange rates in integer minor units and the Stars lock.

Rates (rules section 7): 1 GRAM = 1,000 GRAM-pool chips; 1 MPX = 10 MPX-pool chips; 1 Telegram Star
= 10 GRAM-pool chips. GRAM and MPX travel on the wire in nano units (10^-9), Stars in whole Stars.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from service_runtime.errors import FailedPrecondition, InvalidArgument
from services.cashier.ledger import INT64_MAX, MAX_AMOUNT, Pool


class PaymentSource(enum.StrEnum):
    GRAM = "GRAM"
    MPX = "MPX"
    TELEGRAM_STARS = "TELEGRAM_STARS"


@dataclass(frozen=True)
class Rate:
    """`chips = amount_minor * chips_per_unit / minor_per_unit`, which must be a whole number."""

    pool: Pool
    minor_per_unit: int
    chips_per_unit: int
    withdrawable: bool


RATES: dict[PaymentSource, Rate] = {
    PaymentSource.GRAM: Rate(Pool.GRAM, minor_per_unit=10**9, chips_per_unit=1_000, withdrawable=True),
    PaymentSource.MPX: Rate(Pool.MPX, minor_per_unit=10**9, chips_per_unit=10, withdrawable=True),
    # Chips bought with Stars belong to the GRAM pool and are never paid out as Stars.
    PaymentSource.TELEGRAM_STARS: Rate(Pool.GRAM, minor_per_unit=1, chips_per_unit=10, withdrawable=False),
}


def chips_for(source: PaymentSource, amount_minor: int) -> int:
    """The whole chips an amount in minor units is worth, or INVALID_ARGUMENT."""
    if not 0 < amount_minor <= INT64_MAX:
        raise InvalidArgument(
            "AMOUNT_INVALID", "amount_minor must be between 1 and 2^63-1", {"field": "amount_minor"}
        )
    rate = RATES[source]
    chips, remainder = divmod(amount_minor * rate.chips_per_unit, rate.minor_per_unit)
    if remainder:
        step = rate.minor_per_unit // rate.chips_per_unit if rate.minor_per_unit >= rate.chips_per_unit else 1
        raise InvalidArgument(
            "AMOUNT_NOT_WHOLE_CHIPS",
            f"the amount must be a multiple of {step} minor units (one chip)",
            {"field": "amount_minor", "minor_units_per_chip": str(step)},
        )
    if chips > MAX_AMOUNT:
        raise InvalidArgument(
            "AMOUNT_INVALID", "the amount is worth more than 10^17 chips", {"field": "amount_minor"}
        )
    return chips


@dataclass(frozen=True)
class StarsLot:
    """Chips bought with Stars, locked against withdrawal until `unlocks_at`."""

    chips: int
    unlocks_at: datetime


def locked_amount(balance: int, lots: Sequence[StarsLot], now: datetime) -> int:
    """The part of a GRAM wallet that may not be withdrawn yet.

    Locked chips count as spent last: whatever the player won or lost since, the wallet keeps up to
    the still-locked Stars chips locked, so Stars can never be turned into GRAM early through play.
    """
    still_locked = sum(lot.chips for lot in lots if lot.unlocks_at > now)
    return max(0, min(balance, still_locked))


def unlock_time(amount: int, balance: int, lots: Sequence[StarsLot], now: datetime) -> datetime | None:
    """The earliest time from which `amount` can be withdrawn, if the balance stays as it is."""
    for lot in sorted(lots, key=lambda lot: lot.unlocks_at):
        if lot.unlocks_at <= now:
            continue
        later = lot.unlocks_at
        if balance - locked_amount(balance, lots, later) >= amount:
            return later
    return None


def check_withdrawable(amount: int, balance: int, lots: Sequence[StarsLot], now: datetime) -> None:
    """FAILED_PRECONDITION FUNDS_LOCKED (with `unlocks_at`) when locked Stars chips are in the way."""
    locked = locked_amount(balance, lots, now)
    if amount <= balance and amount > balance - locked:
        when = unlock_time(amount, balance, lots, now)
        metadata = {"locked_amount": str(locked), "available_amount": str(balance - locked)}
        if when is not None:
            metadata["unlocks_at"] = when.isoformat()
        raise FailedPrecondition(
            "FUNDS_LOCKED", "part of the balance was bought with Telegram Stars and is still locked", metadata
        )
