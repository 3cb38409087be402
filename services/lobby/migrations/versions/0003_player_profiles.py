"""Player profiles: the display name other players see, unique ignoring case.

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
    op.create_table(
        "lobby_player_profiles",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("display_name", sa.String(length=64), nullable=False),
        sa.Column("name_key", sa.String(length=128), nullable=False),
        sa.Column("update_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("name_changed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_lobby_player_profiles")),
        sa.UniqueConstraint("name_key", name=op.f("uq_lobby_player_profiles_name_key")),
    )


def downgrade() -> None:
    op.drop_table("lobby_player_profiles")
