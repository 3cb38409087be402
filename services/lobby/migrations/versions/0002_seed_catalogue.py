"""Seed the operator's rooms: no-limit rooms of rules 6, fixed-limit rooms, one Casino Hold'em and one
Russian Poker room per pool. The values are written out here (not imported) so this revision stays
what it was when it ran; tests/lobby/test_catalogue_seed.py compares them with the rules text.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

SEEDED_AT = datetime(2026, 12, 1, tzinfo=UTC)
# Rules 11: the commission is 0% today; the model (at most 5% and 30 chips, no flop no drop) is ready.
RAKE = {"rake_basis_points": 0, "rake_cap": 30, "rake_no_flop_no_drop": True}
# Rules 6: entry, blinds and seats per room; the step (rules 10: 5, 25 or 50) follows the small blind.
NO_LIMIT = [
    ("duel", "Дуэль", 2, 5, 10, 5, 1_000),
    ("classic", "Classic", 4, 5, 10, 5, 1_000),
    ("high-roller", "High Roller", 4, 25, 50, 25, 5_000),
    ("prestige", "Prestige", 4, 50, 100, 50, 10_000),
]
# limit-holdem.txt: small bet = big blind, big bet = twice it, small blind = half a small bet.
# The stakes and buy-ins (10 to 50 big bets) are the operator's choice; the text gives only $5/$10.
FIXED_LIMIT = [(seats, small_bet) for seats in (6, 10) for small_bet in (10, 50)]
# casino-holdem.txt: "Максимальная выплата 50 000"; Russian Poker uses the same table maximum (its text
# names none). Antes 10 to 1,000 per box are the operator's choice; 7 boxes as in house_games.
HOUSE_MAX_PAYOUT = 50_000
HOUSE_ANTES = (10, 1_000)
HOUSE_BOXES = 7

ZERO = {
    "small_blind": 0, "big_blind": 0, "step": 0, "small_bet": 0, "big_bet": 0,
    "min_ante": 0, "max_ante": 0, "max_payout": 0, "min_buy_in": 0, "max_buy_in": 0,
    "rake_basis_points": 0, "rake_cap": 0, "rake_no_flop_no_drop": False,
}  # fmt: skip


def seed_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    common: dict[str, Any] = {"private": False, "table_count": 1, "disabled": False, "revision": 1}
    common |= {"created_at": SEEDED_AT, "updated_at": SEEDED_AT}
    for pool in ("GRAM", "MPX"):
        low = pool.lower()
        for key, name, seats, small, big, step, buy_in in NO_LIMIT:
            rows.append(
                {**common, **ZERO, **RAKE, "room_id": f"nlhe-{low}-{key}", "display_name": f"{name} {pool}",
                 "variant": "NO_LIMIT_HOLDEM", "pool": pool, "seats_per_table": seats, "small_blind": small,
                 "big_blind": big, "step": step, "min_buy_in": buy_in, "max_buy_in": buy_in}
            )  # fmt: skip
        for seats, small_bet in FIXED_LIMIT:
            rows.append(
                {**common, **ZERO, **RAKE, "room_id": f"flhe-{low}-{seats}max-{small_bet}-{2 * small_bet}",
                 "display_name": f"Limit {small_bet}/{2 * small_bet} {seats}-max {pool}",
                 "variant": "FIXED_LIMIT_HOLDEM", "pool": pool, "seats_per_table": seats,
                 "small_bet": small_bet, "big_bet": 2 * small_bet,
                 "min_buy_in": 20 * small_bet, "max_buy_in": 100 * small_bet}
            )  # fmt: skip
        for key, variant, name in (
            ("casino-holdem", "CASINO_HOLDEM", "Casino Hold'em"),
            ("russian-poker", "RUSSIAN_POKER", "Русский покер"),
        ):
            rows.append(
                {**common, **ZERO, "room_id": f"{key}-{low}", "display_name": f"{name} {pool}",
                 "variant": variant, "pool": pool, "seats_per_table": HOUSE_BOXES,
                 "min_ante": HOUSE_ANTES[0], "max_ante": HOUSE_ANTES[1], "max_payout": HOUSE_MAX_PAYOUT}
            )  # fmt: skip
    return rows


def _column_type(value: object) -> Any:
    if isinstance(value, datetime):
        return sa.DateTime(timezone=True)
    if isinstance(value, bool):
        return sa.Boolean()
    return sa.BigInteger() if isinstance(value, int) else sa.String()


def upgrade() -> None:
    first = seed_rows()[0]
    rooms = sa.table("lobby_rooms", *(sa.column(name, _column_type(value)) for name, value in first.items()))
    op.bulk_insert(rooms, seed_rows())


def downgrade() -> None:
    ids = [row["room_id"] for row in seed_rows()]
    rooms = sa.table("lobby_rooms", sa.column("room_id"))
    op.execute(sa.delete(rooms).where(rooms.c.room_id.in_(ids)))
