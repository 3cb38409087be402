"""The payouts screen and GetPlayFigures' purchases and withdrawals (issue 38) read the transfers of
one kind over a window: an index on kind and time, so they read those payments, not the journal.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("transfers_kind_created_at", "transfers", ["kind", "created_at"])


def downgrade() -> None:
    op.drop_index("transfers_kind_created_at", table_name="transfers")
