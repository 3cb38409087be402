"""History schema: hands with their full record, players per hand, dumping signals, audit log.

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

Number = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "history_hands",
        sa.Column("number", Number, autoincrement=True, nullable=False),
        sa.Column("hand_id", sa.String(length=128), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("room_id", sa.String(length=128), nullable=False),
        sa.Column("variant", sa.SmallInteger(), nullable=False),
        sa.Column("pool", sa.SmallInteger(), nullable=False),
        sa.Column("start_us", sa.BigInteger(), nullable=False),
        sa.Column("end_us", sa.BigInteger(), nullable=False),
        sa.Column("record", sa.LargeBinary(), nullable=False),
        sa.Column("recorded_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("number", name=op.f("pk_history_hands")),
        sa.UniqueConstraint("hand_id", name=op.f("uq_history_hands_hand_id")),
    )
    op.create_index(
        op.f("ix_history_hands_table_id_end_us_number"), "history_hands", ["table_id", "end_us", "number"]
    )
    op.create_table(
        "history_hand_players",
        sa.Column("hand_number", Number, nullable=False),
        sa.Column("seat", sa.SmallInteger(), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("end_us", sa.BigInteger(), nullable=False),
        sa.Column("net_result", sa.BigInteger(), nullable=False),
        sa.Column("client_fingerprint", sa.String(length=128), server_default="", nullable=False),
        sa.ForeignKeyConstraint(
            ["hand_number"],
            ["history_hands.number"],
            name=op.f("fk_history_hand_players_hand_number_history_hands"),
        ),
        sa.PrimaryKeyConstraint("hand_number", "seat", name=op.f("pk_history_hand_players")),
    )
    op.create_index(
        op.f("ix_history_hand_players_player_id_end_us_hand_number"),
        "history_hand_players",
        ["player_id", "end_us", "hand_number"],
    )
    op.create_index(
        op.f("ix_history_hand_players_player_id_table_id_end_us_hand_number"),
        "history_hand_players",
        ["player_id", "table_id", "end_us", "hand_number"],
    )
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
    op.create_table(
        "history_audit_events",
        sa.Column("number", Number, autoincrement=True, nullable=False),
        sa.Column("event_id", sa.String(length=128), nullable=False),
        sa.Column("time_us", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("record", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("number", name=op.f("pk_history_audit_events")),
        sa.UniqueConstraint("event_id", name=op.f("uq_history_audit_events_event_id")),
    )
    op.create_index(
        op.f("ix_history_audit_events_time_us_number"), "history_audit_events", ["time_us", "number"]
    )
    op.create_index(
        op.f("ix_history_audit_events_kind_time_us_number"),
        "history_audit_events",
        ["kind", "time_us", "number"],
    )


def downgrade() -> None:
    op.drop_table("history_audit_events")
    op.drop_table("history_dumping_signals")
    op.drop_table("history_hand_players")
    op.drop_table("history_hands")
