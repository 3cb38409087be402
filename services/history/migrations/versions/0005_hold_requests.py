"""The operators' HoldPlayer / ReleasePlayer requests, claimed by request id before the cashier is
asked, so a hold and its audit event go together (a retry after a failure in between completes both)
and a request id reused for another change is refused before anything is held.

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
    op.create_table(
        "history_hold_requests",
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("held", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.String(length=128), nullable=False),
        sa.Column("case_id", sa.String(length=128), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("requested_us", sa.BigInteger(), nullable=False),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_history_hold_requests")),
    )


def downgrade() -> None:
    op.drop_table("history_hold_requests")
