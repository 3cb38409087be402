"""Fair play (issue 29): running totals per pair of players and pool, decision times per player,
cases; the one-shot dumping
signals of 0001 go (their verdict was replaced by the cases).

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

Number = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "history_pair_totals",
        sa.Column("pool", sa.SmallInteger(), nullable=False),
        sa.Column("first_id", sa.String(length=128), nullable=False),
        sa.Column("second_id", sa.String(length=128), nullable=False),
        sa.Column("hands", sa.BigInteger(), nullable=False),
        sa.Column("chips_to_second", sa.BigInteger(), nullable=False),
        sa.Column("chips_to_first", sa.BigInteger(), nullable=False),
        sa.Column("chips_cbb_to_second", sa.BigInteger(), nullable=False),
        sa.Column("chips_cbb_to_first", sa.BigInteger(), nullable=False),
        sa.Column("gift_cbb_to_second", sa.BigInteger(), nullable=False),
        sa.Column("gift_cbb_to_first", sa.BigInteger(), nullable=False),
        sa.Column("blatant_cbb_to_second", sa.BigInteger(), nullable=False),
        sa.Column("blatant_cbb_to_first", sa.BigInteger(), nullable=False),
        sa.Column("blatant_hands_to_second", sa.BigInteger(), nullable=False),
        sa.Column("blatant_hands_to_first", sa.BigInteger(), nullable=False),
        sa.Column("strong_folds_to_second", sa.BigInteger(), nullable=False),
        sa.Column("strong_folds_to_first", sa.BigInteger(), nullable=False),
        sa.Column("heads_up_streets", sa.BigInteger(), nullable=False),
        sa.Column("passive_streets", sa.BigInteger(), nullable=False),
        sa.Column("squeezes", sa.BigInteger(), nullable=False),
        sa.Column("multiway_hands", sa.BigInteger(), nullable=False),
        sa.Column("hands_with_others", sa.BigInteger(), nullable=False),
        sa.Column("shared_device_hands", sa.BigInteger(), nullable=False),
        sa.Column("shared_network_hands", sa.BigInteger(), nullable=False),
        sa.Column("first_seen_us", sa.BigInteger(), nullable=False),
        sa.Column("last_seen_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("pool", "first_id", "second_id", name=op.f("pk_history_pair_totals")),
    )
    op.create_index(
        op.f("ix_history_pair_totals_pool_second_id"), "history_pair_totals", ["pool", "second_id"]
    )
    op.create_table(
        "history_player_timing",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("bucket_0", sa.BigInteger(), nullable=False),
        sa.Column("bucket_1", sa.BigInteger(), nullable=False),
        sa.Column("bucket_2", sa.BigInteger(), nullable=False),
        sa.Column("bucket_3", sa.BigInteger(), nullable=False),
        sa.Column("bucket_4", sa.BigInteger(), nullable=False),
        sa.Column("bucket_5", sa.BigInteger(), nullable=False),
        sa.Column("bucket_6", sa.BigInteger(), nullable=False),
        sa.Column("last_seen_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_history_player_timing")),
    )
    op.create_table(
        "history_cases",
        sa.Column("number", Number, autoincrement=True, nullable=False),
        sa.Column("case_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("updated_us", sa.BigInteger(), nullable=False),
        sa.Column("record", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("number", name=op.f("pk_history_cases")),
        sa.UniqueConstraint("case_id", name=op.f("uq_history_cases_case_id")),
    )
    op.create_index(op.f("ix_history_cases_updated_us_number"), "history_cases", ["updated_us", "number"])
    op.create_index(
        op.f("ix_history_cases_kind_updated_us_number"), "history_cases", ["kind", "updated_us", "number"]
    )
    op.drop_index(op.f("ix_history_dumping_signals_loser_id_winner_id"), table_name="history_dumping_signals")
    op.drop_table("history_dumping_signals")


def downgrade() -> None:
    op.create_table(
        "history_dumping_signals",
        sa.Column("hand_number", Number, nullable=False),
        sa.Column("loser_id", sa.String(length=128), nullable=False),
        sa.Column("winner_id", sa.String(length=128), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("big_blind", sa.BigInteger(), nullable=False),
        sa.Column("pattern", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["hand_number"],
            ["history_hands.number"],
            name=op.f("fk_history_dumping_signals_hand_number_history_hands"),
        ),
        sa.PrimaryKeyConstraint(
            "hand_number", "loser_id", "winner_id", name=op.f("pk_history_dumping_signals")
        ),
    )
    op.create_index(
        op.f("ix_history_dumping_signals_loser_id_winner_id"),
        "history_dumping_signals",
        ["loser_id", "winner_id"],
    )
    op.drop_index(op.f("ix_history_cases_kind_updated_us_number"), table_name="history_cases")
    op.drop_index(op.f("ix_history_cases_updated_us_number"), table_name="history_cases")
    op.drop_table("history_cases")
    op.drop_table("history_player_timing")
    op.drop_index(op.f("ix_history_pair_totals_pool_second_id"), table_name="history_pair_totals")
    op.drop_table("history_pair_totals")
