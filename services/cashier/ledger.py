"""The pure double-entry ledger: accounts, transfers and how a batch of transfers applies (no I/O).

Semantics follow TigerBeetle's: the caller's transfer id is the idempotency key forever. The storage
adapter locks the accounts a batch touches, loads any transfers already recorded under the batch's
ids, and hands both to `plan_transfers`, which decides every outcome and the new balances; the
adapter then writes exactly what the plan says in the same transaction.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from service_runtime.errors import InvalidArgument, NotFound, PermissionDenied
from service_runtime.validation import MAX_PLAYER_ID_LENGTH, require_player_id

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MAX_TRANSFER_ID_LENGTH = 128  # what a caller may choose
MAX_TEXT_LENGTH = 128
MAX_ACCOUNT_ID_LENGTH = 200
# Derived ids are longer than chosen ones (`purchase:TELEGRAM_STARS:<128>` is 152): every transfer id
# column holds this many, and LookupTransfers accepts ids up to it.
MAX_RECORDED_TRANSFER_ID_LENGTH = 200
MAX_SESSION_ID_LENGTH = 100
MAX_HAND_ID_LENGTH = 100
MAX_BATCH_SIZE = 1000

# Every chip amount a request names is at most this (10^17 chips: 10^14 GRAM): no single request
# can push a balance or a sum near the edge of int64.
MAX_AMOUNT = 10**17
# Each mint account mints at most this many chips in its lifetime (its debits posted). A pool has
# at most three mints (GRAM: GRAM, Stars and house funding; MPX: MPX and house funding), so what a
# pool ever minted, and therefore every balance and the audit's minted / burned / accounts totals,
# stays below 6 * 10^18 < 2^63.
MINT_LIMIT = 2 * 10**18
MAX_MINTS_PER_POOL = 3

# Transfer ids the cashier derives itself; callers of CreateTransfers may not use them.
RESERVED_ID_PREFIXES = ("hand:", "buyin:", "cashout:", "purchase:", "withdrawal:", "funding:")

# System accounts belong to owners under `system/`; a player id cannot contain `/`, so no player id
# can ever name one. Statements and balances also select a player's accounts by kind.
HOUSE_OWNER = "system/house"
HOUSE_FUNDING_SOURCE = "HOUSE_FUNDING"


class Pool(enum.StrEnum):
    """A separate ledger of chips; nothing ever moves between pools."""

    GRAM = "GRAM"
    MPX = "MPX"


class AccountKind(enum.StrEnum):
    PLAYER_WALLET = "player_wallet"
    TABLE_SEAT = "table_seat"
    HOUSE_RAKE = "house_rake"
    HOUSE_BANK = "house_bank"
    # The house bank's reserved money: the worst-case payouts of the pool's open house rounds.
    HOUSE_COVER = "house_cover"
    JACKPOT = "jackpot"
    EXTERNAL_MINT = "external_mint"


class TransferKind(enum.StrEnum):
    PURCHASE = "purchase"
    WITHDRAWAL = "withdrawal"
    BUY_IN = "buy_in"
    CASH_OUT = "cash_out"
    HAND_RESULT = "hand_result"
    RAKE = "rake"
    HOUSE_GAME_RESULT = "house_game_result"
    ADJUSTMENT = "adjustment"
    HOUSE_FUNDING = "house_funding"


class TransferStatus(enum.Enum):
    CREATED = "created"
    EXISTS = "exists"
    EXISTS_WITH_DIFFERENT_FIELD = "exists_with_different_field"
    FAILED = "failed"


# Failure reasons that depend on the state of the accounts; they are recorded with the transfer id.
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
ACCOUNT_CLOSED = "ACCOUNT_CLOSED"
BALANCE_OVERFLOW = "BALANCE_OVERFLOW"
LINKED_TRANSFER_FAILED = "LINKED_TRANSFER_FAILED"
SUPPLY_LIMIT_REACHED = "SUPPLY_LIMIT_REACHED"


def wallet_account_id(pool: Pool, player_id: str) -> str:
    return f"wallet:{pool.value}:{player_id}"


def seat_account_id(session_id: str) -> str:
    return f"seat:{session_id}"


def rake_account_id(pool: Pool, table_id: str) -> str:
    """The house's rake from one table: opened with the table's first seat, so hands settling at
    different tables never wait for each other's balance rows."""
    return f"house:rake:{pool.value}:{table_id}"


def bank_account_id(pool: Pool) -> str:
    return f"house:bank:{pool.value}"


def cover_account_id(pool: Pool) -> str:
    """The pool's house-bank reservations (docs/cashier.md "The house bank's cover"): a house round
    moves its largest possible payout here from the bank in the batch that takes its stakes, and its
    settlement or refund moves it back first. The bank's own balance is what no round has promised."""
    return f"house:cover:{pool.value}"


def jackpot_account_id(pool: Pool) -> str:
    return f"house:jackpot:{pool.value}"


def mint_account_id(source: str, pool: Pool) -> str:
    return f"mint:{source}:{pool.value}"


def mint_owner_id(source: str) -> str:
    return f"system/mint/{source}"


def is_mint_account_id(account_id: str) -> bool:
    """Mint accounts are the only ones whose id starts with `mint:` (every other kind has its own)."""
    return account_id.startswith("mint:")


def funding_transfer_id(request_id: str) -> str:
    return f"funding:{request_id}"


@dataclass(frozen=True, slots=True)
class Account:
    """One account and its posted totals; `balance` is always credits minus debits."""

    account_id: str
    owner_id: str
    pool: Pool
    kind: AccountKind
    debits_posted: int = 0
    credits_posted: int = 0
    closed: bool = False

    @property
    def balance(self) -> int:
        return self.credits_posted - self.debits_posted

    @property
    def may_go_negative(self) -> bool:
        # Only the outside world can owe chips: a mint's balance is minus what it minted.
        return self.kind is AccountKind.EXTERNAL_MINT


@dataclass(frozen=True, slots=True)
class TransferRequest:
    """What a caller asks for; every field but the id is compared when the id was seen before."""

    transfer_id: str
    debit_account_id: str
    credit_account_id: str
    pool: Pool | None
    amount: int
    kind: TransferKind | None
    reference: str = ""
    table_id: str = ""


# The fields that make two requests with one id "the same", in the order a conflict names them.
COMPARED_FIELDS = ("debit_account_id", "credit_account_id", "pool", "amount", "kind", "reference", "table_id")


@dataclass(frozen=True, slots=True)
class TransferRecord:
    """A transfer as recorded: applied (no failure reason) or failed for good with a reason."""

    request: TransferRequest
    created_at: datetime
    failure_reason: str | None = None
    debit_balance_after: int | None = None
    credit_balance_after: int | None = None

    @property
    def applied(self) -> bool:
        return self.failure_reason is None


@dataclass(frozen=True, slots=True)
class TransferOutcome:
    """The result of one transfer of a batch."""

    transfer_id: str
    status: TransferStatus
    record: TransferRecord | None = None
    field: str = ""
    reason: str = ""


@dataclass(frozen=True)
class BatchPlan:
    """What a batch does: an outcome per transfer, the records to append, the accounts that changed."""

    outcomes: list[TransferOutcome]
    new_records: list[TransferRecord]
    changed_accounts: dict[str, Account]

    @property
    def failed(self) -> bool:
        return any(
            o.status is not TransferStatus.CREATED and o.status is not TransferStatus.EXISTS
            for o in self.outcomes
        )


def first_difference(recorded: TransferRequest, request: TransferRequest) -> str:
    """The first compared field that differs, or an empty string when the requests are the same."""
    for name in COMPARED_FIELDS:
        if getattr(recorded, name) != getattr(request, name):
            return name
    return ""


def check_text(
    value: str,
    field: str,
    limit: int = MAX_TEXT_LENGTH,
    *,
    required: bool = True,
    index: int | None = None,
) -> None:
    """Text fields are printable ASCII (space to `~`): no NUL, no control character, no non-ASCII,
    at most `limit` characters; FIELD_REQUIRED when empty and required, FIELD_INVALID otherwise."""
    meta = {"field": field} if index is None else {"field": field, "index": str(index)}
    if not value:
        if required:
            raise InvalidArgument("FIELD_REQUIRED", f"{field} is required", meta)
        return
    if len(value) > limit or not value.isascii() or not value.isprintable():
        raise InvalidArgument(
            "FIELD_INVALID", f"{field} must be 1 to {limit} printable ASCII characters", meta
        )


def check_player_id(value: str, field: str = "player_id") -> None:
    """A player id: 1 to 128 of `A-Z a-z 0-9 . _ - : @`, starting with a letter or digit, and not a
    reserved name, so it can never be, or be taken for, the owner of a system account."""
    check_text(value, field, MAX_PLAYER_ID_LENGTH)
    require_player_id(value, field)


def check_amount(amount: int, field: str = "amount", index: int | None = None) -> None:
    """Chips a request moves are whole, positive and at most MAX_AMOUNT."""
    if not 0 < amount <= MAX_AMOUNT:
        meta = {"field": field} if index is None else {"field": field, "index": str(index)}
        raise InvalidArgument("AMOUNT_INVALID", f"{field} must be between 1 and 10^17 chips", meta)


def check_signed_amount(amount: int, field: str) -> None:
    """A signed change of chips (a hand result, a house bank change): at most MAX_AMOUNT either way."""
    if not -MAX_AMOUNT <= amount <= MAX_AMOUNT:
        raise InvalidArgument(
            "AMOUNT_INVALID", f"{field} must be between -10^17 and 10^17 chips", {"field": field}
        )


def validate_batch(
    requests: Sequence[TransferRequest],
    *,
    allow_reserved_ids: bool = False,
    allow_mint_accounts: bool = False,
) -> None:
    """Reject a malformed batch as a whole before anything is looked up; nothing of it is recorded."""
    if not requests:
        raise InvalidArgument("FIELD_REQUIRED", "a batch needs at least one transfer", {"field": "transfers"})
    if len(requests) > MAX_BATCH_SIZE:
        raise InvalidArgument(
            "FIELD_INVALID", f"a batch holds at most {MAX_BATCH_SIZE} transfers", {"field": "transfers"}
        )
    seen: set[str] = set()
    for index, request in enumerate(requests):
        check_text(request.transfer_id, "transfer_id", MAX_TRANSFER_ID_LENGTH, index=index)
        if not allow_reserved_ids and request.transfer_id.startswith(RESERVED_ID_PREFIXES):
            raise InvalidArgument(
                "FIELD_INVALID",
                "transfer ids with this prefix are derived by the cashier",
                {"field": "transfer_id", "index": str(index)},
            )
        if request.transfer_id in seen:
            raise InvalidArgument(
                "FIELD_INVALID",
                "a transfer id appears twice in the batch",
                {"field": "transfer_id", "index": str(index)},
            )
        seen.add(request.transfer_id)
        check_text(request.debit_account_id, "debit_account_id", MAX_ACCOUNT_ID_LENGTH, index=index)
        check_text(request.credit_account_id, "credit_account_id", MAX_ACCOUNT_ID_LENGTH, index=index)
        if not allow_mint_accounts:
            for field in ("debit_account_id", "credit_account_id"):
                if is_mint_account_id(getattr(request, field)):
                    raise PermissionDenied(
                        "MINT_ACCOUNT_FORBIDDEN",
                        "chips are minted and burned only by purchases, withdrawals and house funding",
                        {"field": field, "index": str(index)},
                    )
        if request.debit_account_id == request.credit_account_id:
            raise InvalidArgument(
                "SAME_ACCOUNT", "a transfer must move chips between two accounts", {"index": str(index)}
            )
        if request.pool is None:
            raise InvalidArgument("POOL_INVALID", "pool is required", {"field": "pool", "index": str(index)})
        check_amount(request.amount, index=index)
        if request.kind is None:
            raise InvalidArgument(
                "FIELD_REQUIRED", "kind is required", {"field": "kind", "index": str(index)}
            )
        check_text(request.reference, "reference", index=index, required=False)
        check_text(request.table_id, "table_id", index=index, required=False)


def refusal(debit: Account, credit: Account, amount: int) -> str | None:
    """Why the accounts cannot take this transfer now, or None when they can."""
    if debit.closed or credit.closed:
        return ACCOUNT_CLOSED
    if debit.balance - amount < 0 and not debit.may_go_negative:
        return INSUFFICIENT_FUNDS
    if debit.kind is AccountKind.EXTERNAL_MINT and debit.debits_posted + amount > MINT_LIMIT:
        return SUPPLY_LIMIT_REACHED
    if (
        credit.balance + amount > INT64_MAX
        or debit.balance - amount < INT64_MIN
        or debit.debits_posted + amount > INT64_MAX
        or credit.credits_posted + amount > INT64_MAX
    ):
        return BALANCE_OVERFLOW
    return None


def _resolve_accounts(
    requests: Sequence[TransferRequest],
    new_indices: Sequence[int],
    accounts: Mapping[str, Account],
    allow_mint_accounts: bool,
) -> None:
    """Unknown accounts and cross-pool transfers are malformed: the whole batch is refused."""
    for index in new_indices:
        request = requests[index]
        for field in ("debit_account_id", "credit_account_id"):
            account_id = getattr(request, field)
            account = accounts.get(account_id)
            if account is None:
                raise NotFound(
                    "ACCOUNT_NOT_FOUND", "the account does not exist", {"field": field, "index": str(index)}
                )
            if account.kind is AccountKind.EXTERNAL_MINT and not allow_mint_accounts:
                # Behind the id check of `validate_batch`: a mint is refused by kind as well.
                raise PermissionDenied(
                    "MINT_ACCOUNT_FORBIDDEN",
                    "chips are minted and burned only by purchases, withdrawals and house funding",
                    {"field": field, "index": str(index)},
                )
            if account.pool != request.pool:
                raise InvalidArgument(
                    "POOL_MISMATCH",
                    "both accounts of a transfer must be in the transfer's pool",
                    {"field": field, "index": str(index)},
                )


def plan_transfers(
    requests: Sequence[TransferRequest],
    *,
    linked: bool,
    accounts: Mapping[str, Account],
    existing: Mapping[str, TransferRecord],
    now: datetime,
    allow_mint_accounts: bool = True,
) -> BatchPlan:
    """Decide what a validated batch does, given the locked accounts and already-recorded ids.

    Rules: an id seen before answers from its record (exists, exists with a different field, or
    the recorded failure) and changes nothing. New transfers apply in order against the running
    balances; a refusal is recorded so the id keeps failing. In a linked batch one refusal fails
    every new transfer (the culprit with its reason, the rest LINKED_TRANSFER_FAILED, all
    recorded), and a batch that mixes recorded ids with new ones applies none of the new ones and
    records nothing, because a linked batch is only ever retried as a whole.
    """
    outcomes: list[TransferOutcome | None] = [None] * len(requests)
    new_indices: list[int] = []
    for index, request in enumerate(requests):
        record = existing.get(request.transfer_id)
        if record is None:
            new_indices.append(index)
            continue
        field = first_difference(record.request, request)
        if field:
            outcomes[index] = TransferOutcome(
                request.transfer_id, TransferStatus.EXISTS_WITH_DIFFERENT_FIELD, record, field=field
            )
        elif record.failure_reason is not None:
            outcomes[index] = TransferOutcome(
                request.transfer_id, TransferStatus.FAILED, record, reason=record.failure_reason
            )
        else:
            outcomes[index] = TransferOutcome(request.transfer_id, TransferStatus.EXISTS, record)

    _resolve_accounts(requests, new_indices, accounts, allow_mint_accounts)

    if linked and new_indices and len(new_indices) < len(requests):
        for index in new_indices:
            outcomes[index] = TransferOutcome(
                requests[index].transfer_id, TransferStatus.FAILED, reason=LINKED_TRANSFER_FAILED
            )
        return BatchPlan([o for o in outcomes if o is not None], [], {})

    working: dict[str, Account] = {}
    records: list[TransferRecord] = []
    culprit: tuple[int, str] | None = None
    for index in new_indices:
        request = requests[index]
        debit = working.get(request.debit_account_id) or accounts[request.debit_account_id]
        credit = working.get(request.credit_account_id) or accounts[request.credit_account_id]
        reason = refusal(debit, credit, request.amount)
        if reason is not None:
            if linked:
                culprit = (index, reason)
                break
            record = TransferRecord(request, now, failure_reason=reason)
            outcomes[index] = TransferOutcome(
                request.transfer_id, TransferStatus.FAILED, record, reason=reason
            )
            records.append(record)
            continue
        # Built directly rather than with dataclasses.replace, which inspects the fields every call.
        debit = Account(
            debit.account_id, debit.owner_id, debit.pool, debit.kind,
            debit.debits_posted + request.amount, debit.credits_posted, debit.closed,
        )  # fmt: skip
        credit = Account(
            credit.account_id, credit.owner_id, credit.pool, credit.kind,
            credit.debits_posted, credit.credits_posted + request.amount, credit.closed,
        )  # fmt: skip
        working[debit.account_id] = debit
        working[credit.account_id] = credit
        record = TransferRecord(request, now, None, debit.balance, credit.balance)
        outcomes[index] = TransferOutcome(request.transfer_id, TransferStatus.CREATED, record)
        records.append(record)

    if culprit is not None:
        culprit_index, culprit_reason = culprit
        records = []
        for index in new_indices:
            reason = culprit_reason if index == culprit_index else LINKED_TRANSFER_FAILED
            record = TransferRecord(requests[index], now, failure_reason=reason)
            outcomes[index] = TransferOutcome(
                requests[index].transfer_id, TransferStatus.FAILED, record, reason=reason
            )
            records.append(record)
        working = {}

    return BatchPlan([o for o in outcomes if o is not None], records, working)
