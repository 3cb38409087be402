"""Four-eyes on funding the house (issue 38): a request by one member of finance, a decision by another.

FundHouseAccount let one admin mint chips into a house account alone. `house_funding` keeps each
request (who asked, when, what, why) and its decision (who approved or rejected it, when, why, under
which decision id); an approval's transfer commits with its decision. The database refuses a
decision by the asker (`house_funding_four_eyes`) behind the code's own check.

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
        "house_funding",
        sa.Column(
            "seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("pool", sa.String(length=8), nullable=False),
        sa.Column("account", sa.String(length=16), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(length=128), nullable=False),
        sa.Column("requested_by", sa.String(length=128), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("decision_id", sa.String(length=128), nullable=True),
        sa.Column("decided_by", sa.String(length=128), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decision_reason", sa.String(length=128), nullable=True),
        sa.CheckConstraint("state IN ('PENDING', 'APPROVED', 'REJECTED')", name="house_funding_state_known"),
        sa.CheckConstraint("amount <> 0", name="house_funding_amount_not_zero"),
        sa.CheckConstraint(
            "decided_by IS NULL OR decided_by <> requested_by", name="house_funding_four_eyes"
        ),
        sa.CheckConstraint(
            "(state = 'PENDING') = (decision_id IS NULL)", name="house_funding_decided_has_decision"
        ),
        sa.PrimaryKeyConstraint("seq"),
        sa.UniqueConstraint("request_id"),
        sa.UniqueConstraint("decision_id"),
    )
    op.create_index("house_funding_state_seq", "house_funding", ["state", "seq"])


def downgrade() -> None:
    op.drop_index("house_funding_state_seq", table_name="house_funding")
    op.drop_table("house_funding")
