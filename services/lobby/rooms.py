"""Rooms of the catalogue: the record, its validation, and the text checks every field shares.

Pure: no I/O, no grpc. The adapter turns protobuf into `RoomSpec` and back; the application stores
them. A room's stake fields depend on its variant (blinds and step for no-limit, small/big bet for
fixed-limit, ante range and maximum payout for house games); the others stay 0.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass, replace
from datetime import datetime

from service_runtime.errors import InvalidArgument

MAX_ID_LENGTH = 128
MAX_ROOM_ID_LENGTH = 64
MAX_DISPLAY_NAME_LENGTH = 64
MAX_MESSAGE_LENGTH = 256
MAX_TABLE_COUNT = 100
MAX_CHIPS = 10**12
ROOM_ID_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
# Rules 10: bets move in steps of 5, 25 or 50 chips.
ALLOWED_STEPS = (5, 25, 50)
# Rules 11: the rake model is at most 5% of the pot and at most 30 chips per hand.
MAX_RAKE_BASIS_POINTS = 500
MAX_RAKE_CAP = 30


class Variant(enum.StrEnum):
    NO_LIMIT_HOLDEM = "NO_LIMIT_HOLDEM"
    FIXED_LIMIT_HOLDEM = "FIXED_LIMIT_HOLDEM"
    CASINO_HOLDEM = "CASINO_HOLDEM"
    RUSSIAN_POKER = "RUSSIAN_POKER"

    @property
    def is_cash_game(self) -> bool:
        return self in (Variant.NO_LIMIT_HOLDEM, Variant.FIXED_LIMIT_HOLDEM)


class Pool(enum.StrEnum):
    GRAM = "GRAM"
    MPX = "MPX"


SEAT_LIMITS = {
    Variant.NO_LIMIT_HOLDEM: (2, 9),
    Variant.FIXED_LIMIT_HOLDEM: (2, 10),
    Variant.CASINO_HOLDEM: (1, 7),
    Variant.RUSSIAN_POKER: (1, 7),
}


def check_text(value: str, field: str, max_length: int, *, required: bool = True) -> str:
    """A field's text: FIELD_REQUIRED when empty (if required), FIELD_INVALID when too long or when
    it holds control characters (NUL and friends never reach storage or logs)."""
    if not value:
        if required:
            raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", {"field": field})
        return value
    if len(value) > max_length:
        raise InvalidArgument(
            "FIELD_INVALID", f"{field} is at most {max_length} characters", {"field": field}
        )
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in value):
        raise InvalidArgument("FIELD_INVALID", f"{field} holds control characters", {"field": field})
    return value


def check_id(value: str, field: str, *, required: bool = True) -> str:
    """An id (player, request, table): up to 128 printable characters, no spaces."""
    check_text(value, field, MAX_ID_LENGTH, required=required)
    if any(ch.isspace() for ch in value):
        raise InvalidArgument("FIELD_INVALID", f"{field} holds spaces", {"field": field})
    return value


def check_room_id(value: str, field: str = "room_id") -> str:
    check_text(value, field, MAX_ID_LENGTH)
    if not ROOM_ID_PATTERN.fullmatch(value):
        raise InvalidArgument(
            "FIELD_INVALID", f"{field} is lower-case letters, digits and '-', at most 64", {"field": field}
        )
    return value


@dataclass(frozen=True)
class RoomSpec:
    """What an admin chooses about a room (everything but bookkeeping)."""

    room_id: str
    display_name: str
    variant: Variant
    pool: Pool
    seats_per_table: int
    small_blind: int = 0
    big_blind: int = 0
    step: int = 0
    small_bet: int = 0
    big_bet: int = 0
    min_ante: int = 0
    max_ante: int = 0
    max_payout: int = 0
    min_buy_in: int = 0
    max_buy_in: int = 0
    private: bool = False
    rake_basis_points: int = 0
    rake_cap: int = 0
    rake_no_flop_no_drop: bool = True
    table_count: int = 1

    @property
    def stake(self) -> int:
        """The number ListRooms filters on: big blind, small bet, or smallest ante."""
        if self.variant is Variant.NO_LIMIT_HOLDEM:
            return self.big_blind
        if self.variant is Variant.FIXED_LIMIT_HOLDEM:
            return self.small_bet
        return self.min_ante


@dataclass(frozen=True)
class Room:
    """A stored room: the spec plus its state and bookkeeping."""

    spec: RoomSpec
    disabled: bool
    revision: int
    created_at: datetime
    updated_at: datetime

    @property
    def room_id(self) -> str:
        return self.spec.room_id


def _amount(problems: dict[str, str], field: str, value: int, *, low: int = 1, high: int = MAX_CHIPS) -> None:
    if not low <= value <= high:
        problems.setdefault(field, f"{field} must be between {low} and {high}")


def validate_spec(spec: RoomSpec) -> RoomSpec:
    """The spec if it describes a playable room; else FIELD_INVALID naming the first bad field."""
    check_room_id(spec.room_id, "room.room_id")
    check_text(spec.display_name, "room.display_name", MAX_DISPLAY_NAME_LENGTH)
    problems: dict[str, str] = {}
    low, high = SEAT_LIMITS[spec.variant]
    if not low <= spec.seats_per_table <= high:
        problems["room.seats_per_table"] = (
            f"seats_per_table must be between {low} and {high} for {spec.variant}"
        )
    if not 1 <= spec.table_count <= MAX_TABLE_COUNT:
        problems["table_count"] = f"table_count must be between 1 and {MAX_TABLE_COUNT}"
    zero: tuple[str, ...]
    if spec.variant is Variant.NO_LIMIT_HOLDEM:
        _amount(problems, "room.blinds.small_blind", spec.small_blind)
        _amount(problems, "room.blinds.big_blind", spec.big_blind, low=spec.small_blind or 1)
        if spec.step not in ALLOWED_STEPS:
            problems["room.blinds.step"] = f"step must be one of {ALLOWED_STEPS} (rules 10)"
        zero = ("small_bet", "big_bet", "min_ante", "max_ante", "max_payout")
    elif spec.variant is Variant.FIXED_LIMIT_HOLDEM:
        _amount(problems, "room.limits.small_bet", spec.small_bet, low=2)
        if spec.small_bet % 2:
            problems["room.limits.small_bet"] = "small_bet must be even: the small blind is half of it"
        if spec.big_bet != 2 * spec.small_bet:
            problems["room.limits.big_bet"] = "big_bet must be twice the small bet"
        zero = ("small_blind", "big_blind", "step", "min_ante", "max_ante", "max_payout")
    else:
        _amount(problems, "room.antes.min_ante", spec.min_ante)
        _amount(problems, "room.antes.max_ante", spec.max_ante, low=spec.min_ante or 1)
        _amount(problems, "room.antes.max_payout", spec.max_payout, low=spec.max_ante or 1)
        zero = ("small_blind", "big_blind", "step", "small_bet", "big_bet")
    if spec.variant.is_cash_game:
        _amount(problems, "room.min_buy_in", spec.min_buy_in, low=spec.stake or 1)
        _amount(problems, "room.max_buy_in", spec.max_buy_in, low=max(spec.min_buy_in, 1))
        if not 0 <= spec.rake_basis_points <= MAX_RAKE_BASIS_POINTS:
            problems["room.rake_basis_points"] = (
                f"rake_basis_points must be 0 to {MAX_RAKE_BASIS_POINTS} (rules 11)"
            )
        if not 0 <= spec.rake_cap <= MAX_RAKE_CAP:
            problems["room.rake_cap"] = f"rake_cap must be 0 to {MAX_RAKE_CAP} chips (rules 11)"
    else:
        for name in ("min_buy_in", "max_buy_in", "rake_basis_points", "rake_cap"):
            if getattr(spec, name):
                problems[f"room.{name}"] = f"{name} must be 0 in a house game"
    for name in zero:
        if getattr(spec, name):
            problems.setdefault(f"room.{name}", f"{name} does not belong to a {spec.variant} room")
    if problems:
        field, message = next(iter(problems.items()))
        raise InvalidArgument("FIELD_INVALID", message, {"field": field})
    return spec


def with_changes(current: RoomSpec, new: RoomSpec) -> RoomSpec:
    """`new` over `current`, keeping what a room cannot change (id, variant, pool, seats)."""
    return replace(
        new,
        room_id=current.room_id,
        variant=current.variant,
        pool=current.pool,
        seats_per_table=current.seats_per_table,
    )
