"""Player profiles' avatars: the Telegram photo a sign-in gave (empty: none) and whether the player's
seats show it (on unless the player turns it off). Profiles made before keep no photo and show it
once a sign-in brings one.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Columns added with a default (SQLite adds a NOT NULL column only with one), so no batch copy.
    op.add_column(
        "lobby_player_profiles",
        sa.Column("avatar_url", sa.String(length=256), nullable=False, server_default=""),
    )
    op.add_column(
        "lobby_player_profiles",
        sa.Column("show_avatar", sa.Boolean(), nullable=False, server_default=sa.true()),
    )


def downgrade() -> None:
    with op.batch_alter_table("lobby_player_profiles") as batch:
        batch.drop_column("show_avatar")
        batch.drop_column("avatar_url")
