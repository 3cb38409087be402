"""The house bank's cover as ledger reservations (issue 44): one cover account per pool.

A house-game round moves its stakes plus its largest possible payout from the pool's house bank to
`house:cover:<POOL>` in the same linked batch that takes the stakes, and its settlement (or refund)
moves that amount back first. The bank's balance is then the house's own money no open round has
promised, and the ledger's rule that no account but a mint goes negative is the cover check, atomic
for every table, shard and game of the pool.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for pool in ("GRAM", "MPX"):
        op.execute(
            "INSERT INTO accounts (account_id, owner_id, pool, kind, created_at) "
            f"VALUES ('house:cover:{pool}', 'system/house', '{pool}', 'house_cover', CURRENT_TIMESTAMP) "
            "ON CONFLICT DO NOTHING"
        )


def downgrade() -> None:
    # Accounts are never deleted (they may carry history); an older build simply never uses them.
    pass
