"""Fairness schema: hands with encrypted seeds and their table chain, client seeds.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fairness_hands",
        sa.Column("hand_id", sa.String(length=36), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("commitment", sa.String(length=64), nullable=False),
        sa.Column("previous_commitment", sa.String(length=64), nullable=False),
        sa.Column("nonce", sa.LargeBinary(length=16), nullable=False),
        sa.Column("shuffle_version", sa.Integer(), nullable=False),
        sa.Column("deal_now", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("seed_key_id", sa.String(length=64), nullable=False),
        sa.Column("seed_ciphertext", sa.LargeBinary(), nullable=False),
        sa.Column("revealed_seed", sa.LargeBinary(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sealed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revealed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "(revealed_seed IS NULL) = (state IN ('committed', 'sealed'))",
            name=op.f("ck_fairness_hands_seed_revealed_only_when_ended"),
        ),
        sa.CheckConstraint(
            "state IN ('committed', 'sealed', 'finished', 'voided')",
            name=op.f("ck_fairness_hands_state_known"),
        ),
        sa.CheckConstraint("sequence >= 1", name=op.f("ck_fairness_hands_sequence_positive")),
        sa.PrimaryKeyConstraint("hand_id", name=op.f("pk_fairness_hands")),
        sa.UniqueConstraint("request_id", name=op.f("uq_fairness_hands_request_id")),
        sa.UniqueConstraint("table_id", "sequence", name=op.f("uq_fairness_hands_table_id_sequence")),
    )
    op.create_table(
        "fairness_client_seeds",
        sa.Column("hand_id", sa.String(length=36), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("client_seed", sa.LargeBinary(length=64), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("seat >= 0 AND seat <= 1023", name=op.f("ck_fairness_client_seeds_seat_in_range")),
        sa.ForeignKeyConstraint(
            ["hand_id"],
            ["fairness_hands.hand_id"],
            name=op.f("fk_fairness_client_seeds_hand_id_fairness_hands"),
        ),
        sa.PrimaryKeyConstraint("hand_id", "seat", name=op.f("pk_fairness_client_seeds")),
    )


def downgrade() -> None:
    op.drop_table("fairness_client_seeds")
    op.drop_table("fairness_hands")
