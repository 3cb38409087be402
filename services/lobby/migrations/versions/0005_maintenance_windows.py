"""Scheduled maintenance windows: a scope's switches are in force from `starts_at` (NULL: from when
they were set) until `ends_at` (NULL: until switched off). Rows of before keep NULL in both: in force
as they were.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable columns: SQLite adds them without a batch copy.
    op.add_column("lobby_maintenance", sa.Column("starts_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("lobby_maintenance", sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("lobby_maintenance") as batch:
        batch.drop_column("ends_at")
        batch.drop_column("starts_at")
