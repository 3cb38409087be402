"""Rake account per table; transfers lose their foreign keys; accounts can no longer be deleted.

- The 16 shared rake accounts per pool are replaced by one rake account per table, opened with the
  table's first seat (`ledger.rake_account_id`), so settlements of different tables never wait for
  each other's rows. Shards that never moved a chip are removed; any that did stay, with their
  history, and are simply no longer credited.
- The two foreign keys from `transfers` to `accounts` cost the database about a quarter of its
  time per settled hand (two trigger lookups per appended transfer). Every writer has already
  locked both accounts of a transfer in the same transaction (an unknown account is refused as
  ACCOUNT_NOT_FOUND before anything is written), and accounts are never deleted, which the new
  trigger makes the database enforce; the audit's journal-against-posted-totals check would show a
  transfer that ever bypassed both.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

# Reflected SQLite foreign keys have no names; batch mode names them with this convention.
_SQLITE_NAMES = {"fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s"}
_FOREIGN_KEYS = {
    "postgresql": ("transfers_debit_account_id_fkey", "transfers_credit_account_id_fkey"),
    "sqlite": ("fk_transfers_debit_account_id_accounts", "fk_transfers_credit_account_id_accounts"),
}


def _is_postgres() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def upgrade() -> None:
    op.execute(
        "DELETE FROM accounts WHERE kind = 'house_rake' AND debits_posted = 0 AND credits_posted = 0 "
        "AND account_id NOT IN (SELECT credit_account_id FROM transfers) "
        "AND account_id NOT IN (SELECT debit_account_id FROM transfers)"
    )
    # Tables already seated get their rake account now; new tables get it with their first seat.
    op.execute(
        "INSERT INTO accounts (account_id, owner_id, pool, kind, created_at) "
        "SELECT DISTINCT 'house:rake:' || pool || ':' || table_id, 'house', pool, 'house_rake', "
        "CURRENT_TIMESTAMP FROM seat_sessions WHERE state = 'open' ON CONFLICT DO NOTHING"
    )
    dialect = "postgresql" if _is_postgres() else "sqlite"
    with op.batch_alter_table("transfers", naming_convention=_SQLITE_NAMES) as batch_op:
        for name in _FOREIGN_KEYS[dialect]:
            batch_op.drop_constraint(name, type_="foreignkey")
    if _is_postgres():
        op.execute(
            """
            CREATE FUNCTION cashier_accounts_never_deleted() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION 'accounts are never deleted';
            END;
            $$ LANGUAGE plpgsql
            """
        )
        op.execute(
            "CREATE TRIGGER accounts_never_deleted BEFORE DELETE ON accounts "
            "FOR EACH ROW EXECUTE FUNCTION cashier_accounts_never_deleted()"
        )
    else:
        op.execute(
            "CREATE TRIGGER accounts_never_deleted BEFORE DELETE ON accounts "
            "BEGIN SELECT RAISE(ABORT, 'accounts are never deleted'); END"
        )
        # Batch mode rebuilt `transfers` on SQLite, which drops its triggers: put them back.
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER transfers_append_only_{action.lower()} BEFORE {action} ON transfers "
                "BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END"
            )


def downgrade() -> None:
    if _is_postgres():
        op.execute("DROP TRIGGER accounts_never_deleted ON accounts")
        op.execute("DROP FUNCTION cashier_accounts_never_deleted()")
    else:
        op.execute("DROP TRIGGER accounts_never_deleted")
        for action in ("update", "delete"):
            op.execute(f"DROP TRIGGER transfers_append_only_{action}")
    dialect = "postgresql" if _is_postgres() else "sqlite"
    with op.batch_alter_table("transfers", naming_convention=_SQLITE_NAMES) as batch_op:
        for name, column in zip(
            _FOREIGN_KEYS[dialect], ("debit_account_id", "credit_account_id"), strict=True
        ):
            batch_op.create_foreign_key(name, "accounts", [column], ["account_id"])
    if not _is_postgres():
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER transfers_append_only_{action.lower()} BEFORE {action} ON transfers "
                "BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END"
            )
    # The shared rake shards come back empty; per-table rake accounts stay (they may hold chips).
    for pool in ("GRAM", "MPX"):
        for shard in range(16):
            op.execute(
                "INSERT INTO accounts (account_id, owner_id, pool, kind, created_at) "
                f"VALUES ('house:rake:{pool}:{shard:02d}', 'house', '{pool}', 'house_rake', CURRENT_TIMESTAMP) "
                "ON CONFLICT DO NOTHING"
            )
