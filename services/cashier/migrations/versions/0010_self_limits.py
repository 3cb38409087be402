"""Limits a player sets on themself (responsible gaming): the reminder and break per player, each
limit per player, pool and kind, and the append-only history of the player's own changes.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

SEQUENCE_TYPE = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "self_control",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("reminder_minutes", sa.Integer(), server_default="0", nullable=False),
        sa.Column("break_kind", sa.String(length=16), nullable=True),
        sa.Column("break_started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("break_until", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "break_kind IS NULL OR break_kind IN ('COOLING_OFF', 'SELF_EXCLUSION')",
            name="self_control_break_known",
        ),
        sa.PrimaryKeyConstraint("player_id"),
    )
    op.create_table(
        "self_limits",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("pool", sa.String(length=8), nullable=False),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("pending_amount", sa.BigInteger(), nullable=True),
        sa.Column("pending_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "amount >= 0 AND (pending_amount IS NULL OR pending_amount >= 0)", name="self_limits_amounts"
        ),
        sa.CheckConstraint(
            "(pending_amount IS NULL) = (pending_at IS NULL)", name="self_limits_pending_has_time"
        ),
        sa.PrimaryKeyConstraint("player_id", "pool", "kind"),
    )
    op.create_table(
        "self_limit_changes",
        sa.Column("seq", SEQUENCE_TYPE, autoincrement=True, nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("pool", sa.String(length=8), server_default="", nullable=False),
        sa.Column("kind", sa.String(length=24), server_default="", nullable=False),
        sa.Column("requested", sa.BigInteger(), nullable=False),
        sa.Column("old_value", sa.String(length=64), nullable=False),
        sa.Column("new_value", sa.String(length=64), nullable=False),
        sa.Column("effective_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "action IN ('LIMIT', 'REMINDER', 'BREAK')", name="self_limit_changes_action_known"
        ),
        sa.PrimaryKeyConstraint("seq"),
        sa.UniqueConstraint("player_id", "request_id", name="self_limit_changes_request"),
    )
    op.create_index("self_limit_changes_player", "self_limit_changes", ["player_id", "seq"])
    _make_history_append_only()


def _make_history_append_only() -> None:
    """The player's own changes are the audit trail: the database refuses to rewrite them."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION cashier_self_limit_changes_append_only() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION 'self_limit_changes are append-only';
            END;
            $$ LANGUAGE plpgsql
            """
        )
        op.execute(
            "CREATE TRIGGER self_limit_changes_append_only BEFORE UPDATE OR DELETE ON self_limit_changes "
            "FOR EACH ROW EXECUTE FUNCTION cashier_self_limit_changes_append_only()"
        )
    else:
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER self_limit_changes_append_only_{action.lower()} BEFORE {action} "
                "ON self_limit_changes BEGIN SELECT RAISE(ABORT, 'self_limit_changes are append-only'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER self_limit_changes_append_only ON self_limit_changes")
        op.execute("DROP FUNCTION cashier_self_limit_changes_append_only()")
    else:
        op.execute("DROP TRIGGER self_limit_changes_append_only_update")
        op.execute("DROP TRIGGER self_limit_changes_append_only_delete")
    op.drop_index("self_limit_changes_player", table_name="self_limit_changes")
    op.drop_table("self_limit_changes")
    op.drop_table("self_limits")
    op.drop_table("self_control")
