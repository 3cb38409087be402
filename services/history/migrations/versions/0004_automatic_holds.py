"""Automatic holds (issue 43): the withdrawal holds a strong chip-dumping case makes due, recorded in
the RecordHand transaction that made it strong and applied at the cashier afterwards, and the
operators' ResolveCase decisions (by request id; a CONFIRM, then at most a RELEASE, per case).

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
    op.create_table(
        "history_auto_holds",
        sa.Column("case_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("due_us", sa.BigInteger(), nullable=False),
        sa.Column("held_us", sa.BigInteger(), nullable=True),
        sa.Column("released_us", sa.BigInteger(), nullable=True),
        sa.Column("note", sa.String(length=256), nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("case_id", "player_id", name=op.f("pk_history_auto_holds")),
    )
    op.create_index(op.f("ix_history_auto_holds_state_due_us"), "history_auto_holds", ["state", "due_us"])
    op.create_index(
        op.f("ix_history_auto_holds_player_id_state"), "history_auto_holds", ["player_id", "state"]
    )
    op.create_table(
        "history_case_resolutions",
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("case_id", sa.String(length=128), nullable=False),
        sa.Column("resolution", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=128), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("resolved_us", sa.BigInteger(), nullable=False),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_history_case_resolutions")),
        sa.UniqueConstraint(
            "case_id", "resolution", name=op.f("uq_history_case_resolutions_case_id_resolution")
        ),
    )


def downgrade() -> None:
    op.drop_table("history_case_resolutions")
    op.drop_index(op.f("ix_history_auto_holds_player_id_state"), table_name="history_auto_holds")
    op.drop_index(op.f("ix_history_auto_holds_state_due_us"), table_name="history_auto_holds")
    op.drop_table("history_auto_holds")
