"""GetPlayFigures (the back office's dashboard, issue 38) reads the settlements of the last hour and
of the day: an index on their time, so the dashboard reads a window, not the whole history.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("hand_settlements_created_at", "hand_settlements", ["created_at"])


def downgrade() -> None:
    op.drop_index("hand_settlements_created_at", table_name="hand_settlements")
