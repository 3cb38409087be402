"""Shuffle version 2: each hand keeps the SHA-256 of its seed beside the commitment that binds it.

Hands committed under version 1 committed to SHA-256(seed) alone, so their hash is their commitment.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("fairness_hands", sa.Column("server_seed_hash", sa.String(length=64), nullable=True))
    op.execute("UPDATE fairness_hands SET server_seed_hash = commitment")
    with op.batch_alter_table("fairness_hands") as batch:
        batch.alter_column("server_seed_hash", existing_type=sa.String(length=64), nullable=False)


def downgrade() -> None:
    # Hands dealt under version 2 cannot be described without their seed hash: refuse rather than
    # leave rows that version 1 code would misread.
    bind = op.get_bind()
    if bind.execute(sa.text("SELECT count(*) FROM fairness_hands WHERE shuffle_version >= 2")).scalar():
        raise RuntimeError("hands of shuffle version 2 exist; downgrading would lose what they bind")
    with op.batch_alter_table("fairness_hands") as batch:
        batch.drop_column("server_seed_hash")
