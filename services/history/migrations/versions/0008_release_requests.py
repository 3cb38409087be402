"""Four-eyes on releasing held chips (issue 38): `history_release_requests`, one row per release a
staff member of risk asked for (ReleasePlayer, ResolveCase RELEASE), decided by another of finance
(DecideRelease). A CHECK keeps the decider from being the asker, whatever the code does.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "history_release_requests",
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("case_release", sa.Boolean(), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("case_id", sa.String(length=128), nullable=False),
        sa.Column("reason", sa.String(length=128), nullable=False),
        sa.Column("hold_request_id", sa.String(length=64), server_default="", nullable=False),
        sa.Column("asked_by", sa.String(length=160), nullable=False),
        sa.Column("asked_us", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("decision_id", sa.String(length=64), nullable=True),
        sa.Column("decided_by", sa.String(length=160), nullable=True),
        sa.Column("decision_reason", sa.String(length=128), server_default="", nullable=False),
        sa.Column("decided_us", sa.BigInteger(), nullable=True),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.CheckConstraint(
            "decided_by IS NULL OR lower(decided_by) <> lower(asked_by)",
            name=op.f("ck_history_release_requests_four_eyes"),
        ),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_history_release_requests")),
        sa.UniqueConstraint("decision_id", name=op.f("uq_history_release_requests_decision_id")),
    )
    op.create_index(
        "ix_history_release_requests_state_asked_us", "history_release_requests", ["state", "asked_us"]
    )


def downgrade() -> None:
    op.drop_index("ix_history_release_requests_state_asked_us", table_name="history_release_requests")
    op.drop_table("history_release_requests")
