"""The lobby schema (SQLAlchemy Core): rooms, maintenance, allow-lists, invite codes, request replies,
player profiles.

Migrations in `migrations/versions` mirror it; the catalogue's seed rows are migration 0002, the
player profiles migration 0003, their avatars migration 0004.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

rooms = sa.Table(
    "lobby_rooms",
    metadata,
    sa.Column("room_id", sa.String(64), primary_key=True),
    sa.Column("display_name", sa.String(64), nullable=False),
    sa.Column("variant", sa.String(32), nullable=False),
    sa.Column("pool", sa.String(8), nullable=False),
    sa.Column("seats_per_table", sa.Integer, nullable=False),
    sa.Column("small_blind", sa.BigInteger, nullable=False),
    sa.Column("big_blind", sa.BigInteger, nullable=False),
    sa.Column("step", sa.BigInteger, nullable=False),
    sa.Column("small_bet", sa.BigInteger, nullable=False),
    sa.Column("big_bet", sa.BigInteger, nullable=False),
    sa.Column("min_ante", sa.BigInteger, nullable=False),
    sa.Column("max_ante", sa.BigInteger, nullable=False),
    sa.Column("max_payout", sa.BigInteger, nullable=False),
    sa.Column("min_buy_in", sa.BigInteger, nullable=False),
    sa.Column("max_buy_in", sa.BigInteger, nullable=False),
    sa.Column("private", sa.Boolean, nullable=False),
    sa.Column("rake_basis_points", sa.Integer, nullable=False),
    sa.Column("rake_cap", sa.BigInteger, nullable=False),
    sa.Column("rake_no_flop_no_drop", sa.Boolean, nullable=False),
    sa.Column("table_count", sa.Integer, nullable=False),
    sa.Column("disabled", sa.Boolean, nullable=False),
    # Grows by one with every change; a table compares it at the start of each hand (rules 11).
    sa.Column("revision", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint(
        "variant IN ('NO_LIMIT_HOLDEM', 'FIXED_LIMIT_HOLDEM', 'CASINO_HOLDEM', 'RUSSIAN_POKER')",
        name="variant_known",
    ),
    sa.CheckConstraint("pool IN ('GRAM', 'MPX')", name="pool_known"),
    sa.CheckConstraint("rake_basis_points >= 0 AND rake_basis_points <= 500", name="rake_in_model"),
    sa.CheckConstraint("revision >= 1", name="revision_positive"),
)

# One row per scope: '' is the whole lobby, otherwise a room id.
maintenance = sa.Table(
    "lobby_maintenance",
    metadata,
    sa.Column("scope", sa.String(64), primary_key=True),
    sa.Column("no_new_seats", sa.Boolean, nullable=False),
    sa.Column("no_new_hands", sa.Boolean, nullable=False),
    sa.Column("message", sa.String(256), nullable=False),
    sa.Column("set_by", sa.String(128), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    # A scheduled window (migration 0005): in force from starts_at (NULL: when set) until ends_at
    # (NULL: until switched off).
    sa.Column("starts_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
)

# list_id '' is the lobby-wide list of closed access, otherwise a room id.
allow_list = sa.Table(
    "lobby_allow_list",
    metadata,
    sa.Column("list_id", sa.String(64), primary_key=True),
    sa.Column("player_id", sa.String(128), primary_key=True),
    sa.Column("added_by", sa.String(128), nullable=False),
    sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
)

invite_codes = sa.Table(
    "lobby_invite_codes",
    metadata,
    sa.Column("code", sa.String(32), primary_key=True),
    sa.Column("list_id", sa.String(64), nullable=False),
    sa.Column("max_uses", sa.Integer, nullable=False),
    sa.Column("uses", sa.Integer, nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("created_by", sa.String(128), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("uses >= 0 AND uses <= max_uses", name="uses_within_max"),
)

invite_redemptions = sa.Table(
    "lobby_invite_redemptions",
    metadata,
    sa.Column("code", sa.String(32), sa.ForeignKey("lobby_invite_codes.code"), primary_key=True),
    sa.Column("player_id", sa.String(128), primary_key=True),
    sa.Column("redeemed_at", sa.DateTime(timezone=True), nullable=False),
)

# The first reply to every mutating request, so a retry gets it again and a changed retry conflicts.
request_replies = sa.Table(
    "lobby_request_replies",
    metadata,
    sa.Column("method", sa.String(32), primary_key=True),
    sa.Column("caller", sa.String(128), primary_key=True),
    sa.Column("request_id", sa.String(128), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("reply", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

# A player's profile: the name other players see (never the player id), unique ignoring case by
# `name_key` (`display_names.name_key`). `name_changed_at` is the player's last change of the name
# (SetDisplayName; NULL until the first: the name given when the profile was made is no change).
# `avatar_url` is the player's Telegram photo as their last sign-in with one gave it (empty: none;
# `avatars.accepted_avatar_url`), `show_avatar` whether their seats show it (on unless turned off).
player_profiles = sa.Table(
    "lobby_player_profiles",
    metadata,
    sa.Column("player_id", sa.String(128), primary_key=True),
    sa.Column("display_name", sa.String(64), nullable=False),
    sa.Column("name_key", sa.String(128), nullable=False, unique=True),
    sa.Column("update_time", sa.DateTime(timezone=True), nullable=False),
    sa.Column("name_changed_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("avatar_url", sa.String(256), nullable=False, server_default=""),
    sa.Column("show_avatar", sa.Boolean, nullable=False, server_default=sa.true()),
)
