"""Each hand names the players dealt in, and whether only they may know of it (house-game rounds).

Hands dealt before this revision name nobody: their reveals go to admins only from now on, since
nothing recorded says who played them (issue 23: the deck of a hand gives every folded hole card).

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


def upgrade() -> None:
    with op.batch_alter_table("fairness_hands") as batch:
        batch.add_column(sa.Column("participants", sa.Text(), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("participants_only", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("fairness_hands") as batch:
        batch.drop_column("participants_only")
        batch.drop_column("participants")
