"""The cashier's schema as SQLAlchemy Core tables; the Alembic migrations create exactly this.

CHECK constraints are the last line of defence behind the ledger code: a balance is always credits
minus debits, only a mint may be negative, amounts are positive, a player has one open seat.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

metadata = MetaData()

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a bigint identity.
SEQUENCE_TYPE = BigInteger().with_variant(Integer(), "sqlite")

accounts = Table(
    "accounts",
    metadata,
    Column("account_id", String(200), primary_key=True),
    Column("owner_id", String(128), nullable=False),
    Column("pool", String(8), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("balance", BigInteger, nullable=False, server_default="0"),
    Column("debits_posted", BigInteger, nullable=False, server_default="0"),
    Column("credits_posted", BigInteger, nullable=False, server_default="0"),
    Column("closed", Boolean, nullable=False, server_default=text("false")),
    Column("created_at", DateTime(timezone=True), nullable=False),
    CheckConstraint("pool IN ('GRAM', 'MPX')", name="accounts_pool_known"),
    CheckConstraint(
        "balance = credits_posted - debits_posted", name="accounts_balance_is_credits_minus_debits"
    ),
    CheckConstraint("debits_posted >= 0 AND credits_posted >= 0", name="accounts_posted_not_negative"),
    CheckConstraint("kind = 'external_mint' OR balance >= 0", name="accounts_only_mint_negative"),
)
Index("accounts_owner", accounts.c.owner_id)

transfers = Table(
    "transfers",
    metadata,
    Column("seq", SEQUENCE_TYPE, primary_key=True, autoincrement=True),
    # Derived ids are up to 152 characters (`purchase:TELEGRAM_STARS:<128>`); see migration 0003.
    Column("transfer_id", String(200), nullable=False, unique=True),
    # No foreign keys to accounts: see migration 0002 (writers lock both accounts; accounts are never deleted).
    Column("debit_account_id", String(200), nullable=False),
    Column("credit_account_id", String(200), nullable=False),
    Column("pool", String(8), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("kind", String(24), nullable=False),
    Column("reference", String(128), nullable=False, server_default=""),
    Column("table_id", String(128), nullable=False, server_default=""),
    Column("failure_reason", String(40), nullable=True),
    Column("debit_balance_after", BigInteger, nullable=True),
    Column("credit_balance_after", BigInteger, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    CheckConstraint("amount > 0", name="transfers_amount_positive"),
    CheckConstraint("debit_account_id <> credit_account_id", name="transfers_two_accounts"),
)
Index("transfers_debit_account", transfers.c.debit_account_id, transfers.c.seq)
Index("transfers_credit_account", transfers.c.credit_account_id, transfers.c.seq)
# Payments over a window (GetPlayFigures' purchases and withdrawals, ListWithdrawals): migration 0011.
Index("transfers_kind_created_at", transfers.c.kind, transfers.c.created_at)

seat_sessions = Table(
    "seat_sessions",
    metadata,
    Column("session_id", String(100), primary_key=True),
    Column("player_id", String(128), nullable=False),
    Column("table_id", String(128), nullable=False),
    Column("seat_index", Integer, nullable=False),
    Column("pool", String(8), nullable=False),
    Column("account_id", String(200), ForeignKey("accounts.account_id"), nullable=False),
    Column("state", String(8), nullable=False),
    Column("buy_in_amount", BigInteger, nullable=False),
    Column("min_buy_in", BigInteger, nullable=False),
    Column("max_buy_in", BigInteger, nullable=False),
    Column("cash_out_amount", BigInteger, nullable=False, server_default="0"),
    Column("opened_at", DateTime(timezone=True), nullable=False),
    Column("closed_at", DateTime(timezone=True), nullable=True),
    CheckConstraint("state IN ('open', 'closed')", name="seat_sessions_state_known"),
    CheckConstraint("buy_in_amount > 0", name="seat_sessions_buy_in_positive"),
)
# One open seat per player across all tables: two tables racing to seat a player cannot both win.
Index(
    "seat_sessions_one_open_per_player",
    seat_sessions.c.player_id,
    unique=True,
    postgresql_where=seat_sessions.c.state == "open",
    sqlite_where=seat_sessions.c.state == "open",
)
Index("seat_sessions_table_state", seat_sessions.c.table_id, seat_sessions.c.state)

hand_settlements = Table(
    "hand_settlements",
    metadata,
    Column("hand_id", String(100), primary_key=True),
    Column("table_id", String(128), nullable=False),
    Column("pool", String(8), nullable=False),
    Column("seat_results", Text, nullable=False),
    Column("rake", BigInteger, nullable=False),
    Column("house_bank_amount", BigInteger, nullable=False),
    Column("transfer_count", Integer, nullable=False),
    Column("failure_reason", String(40), nullable=True),
    Column("failure_account_id", String(200), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# GetPlayFigures reads a window of recent settlements (the dashboard: the last hour, the day).
Index("hand_settlements_created_at", hand_settlements.c.created_at)

stars_lots = Table(
    "stars_lots",
    metadata,
    Column("transfer_id", String(200), ForeignKey("transfers.transfer_id"), primary_key=True),
    Column("player_id", String(128), nullable=False),
    Column("chips", BigInteger, nullable=False),
    Column("unlocks_at", DateTime(timezone=True), nullable=False),
    CheckConstraint("chips > 0", name="stars_lots_chips_positive"),
)
Index("stars_lots_player", stars_lots.c.player_id, stars_lots.c.unlocks_at)

# Which transfer a payment reference of the outside system belongs to (issue 41): one purchase per
# reference and one withdrawal per reference, whatever the source. The transfer id alone
# (`purchase:<SOURCE>:<reference>`) keyed it together with the source, so the same reference with
# another source was a second purchase; this key makes the reference itself the idempotency key,
# and two first attempts racing with different sources (different accounts, no common lock) meet
# on it. Migration 0007.
payment_references = Table(
    "payment_references",
    metadata,
    Column("kind", String(24), primary_key=True),
    Column("payment_reference", String(128), primary_key=True),
    Column("transfer_id", String(200), ForeignKey("transfers.transfer_id"), nullable=False, unique=True),
    CheckConstraint("kind IN ('purchase', 'withdrawal')", name="payment_references_kind_known"),
)

# Holds for fair-play reviews (rules 17): the current state per player and scope (`FULL`: no new
# seat session and no withdrawal, the operators' holds; `WITHDRAWALS`: withdrawals only, history's
# automatic holds; migration 0006), and every change with its caller-chosen request id (the
# idempotency key). No chip moves.
player_holds = Table(
    "player_holds",
    metadata,
    Column("player_id", String(128), primary_key=True),
    Column("scope", String(16), primary_key=True, server_default="FULL"),
    Column("held", Boolean, nullable=False),
    Column("reason", String(128), nullable=False),
    Column("request_id", String(128), nullable=False),
    Column("changed_at", DateTime(timezone=True), nullable=False),
)

hold_changes = Table(
    "hold_changes",
    metadata,
    Column("request_id", String(128), primary_key=True),
    Column("player_id", String(128), nullable=False),
    Column("held", Boolean, nullable=False),
    Column("reason", String(128), nullable=False),
    Column("changed_at", DateTime(timezone=True), nullable=False),
    Column("scope", String(16), nullable=False, server_default="FULL"),
)

# Four-eyes on money (issue 38): a request to fund or defund a house account, by one staff member of
# finance, and its decision by another (never the asker: the last CHECK below says it again). An
# approval's transfer `funding:<request_id>` commits with the decision. Rows are never deleted.
house_funding = Table(
    "house_funding",
    metadata,
    Column("seq", SEQUENCE_TYPE, primary_key=True, autoincrement=True),
    Column("request_id", String(128), nullable=False, unique=True),
    Column("pool", String(8), nullable=False),
    Column("account", String(16), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("reason", String(128), nullable=False),
    Column("requested_by", String(128), nullable=False),
    Column("requested_at", DateTime(timezone=True), nullable=False),
    Column("state", String(16), nullable=False),
    Column("decision_id", String(128), nullable=True, unique=True),
    Column("decided_by", String(128), nullable=True),
    Column("decided_at", DateTime(timezone=True), nullable=True),
    Column("decision_reason", String(128), nullable=True),
    CheckConstraint("state IN ('PENDING', 'APPROVED', 'REJECTED')", name="house_funding_state_known"),
    CheckConstraint("amount <> 0", name="house_funding_amount_not_zero"),
    CheckConstraint("decided_by IS NULL OR decided_by <> requested_by", name="house_funding_four_eyes"),
    CheckConstraint("(state = 'PENDING') = (decision_id IS NULL)", name="house_funding_decided_has_decision"),
)
Index("house_funding_state_seq", house_funding.c.state, house_funding.c.seq)

# Limits a player sets on themself (responsible gaming; `self_limits.py`, migration 0010). One row per
# player holds the session reminder and the break running (the row every change of the player locks
# first, so two changes of one player never decide on the same stale state); one row per player, pool
# and kind holds a limit in force and its pending loosening. `self_limit_changes` is the audit trail
# of the player's own changes: append-only (triggers refuse UPDATE and DELETE), keyed by the
# caller's request id.
self_control = Table(
    "self_control",
    metadata,
    Column("player_id", String(128), primary_key=True),
    Column("reminder_minutes", Integer, nullable=False, server_default="0"),
    Column("break_kind", String(16), nullable=True),
    Column("break_started_at", DateTime(timezone=True), nullable=True),
    Column("break_until", DateTime(timezone=True), nullable=True),
    CheckConstraint(
        "break_kind IS NULL OR break_kind IN ('COOLING_OFF', 'SELF_EXCLUSION')",
        name="self_control_break_known",
    ),
)

self_limits = Table(
    "self_limits",
    metadata,
    Column("player_id", String(128), primary_key=True),
    Column("pool", String(8), primary_key=True),
    Column("kind", String(24), primary_key=True),
    Column("amount", BigInteger, nullable=False),
    Column("pending_amount", BigInteger, nullable=True),
    Column("pending_at", DateTime(timezone=True), nullable=True),
    CheckConstraint(
        "amount >= 0 AND (pending_amount IS NULL OR pending_amount >= 0)", name="self_limits_amounts"
    ),
    CheckConstraint("(pending_amount IS NULL) = (pending_at IS NULL)", name="self_limits_pending_has_time"),
)

self_limit_changes = Table(
    "self_limit_changes",
    metadata,
    Column("seq", SEQUENCE_TYPE, primary_key=True, autoincrement=True),
    # The player's own id of the request: unique per player (players choose them, so two players'
    # ids may be equal).
    Column("request_id", String(128), nullable=False),
    Column("player_id", String(128), nullable=False),
    # LIMIT, REMINDER or BREAK; pool and kind as asked ('' where they do not apply).
    Column("action", String(8), nullable=False),
    Column("pool", String(8), nullable=False, server_default=""),
    Column("kind", String(24), nullable=False, server_default=""),
    # What was asked: the limit's chips, the reminder's minutes, the break's days.
    Column("requested", BigInteger, nullable=False),
    # Before and after, as text: chips or minutes; a break's kind and end.
    Column("old_value", String(64), nullable=False),
    Column("new_value", String(64), nullable=False),
    Column("effective_at", DateTime(timezone=True), nullable=False),
    Column("ends_at", DateTime(timezone=True), nullable=True),
    Column("changed_at", DateTime(timezone=True), nullable=False),
    CheckConstraint("action IN ('LIMIT', 'REMINDER', 'BREAK')", name="self_limit_changes_action_known"),
    UniqueConstraint("player_id", "request_id", name="self_limit_changes_request"),
)
Index("self_limit_changes_player", self_limit_changes.c.player_id, self_limit_changes.c.seq)
