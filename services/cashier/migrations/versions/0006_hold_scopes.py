"""Hold scopes (issue 43): a hold stops seats and withdrawals (`FULL`, every hold before this) or
withdrawals only (`WITHDRAWALS`, history's automatic holds of strong chip-dumping cases). A player
has one current hold per scope, so `player_holds` is keyed by (player_id, scope); every change
records its scope.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _scope() -> sa.Column[str]:
    return sa.Column("scope", sa.String(length=16), nullable=False, server_default="FULL")


def _rebuild_player_holds(key: tuple[str, ...], key_name: str, scope: bool) -> None:
    """`player_holds` again with the primary key `key` named `key_name` (copied into a new table,
    then renamed: one way for both backends, as SQLite cannot change a primary key in place)."""
    columns = [sa.Column("player_id", sa.String(length=128), nullable=False)]
    if scope:
        columns.append(_scope())
    op.create_table(
        "player_holds_new",
        *columns,
        sa.Column("held", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.String(length=128), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(*key, name=key_name),
    )
    names = "player_id, held, reason, request_id, changed_at"
    if scope:
        op.execute(f"INSERT INTO player_holds_new ({names}, scope) SELECT {names}, 'FULL' FROM player_holds")
    else:
        # Withdrawal holds have no place in the older schema: they go, the full holds stay.
        op.execute(
            f"INSERT INTO player_holds_new ({names}) SELECT {names} FROM player_holds WHERE scope = 'FULL'"
        )
    op.drop_table("player_holds")
    op.rename_table("player_holds_new", "player_holds")


def upgrade() -> None:
    _rebuild_player_holds(("player_id", "scope"), "player_holds_scope_pkey", scope=True)
    op.add_column("hold_changes", _scope())


def downgrade() -> None:
    # The primary key gets the name PostgreSQL gave it in 0004 (key names are per schema there).
    _rebuild_player_holds(("player_id",), "player_holds_pkey", scope=False)
    with op.batch_alter_table("hold_changes") as batch:
        batch.drop_column("scope")
