"""A payment reference is one purchase, or one withdrawal, whatever its source (issue 41).

Purchases and withdrawals were idempotent through their transfer ids, `purchase:<SOURCE>:<reference>`
and `withdrawal:<SOURCE>:<reference>`, which key the reference together with its source: the same
reference with another source was a new purchase (the gateway's request id R bought 100 GRAM chips,
then 100 MPX chips). `payment_references` keys the reference by itself, per kind, and names the
transfer that holds it.

Existing purchases and withdrawals are copied in. Where a reference already has transfers of two
sources (bought before this fix), it belongs to the first of them, by journal order; the later ones
stay in the journal as they are (their chips moved), and a retry of one of them is now
IDEMPOTENCY_CONFLICT naming `source`.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "payment_references",
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("payment_reference", sa.String(length=128), nullable=False),
        sa.Column("transfer_id", sa.String(length=200), nullable=False),
        sa.CheckConstraint("kind IN ('purchase', 'withdrawal')", name="payment_references_kind_known"),
        sa.ForeignKeyConstraint(["transfer_id"], ["transfers.transfer_id"]),
        sa.PrimaryKeyConstraint("kind", "payment_reference"),
        sa.UniqueConstraint("transfer_id"),
    )
    # One pass over the journal for the first transfer of each reference, then joined on the key.
    op.execute(
        "INSERT INTO payment_references (kind, payment_reference, transfer_id) "
        "SELECT t.kind, t.reference, t.transfer_id FROM transfers t JOIN ("
        "SELECT min(seq) AS seq FROM transfers WHERE kind IN ('purchase', 'withdrawal') "
        "GROUP BY kind, reference) earliest ON t.seq = earliest.seq"
    )


def downgrade() -> None:
    op.drop_table("payment_references")
