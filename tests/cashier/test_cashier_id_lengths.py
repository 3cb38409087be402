"""Every id the cashier derives fits every column it lands in, for the longest inputs the contract
allows (issue 10: a 115-128 character payment reference used to overflow `transfer_id`)."""

from __future__ import annotations

from services.cashier.ledger import (
    HOUSE_FUNDING_SOURCE,
    HOUSE_OWNER,
    INT64_MAX,
    MAX_ACCOUNT_ID_LENGTH,
    MAX_AMOUNT,
    MAX_HAND_ID_LENGTH,
    MAX_MINTS_PER_POOL,
    MAX_PLAYER_ID_LENGTH,
    MAX_RECORDED_TRANSFER_ID_LENGTH,
    MAX_SESSION_ID_LENGTH,
    MAX_TEXT_LENGTH,
    MAX_TRANSFER_ID_LENGTH,
    MINT_LIMIT,
    Pool,
    TransferKind,
    bank_account_id,
    funding_transfer_id,
    jackpot_account_id,
    mint_account_id,
    mint_owner_id,
    rake_account_id,
    seat_account_id,
    wallet_account_id,
)
from services.cashier.payments import RATES, PaymentSource
from services.cashier.settlement import MAX_SEAT_RESULTS, settlement_transfer_id
from services.cashier.tables import accounts, hand_settlements, seat_sessions, stars_lots, transfers


def width(column: object) -> int:
    length = column.type.length  # type: ignore[attr-defined]
    assert isinstance(length, int)
    return length


def longest(limit: int) -> str:
    return "x" * limit


def test_every_derived_id_fits_its_columns() -> None:
    player, session, table = (
        longest(MAX_PLAYER_ID_LENGTH),
        longest(MAX_SESSION_ID_LENGTH),
        longest(MAX_TEXT_LENGTH),
    )
    hand, reference = longest(MAX_HAND_ID_LENGTH), longest(MAX_TEXT_LENGTH)
    sources = [s.value for s in PaymentSource] + [HOUSE_FUNDING_SOURCE]
    account_ids = [
        *(wallet_account_id(pool, player) for pool in Pool),
        seat_account_id(session),
        *(rake_account_id(pool, table) for pool in Pool),
        *(bank_account_id(pool) for pool in Pool),
        *(jackpot_account_id(pool) for pool in Pool),
        *(mint_account_id(source, pool) for source in sources for pool in Pool),
    ]
    # The most transfers a hand yields: every seat pays or is paid, plus the rake and the house bank.
    transfer_ids = [
        *(f"purchase:{source.value}:{reference}" for source in PaymentSource),
        *(f"withdrawal:{source.value}:{reference}" for source, rate in RATES.items() if rate.withdrawable),
        f"buyin:{session}",
        f"cashout:{session}",
        settlement_transfer_id(hand, MAX_SEAT_RESULTS + 2),
        funding_transfer_id(longest(MAX_TRANSFER_ID_LENGTH)),
        longest(MAX_TRANSFER_ID_LENGTH),
    ]
    owners = [player, HOUSE_OWNER, *(mint_owner_id(source) for source in sources)]
    for column in (accounts.c.account_id, transfers.c.debit_account_id, transfers.c.credit_account_id,
                   seat_sessions.c.account_id, hand_settlements.c.failure_account_id):  # fmt: skip
        assert max(map(len, account_ids)) <= width(column) == MAX_ACCOUNT_ID_LENGTH, column
    for column in (transfers.c.transfer_id, stars_lots.c.transfer_id):
        assert max(map(len, transfer_ids)) <= width(column) == MAX_RECORDED_TRANSFER_ID_LENGTH, column
    assert max(map(len, owners)) <= width(accounts.c.owner_id)
    for column in (seat_sessions.c.player_id, stars_lots.c.player_id):
        assert len(player) <= width(column)
    for column in (transfers.c.table_id, seat_sessions.c.table_id, hand_settlements.c.table_id):
        assert len(table) <= width(column)
    # References carry payment references, hand ids, session ids and funding reasons.
    assert max(len(reference), len(hand), len(session)) <= width(transfers.c.reference)
    assert len(session) <= width(seat_sessions.c.session_id)
    assert len(hand) <= width(hand_settlements.c.hand_id)
    assert max(len(kind.value) for kind in TransferKind) <= width(transfers.c.kind)


def test_no_pool_can_mint_beyond_int64_and_no_request_amount_reaches_the_limit() -> None:
    assert MAX_MINTS_PER_POOL * MINT_LIMIT < INT64_MAX
    for pool in Pool:
        mints = {s for s, rate in RATES.items() if rate.pool is pool} | {HOUSE_FUNDING_SOURCE}
        assert len(mints) <= MAX_MINTS_PER_POOL
    assert MAX_AMOUNT < MINT_LIMIT
