"""Fair play (issue 29): the pair totals gain the counters of soft play in multiway pots (strong
hands facing each other's bet and third players' bets, and those raised) and of whipsaws (squeezes
of third players after which the two left the pot to each other). Hands weighed before count 0.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

COLUMNS = (
    "strong_facing_to_second",
    "strong_facing_to_first",
    "strong_raised_to_second",
    "strong_raised_to_first",
    "strong_facing_others_to_second",
    "strong_facing_others_to_first",
    "strong_raised_others_to_second",
    "strong_raised_others_to_first",
    "whipsaw_chances",
    "whipsaws_to_second",
    "whipsaws_to_first",
)


def upgrade() -> None:
    with op.batch_alter_table("history_pair_totals") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.BigInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("history_pair_totals") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
