"""Lobby schema: rooms, maintenance switches, allow-lists, invite codes and their redemptions, request replies.

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
        "lobby_allow_list",
        sa.Column("list_id", sa.String(length=64), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("added_by", sa.String(length=128), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("list_id", "player_id", name=op.f("pk_lobby_allow_list")),
    )
    op.create_table(
        "lobby_invite_codes",
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("list_id", sa.String(length=64), nullable=False),
        sa.Column("max_uses", sa.Integer(), nullable=False),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_by", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "uses >= 0 AND uses <= max_uses", name=op.f("ck_lobby_invite_codes_uses_within_max")
        ),
        sa.PrimaryKeyConstraint("code", name=op.f("pk_lobby_invite_codes")),
    )
    op.create_table(
        "lobby_maintenance",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("no_new_seats", sa.Boolean(), nullable=False),
        sa.Column("no_new_hands", sa.Boolean(), nullable=False),
        sa.Column("message", sa.String(length=256), nullable=False),
        sa.Column("set_by", sa.String(length=128), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_lobby_maintenance")),
    )
    op.create_table(
        "lobby_request_replies",
        sa.Column("method", sa.String(length=32), nullable=False),
        sa.Column("caller", sa.String(length=128), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("method", "caller", "request_id", name=op.f("pk_lobby_request_replies")),
    )
    op.create_table(
        "lobby_rooms",
        sa.Column("room_id", sa.String(length=64), nullable=False),
        sa.Column("display_name", sa.String(length=64), nullable=False),
        sa.Column("variant", sa.String(length=32), nullable=False),
        sa.Column("pool", sa.String(length=8), nullable=False),
        sa.Column("seats_per_table", sa.Integer(), nullable=False),
        sa.Column("small_blind", sa.BigInteger(), nullable=False),
        sa.Column("big_blind", sa.BigInteger(), nullable=False),
        sa.Column("step", sa.BigInteger(), nullable=False),
        sa.Column("small_bet", sa.BigInteger(), nullable=False),
        sa.Column("big_bet", sa.BigInteger(), nullable=False),
        sa.Column("min_ante", sa.BigInteger(), nullable=False),
        sa.Column("max_ante", sa.BigInteger(), nullable=False),
        sa.Column("max_payout", sa.BigInteger(), nullable=False),
        sa.Column("min_buy_in", sa.BigInteger(), nullable=False),
        sa.Column("max_buy_in", sa.BigInteger(), nullable=False),
        sa.Column("private", sa.Boolean(), nullable=False),
        sa.Column("rake_basis_points", sa.Integer(), nullable=False),
        sa.Column("rake_cap", sa.BigInteger(), nullable=False),
        sa.Column("rake_no_flop_no_drop", sa.Boolean(), nullable=False),
        sa.Column("table_count", sa.Integer(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("pool IN ('GRAM', 'MPX')", name=op.f("ck_lobby_rooms_pool_known")),
        sa.CheckConstraint(
            "variant IN ('NO_LIMIT_HOLDEM', 'FIXED_LIMIT_HOLDEM', 'CASINO_HOLDEM', 'RUSSIAN_POKER')",
            name=op.f("ck_lobby_rooms_variant_known"),
        ),
        sa.CheckConstraint(
            "rake_basis_points >= 0 AND rake_basis_points <= 500", name=op.f("ck_lobby_rooms_rake_in_model")
        ),
        sa.CheckConstraint("revision >= 1", name=op.f("ck_lobby_rooms_revision_positive")),
        sa.PrimaryKeyConstraint("room_id", name=op.f("pk_lobby_rooms")),
    )
    op.create_table(
        "lobby_invite_redemptions",
        sa.Column("code", sa.String(length=32), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("redeemed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["code"],
            ["lobby_invite_codes.code"],
            name=op.f("fk_lobby_invite_redemptions_code_lobby_invite_codes"),
        ),
        sa.PrimaryKeyConstraint("code", "player_id", name=op.f("pk_lobby_invite_redemptions")),
    )


def downgrade() -> None:
    op.drop_table("lobby_invite_redemptions")
    op.drop_table("lobby_rooms")
    op.drop_table("lobby_request_replies")
    op.drop_table("lobby_maintenance")
    op.drop_table("lobby_invite_codes")
    op.drop_table("lobby_allow_list")
