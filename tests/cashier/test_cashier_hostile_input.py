"""Hostile and careless input through a real gRPC server, on PostgreSQL and on SQLite (issue 10).

Each test here was written before its fix and failed on the code before it: over-long derived ids,
control characters in ids, forged page tokens, aggregates beyond int64, system accounts read as a
player's, chips minted through CreateTransfers. Every refusal is asserted by status code and
ErrorInfo reason, and nothing may have changed (balances and audit figures).
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from sqlalchemy import text

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.testing import reason_of, running_server
from services.cashier.application import Cashier
from services.cashier.assembly import ACCESS, cashier_service
from services.cashier.ledger import MAX_AMOUNT, MINT_LIMIT
from tests.cashier.conftest import FreshToken

GRAM, MPX = common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX
SOURCE_GRAM, SOURCE_MPX, SOURCE_STARS = 1, 2, 3
# The lead's per-service identities: the subject names the calling service.
PAYMENTS = FreshToken("payments", Role.SERVICE)
TABLE = FreshToken("table", Role.SERVICE)
HISTORY = FreshToken("history", Role.SERVICE)
ADMIN = FreshToken("operator", *STAFF_ROLES)
FINANCE_A = FreshToken("finance-a", Role.FINANCE)
FINANCE_B = FreshToken("finance-b", Role.FINANCE)
ALICE = FreshToken("alice", Role.PLAYER)
INT64_MAX = 2**63 - 1


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def any_cashier(
    backend: str, request: pytest.FixtureRequest, clock, migrated_cashier
) -> AsyncIterator[Cashier]:  # type: ignore[no-untyped-def]
    url = request.getfixturevalue("postgres_url" if backend == "postgres" else "sqlite_url")
    cashier: Cashier = await migrated_cashier(url, clock)
    try:
        yield cashier
    finally:
        await cashier.engine.dispose()


@dataclass
class Client:
    stub: cashier_pb2_grpc.CashierServiceAsyncStub
    cashier: Cashier

    async def call(self, method: str, request: object, metadata: Sequence[tuple[str, str]]) -> object:
        return await getattr(self.stub, method)(request, metadata=metadata)

    async def refused(
        self, method: str, request: object, metadata: Sequence[tuple[str, str]]
    ) -> tuple[grpc.StatusCode, str | None]:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await self.call(method, request, metadata)
        return caught.value.code(), reason_of(caught.value)

    async def snapshot(self) -> tuple[object, ...]:
        audit = await self.stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
        wallets = []
        for player in ("alice", "bob"):
            reply = await self.stub.GetBalances(
                cashier_pb2.GetBalancesRequest(player_id=player), metadata=TABLE
            )
            wallets.append(tuple((w.pool, w.balance) for w in reply.wallets))
        pools = tuple(
            (p.pool, p.minted, p.burned, p.accounts_total, p.journal_total, p.account_count)
            for p in audit.pools
        )
        return (*wallets, pools, audit.balanced)


def purchase(reference: str, player: str = "alice", source: int = SOURCE_GRAM, minor: int = 10**9) -> object:
    return cashier_pb2.PurchaseRequest(
        payment_reference=reference, player_id=player, source=source, amount_minor=minor
    )


@pytest.fixture
async def client(any_cashier: Cashier) -> AsyncIterator[Client]:
    async with running_server([cashier_service(any_cashier)], ACCESS) as (_, channel):
        stub = cashier_pb2_grpc.CashierServiceStub(channel)
        for player in ("alice", "bob"):
            await stub.Purchase(purchase(f"seed-{player}", player), metadata=PAYMENTS)
            await stub.Purchase(purchase(f"seed-{player}-mpx", player, SOURCE_MPX, 10**10), metadata=PAYMENTS)
        yield Client(stub, any_cashier)


def transfer(**overrides: object) -> cashier_pb2.Transfer:
    fields: dict[str, object] = {
        "transfer_id": "t-1",
        "debit_account_id": "wallet:GRAM:alice",
        "credit_account_id": "wallet:GRAM:bob",
        "pool": GRAM,
        "amount": 10,
        "kind": cashier_pb2.TRANSFER_KIND_ADJUSTMENT,
    }
    fields.update(overrides)
    return cashier_pb2.Transfer(**fields)  # type: ignore[arg-type]


async def seat_two_players_and_rake(client: Client, table: str = "t1") -> None:
    for index, player in enumerate(("alice", "bob")):
        await client.stub.OpenSeatSession(
            cashier_pb2.OpenSeatSessionRequest(
                session_id=f"{table}/{player}", player_id=player, table_id=table, seat_index=index,
                pool=GRAM, buy_in_amount=500, min_buy_in=100, max_buy_in=1000,
            ),
            metadata=TABLE,
        )  # fmt: skip
    await client.stub.SettleHand(
        cashier_pb2.SettleHandRequest(
            hand_id=f"{table}:h1", table_id=table, pool=GRAM, rake=5,
            seat_results=[cashier_pb2.SeatResult(session_id=f"{table}/alice", net_amount=-100),
                          cashier_pb2.SeatResult(session_id=f"{table}/bob", net_amount=95)],
        ),
        metadata=TABLE,
    )  # fmt: skip


# Item 5: derived ids, control characters, page tokens ---------------------------------------------


async def test_payment_references_of_the_full_contract_length_are_applied(client: Client) -> None:
    # purchase:TELEGRAM_STARS:<128 characters> is 152 characters: the derived id must fit its columns.
    # A reference is one purchase whatever its source (issue 41): one reference per source.
    longest = {
        source: letter * 128
        for source, letter in ((SOURCE_GRAM, "g"), (SOURCE_MPX, "m"), (SOURCE_STARS, "s"))
    }
    for source, minor in ((SOURCE_GRAM, 10**9), (SOURCE_MPX, 10**9), (SOURCE_STARS, 100)):
        reply = await client.stub.Purchase(
            purchase(longest[source], source=source, minor=minor), metadata=PAYMENTS
        )
        assert reply.transfer.reference == longest[source]
        again = await client.stub.Purchase(
            purchase(longest[source], source=source, minor=minor), metadata=PAYMENTS
        )
        assert again.existing
    for source in (SOURCE_GRAM, SOURCE_MPX):
        out = await client.stub.Withdraw(
            cashier_pb2.WithdrawRequest(payment_reference=longest[source], player_id="alice", source=source,
                                        amount_minor=10**8),
            metadata=PAYMENTS,
        )  # fmt: skip
        assert out.transfer.transfer_id.endswith(longest[source])
    ids = [
        f"purchase:{name}:{longest[source]}"
        for name, source in (("GRAM", SOURCE_GRAM), ("MPX", SOURCE_MPX), ("TELEGRAM_STARS", SOURCE_STARS))
    ]
    found = await client.stub.LookupTransfers(
        cashier_pb2.LookupTransfersRequest(transfer_ids=ids), metadata=ADMIN
    )
    assert [r.transfer_id for r in found.results] == ids
    assert (await client.snapshot())[-1] is True


async def test_lookup_refuses_ids_with_control_characters_or_out_of_range(client: Client) -> None:
    for bad_id in ["a\x00b", "\x00", "tab\there", "bell\x07", "del\x7f", "caf\u00e9", "x" * 201, ""]:
        request = cashier_pb2.LookupTransfersRequest(transfer_ids=["t-ok", bad_id])
        code, reason = await client.refused("LookupTransfers", request, ADMIN)
        assert code == grpc.StatusCode.INVALID_ARGUMENT, bad_id
        assert reason == ("FIELD_REQUIRED" if bad_id == "" else "FIELD_INVALID"), bad_id
    # The longest derived id is still a valid id to look up.
    found = await client.stub.LookupTransfers(
        cashier_pb2.LookupTransfersRequest(transfer_ids=["x" * 200]), metadata=ADMIN
    )
    assert list(found.results) == []


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


FORGED_TOKENS = {
    "huge seq": _b64(b"statement:99999999999999999999999999:0"),
    "seq just over int64": _b64(f"statement:{2**63}:0".encode()),
    "negative seq": _b64(b"statement:-5:0"),
    "zero seq": _b64(b"statement:0:0"),
    "negative skip": _b64(b"statement:5:-1"),
    "huge skip": _b64(b"statement:5:99999999999999999999"),
    "skip of a third side": _b64(b"statement:5:2"),
    "signed seq": _b64(b"statement:+5:0"),
    "unicode digits": _b64("statement:\u0663:0".encode()),
    "spaces": _b64(b"statement: 5:0"),
    "not base64": "!!!!",
    "not utf-8": _b64(b"\xff\xfe\xfd"),
    "wrong label": _b64(b"ledger:5:0"),
    "too many parts": _b64(b"statement:5:0:1"),
    "huge length": "A" * 100_000,
    "control character": "YWJj\x00",
}


async def test_forged_page_tokens_are_refused(client: Client) -> None:
    await seat_two_players_and_rake(client)
    for name, token in FORGED_TOKENS.items():
        request = cashier_pb2.GetStatementRequest(page=common_pb2.PageRequest(page_size=1, page_token=token))
        code, reason = await client.refused("GetStatement", request, ALICE)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "PAGE_TOKEN_INVALID"), name


async def test_a_statement_pages_through_every_entry_once(client: Client) -> None:
    await seat_two_players_and_rake(client)
    whole = await client.stub.GetStatement(cashier_pb2.GetStatementRequest(), metadata=ALICE)
    assert not whole.page.next_page_token
    seen, token = [], ""
    while True:
        page = await client.stub.GetStatement(
            cashier_pb2.GetStatementRequest(page=common_pb2.PageRequest(page_size=1, page_token=token)),
            metadata=ALICE,
        )
        seen += [(e.transfer_id, e.account_id) for e in page.entries]
        token = page.page.next_page_token
        if not token:
            break
    assert seen == [(e.transfer_id, e.account_id) for e in whole.entries]
    assert len(seen) == 6  # two purchases, the buy-in's two sides, two hand transfers of her seat


# Item 6: aggregates beyond int64 -------------------------------------------------------------------


async def test_service_transfers_near_int64_from_two_mints_cannot_break_the_audit(client: Client) -> None:
    # Two service transfers of 2^62 chips each, from the GRAM and the Stars mint, used to bring the
    # pool's minted total to 2^63 and make every later audit answer INTERNAL.
    for index, mint in enumerate(("mint:GRAM:GRAM", "mint:TELEGRAM_STARS:GRAM")):
        request = cashier_pb2.CreateTransfersRequest(
            transfers=[transfer(transfer_id=f"big-{index}", debit_account_id=mint, amount=2**62)]
        )
        code, _ = await client.refused("CreateTransfers", request, TABLE)
        assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.PERMISSION_DENIED)
    for reference in ("stars-big-1", "stars-big-2"):
        code, reason = await client.refused(
            "Purchase", purchase(reference, source=SOURCE_STARS, minor=2**62 // 10), PAYMENTS
        )
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_INVALID")
    audit = await client.stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    assert audit.balanced


async def test_a_mint_stops_at_its_supply_limit_and_the_audit_stays_exact(client: Client) -> None:
    # Stars: 10 chips a Star, so MAX_AMOUNT chips is one purchase; the mint's lifetime limit is
    # MINT_LIMIT chips, after which every purchase from it fails with SUPPLY_LIMIT_REACHED.
    stars_per_max = MAX_AMOUNT // 10
    minted = 0
    n = 0
    while minted + MAX_AMOUNT <= MINT_LIMIT:
        await client.stub.Purchase(
            purchase(f"whale-{n}", f"whale-{n % 3}", SOURCE_STARS, stars_per_max), metadata=PAYMENTS
        )
        minted += MAX_AMOUNT
        n += 1
    code, reason = await client.refused(
        "Purchase", purchase("one-more", "whale-0", SOURCE_STARS, 1), PAYMENTS
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SUPPLY_LIMIT_REACHED")
    # The same id keeps failing the same way; the other mints of the pool are unaffected.
    code, reason = await client.refused(
        "Purchase", purchase("one-more", "whale-0", SOURCE_STARS, 1), PAYMENTS
    )
    assert reason == "SUPPLY_LIMIT_REACHED"
    await client.stub.Purchase(purchase("small-gram", "whale-0"), metadata=PAYMENTS)
    audit = await client.stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    gram = audit.pools[0]
    assert audit.balanced
    assert gram.minted == MINT_LIMIT + 3000  # the seed purchases and the small one: 1,000 chips each
    assert gram.accounts_total == gram.minted - gram.burned


async def test_audit_sums_beyond_int64_are_exact_on_both_backends(client: Client) -> None:
    # Turnover grows without bound: forge (behind the code) a cycle of four 2^62-chip transfers,
    # each account debited and credited once, so the pool's sums pass 2^64 while every balance and
    # every account's posted totals stay inside int64; the audit must add them up exactly.
    big = 2**62
    cycle = ["wallet:GRAM:alice", "wallet:GRAM:bob", "house:bank:GRAM", "house:jackpot:GRAM"]
    async with client.cashier.engine.begin() as conn:
        for n, debit in enumerate(cycle):
            await conn.execute(
                text(
                    "INSERT INTO transfers (transfer_id, debit_account_id, credit_account_id, pool, amount, kind, "
                    "reference, table_id, created_at) VALUES (:id, :debit, :credit, 'GRAM', :amount, 'adjustment', "
                    "'', '', CURRENT_TIMESTAMP)"
                ),
                {"id": f"forged-{n}", "debit": debit, "credit": cycle[(n + 1) % 4], "amount": big},
            )
            await conn.execute(
                text(
                    "UPDATE accounts SET debits_posted = debits_posted + :big, "
                    "credits_posted = credits_posted + :big WHERE account_id = :id"
                ),
                {"big": big, "id": debit},
            )
    audit = await client.stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    gram = audit.pools[0]
    seeded = 2000  # the two seed purchases of 1,000 chips
    assert int(gram.journal_total) == 4 * big + seeded
    assert int(gram.debits_posted) == int(gram.credits_posted) == 4 * big + seeded
    assert int(gram.journal_total) > INT64_MAX
    assert audit.balanced


# Item 7: system accounts are nobody's statement -------------------------------------------------


RESERVED = ["house", "HOUSE", "GRAM", "MPX", "TELEGRAM_STARS", "HOUSE_FUNDING", "system", "system/house",
            "system/mint/GRAM"]  # fmt: skip


async def test_a_player_id_naming_a_system_owner_is_refused(client: Client) -> None:
    await seat_two_players_and_rake(client)
    for player in RESERVED:
        await _refused_everywhere_as(client, player)


async def _refused_everywhere_as(client: Client, player: str) -> None:
    as_player = FreshToken(player, Role.PLAYER)
    for method, request, metadata in (
        ("GetStatement", cashier_pb2.GetStatementRequest(), as_player),
        ("GetStatement", cashier_pb2.GetStatementRequest(player_id=player), HISTORY),
        ("GetBalances", cashier_pb2.GetBalancesRequest(), as_player),
        ("GetBalances", cashier_pb2.GetBalancesRequest(player_id=player), TABLE),
        ("Purchase", purchase("p-reserved", player), PAYMENTS),
        (
            "Withdraw",
            cashier_pb2.WithdrawRequest(
                payment_reference="w", player_id=player, source=1, amount_minor=10**6
            ),
            PAYMENTS,
        ),
    ):
        code, reason = await client.refused(method, request, metadata)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"), (player, method)


async def test_player_ids_outside_the_documented_charset_are_refused(client: Client) -> None:
    for player in ["", "a b", "a/b", "-lead", "x" * 129, "caf\u00e9", "a\x00"]:
        code, reason = await client.refused("Purchase", purchase("p-charset", player), PAYMENTS)
        assert (code, reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_REQUIRED" if not player else "FIELD_INVALID",
        ), player
    # The whole documented charset, at the full length, is a player id.
    longest = ("Aa0._-:@" * 16)[:128]
    reply = await client.stub.Purchase(purchase("p-longest", longest), metadata=PAYMENTS)
    assert reply.transfer.credit_account_id == f"wallet:GRAM:{longest}"


async def test_a_statement_lists_only_wallets_and_seats_even_of_an_owner_with_other_accounts(
    client: Client,
) -> None:
    # An account of another kind whose owner is a player (never created by the code: forged here)
    # must not appear in the player's statement, which selects wallets and seats by kind.
    async with client.cashier.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO accounts (account_id, owner_id, pool, kind, created_at) "
                "VALUES ('house:rake:GRAM:alice-table', 'alice', 'GRAM', 'house_rake', CURRENT_TIMESTAMP)"
            )
        )
    await client.stub.CreateTransfers(
        cashier_pb2.CreateTransfersRequest(
            transfers=[transfer(transfer_id="to-rake", credit_account_id="house:rake:GRAM:alice-table")]
        ),
        metadata=TABLE,
    )
    statement = await client.stub.GetStatement(cashier_pb2.GetStatementRequest(), metadata=ALICE)
    assert {e.account_kind for e in statement.entries} == {cashier_pb2.ACCOUNT_KIND_PLAYER_WALLET}
    assert [e.amount for e in statement.entries if e.transfer_id == "to-rake"] == [-10]


# Item 8: no minting through CreateTransfers; house funding is an admin action ---------------------


MINT_MOVES = [
    ("mint:GRAM:GRAM", "wallet:GRAM:alice"),
    ("mint:GRAM:GRAM", "house:bank:GRAM"),
    ("mint:TELEGRAM_STARS:GRAM", "house:jackpot:GRAM"),
    ("wallet:GRAM:alice", "mint:GRAM:GRAM"),
    ("mint:MPX:MPX", "wallet:MPX:bob"),
    ("mint:HOUSE_FUNDING:GRAM", "house:bank:GRAM"),
]


async def test_create_transfers_never_touches_a_mint(client: Client) -> None:
    before = await client.snapshot()
    for (debit, credit), linked in itertools.product(MINT_MOVES, (False, True)):
        pool = MPX if ":MPX" in debit else GRAM
        request = cashier_pb2.CreateTransfersRequest(
            transfers=[transfer(transfer_id="ok"), transfer(transfer_id="mint-it", debit_account_id=debit,
                                                            credit_account_id=credit, pool=pool)],
            linked=linked,
        )  # fmt: skip
        code, reason = await client.refused("CreateTransfers", request, TABLE)
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "MINT_ACCOUNT_FORBIDDEN"), (
            debit,
            credit,
        )
    assert await client.snapshot() == before


def fund_request(**overrides: object) -> object:
    fields: dict[str, object] = {
        "request_id": "fund-1",
        "pool": GRAM,
        "account": cashier_pb2.HOUSE_ACCOUNT_BANK,
        "amount": 50_000,
        "reason": "opening float for house games",
    }
    fields.update(overrides)
    return cashier_pb2.RequestHouseFundingRequest(**fields)  # type: ignore[arg-type]


async def fund(client: Client, **overrides: object) -> cashier_pb2.DecideHouseFundingResponse:
    """A house funding as finance makes it: one member asks, another approves."""
    request: Any = fund_request(**overrides)
    await client.stub.RequestHouseFunding(request, metadata=FINANCE_A)
    return await client.stub.DecideHouseFunding(approval(request.request_id), metadata=FINANCE_B)


def approval(request_id: str) -> cashier_pb2.DecideHouseFundingRequest:
    return cashier_pb2.DecideHouseFundingRequest(
        decision_id=f"ok:{request_id}", request_id=request_id, approve=True, reason="approved"
    )


async def test_house_funding_is_an_idempotent_audited_action_of_two_people(client: Client) -> None:
    funded = await fund(client)
    assert not funded.existing
    assert (
        funded.transfer.transfer_id,
        funded.transfer.debit_account_id,
        funded.transfer.credit_account_id,
    ) == (
        "funding:fund-1",
        "mint:HOUSE_FUNDING:GRAM",
        "house:bank:GRAM",
    )
    assert funded.transfer.kind == cashier_pb2.TRANSFER_KIND_HOUSE_FUNDING
    assert funded.transfer.reference == "opening float for house games"
    assert funded.balance_after == 50_000
    again = await fund(client)
    assert again.existing
    assert again.transfer.create_time == funded.transfer.create_time
    for field, value in (("amount", 60_000), ("amount", -50_000), ("account", cashier_pb2.HOUSE_ACCOUNT_JACKPOT),
                         ("pool", MPX), ("reason", "other")):  # fmt: skip
        code, reason = await client.refused("RequestHouseFunding", fund_request(**{field: value}), FINANCE_A)
        assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "IDEMPOTENCY_CONFLICT"), field
    jackpot = await fund(
        client, request_id="fund-2", account=cashier_pb2.HOUSE_ACCOUNT_JACKPOT, pool=MPX, amount=700
    )
    assert jackpot.transfer.credit_account_id == "house:jackpot:MPX"
    back = await fund(client, request_id="defund-1", amount=-20_000)
    assert (back.transfer.debit_account_id, back.transfer.credit_account_id, back.transfer.amount) == (
        "house:bank:GRAM",
        "mint:HOUSE_FUNDING:GRAM",
        20_000,
    )
    assert back.balance_after == 30_000
    await client.stub.RequestHouseFunding(
        fund_request(request_id="defund-2", amount=-30_001), metadata=FINANCE_A
    )
    code, reason = await client.refused("DecideHouseFunding", approval("defund-2"), FINANCE_B)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
    audit = await client.stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    assert audit.balanced
    gram, mpx = audit.pools
    assert (gram.minted, gram.burned, gram.accounts_total) == (2000 + 50_000, 20_000, 2000 + 30_000)
    assert (mpx.minted, mpx.accounts_total) == (200 + 700, 200 + 700)


async def test_only_finance_funds_the_house_and_never_alone(client: Client) -> None:
    before = await client.snapshot()
    for metadata in (TABLE, PAYMENTS, ALICE):
        code, reason = await client.refused("RequestHouseFunding", fund_request(), metadata)
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
    await client.stub.RequestHouseFunding(fund_request(), metadata=FINANCE_A)
    code, reason = await client.refused("DecideHouseFunding", approval("fund-1"), FINANCE_A)
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "FOUR_EYES_REQUIRED")
    for metadata in (TABLE, PAYMENTS, ALICE):
        code, reason = await client.refused("DecideHouseFunding", approval("fund-1"), metadata)
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
    assert await client.snapshot() == before


async def test_house_balances_for_tables_and_admins(client: Client) -> None:
    await fund(client, amount=1234)
    await fund(client, request_id="fund-j", account=cashier_pb2.HOUSE_ACCOUNT_JACKPOT, amount=56)
    for metadata in (TABLE, ADMIN):
        reply = await client.stub.GetHouseBalances(
            cashier_pb2.GetHouseBalancesRequest(pool=GRAM), metadata=metadata
        )
        assert (reply.bank_balance, reply.jackpot_balance) == (1234, 56)
    empty = await client.stub.GetHouseBalances(cashier_pb2.GetHouseBalancesRequest(pool=MPX), metadata=TABLE)
    assert (empty.bank_balance, empty.jackpot_balance) == (0, 0)
    for metadata in (PAYMENTS, ALICE):
        code, reason = await client.refused(
            "GetHouseBalances", cashier_pb2.GetHouseBalancesRequest(pool=GRAM), metadata
        )
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
    for pool in (0, 7):
        code, reason = await client.refused(
            "GetHouseBalances", cashier_pb2.GetHouseBalancesRequest(pool=pool), TABLE
        )  # type: ignore[arg-type]
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "POOL_INVALID")


async def test_a_funded_house_bank_pays_a_house_game(client: Client) -> None:
    await fund(client, amount=1000)
    await client.stub.OpenSeatSession(
        cashier_pb2.OpenSeatSessionRequest(
            session_id="hg/alice", player_id="alice", table_id="hg", seat_index=0, pool=GRAM,
            buy_in_amount=100, min_buy_in=10, max_buy_in=1000,
        ),
        metadata=TABLE,
    )  # fmt: skip
    settled = await client.stub.SettleHand(
        cashier_pb2.SettleHandRequest(
            hand_id="hg:1", table_id="hg", pool=GRAM, house_bank_amount=-300,
            seat_results=[cashier_pb2.SeatResult(session_id="hg/alice", net_amount=300)],
        ),
        metadata=TABLE,
    )  # fmt: skip
    assert [s.net_amount for s in settled.settlement.stacks_after] == [400]
    audit = await client.stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    assert audit.balanced


# Every string and integer field: a documented range, refused outside it ------------------------


def _string_cases() -> list[tuple[str, str, Callable[[str], object], int, str]]:
    """(name, method, request built from a value, max length, reason for a bad value)."""
    return [
        ("GetBalances.player_id", "GetBalances", lambda v: cashier_pb2.GetBalancesRequest(player_id=v), 128, "FIELD_INVALID"),
        ("Purchase.payment_reference", "Purchase", lambda v: purchase(v), 128, "FIELD_INVALID"),
        ("Purchase.player_id", "Purchase", lambda v: purchase("p", v), 128, "FIELD_INVALID"),
        ("Withdraw.payment_reference", "Withdraw",
         lambda v: cashier_pb2.WithdrawRequest(payment_reference=v, player_id="alice", source=1, amount_minor=10**6), 128,
         "FIELD_INVALID"),
        ("Withdraw.player_id", "Withdraw",
         lambda v: cashier_pb2.WithdrawRequest(payment_reference="w", player_id=v, source=1, amount_minor=10**6), 128,
         "FIELD_INVALID"),
        ("Transfer.transfer_id", "CreateTransfers",
         lambda v: cashier_pb2.CreateTransfersRequest(transfers=[transfer(transfer_id=v)]), 128, "FIELD_INVALID"),
        ("Transfer.debit_account_id", "CreateTransfers",
         lambda v: cashier_pb2.CreateTransfersRequest(transfers=[transfer(debit_account_id=v)]), 200, "FIELD_INVALID"),
        ("Transfer.credit_account_id", "CreateTransfers",
         lambda v: cashier_pb2.CreateTransfersRequest(transfers=[transfer(credit_account_id=v)]), 200, "FIELD_INVALID"),
        ("Transfer.reference", "CreateTransfers",
         lambda v: cashier_pb2.CreateTransfersRequest(transfers=[transfer(reference=v)]), 128, "FIELD_INVALID"),
        ("Transfer.table_id", "CreateTransfers",
         lambda v: cashier_pb2.CreateTransfersRequest(transfers=[transfer(table_id=v)]), 128, "FIELD_INVALID"),
        ("LookupTransfers.transfer_ids", "LookupTransfers",
         lambda v: cashier_pb2.LookupTransfersRequest(transfer_ids=[v]), 200, "FIELD_INVALID"),
        ("OpenSeatSession.session_id", "OpenSeatSession",
         lambda v: cashier_pb2.OpenSeatSessionRequest(session_id=v, player_id="alice", table_id="t", pool=GRAM,
                                                      buy_in_amount=10, min_buy_in=10, max_buy_in=10), 100,
         "FIELD_INVALID"),
        ("OpenSeatSession.player_id", "OpenSeatSession",
         lambda v: cashier_pb2.OpenSeatSessionRequest(session_id="s", player_id=v, table_id="t", pool=GRAM,
                                                      buy_in_amount=10, min_buy_in=10, max_buy_in=10), 128,
         "FIELD_INVALID"),
        ("OpenSeatSession.table_id", "OpenSeatSession",
         lambda v: cashier_pb2.OpenSeatSessionRequest(session_id="s", player_id="alice", table_id=v, pool=GRAM,
                                                      buy_in_amount=10, min_buy_in=10, max_buy_in=10), 128,
         "FIELD_INVALID"),
        ("SettleHand.hand_id", "SettleHand",
         lambda v: cashier_pb2.SettleHandRequest(hand_id=v, table_id="t", pool=GRAM,
                                                 seat_results=[cashier_pb2.SeatResult(session_id="s")]), 100,
         "FIELD_INVALID"),
        ("SettleHand.table_id", "SettleHand",
         lambda v: cashier_pb2.SettleHandRequest(hand_id="h", table_id=v, pool=GRAM,
                                                 seat_results=[cashier_pb2.SeatResult(session_id="s")]), 128,
         "FIELD_INVALID"),
        ("SeatResult.session_id", "SettleHand",
         lambda v: cashier_pb2.SettleHandRequest(hand_id="h", table_id="t", pool=GRAM,
                                                 seat_results=[cashier_pb2.SeatResult(session_id=v)]), 100,
         "FIELD_INVALID"),
        ("CashOutSeatSession.session_id", "CashOutSeatSession",
         lambda v: cashier_pb2.CashOutSeatSessionRequest(session_id=v), 100, "FIELD_INVALID"),
        ("GetSeatSession.session_id", "GetSeatSession",
         lambda v: cashier_pb2.GetSeatSessionRequest(session_id=v), 100, "FIELD_INVALID"),
        ("ListOpenSeatSessions.table_id", "ListOpenSeatSessions",
         lambda v: cashier_pb2.ListOpenSeatSessionsRequest(table_id=v), 128, "FIELD_INVALID"),
        ("GetStatement.player_id", "GetStatement",
         lambda v: cashier_pb2.GetStatementRequest(player_id=v), 128, "FIELD_INVALID"),
        ("RequestHouseFunding.request_id", "RequestHouseFunding", lambda v: fund_request(request_id=v), 128, "FIELD_INVALID"),
        ("RequestHouseFunding.reason", "RequestHouseFunding", lambda v: fund_request(reason=v), 128, "FIELD_INVALID"),
    ]  # fmt: skip


STRING_CASES = _string_cases()
BAD_TEXT = {"NUL": "a\x00b", "newline": "a\nb", "escape": "\x1b[2J", "DEL": "a\x7f", "non-ASCII": "\u0430bc"}


USUAL_CALLER = {
    "GetStatement": HISTORY,
    "LookupTransfers": ADMIN,
    "RequestHouseFunding": FINANCE_A,
    "Purchase": PAYMENTS,
    "Withdraw": PAYMENTS,
}


async def test_every_string_field_refuses_control_characters_and_over_long_values(client: Client) -> None:
    before = await client.snapshot()
    for name, method, build, limit, reason in STRING_CASES:
        for label, value in {**BAD_TEXT, "over-long": "x" * (limit + 1)}.items():
            code, got = await client.refused(method, build(value), USUAL_CALLER.get(method, TABLE))
            assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason), (name, label)
    assert await client.snapshot() == before


def _integer_cases() -> list[tuple[str, str, Callable[[], object], str]]:
    too_big = MAX_AMOUNT + 1

    def seat(**overrides: object) -> object:
        fields: dict[str, object] = dict(session_id="s", player_id="alice", table_id="t", seat_index=0, pool=GRAM,
                                         buy_in_amount=100, min_buy_in=10, max_buy_in=1000)  # fmt: skip
        fields.update(overrides)
        return cashier_pb2.OpenSeatSessionRequest(**fields)  # type: ignore[arg-type]

    def hand(results: list[int], rake: int = 0, bank: int = 0) -> object:
        return cashier_pb2.SettleHandRequest(
            hand_id="h", table_id="t", pool=GRAM, rake=rake, house_bank_amount=bank,
            seat_results=[cashier_pb2.SeatResult(session_id=f"s{i}", net_amount=n) for i, n in enumerate(results)],
        )  # fmt: skip

    return [
        ("transfer amount zero", "CreateTransfers",
         lambda: cashier_pb2.CreateTransfersRequest(transfers=[transfer(amount=0)]), "AMOUNT_INVALID"),
        ("transfer amount over the cap", "CreateTransfers",
         lambda: cashier_pb2.CreateTransfersRequest(transfers=[transfer(amount=too_big)]), "AMOUNT_INVALID"),
        ("transfer amount int64 max", "CreateTransfers",
         lambda: cashier_pb2.CreateTransfersRequest(transfers=[transfer(amount=INT64_MAX)]), "AMOUNT_INVALID"),
        ("unknown transfer kind", "CreateTransfers",
         lambda: cashier_pb2.CreateTransfersRequest(transfers=[transfer(kind=99)]), "FIELD_INVALID"),
        ("unknown pool", "CreateTransfers",
         lambda: cashier_pb2.CreateTransfersRequest(transfers=[transfer(pool=99)]), "POOL_INVALID"),
        ("too many transfers", "CreateTransfers",
         lambda: cashier_pb2.CreateTransfersRequest(transfers=[transfer(transfer_id=f"t{i}") for i in range(1001)]),
         "FIELD_INVALID"),
        ("too many lookups", "LookupTransfers",
         lambda: cashier_pb2.LookupTransfersRequest(transfer_ids=[f"t{i}" for i in range(1001)]), "FIELD_INVALID"),
        ("purchase of negative minor units", "Purchase", lambda: purchase("p", minor=-1), "AMOUNT_INVALID"),
        ("purchase over the cap", "Purchase", lambda: purchase("p", source=SOURCE_STARS, minor=too_big // 10 + 1),
         "AMOUNT_INVALID"),
        ("unknown payment source", "Purchase", lambda: purchase("p", source=99), "FIELD_INVALID"),
        ("withdrawal of zero", "Withdraw",
         lambda: cashier_pb2.WithdrawRequest(payment_reference="w", player_id="alice", source=1, amount_minor=0),
         "AMOUNT_INVALID"),
        ("buy-in over the cap", "OpenSeatSession", lambda: seat(buy_in_amount=too_big, max_buy_in=too_big), "AMOUNT_INVALID"),
        ("minimum buy-in of zero", "OpenSeatSession", lambda: seat(min_buy_in=0), "AMOUNT_INVALID"),
        ("negative seat", "OpenSeatSession", lambda: seat(seat_index=-1), "FIELD_INVALID"),
        ("seat beyond any table", "OpenSeatSession", lambda: seat(seat_index=100), "FIELD_INVALID"),
        ("unknown pool for a seat", "OpenSeatSession", lambda: seat(pool=99), "POOL_INVALID"),
        ("net result over the cap", "SettleHand", lambda: hand([too_big, -too_big]), "AMOUNT_INVALID"),
        ("negative rake", "SettleHand", lambda: hand([1, 0], rake=-1), "AMOUNT_INVALID"),
        ("rake over the cap", "SettleHand", lambda: hand([-too_big, 0], rake=too_big), "AMOUNT_INVALID"),
        ("house bank change over the cap", "SettleHand", lambda: hand([too_big], bank=-too_big), "AMOUNT_INVALID"),
        ("too many seats in a hand", "SettleHand", lambda: hand([0] * 101), "FIELD_INVALID"),
        ("negative page size", "GetStatement",
         lambda: cashier_pb2.GetStatementRequest(player_id="alice", page=common_pb2.PageRequest(page_size=-1)),
         "FIELD_INVALID"),
        ("unknown statement pool", "GetStatement", lambda: cashier_pb2.GetStatementRequest(player_id="alice", pool=99),
         "POOL_INVALID"),
        ("house funding of zero", "RequestHouseFunding", lambda: fund_request(amount=0), "AMOUNT_INVALID"),
        ("house funding over the cap", "RequestHouseFunding", lambda: fund_request(amount=too_big), "AMOUNT_INVALID"),
        ("house defunding over the cap", "RequestHouseFunding", lambda: fund_request(amount=-too_big), "AMOUNT_INVALID"),
        ("house defunding of int64 min", "RequestHouseFunding", lambda: fund_request(amount=-(2**63)), "AMOUNT_INVALID"),
        ("unknown house account", "RequestHouseFunding", lambda: fund_request(account=7), "FIELD_INVALID"),
        ("no house account", "RequestHouseFunding", lambda: fund_request(account=0), "FIELD_REQUIRED"),
        ("no reason", "RequestHouseFunding", lambda: fund_request(reason=""), "FIELD_REQUIRED"),
    ]  # fmt: skip


INTEGER_CASES = _integer_cases()


async def test_every_integer_and_enum_field_is_range_checked(client: Client) -> None:
    before = await client.snapshot()
    for name, method, build, reason in INTEGER_CASES:
        code, got = await client.refused(method, build(), USUAL_CALLER.get(method, TABLE))
        assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason), name
    assert await client.snapshot() == before
