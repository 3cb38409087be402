"""The staff directory (issue 38): `history_staff_members`, who may sign in to the back office
besides the gateway's Secret allow-list, and `history_staff_changes`, each SetStaffMember by its
request id.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "history_staff_members",
        sa.Column("telegram_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(length=56), nullable=False),
        sa.Column("name_key", sa.String(length=56), nullable=False),
        sa.Column("roles", sa.String(length=128), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("updated_by", sa.String(length=160), nullable=False),
        sa.Column("updated_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("telegram_id", name=op.f("pk_history_staff_members")),
        sa.UniqueConstraint("name_key", name=op.f("uq_history_staff_members_name_key")),
    )
    op.create_table(
        "history_staff_changes",
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("actor", sa.String(length=160), nullable=False),
        sa.Column("telegram_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=56), nullable=False),
        sa.Column("asked_roles", sa.String(length=128), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("roles", sa.String(length=128), nullable=False),
        sa.Column("applied_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_history_staff_changes")),
    )


def downgrade() -> None:
    op.drop_table("history_staff_changes")
    op.drop_table("history_staff_members")
