"""The cashier's use cases: each is one short transaction, retried on serialization failures.

This layer validates requests, locks what a use case touches through the storage adapter, asks the
pure ledger what happens, writes it, and raises typed domain errors. It knows nothing of gRPC.
Failures the ledger records (funds, closed accounts) are committed first and raised afterwards, so a
retry with the same id fails the same way. Seat sessions and settlements live in `seat_sessions.py`,
the transaction machinery in `unit_of_work.py`; `Cashier` is the one object the process builds.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from service_runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument
from services.cashier import storage
from services.cashier.coalescing import Answer, Coalescer
from services.cashier.holds import STOPS_WITHDRAWALS, HoldUseCases, refuse_if_held
from services.cashier.house_funding import HouseFundingUseCases, funding_transfer
from services.cashier.ledger import (
    INT64_MAX,
    MAX_RECORDED_TRANSFER_ID_LENGTH,
    Account,
    AccountKind,
    Pool,
    TransferKind,
    TransferOutcome,
    TransferRecord,
    TransferRequest,
    TransferStatus,
    bank_account_id,
    check_player_id,
    check_text,
    cover_account_id,
    jackpot_account_id,
    mint_account_id,
    plan_transfers,
    validate_batch,
    wallet_account_id,
)
from services.cashier.money_flow import (
    FlowObserver,
    funding_flows,
    house_game_flows,
    purchase_flows,
    withdrawal_flows,
)
from services.cashier.payments import RATES, PaymentSource, check_withdrawable, chips_for, locked_amount
from services.cashier.payouts import PayoutUseCases
from services.cashier.responsible_gaming import (
    SelfLimitUseCases,
    house_game_events,
    house_stakes,
    refuse_house_stakes_beyond_self_control,
    refuse_purchase_beyond_self_limits,
)
from services.cashier.seat_sessions import SeatSessionUseCases, SeatSessionView
from services.cashier.storage import PoolFigures
from services.cashier.unit_of_work import MIN_EXTRA_BATCH, TRANSACTIONS_IN_FLIGHT, TransferBatch, utc_now

DEFAULT_PAGE_SIZE = 50
MAX_BATCHES_PER_TRANSACTION = 64
MAX_PAGE_SIZE = 500
MAX_LOOKUP_IDS = 1000
# A page token is base64url of `statement:<seq>:<side>`: seq 1 to 2^63-1 without sign or leading
# zeros, side 0 or 1 (a transfer has two sides). Anything else was not issued by GetStatement.
MAX_PAGE_TOKEN_LENGTH = 64
_TOKEN_TEXT = re.compile(r"[A-Za-z0-9_-]+={0,2}")
_TOKEN_BODY = re.compile(r"statement:([1-9][0-9]{0,18}):([01])")


@dataclass(frozen=True)
class PaymentResult:
    record: TransferRecord
    existing: bool
    unlock_time: datetime | None = None


@dataclass(frozen=True)
class WalletView:
    pool: Pool
    balance: int
    locked_amount: int
    next_unlock_time: datetime | None


@dataclass(frozen=True)
class StatementLine:
    record: TransferRecord
    account: Account
    amount: int
    balance_after: int


def _encode_token(seq: int, skip: int) -> str:
    return base64.urlsafe_b64encode(f"statement:{seq}:{skip}".encode()).decode()


def _decode_token(token: str) -> tuple[int, int]:
    """The position a page token names, validated in full: forged tokens never reach the query."""
    invalid = InvalidArgument(
        "PAGE_TOKEN_INVALID", "the page token was not issued by GetStatement", {"field": "page_token"}
    )
    if len(token) > MAX_PAGE_TOKEN_LENGTH or _TOKEN_TEXT.fullmatch(token) is None:
        raise invalid
    try:
        body = base64.urlsafe_b64decode(token.encode()).decode("ascii")
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise invalid from exc
    match = _TOKEN_BODY.fullmatch(body)
    if match is None or int(match[1]) > INT64_MAX or _encode_token(int(match[1]), int(match[2])) != token:
        raise invalid
    return int(match[1]), int(match[2])


class Cashier(SeatSessionUseCases, HoldUseCases, HouseFundingUseCases, SelfLimitUseCases, PayoutUseCases):
    """The application service; one per process, sharing the engine's connection pool."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        clock: Callable[[], datetime] = utc_now,
        stars_purchases_enabled: bool = False,
        stars_lock: timedelta = timedelta(days=21),
        flows: FlowObserver | None = None,
    ) -> None:
        super().__init__(engine, clock=clock, flows=flows)
        # Concurrent CreateTransfers calls share transactions (see `coalescing.py`).
        self._transfers: Coalescer[TransferBatch, list[TransferOutcome]] = Coalescer(
            self._apply_batches,
            limit=MAX_BATCHES_PER_TRANSACTION,
            concurrency=TRANSACTIONS_IN_FLIGHT,
            min_extra_batch=MIN_EXTRA_BATCH,
        )
        self._stars_enabled = stars_purchases_enabled
        self._stars_lock = stars_lock

    # Transfers -------------------------------------------------------------------------------------

    async def create_transfers(
        self, requests: Sequence[TransferRequest], *, linked: bool, round_in_play: bool = False
    ) -> list[TransferOutcome]:
        """Apply a batch; malformed batches raise and record nothing, outcomes say the rest.
        `round_in_play`: a batch of a house-game round already dealt (`_admit`)."""
        validate_batch(requests)
        return await self._transfers.submit(TransferBatch(requests, linked, round_in_play))

    async def _admit(
        self,
        conn: AsyncConnection,
        batch: TransferBatch,
        accounts: Mapping[str, Account],
        existing: Mapping[str, TransferRecord],
        now: datetime,
        earlier: Sequence[TransferRecord],
    ) -> None:
        """A house game's new stakes answer to the player's hold, break and loss limits
        (`responsible_gaming.py`), counting the stakes of the batches decided before this one in the
        same transaction; a refusal refuses the whole batch and records nothing."""
        for (player_id, pool), chips in house_stakes(batch.requests, accounts, existing).items():
            await refuse_house_stakes_beyond_self_control(
                conn,
                player_id,
                pool,
                chips,
                now,
                round_in_play=batch.round_in_play,
                uncommitted=house_game_events(earlier, wallet_account_id(pool, player_id)),
            )

    async def _apply_batches(
        self, batches: Sequence[TransferBatch]
    ) -> Sequence[Answer[list[TransferOutcome]]]:
        return await self._transaction(
            functools.partial(self._apply_many, batches=batches), committed=self._transferred
        )

    def _transferred(self, answers: Sequence[Answer[list[TransferOutcome]]]) -> None:
        flows = house_game_flows(o for answer in answers for o in answer.result or ())
        if flows:
            self._flows.applied(flows)

    async def lookup_transfers(self, transfer_ids: Sequence[str]) -> list[TransferRecord]:
        if not transfer_ids:
            raise InvalidArgument("FIELD_REQUIRED", "transfer_ids is required", {"field": "transfer_ids"})
        if len(transfer_ids) > MAX_LOOKUP_IDS:
            raise InvalidArgument("FIELD_INVALID", "at most 1,000 ids per lookup", {"field": "transfer_ids"})
        for index, transfer_id in enumerate(transfer_ids):
            check_text(transfer_id, "transfer_ids", MAX_RECORDED_TRANSFER_ID_LENGTH, index=index)
        found = await self._snapshot(lambda conn: storage.recorded_transfers(conn, transfer_ids))
        return [found[i] for i in dict.fromkeys(transfer_ids) if i in found]

    # Purchases and withdrawals -------------------------------------------------------------------

    async def purchase(
        self, *, payment_reference: str, player_id: str, source: PaymentSource | None, amount_minor: int
    ) -> PaymentResult:
        """Credit chips bought outside; idempotent by the payment reference, whatever the source."""
        check_text(payment_reference, "payment_reference")
        check_player_id(player_id)
        if source is None:
            raise InvalidArgument("FIELD_REQUIRED", "source is required", {"field": "source"})
        if source is PaymentSource.TELEGRAM_STARS and not self._stars_enabled:
            raise FailedPrecondition(
                "PAYMENT_SOURCE_DISABLED",
                "Telegram Stars purchases are switched off",
                {"source": source.value},
            )
        chips = chips_for(source, amount_minor)
        pool = RATES[source].pool
        wallet = Account(wallet_account_id(pool, player_id), player_id, pool, AccountKind.PLAYER_WALLET)
        request = TransferRequest(
            transfer_id=f"purchase:{source.value}:{payment_reference}",
            debit_account_id=mint_account_id(source.value, pool),
            credit_account_id=wallet.account_id,
            pool=pool,
            amount=chips,
            kind=TransferKind.PURCHASE,
            reference=payment_reference,
        )

        async def work(conn: AsyncConnection) -> TransferOutcome:
            holder = await self._payment_reference_holder(conn, request)
            if holder is None:
                # A new purchase (a retry of a recorded one answers as recorded): the player's own
                # limits and breaks first; a refusal records nothing.
                await refuse_purchase_beyond_self_limits(
                    conn, player_id, pool, source.value, chips, self._clock()
                )
            await storage.create_account_if_missing(conn, wallet, self._clock())
            (outcome,) = await self._apply(conn, [request], linked=False)
            if outcome.status is TransferStatus.CREATED and source is PaymentSource.TELEGRAM_STARS:
                assert outcome.record is not None
                unlocks_at = outcome.record.created_at + self._stars_lock
                await storage.insert_stars_lot(conn, request.transfer_id, player_id, chips, unlocks_at)
            await self._claim_payment_reference(conn, request, holder, outcome)
            return outcome

        outcome = await self._transaction(
            work, committed=lambda outcome: self._flows.applied(purchase_flows(outcome))
        )
        record = self._payment_outcome(outcome)
        unlock = record.created_at + self._stars_lock if source is PaymentSource.TELEGRAM_STARS else None
        return PaymentResult(record, outcome.status is TransferStatus.EXISTS, unlock)

    @staticmethod
    async def _payment_reference_holder(conn: AsyncConnection, request: TransferRequest) -> str | None:
        """The transfer that holds the request's payment reference, if any. A reference is one
        purchase (or one withdrawal) whatever its source (issue 41): held by the transfer of another
        source, it is IDEMPOTENCY_CONFLICT naming `source`, and nothing is applied."""
        assert request.kind is not None
        holder = await storage.payment_reference_holder(conn, request.kind, request.reference)
        if holder is not None and holder != request.transfer_id:
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT",
                "the payment reference was used with different fields",
                {"field": "source"},
            )
        return holder

    @staticmethod
    async def _claim_payment_reference(
        conn: AsyncConnection, request: TransferRequest, holder: str | None, outcome: TransferOutcome
    ) -> None:
        """Give a reference nobody held to the transfer now recorded under the request's id (applied,
        or refused for good), in the same transaction."""
        if holder is None and outcome.record is not None:
            assert request.kind is not None
            await storage.claim_payment_reference(conn, request.kind, request.reference, request.transfer_id)

    @staticmethod
    def _payment_outcome(outcome: TransferOutcome) -> TransferRecord:
        if outcome.status is TransferStatus.EXISTS_WITH_DIFFERENT_FIELD:
            field = {
                "credit_account_id": "player_id",
                "debit_account_id": "player_id",
                "amount": "amount_minor",
            }.get(outcome.field, outcome.field)
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT",
                "the payment reference was used with different fields",
                {"field": field},
            )
        if outcome.status is TransferStatus.FAILED:
            raise FailedPrecondition(outcome.reason, "the payment cannot be applied", {})
        assert outcome.record is not None
        return outcome.record

    async def withdraw(
        self, *, payment_reference: str, player_id: str, source: PaymentSource | None, amount_minor: int
    ) -> PaymentResult:
        """Debit chips paid out; idempotent by the payment reference, whatever the source; Stars chips
        stay locked."""
        check_text(payment_reference, "payment_reference")
        check_player_id(player_id)
        if source is None:
            raise InvalidArgument("FIELD_REQUIRED", "source is required", {"field": "source"})
        if not RATES[source].withdrawable:
            raise InvalidArgument(
                "POOL_INVALID", "chips cannot be withdrawn as Telegram Stars", {"field": "source"}
            )
        chips = chips_for(source, amount_minor)
        pool = RATES[source].pool
        wallet = Account(wallet_account_id(pool, player_id), player_id, pool, AccountKind.PLAYER_WALLET)
        request = TransferRequest(
            transfer_id=f"withdrawal:{source.value}:{payment_reference}",
            debit_account_id=wallet.account_id,
            credit_account_id=mint_account_id(source.value, pool),
            pool=pool,
            amount=chips,
            kind=TransferKind.WITHDRAWAL,
            reference=payment_reference,
        )

        async def work(conn: AsyncConnection) -> TransferOutcome:
            holder = await self._payment_reference_holder(conn, request)
            now = self._clock()
            await storage.create_account_if_missing(conn, wallet, now)
            loaded = await storage.lock_and_load(
                conn, [request.debit_account_id, request.credit_account_id], [request.transfer_id]
            )
            locked, recorded = loaded.accounts, loaded.transfers
            if not recorded:
                # Rules 17: a player under review is not paid out (a full hold or a withdrawals
                # hold); the payout waits for the release.
                await refuse_if_held(
                    conn,
                    player_id,
                    "WITHDRAWAL_HELD_FOR_REVIEW",
                    "withdrawals wait for the review",
                    STOPS_WITHDRAWALS,
                )
            if not recorded and pool is Pool.GRAM:
                balance = locked[wallet.account_id].balance
                lots = await storage.locked_stars_lots(conn, player_id, now)
                check_withdrawable(chips, balance, lots, now)
            plan = plan_transfers([request], linked=False, accounts=locked, existing=recorded, now=now)
            await storage.write_changes(conn, plan.new_records, plan.changed_accounts.values())
            await self._claim_payment_reference(conn, request, holder, plan.outcomes[0])
            return plan.outcomes[0]

        try:
            outcome = await self._transaction(
                work, committed=lambda outcome: self._flows.applied(withdrawal_flows(outcome))
            )
            record = self._payment_outcome(outcome)
        except FailedPrecondition as refusal:
            # Held for review, locked Stars chips, or a refusal on funds recorded with the reference.
            self._flows.withdrawal_refused(pool, refusal.reason)
            raise
        return PaymentResult(record, outcome.status is TransferStatus.EXISTS)

    async def balances(self, player_id: str) -> tuple[list[WalletView], SeatSessionView | None]:
        check_player_id(player_id)

        async def work(conn: AsyncConnection) -> tuple[list[WalletView], SeatSessionView | None]:
            now = self._clock()
            found = await storage.read_accounts(conn, [wallet_account_id(p, player_id) for p in Pool])
            lots = await storage.locked_stars_lots(conn, player_id, now)
            wallets = []
            for pool in Pool:
                account = found.get(wallet_account_id(pool, player_id))
                # By kind too: only a player wallet is ever a player's balance.
                balance = account.balance if account and account.kind is AccountKind.PLAYER_WALLET else 0
                pool_lots = lots if pool is Pool.GRAM else []
                locked = locked_amount(balance, pool_lots, now)
                next_unlock = min((lot.unlocks_at for lot in pool_lots), default=None) if locked else None
                wallets.append(WalletView(pool, balance, locked, next_unlock))
            session = await storage.open_seat_session_of_player(conn, player_id)
            view = await self._session_view(conn, session) if session else None
            return wallets, view

        return await self._snapshot(work)

    # Statement and audit ---------------------------------------------------------------------------

    async def statement(
        self, player_id: str, *, pool: Pool | None, page_size: int, page_token: str
    ) -> tuple[list[StatementLine], str]:
        """A page of the player's balance changes, newest first, and the token of the next page."""
        check_player_id(player_id)
        if page_size < 0:
            raise InvalidArgument("FIELD_INVALID", "page_size must not be negative", {"field": "page_size"})
        size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        start_seq, skip = _decode_token(page_token) if page_token else (None, 0)

        async def work(conn: AsyncConnection) -> tuple[list[StatementLine], str]:
            owned = {a.account_id: a for a in await storage.player_accounts(conn, player_id)}
            if pool is not None:
                owned = {k: a for k, a in owned.items() if a.pool is pool}
            if not owned:
                return [], ""
            rows = await storage.transfers_touching(
                conn, list(owned), before_seq=start_seq, limit=size + 2 + skip
            )
            lines: list[tuple[int, int, StatementLine]] = []
            for seq, record in rows:
                position = 0
                for side in ("credit", "debit"):
                    account_id = getattr(record.request, f"{side}_account_id")
                    account = owned.get(account_id)
                    if account is None:
                        continue
                    amount = record.request.amount if side == "credit" else -record.request.amount
                    after = getattr(record, f"{side}_balance_after")
                    lines.append((seq, position, StatementLine(record, account, amount, int(after))))
                    position += 1
            if start_seq is not None:
                lines = [line for line in lines if not (line[0] == start_seq and line[1] < skip)]
            page, rest = lines[:size], lines[size:]
            token = _encode_token(rest[0][0], rest[0][1]) if rest else ""
            return [line[2] for line in page], token

        return await self._snapshot(work)

    async def fund_house_account(
        self, *, request_id: str, pool: Pool | None, account: AccountKind | None, amount: int, reason: str
    ) -> tuple[TransferRecord, bool, int]:
        """Move chips between the pool's house-funding mint and its house bank or jackpot at once.

        The ledger operation an approved funding applies (house_funding.py); no RPC reaches it alone
        (funding takes two people of finance). Tests and the in-process tools seed a house bank with it.
        Positive `amount` funds the account (minted), negative returns chips to the mint (burned);
        one transfer `funding:<request_id>` with the reason as reference, idempotent by request id.
        Returns the transfer, whether it existed, and the house account's balance after it.
        """
        request = funding_transfer(request_id, pool, account, amount, reason)

        async def work(conn: AsyncConnection) -> TransferOutcome:
            (outcome,) = await self._apply(conn, [request], linked=False)
            return outcome

        outcome = await self._transaction(
            work, committed=lambda outcome: self._flows.applied(funding_flows(outcome))
        )
        if outcome.status is TransferStatus.EXISTS_WITH_DIFFERENT_FIELD:
            assert outcome.record is not None
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT",
                "the request id was used with different fields",
                {"field": _funding_difference(outcome.record.request, request)},
            )
        if outcome.status is TransferStatus.FAILED:
            raise FailedPrecondition(outcome.reason, "the house account cannot be funded so", {})
        assert outcome.record is not None
        record = outcome.record
        after = record.credit_balance_after if amount > 0 else record.debit_balance_after
        return record, outcome.status is TransferStatus.EXISTS, int(after or 0)

    async def house_balances(self, pool: Pool | None) -> tuple[int, int, int]:
        """The pool's house bank (its free money), jackpot and reserved cover, in one snapshot."""
        if pool is None:
            raise InvalidArgument("POOL_INVALID", "pool is required", {"field": "pool"})
        return (await self._house_balances([pool]))[pool]

    async def every_house_balance(self) -> dict[Pool, tuple[int, int, int]]:
        """`house_balances` of every pool, in one snapshot and one query (read at each scrape of the
        metrics, `money_metrics.py`)."""
        return await self._house_balances(list(Pool))

    async def _house_balances(self, pools: Sequence[Pool]) -> dict[Pool, tuple[int, int, int]]:
        ids = {
            pool: (bank_account_id(pool), jackpot_account_id(pool), cover_account_id(pool)) for pool in pools
        }

        async def work(conn: AsyncConnection) -> dict[Pool, tuple[int, int, int]]:
            found = await storage.read_accounts(conn, [i for three in ids.values() for i in three])
            balances = {}
            for pool, three in ids.items():
                bank, jackpot, cover = (found[i].balance if i in found else 0 for i in three)
                balances[pool] = (bank, jackpot, cover)
            return balances

        return await self._snapshot(work)

    async def audit(self) -> tuple[list[PoolFigures], datetime]:
        """Conservation figures of every pool from one consistent snapshot."""

        async def work(conn: AsyncConnection) -> tuple[list[PoolFigures], datetime]:
            return await storage.pool_figures(conn), self._clock()

        return await self._snapshot(work)


def _funding_difference(recorded: TransferRequest, request: TransferRequest) -> str:
    """The funding field in which a retry differs from the recorded funding."""
    if recorded.pool != request.pool:
        return "pool"
    funds = recorded.debit_account_id.startswith("mint:")
    if funds != request.debit_account_id.startswith("mint:") or recorded.amount != request.amount:
        return "amount"
    if {recorded.debit_account_id, recorded.credit_account_id} != {
        request.debit_account_id,
        request.credit_account_id,
    }:
        return "account"
    return "reason"


def audit_balanced(figures: PoolFigures) -> bool:
    """The conservation rule of one pool: what players and the house hold is what was minted net."""
    return (
        figures.accounts_total == figures.minted - figures.burned
        and figures.journal_total == figures.debits_posted == figures.credits_posted
        and figures.negative_accounts == 0
    )
