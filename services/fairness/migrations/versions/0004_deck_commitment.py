"""Fairness version 3: each hand keeps its deck root, the encrypted secret of its committed deck and,
once ended, who saw which deal positions; each client seed keeps its version 3 hash.

Hands of versions 1 and 2 get an empty root, no deck secret and no visibility, and keep verifying
under their version. A version 3 client seed row whose seed is empty holds only the hash so far.

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
    with op.batch_alter_table("fairness_hands") as batch:
        batch.add_column(sa.Column("deck_root", sa.String(length=64), nullable=False, server_default=""))
        batch.add_column(sa.Column("deck_secret_ciphertext", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("visibility", sa.Text(), nullable=False, server_default=""))
    with op.batch_alter_table("fairness_client_seeds") as batch:
        batch.add_column(
            sa.Column("client_seed_hash", sa.String(length=64), nullable=False, server_default="")
        )


def downgrade() -> None:
    # Version 3 hands cannot be described without their root and deck secret: refuse rather than
    # leave rows that older code would misread.
    bind = op.get_bind()
    if bind.execute(sa.text("SELECT 1 FROM fairness_hands WHERE shuffle_version = 3 LIMIT 1")).first():
        raise RuntimeError("fairness hands of version 3 exist; downgrading would lose their commitments")
    with op.batch_alter_table("fairness_client_seeds") as batch:
        batch.drop_column("client_seed_hash")
    with op.batch_alter_table("fairness_hands") as batch:
        batch.drop_column("visibility")
        batch.drop_column("deck_secret_ciphertext")
        batch.drop_column("deck_root")
