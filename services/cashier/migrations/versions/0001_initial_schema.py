"""Cashier schema: accounts, transfers, seat sessions, settlements, Stars lots.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("account_id", sa.String(length=200), nullable=False),
        sa.Column("owner_id", sa.String(length=128), nullable=False),
        sa.Column("pool", sa.String(length=8), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("balance", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("debits_posted", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("credits_posted", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("closed", sa.Boolean(), server_default=sa.text("(false)"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind = 'external_mint' OR balance >= 0", name="accounts_only_mint_negative"),
        sa.CheckConstraint("pool IN ('GRAM', 'MPX')", name="accounts_pool_known"),
        sa.CheckConstraint(
            "balance = credits_posted - debits_posted", name="accounts_balance_is_credits_minus_debits"
        ),
        sa.CheckConstraint("debits_posted >= 0 AND credits_posted >= 0", name="accounts_posted_not_negative"),
        sa.PrimaryKeyConstraint("account_id"),
    )
    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.create_index("accounts_owner", ["owner_id"], unique=False)

    op.create_table(
        "hand_settlements",
        sa.Column("hand_id", sa.String(length=100), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("pool", sa.String(length=8), nullable=False),
        sa.Column("seat_results", sa.Text(), nullable=False),
        sa.Column("rake", sa.BigInteger(), nullable=False),
        sa.Column("house_bank_amount", sa.BigInteger(), nullable=False),
        sa.Column("transfer_count", sa.Integer(), nullable=False),
        sa.Column("failure_reason", sa.String(length=40), nullable=True),
        sa.Column("failure_account_id", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("hand_id"),
    )
    op.create_table(
        "seat_sessions",
        sa.Column("session_id", sa.String(length=100), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("table_id", sa.String(length=128), nullable=False),
        sa.Column("seat_index", sa.Integer(), nullable=False),
        sa.Column("pool", sa.String(length=8), nullable=False),
        sa.Column("account_id", sa.String(length=200), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("buy_in_amount", sa.BigInteger(), nullable=False),
        sa.Column("min_buy_in", sa.BigInteger(), nullable=False),
        sa.Column("max_buy_in", sa.BigInteger(), nullable=False),
        sa.Column("cash_out_amount", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("state IN ('open', 'closed')", name="seat_sessions_state_known"),
        sa.CheckConstraint("buy_in_amount > 0", name="seat_sessions_buy_in_positive"),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.account_id"],
        ),
        sa.PrimaryKeyConstraint("session_id"),
    )
    with op.batch_alter_table("seat_sessions", schema=None) as batch_op:
        batch_op.create_index(
            "seat_sessions_one_open_per_player",
            ["player_id"],
            unique=True,
            postgresql_where=sa.text("state = 'open'"),
            sqlite_where=sa.text("state = 'open'"),
        )
        batch_op.create_index("seat_sessions_table_state", ["table_id", "state"], unique=False)

    op.create_table(
        "transfers",
        sa.Column(
            "seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("transfer_id", sa.String(length=128), nullable=False),
        sa.Column("debit_account_id", sa.String(length=200), nullable=False),
        sa.Column("credit_account_id", sa.String(length=200), nullable=False),
        sa.Column("pool", sa.String(length=8), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("reference", sa.String(length=128), server_default="", nullable=False),
        sa.Column("table_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("failure_reason", sa.String(length=40), nullable=True),
        sa.Column("debit_balance_after", sa.BigInteger(), nullable=True),
        sa.Column("credit_balance_after", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("amount > 0", name="transfers_amount_positive"),
        sa.CheckConstraint("debit_account_id <> credit_account_id", name="transfers_two_accounts"),
        sa.ForeignKeyConstraint(
            ["credit_account_id"],
            ["accounts.account_id"],
        ),
        sa.ForeignKeyConstraint(
            ["debit_account_id"],
            ["accounts.account_id"],
        ),
        sa.PrimaryKeyConstraint("seq"),
        sa.UniqueConstraint("transfer_id"),
    )
    with op.batch_alter_table("transfers", schema=None) as batch_op:
        batch_op.create_index("transfers_credit_account", ["credit_account_id", "seq"], unique=False)
        batch_op.create_index("transfers_debit_account", ["debit_account_id", "seq"], unique=False)

    op.create_table(
        "stars_lots",
        sa.Column("transfer_id", sa.String(length=128), nullable=False),
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("chips", sa.BigInteger(), nullable=False),
        sa.Column("unlocks_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("chips > 0", name="stars_lots_chips_positive"),
        sa.ForeignKeyConstraint(
            ["transfer_id"],
            ["transfers.transfer_id"],
        ),
        sa.PrimaryKeyConstraint("transfer_id"),
    )
    with op.batch_alter_table("stars_lots", schema=None) as batch_op:
        batch_op.create_index("stars_lots_player", ["player_id", "unlocks_at"], unique=False)

    _seed_system_accounts()
    _make_transfers_append_only()


def _seed_system_accounts() -> None:
    """House and mint accounts exist from the start; player wallets and seats are created on use."""
    now = datetime.now(UTC)
    rows = []
    for pool in ("GRAM", "MPX"):
        # Rake is spread over 16 accounts per pool (ledger.RAKE_SHARDS) so tables do not queue on one row.
        for shard in range(16):
            rows.append(
                {
                    "account_id": f"house:rake:{pool}:{shard:02d}",
                    "owner_id": "house",
                    "pool": pool,
                    "kind": "house_rake",
                }
            )
        for kind, account_id in (
            ("house_bank", f"house:bank:{pool}"),
            ("jackpot", f"house:jackpot:{pool}"),
        ):
            rows.append({"account_id": account_id, "owner_id": "house", "pool": pool, "kind": kind})
    # One mint per payment source: GRAM and Stars feed the GRAM pool, MPX the MPX pool.
    for source, pool in (("GRAM", "GRAM"), ("TELEGRAM_STARS", "GRAM"), ("MPX", "MPX")):
        rows.append(
            {"account_id": f"mint:{source}:{pool}", "owner_id": source, "pool": pool, "kind": "external_mint"}
        )
    table = sa.table(
        "accounts",
        sa.column("account_id", sa.String),
        sa.column("owner_id", sa.String),
        sa.column("pool", sa.String),
        sa.column("kind", sa.String),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    op.bulk_insert(table, [{**row, "created_at": now} for row in rows])


def _make_transfers_append_only() -> None:
    """Transfers are never updated or deleted; the database refuses it even if code tried."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION cashier_transfers_append_only() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION 'transfers are append-only';
            END;
            $$ LANGUAGE plpgsql
            """
        )
        op.execute(
            "CREATE TRIGGER transfers_append_only BEFORE UPDATE OR DELETE ON transfers "
            "FOR EACH ROW EXECUTE FUNCTION cashier_transfers_append_only()"
        )
    else:
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER transfers_append_only_{action.lower()} BEFORE {action} ON transfers "
                "BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER transfers_append_only ON transfers")
        op.execute("DROP FUNCTION cashier_transfers_append_only()")
    else:
        op.execute("DROP TRIGGER transfers_append_only_update")
        op.execute("DROP TRIGGER transfers_append_only_delete")
    with op.batch_alter_table("stars_lots", schema=None) as batch_op:
        batch_op.drop_index("stars_lots_player")

    op.drop_table("stars_lots")
    with op.batch_alter_table("transfers", schema=None) as batch_op:
        batch_op.drop_index("transfers_debit_account")
        batch_op.drop_index("transfers_credit_account")

    op.drop_table("transfers")
    with op.batch_alter_table("seat_sessions", schema=None) as batch_op:
        batch_op.drop_index("seat_sessions_table_state")
        batch_op.drop_index(
            "seat_sessions_one_open_per_player",
            postgresql_where=sa.text("state = 'open'"),
            sqlite_where=sa.text("state = 'open'"),
        )

    op.drop_table("seat_sessions")
    op.drop_table("hand_settlements")
    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.drop_index("accounts_owner")

    op.drop_table("accounts")
