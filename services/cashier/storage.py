"""Storage adapter: reads and writes the cashier tables inside a transaction the caller owns.

Every function takes an open `AsyncConnection` in a transaction. Balance rows are locked with
`SELECT ... ORDER BY account_id FOR UPDATE`, so two transactions touching overlapping accounts
always lock them in the same order and cannot deadlock each other.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, bindparam, case, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.database import driver_pipeline
from service_runtime.storage_metrics import driver_round_trip
from services.cashier.ledger import (
    Account,
    AccountKind,
    Pool,
    TransferKind,
    TransferRecord,
    TransferRequest,
)
from services.cashier.payments import StarsLot
from services.cashier.tables import (
    accounts,
    hand_settlements,
    hold_changes,
    house_funding,
    payment_references,
    player_holds,
    seat_sessions,
    stars_lots,
    transfers,
)

# Enum members by stored value: a dict lookup, where `Pool(value)` runs Enum's lookup machinery
# (about a microsecond each, twenty times per settled hand).
_POOLS = {pool.value: pool for pool in Pool}
_ACCOUNT_KINDS = {kind.value: kind for kind in AccountKind}


def _utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything the cashier stores is UTC.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _time(value: datetime | str) -> datetime:
    # Rows read as JSON (the one-statement PostgreSQL path) carry times as ISO text.
    return _utc(datetime.fromisoformat(value) if isinstance(value, str) else value)


def _account(row: Mapping[Any, Any]) -> Account:
    return Account(
        account_id=row["account_id"],
        owner_id=row["owner_id"],
        pool=Pool(row["pool"]),
        kind=AccountKind(row["kind"]),
        debits_posted=int(row["debits_posted"]),
        credits_posted=int(row["credits_posted"]),
        closed=bool(row["closed"]),
    )


def _record(row: Mapping[Any, Any]) -> TransferRecord:
    request = TransferRequest(
        transfer_id=row["transfer_id"],
        debit_account_id=row["debit_account_id"],
        credit_account_id=row["credit_account_id"],
        pool=Pool(row["pool"]),
        amount=int(row["amount"]),
        kind=TransferKind(row["kind"]),
        reference=row["reference"],
        table_id=row["table_id"],
    )
    return TransferRecord(
        request=request,
        created_at=_time(row["created_at"]),
        failure_reason=row["failure_reason"],
        debit_balance_after=row["debit_balance_after"],
        credit_balance_after=row["credit_balance_after"],
    )


def _insert_ignoring_duplicates(conn: AsyncConnection, table: Any) -> Any:
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(table).on_conflict_do_nothing()


async def lock_accounts(conn: AsyncConnection, account_ids: Iterable[str]) -> dict[str, Account]:
    """The existing accounts among `account_ids`, locked for update in account id order."""
    ids = sorted(set(account_ids))
    if not ids:
        return {}
    query = select(accounts).where(accounts.c.account_id.in_(ids)).order_by(accounts.c.account_id)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    result = await conn.execute(query)
    return {row.account_id: _account(row._mapping) for row in result}


async def read_accounts(conn: AsyncConnection, account_ids: Iterable[str]) -> dict[str, Account]:
    ids = sorted(set(account_ids))
    if not ids:
        return {}
    result = await conn.execute(select(accounts).where(accounts.c.account_id.in_(ids)))
    return {row.account_id: _account(row._mapping) for row in result}


async def player_accounts(conn: AsyncConnection, player_id: str) -> list[Account]:
    """The player's wallets and seats: selected by kind as well as owner, so no system account ever
    counts as a player's, whatever its owner is called."""
    kinds = (AccountKind.PLAYER_WALLET.value, AccountKind.TABLE_SEAT.value)
    query = select(accounts).where(accounts.c.owner_id == player_id, accounts.c.kind.in_(kinds))
    return [_account(row._mapping) for row in await conn.execute(query)]


async def create_account_if_missing(conn: AsyncConnection, account: Account, now: datetime) -> None:
    statement = _insert_ignoring_duplicates(conn, accounts).values(
        account_id=account.account_id,
        owner_id=account.owner_id,
        pool=account.pool.value,
        kind=account.kind.value,
        balance=0,
        debits_posted=0,
        credits_posted=0,
        closed=False,
        created_at=now,
    )
    await conn.execute(statement)


async def recorded_transfers(conn: AsyncConnection, transfer_ids: Iterable[str]) -> dict[str, TransferRecord]:
    ids = list(set(transfer_ids))
    if not ids:
        return {}
    result = await conn.execute(select(transfers).where(transfers.c.transfer_id.in_(ids)))
    return {row.transfer_id: _record(row._mapping) for row in result}


async def append_transfers(conn: AsyncConnection, records: Sequence[TransferRecord]) -> None:
    if not records:
        return
    rows = [
        {
            "transfer_id": r.request.transfer_id,
            "debit_account_id": r.request.debit_account_id,
            "credit_account_id": r.request.credit_account_id,
            "pool": r.request.pool.value if r.request.pool else "",
            "amount": r.request.amount,
            "kind": r.request.kind.value if r.request.kind else "",
            "reference": r.request.reference,
            "table_id": r.request.table_id,
            "failure_reason": r.failure_reason,
            "debit_balance_after": r.debit_balance_after,
            "credit_balance_after": r.credit_balance_after,
            "created_at": r.created_at,
        }
        for r in records
    ]
    await conn.execute(transfers.insert(), rows)


_balance_update = (
    update(accounts)
    .where(accounts.c.account_id == bindparam("target_id"))
    .values(
        balance=bindparam("new_balance"),
        debits_posted=bindparam("new_debits"),
        credits_posted=bindparam("new_credits"),
        closed=bindparam("new_closed"),
    )
)


async def save_accounts(conn: AsyncConnection, changed: Iterable[Account]) -> None:
    """Write the new posted totals (and closed flag) of accounts locked earlier in this transaction."""
    rows = [
        {
            "target_id": a.account_id,
            "new_balance": a.balance,
            "new_debits": a.debits_posted,
            "new_credits": a.credits_posted,
            "new_closed": a.closed,
        }
        for a in changed
    ]
    if rows:
        await conn.execute(_balance_update, rows)


# Seat sessions -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatSessionRow:
    session_id: str
    player_id: str
    table_id: str
    seat_index: int
    pool: Pool
    account_id: str
    open: bool
    buy_in_amount: int
    min_buy_in: int
    max_buy_in: int
    cash_out_amount: int
    opened_at: datetime
    closed_at: datetime | None


def _session(row: Mapping[Any, Any]) -> SeatSessionRow:
    return SeatSessionRow(
        session_id=row["session_id"],
        player_id=row["player_id"],
        table_id=row["table_id"],
        seat_index=int(row["seat_index"]),
        pool=Pool(row["pool"]),
        account_id=row["account_id"],
        open=row["state"] == "open",
        buy_in_amount=int(row["buy_in_amount"]),
        min_buy_in=int(row["min_buy_in"]),
        max_buy_in=int(row["max_buy_in"]),
        cash_out_amount=int(row["cash_out_amount"]),
        opened_at=_time(row["opened_at"]),
        closed_at=_time(row["closed_at"]) if row["closed_at"] is not None else None,
    )


async def seat_session(conn: AsyncConnection, session_id: str) -> SeatSessionRow | None:
    row = (await conn.execute(select(seat_sessions).where(seat_sessions.c.session_id == session_id))).first()
    return _session(row._mapping) if row is not None else None


async def seat_sessions_by_id(conn: AsyncConnection, session_ids: Iterable[str]) -> dict[str, SeatSessionRow]:
    ids = list(set(session_ids))
    result = await conn.execute(select(seat_sessions).where(seat_sessions.c.session_id.in_(ids)))
    return {row.session_id: _session(row._mapping) for row in result}


async def open_seat_session_of_player(conn: AsyncConnection, player_id: str) -> SeatSessionRow | None:
    query = select(seat_sessions).where(
        seat_sessions.c.player_id == player_id, seat_sessions.c.state == "open"
    )
    row = (await conn.execute(query)).first()
    return _session(row._mapping) if row is not None else None


async def open_seat_sessions_of_table(conn: AsyncConnection, table_id: str) -> list[SeatSessionRow]:
    query = (
        select(seat_sessions)
        .where(seat_sessions.c.table_id == table_id, seat_sessions.c.state == "open")
        .order_by(seat_sessions.c.seat_index, seat_sessions.c.session_id)
    )
    return [_session(row._mapping) for row in await conn.execute(query)]


async def insert_seat_session(conn: AsyncConnection, session: SeatSessionRow) -> None:
    await conn.execute(
        seat_sessions.insert().values(
            session_id=session.session_id,
            player_id=session.player_id,
            table_id=session.table_id,
            seat_index=session.seat_index,
            pool=session.pool.value,
            account_id=session.account_id,
            state="open",
            buy_in_amount=session.buy_in_amount,
            min_buy_in=session.min_buy_in,
            max_buy_in=session.max_buy_in,
            cash_out_amount=0,
            opened_at=session.opened_at,
        )
    )


async def close_seat_session(
    conn: AsyncConnection, session_id: str, cash_out_amount: int, now: datetime
) -> None:
    await conn.execute(
        update(seat_sessions)
        .where(seat_sessions.c.session_id == session_id)
        .values(state="closed", cash_out_amount=cash_out_amount, closed_at=now)
    )


# Hand settlements ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SettlementRow:
    hand_id: str
    table_id: str
    pool: Pool
    seat_results: str
    rake: int
    house_bank_amount: int
    transfer_count: int
    failure_reason: str | None
    failure_account_id: str | None
    created_at: datetime


def _settlement(row: Mapping[Any, Any]) -> SettlementRow:
    return SettlementRow(
        hand_id=row["hand_id"],
        table_id=row["table_id"],
        pool=Pool(row["pool"]),
        seat_results=row["seat_results"],
        rake=int(row["rake"]),
        house_bank_amount=int(row["house_bank_amount"]),
        transfer_count=int(row["transfer_count"]),
        failure_reason=row["failure_reason"],
        failure_account_id=row["failure_account_id"],
        created_at=_time(row["created_at"]),
    )


async def settlement(conn: AsyncConnection, hand_id: str) -> SettlementRow | None:
    row = (await conn.execute(select(hand_settlements).where(hand_settlements.c.hand_id == hand_id))).first()
    return _settlement(row._mapping) if row is not None else None


async def play_figures(conn: AsyncConnection, since: datetime) -> dict[Pool, tuple[int, int]]:
    """(hands settled, rake) per pool of the settlements recorded since `since` (failed ones, which
    moved no chip, left out)."""
    c = hand_settlements.c
    rows = await conn.execute(
        select(c.pool, func.count(), func.coalesce(func.sum(c.rake), 0))
        .where(c.created_at >= since)
        .where(c.failure_reason.is_(None))
        .group_by(c.pool)
    )
    return {Pool(pool): (int(count), int(rake)) for pool, count, rake in rows}


async def payment_figures(conn: AsyncConnection, since: datetime) -> dict[tuple[Pool, str], tuple[int, int]]:
    """(count, chips) per pool and kind (purchase, withdrawal) of the payments applied since `since`
    (refusals recorded with their reference moved no chip and are left out)."""
    t = transfers.c
    kinds = (TransferKind.PURCHASE.value, TransferKind.WITHDRAWAL.value)
    rows = await conn.execute(
        select(t.pool, t.kind, func.count(), func.coalesce(func.sum(t.amount), 0))
        .where(t.kind.in_(kinds))
        .where(t.created_at >= since)
        .where(t.failure_reason.is_(None))
        .group_by(t.pool, t.kind)
    )
    return {(Pool(pool), str(kind)): (int(count), int(chips)) for pool, kind, count, chips in rows}


@dataclass(frozen=True)
class WithdrawalRow:
    seq: int
    transfer_id: str
    wallet_account_id: str
    pool: Pool
    amount: int
    reference: str
    created_at: datetime


async def withdrawals_page(
    conn: AsyncConnection, *, pool: Pool | None, since: datetime | None, before_seq: int | None, limit: int
) -> list[WithdrawalRow]:
    """Withdrawals applied (not refused), newest first, of `pool` (None: both) since `since`."""
    t = transfers.c
    query = (
        select(t.seq, t.transfer_id, t.debit_account_id, t.pool, t.amount, t.reference, t.created_at)
        .where(t.kind == TransferKind.WITHDRAWAL.value)
        .where(t.failure_reason.is_(None))
        .order_by(t.seq.desc())
        .limit(limit)
    )
    if pool is not None:
        query = query.where(t.pool == pool.value)
    if since is not None:
        query = query.where(t.created_at >= since)
    if before_seq is not None:
        query = query.where(t.seq < before_seq)
    return [
        WithdrawalRow(int(seq), tid, debit, Pool(p), int(amount), ref, _utc(created))
        for seq, tid, debit, p, amount, ref, created in await conn.execute(query)
    ]


async def insert_settlement(conn: AsyncConnection, row: SettlementRow) -> None:
    await conn.execute(
        hand_settlements.insert().values(
            hand_id=row.hand_id,
            table_id=row.table_id,
            pool=row.pool.value,
            seat_results=row.seat_results,
            rake=row.rake,
            house_bank_amount=row.house_bank_amount,
            transfer_count=row.transfer_count,
            failure_reason=row.failure_reason,
            failure_account_id=row.failure_account_id,
            created_at=row.created_at,
        )
    )


# Stars lots ----------------------------------------------------------------------------------------


async def insert_stars_lot(
    conn: AsyncConnection, transfer_id: str, player_id: str, chips: int, unlocks_at: datetime
) -> None:
    await conn.execute(
        stars_lots.insert().values(
            transfer_id=transfer_id, player_id=player_id, chips=chips, unlocks_at=unlocks_at
        )
    )


async def locked_stars_lots(conn: AsyncConnection, player_id: str, now: datetime) -> list[StarsLot]:
    query = select(stars_lots.c.chips, stars_lots.c.unlocks_at).where(
        stars_lots.c.player_id == player_id, stars_lots.c.unlocks_at > now
    )
    return [StarsLot(row.chips, _utc(row.unlocks_at)) for row in await conn.execute(query)]


# Payment references --------------------------------------------------------------------------------


async def payment_reference_holder(conn: AsyncConnection, kind: TransferKind, reference: str) -> str | None:
    """The id of the transfer (of any source) that holds a purchase's or withdrawal's reference."""
    query = select(payment_references.c.transfer_id).where(
        payment_references.c.kind == kind.value, payment_references.c.payment_reference == reference
    )
    return (await conn.execute(query)).scalar_one_or_none()


async def claim_payment_reference(
    conn: AsyncConnection, kind: TransferKind, reference: str, transfer_id: str
) -> None:
    """Give the reference to the transfer. A plain insert: a concurrent first attempt that claimed it
    meanwhile makes it violate the key, and the unit of work is retried (and then finds the holder)."""
    await conn.execute(
        payment_references.insert().values(
            kind=kind.value, payment_reference=reference, transfer_id=transfer_id
        )
    )


# Statement and audit -------------------------------------------------------------------------------


async def transfers_touching(
    conn: AsyncConnection, account_ids: Sequence[str], *, before_seq: int | None, limit: int
) -> list[tuple[int, TransferRecord]]:
    """Applied transfers debiting or crediting any of `account_ids`, newest first."""
    condition = and_(
        transfers.c.failure_reason.is_(None),
        or_(transfers.c.debit_account_id.in_(account_ids), transfers.c.credit_account_id.in_(account_ids)),
    )
    if before_seq is not None:
        condition = and_(condition, transfers.c.seq <= before_seq)
    query = select(transfers).where(condition).order_by(transfers.c.seq.desc()).limit(limit)
    return [(row.seq, _record(row._mapping)) for row in await conn.execute(query)]


@dataclass(frozen=True)
class PoolFigures:
    """Exact (Python int) conservation figures of one pool; sums may exceed int64."""

    pool: Pool
    minted: int
    burned: int
    accounts_total: int
    journal_total: int
    debits_posted: int
    credits_posted: int
    negative_accounts: int
    account_count: int


def _exact_sums(conn: AsyncConnection, column: Any, condition: Any = None) -> list[Any]:
    """Aggregates that add `column` (non-negative bigints) exactly, however many rows there are.

    PostgreSQL sums bigints as numeric, which cannot overflow. SQLite's SUM fails with "integer
    overflow" beyond int64, so there the values are split into their high and low 32 bits, each
    summed on its own (each sum fits int64 for up to 2^31 rows) and joined back in Python.
    """
    value = column if condition is None else case((condition, column), else_=0)
    if conn.dialect.name == "postgresql":
        return [func.coalesce(func.sum(value), 0)]
    return [
        func.coalesce(func.sum(value.op(">>")(32)), 0),
        func.coalesce(func.sum(value.op("&")(0xFFFFFFFF)), 0),
    ]


def _joined(row: Sequence[Any], index: int, dialect: str) -> tuple[int, int]:
    """The exact sum that `_exact_sums` produced at `index`, and the index after it."""
    if dialect == "postgresql":
        return int(row[index]), index + 1
    return (int(row[index]) << 32) + int(row[index + 1]), index + 2


async def pool_figures(conn: AsyncConnection) -> list[PoolFigures]:
    """The conservation figures of every pool, read in the caller's (snapshot) transaction."""
    dialect = conn.dialect.name
    is_mint = accounts.c.kind == AccountKind.EXTERNAL_MINT.value
    not_mint = accounts.c.kind != AccountKind.EXTERNAL_MINT.value
    # Only non-negative values are summed (a mint's negative balance never is), so the split works.
    account_query = select(
        accounts.c.pool,
        *_exact_sums(conn, accounts.c.debits_posted, is_mint),
        *_exact_sums(conn, accounts.c.credits_posted, is_mint),
        *_exact_sums(conn, accounts.c.balance, and_(not_mint, accounts.c.balance > 0)),
        *_exact_sums(conn, accounts.c.debits_posted),
        *_exact_sums(conn, accounts.c.credits_posted),
        func.count().filter(and_(not_mint, accounts.c.balance < 0)),
        func.count(),
    ).group_by(accounts.c.pool)
    journal_query = (
        select(transfers.c.pool, *_exact_sums(conn, transfers.c.amount))
        .where(transfers.c.failure_reason.is_(None))
        .group_by(transfers.c.pool)
    )
    journal = {row[0]: _joined(row, 1, dialect)[0] for row in await conn.execute(journal_query)}
    figures = {}
    for row in await conn.execute(account_query):
        pool = Pool(row[0])
        sums = []
        index = 1
        for _ in range(5):
            total, index = _joined(row, index, dialect)
            sums.append(total)
        minted, burned, accounts_total, debits, credits = sums
        figures[pool] = PoolFigures(
            pool=pool,
            minted=minted,
            burned=burned,
            # A negative non-mint balance (which the CHECK constraints forbid) is counted below and
            # fails the audit; it is left out of the total rather than split.
            accounts_total=accounts_total,
            journal_total=journal.get(row[0], 0),
            debits_posted=debits,
            credits_posted=credits,
            negative_accounts=int(row[index]),
            account_count=int(row[index + 1]),
        )
    return [figures.get(pool, PoolFigures(pool, 0, 0, 0, 0, 0, 0, 0, 0)) for pool in Pool]


# One round trip each way on PostgreSQL ------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    """Everything a unit of work reads before deciding: locked accounts and what is already recorded."""

    accounts: dict[str, Account]
    transfers: dict[str, TransferRecord]
    sessions: dict[str, SeatSessionRow]
    settlements: dict[str, SettlementRow]


# The accounts are locked first (in id order) by the CTE; the other rows come from the statement's
# snapshot, which may predate a transaction we waited for. That is safe: anything such a transaction
# recorded makes our insert violate a unique key, and the whole unit of work is retried.
_LOCK_AND_LOAD = """
    WITH locked AS (
        SELECT * FROM accounts WHERE account_id = ANY(CAST(%(account_ids)s AS text[]))
        ORDER BY account_id FOR UPDATE
    )
    SELECT 'a' AS source, json_agg(json_build_array(
        account_id, owner_id, pool, kind, debits_posted, credits_posted, closed)) AS items FROM locked
    UNION ALL
    SELECT 't', json_agg(t.*) FROM transfers t WHERE t.transfer_id = ANY(CAST(%(transfer_ids)s AS text[]))
    UNION ALL
    SELECT 's', json_agg(json_build_array(
        session_id, player_id, table_id, seat_index, pool, account_id, state, buy_in_amount, min_buy_in,
        max_buy_in, cash_out_amount, opened_at, closed_at))
    FROM seat_sessions s WHERE s.session_id = ANY(CAST(%(session_ids)s AS text[]))
    UNION ALL
    SELECT 'h', json_agg(h.*) FROM hand_settlements h WHERE h.hand_id = ANY(CAST(%(hand_ids)s AS text[]))
"""


async def _driver_execute(
    conn: AsyncConnection,
    sql: str,
    params: Mapping[str, Any],
    *,
    prepare: bool | None = None,
    commit: bool = False,
) -> list[Any]:
    """Run one statement on the psycopg connection under `conn`, inside its open transaction.

    The two statements of every hot unit of work skip SQLAlchemy's statement layer, which on a
    busy machine costs more than the database does for them. `prepare=None` lets psycopg prepare
    the statement once it has run a few times; `False` plans it afresh with the actual values.

    The statement is sent in pipeline mode, so the BEGIN psycopg opens a transaction with travels
    with it in one round trip; `commit=True` sends the COMMIT along too (the caller's transaction
    then has nothing left to commit). An error still surfaces here, before anything is committed.
    """
    with driver_round_trip("postgresql"):
        async with driver_pipeline(conn) as driver:  # leaving it sends one Sync and reads every result
            cursor = await driver.execute(sql, params, prepare=prepare)
            if commit:
                await driver.execute("COMMIT")  # skipped by the server if the statement failed
    return list(await cursor.fetchall()) if cursor.description else []


async def lock_and_load(
    conn: AsyncConnection,
    account_ids: Iterable[str],
    transfer_ids: Iterable[str] = (),
    session_ids: Iterable[str] = (),
    hand_ids: Iterable[str] = (),
) -> Loaded:
    """Lock `account_ids` and read the recorded transfers, sessions and settlements a decision needs."""
    sessions, hands = list(session_ids), list(hand_ids)
    if conn.dialect.name != "postgresql":
        found = {}
        for hand_id in hands:
            row = await settlement(conn, hand_id)
            if row is not None:
                found[hand_id] = row
        return Loaded(
            accounts=await lock_accounts(conn, account_ids),
            transfers=await recorded_transfers(conn, transfer_ids),
            sessions=await seat_sessions_by_id(conn, sessions) if sessions else {},
            settlements=found,
        )
    # Never prepared: a prepared statement soon runs a generic plan, which cannot see the id arrays.
    # That plan was a sequential scan of `transfers` testing every row against the whole id array
    # one element at a time (no hashing for a parameter array), so its cost grew with the journal
    # times the batch: 170-200 ms for 800 ids against 16,000 transfers, against 5 ms planned afresh.
    result = await _driver_execute(
        conn,
        _LOCK_AND_LOAD,
        {
            "account_ids": sorted(set(account_ids)),
            "transfer_ids": list(set(transfer_ids)),
            "session_ids": list(set(sessions)),
            "hand_ids": list(set(hands)),
        },
        prepare=False,
    )
    # One JSON document per kind of row (decoded once), not one per row; the accounts and sessions
    # every settlement loads come as arrays in the order of the SELECT, built straight into objects.
    loaded = Loaded({}, {}, {}, {})
    for source, items in result:
        if not items:
            continue
        if source == "a":
            for account_id, owner_id, pool, kind, debits, credits, closed in items:
                loaded.accounts[account_id] = Account(
                    account_id, owner_id, _POOLS[pool], _ACCOUNT_KINDS[kind], debits, credits, closed
                )
        elif source == "t":
            loaded.transfers.update((item["transfer_id"], _record(item)) for item in items)
        elif source == "s":
            for item in items:
                loaded.sessions[item[0]] = SeatSessionRow(
                    item[0], item[1], item[2], item[3], _POOLS[item[4]], item[5], item[6] == "open",
                    item[7], item[8], item[9], item[10], _time(item[11]),
                    _time(item[12]) if item[12] is not None else None,
                )  # fmt: skip
        else:
            loaded.settlements.update((item["hand_id"], _settlement(item)) for item in items)
    return loaded


_TRANSFER_COLUMNS = (
    "transfer_id text, debit_account_id text, credit_account_id text, pool text, amount bigint, kind text, "
    "reference text, table_id text, failure_reason text, debit_balance_after bigint, "
    "credit_balance_after bigint, created_at timestamptz"
)
_TRANSFER_NAMES = (
    "transfer_id, debit_account_id, credit_account_id, pool, amount, kind, reference, table_id, "
    "failure_reason, debit_balance_after, credit_balance_after, created_at"
)
# Transfers to append travel as a JSON array of arrays in the order of _TRANSFER_NAMES (a third of
# the text of an array of objects, and half the time to encode). As jsonb: `->>` on plain json
# parses the element again for every field (1.4 ms against 0.3 ms for 48 transfers).
_TRANSFER_VALUES = ", ".join(
    f"CAST(value->>{index} AS {column.split()[1]})"
    for index, column in enumerate(_TRANSFER_COLUMNS.split(", "))
)


async def write_changes(
    conn: AsyncConnection,
    records: Sequence[TransferRecord],
    changed: Iterable[Account],
    settlement_rows: Sequence[SettlementRow] = (),
    *,
    commit: bool = False,
) -> None:
    """Append `records`, write the new totals of `changed`, insert `settlement_rows`, in one statement.

    `commit=True` (the last thing the unit of work does) sends the COMMIT with the statement on
    PostgreSQL, saving a round trip; elsewhere the transaction commits as usual when it ends.
    """
    changed = list(changed)
    if conn.dialect.name != "postgresql":
        await append_transfers(conn, records)
        await save_accounts(conn, changed)
        for row in settlement_rows:
            await insert_settlement(conn, row)
        return
    parts: list[str] = []
    params: dict[str, Any] = {}
    if records:
        parts.append(
            f"new_transfers AS (INSERT INTO transfers ({_TRANSFER_NAMES}) "
            f"SELECT {_TRANSFER_VALUES} FROM jsonb_array_elements(CAST(%(records)s AS jsonb)) AS e(value))"
        )
        stamps: dict[datetime, str] = {}  # a transaction's records mostly share one time
        rows: list[list[Any]] = []
        for r in records:
            request = r.request
            stamp = stamps.get(r.created_at)
            if stamp is None:
                stamp = stamps[r.created_at] = r.created_at.isoformat()
            rows.append(
                [
                    request.transfer_id,
                    request.debit_account_id,
                    request.credit_account_id,
                    request.pool or "",  # StrEnum members encode as their value
                    request.amount,
                    request.kind or "",
                    request.reference,
                    request.table_id,
                    r.failure_reason,
                    r.debit_balance_after,
                    r.credit_balance_after,
                    stamp,
                ]
            )
        params["records"] = json.dumps(rows)
    if changed:
        parts.append(
            "new_totals AS (UPDATE accounts AS a SET balance = v.credits_posted - v.debits_posted, "
            "debits_posted = v.debits_posted, credits_posted = v.credits_posted, closed = v.closed "
            "FROM json_to_recordset(CAST(%(accounts)s AS json)) "
            "AS v(account_id text, debits_posted bigint, credits_posted bigint, closed boolean) "
            "WHERE a.account_id = v.account_id)"
        )
        params["accounts"] = json.dumps(
            [
                {
                    "account_id": a.account_id,
                    "debits_posted": a.debits_posted,
                    "credits_posted": a.credits_posted,
                    "closed": a.closed,
                }
                for a in changed
            ]
        )
    if settlement_rows:
        parts.append(
            "new_settlements AS (INSERT INTO hand_settlements (hand_id, table_id, pool, seat_results, rake, "
            "house_bank_amount, transfer_count, failure_reason, failure_account_id, created_at) "
            "SELECT * FROM json_to_recordset(CAST(%(settlements)s AS json)) AS h(hand_id text, table_id text, "
            "pool text, seat_results text, rake bigint, house_bank_amount bigint, transfer_count integer, "
            "failure_reason text, failure_account_id text, created_at timestamptz))"
        )
        params["settlements"] = json.dumps(
            [
                {
                    "hand_id": row.hand_id,
                    "table_id": row.table_id,
                    "pool": row.pool,
                    "seat_results": row.seat_results,
                    "rake": row.rake,
                    "house_bank_amount": row.house_bank_amount,
                    "transfer_count": row.transfer_count,
                    "failure_reason": row.failure_reason,
                    "failure_account_id": row.failure_account_id,
                    "created_at": row.created_at.isoformat(),
                }
                for row in settlement_rows
            ]
        )
    if parts:
        await _driver_execute(conn, "WITH " + ", ".join(parts) + " SELECT 1", params, commit=commit)


@dataclass(frozen=True)
class HoldRow:
    """A player's hold in one scope as it stands: the last change applied."""

    player_id: str
    held: bool
    reason: str
    request_id: str
    changed_at: datetime
    scope: str = "FULL"


def _hold_row(row: Any) -> HoldRow:
    return HoldRow(
        row["player_id"],
        bool(row["held"]),
        row["reason"],
        row["request_id"],
        _utc(row["changed_at"]),
        row["scope"],
    )


async def player_hold(
    conn: AsyncConnection, player_id: str, scope: str = "FULL", *, lock: bool = False
) -> HoldRow | None:
    query = select(player_holds).where(player_holds.c.player_id == player_id, player_holds.c.scope == scope)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return None if row is None else _hold_row(row)


async def player_holds_in_force(conn: AsyncConnection, player_id: str) -> list[HoldRow]:
    """The player's holds that are on, of every scope."""
    query = select(player_holds).where(player_holds.c.player_id == player_id, player_holds.c.held)
    return [_hold_row(row) for row in (await conn.execute(query)).mappings()]


@dataclass(frozen=True)
class HoldChange:
    """One hold or release in one scope, by its request id."""

    request_id: str
    player_id: str
    held: bool
    reason: str
    changed_at: datetime
    scope: str = "FULL"


async def hold_change(conn: AsyncConnection, request_id: str) -> HoldChange | None:
    """The change recorded under a request id, or None."""
    row = (
        (await conn.execute(select(hold_changes).where(hold_changes.c.request_id == request_id)))
        .mappings()
        .first()
    )
    if row is None:
        return None
    return HoldChange(
        row["request_id"],
        row["player_id"],
        bool(row["held"]),
        row["reason"],
        _utc(row["changed_at"]),
        row["scope"],
    )


async def record_hold_change(conn: AsyncConnection, change: HoldChange) -> None:
    """Append the change (its request id is unique) and make it the player's current hold in its scope."""
    values = {
        "held": change.held,
        "reason": change.reason,
        "request_id": change.request_id,
        "changed_at": change.changed_at,
    }
    await conn.execute(
        insert(hold_changes).values(
            request_id=change.request_id,
            player_id=change.player_id,
            held=change.held,
            reason=change.reason,
            changed_at=change.changed_at,
            scope=change.scope,
        )
    )
    updated = await conn.execute(
        update(player_holds)
        .where(player_holds.c.player_id == change.player_id, player_holds.c.scope == change.scope)
        .values(**values)
    )
    if updated.rowcount == 0:
        await conn.execute(
            insert(player_holds).values(player_id=change.player_id, scope=change.scope, **values)
        )


# Four-eyes house funding (house_funding.py) ---------------------------------------------------------


class FundingState(enum.StrEnum):
    PENDING = "PENDING"
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"


@dataclass(frozen=True)
class HouseFundingRow:
    """One funding request and its decision (the decision's fields are empty while it is pending)."""

    seq: int
    request_id: str
    pool: Pool
    account: AccountKind
    amount: int
    reason: str
    requested_by: str
    requested_at: datetime
    state: FundingState
    decision_id: str = ""
    decided_by: str = ""
    decided_at: datetime | None = None
    decision_reason: str = ""


def _funding_row(row: RowMapping) -> HouseFundingRow:
    return HouseFundingRow(
        seq=int(row["seq"]),
        request_id=row["request_id"],
        pool=_POOLS[row["pool"]],
        account=_ACCOUNT_KINDS[row["account"]],
        amount=int(row["amount"]),
        reason=row["reason"],
        requested_by=row["requested_by"],
        requested_at=_utc(row["requested_at"]),
        state=FundingState(row["state"]),
        decision_id=row["decision_id"] or "",
        decided_by=row["decided_by"] or "",
        decided_at=None if row["decided_at"] is None else _utc(row["decided_at"]),
        decision_reason=row["decision_reason"] or "",
    )


async def house_funding_by_request(
    conn: AsyncConnection, request_id: str, *, lock: bool = False
) -> HouseFundingRow | None:
    query = select(house_funding).where(house_funding.c.request_id == request_id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return None if row is None else _funding_row(row)


async def house_funding_by_decision(conn: AsyncConnection, decision_id: str) -> HouseFundingRow | None:
    query = select(house_funding).where(house_funding.c.decision_id == decision_id)
    row = (await conn.execute(query)).mappings().first()
    return None if row is None else _funding_row(row)


async def insert_house_funding(
    conn: AsyncConnection,
    *,
    request_id: str,
    pool: Pool,
    account: AccountKind,
    amount: int,
    reason: str,
    requested_by: str,
    requested_at: datetime,
) -> HouseFundingRow:
    await conn.execute(
        insert(house_funding).values(
            request_id=request_id,
            pool=pool.value,
            account=account.value,
            amount=amount,
            reason=reason,
            requested_by=requested_by,
            requested_at=requested_at,
            state=FundingState.PENDING.value,
        )
    )
    row = await house_funding_by_request(conn, request_id)
    assert row is not None
    return row


async def decide_house_funding(
    conn: AsyncConnection,
    *,
    request_id: str,
    state: FundingState,
    decision_id: str,
    decided_by: str,
    decided_at: datetime,
    decision_reason: str,
) -> HouseFundingRow:
    await conn.execute(
        update(house_funding)
        .where(house_funding.c.request_id == request_id, house_funding.c.state == FundingState.PENDING.value)
        .values(
            state=state.value,
            decision_id=decision_id,
            decided_by=decided_by,
            decided_at=decided_at,
            decision_reason=decision_reason,
        )
    )
    row = await house_funding_by_request(conn, request_id)
    assert row is not None
    assert row.decision_id == decision_id
    return row


async def house_funding_page(
    conn: AsyncConnection, state: FundingState | None, *, before_seq: int | None, limit: int
) -> list[HouseFundingRow]:
    """Requests newest first, of one state or all, before `before_seq` (a page token)."""
    query = select(house_funding).order_by(house_funding.c.seq.desc()).limit(limit)
    if state is not None:
        query = query.where(house_funding.c.state == state.value)
    if before_seq is not None:
        query = query.where(house_funding.c.seq < before_seq)
    return [_funding_row(row) for row in (await conn.execute(query)).mappings()]
