"""Derived transfer ids fit their columns; system accounts get owners no player id can name; mints
for house funding.

- `transfers.transfer_id` and `stars_lots.transfer_id` widen from 128 to 200 characters: a payment
  reference may be 128 characters, and the id derived from it (`purchase:TELEGRAM_STARS:<ref>`,
  152 characters) no longer overflows the column (PostgreSQL refused it; SQLite never checked).
- House accounts (rake, bank, jackpot) were owned by `house` and mints by their source (`GRAM`,
  `MPX`, `TELEGRAM_STARS`), names a player id could take, so a player called `house` or `GRAM`
  read their statements. They move to `system/house` and `system/mint/<SOURCE>`; a player id cannot
  contain `/`.
- One house-funding mint per pool (`mint:HOUSE_FUNDING:<POOL>`), the only way FundHouseAccount
  brings chips into the house bank or the jackpot, since CreateTransfers no longer touches mints.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_HOUSE_KINDS = "('house_rake', 'house_bank', 'jackpot')"


def _is_postgres() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def _widen(length: int) -> None:
    if _is_postgres():
        # Widening a varchar needs no table rewrite on PostgreSQL; the foreign key from stars_lots
        # keeps working because both sides change in the same transaction.
        op.alter_column("stars_lots", "transfer_id", type_=sa.String(length), existing_nullable=False)
        op.alter_column("transfers", "transfer_id", type_=sa.String(length), existing_nullable=False)
        return
    # SQLite does not enforce varchar lengths, so the stored schema only has to say the new one;
    # batch mode rebuilds the tables and drops the triggers of `transfers`, put back below.
    with op.batch_alter_table("stars_lots") as batch_op:
        batch_op.alter_column("transfer_id", type_=sa.String(length), existing_nullable=False)
    with op.batch_alter_table("transfers") as batch_op:
        batch_op.alter_column("transfer_id", type_=sa.String(length), existing_nullable=False)
    for action in ("UPDATE", "DELETE"):
        op.execute(f"DROP TRIGGER IF EXISTS transfers_append_only_{action.lower()}")
        op.execute(
            f"CREATE TRIGGER transfers_append_only_{action.lower()} BEFORE {action} ON transfers "
            "BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END"
        )


def upgrade() -> None:
    _widen(200)
    op.execute(f"UPDATE accounts SET owner_id = 'system/house' WHERE kind IN {_HOUSE_KINDS}")
    op.execute("UPDATE accounts SET owner_id = 'system/mint/' || owner_id WHERE kind = 'external_mint'")
    for pool in ("GRAM", "MPX"):
        op.execute(
            "INSERT INTO accounts (account_id, owner_id, pool, kind, created_at) "
            f"VALUES ('mint:HOUSE_FUNDING:{pool}', 'system/mint/HOUSE_FUNDING', '{pool}', 'external_mint', "
            "CURRENT_TIMESTAMP) ON CONFLICT DO NOTHING"
        )


def downgrade() -> None:
    # The house-funding mints stay (accounts are never deleted, and they may carry history).
    op.execute("UPDATE accounts SET owner_id = 'house' WHERE kind IN " + _HOUSE_KINDS)
    op.execute(
        "UPDATE accounts SET owner_id = substr(owner_id, length('system/mint/') + 1) WHERE kind = 'external_mint'"
    )
    # Ids longer than 128 characters cannot go back into the narrow column; narrowing fails loudly
    # on PostgreSQL if any exist, rather than truncating a ledger id.
    _widen(128)
