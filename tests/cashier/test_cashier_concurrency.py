"""Races on both backends (PostgreSQL, and the embedded SQLite default): duplicate requests, two tables
seating one player, settlement vs cash-out, and the bank test (many concurrent transfers while an
auditor keeps checking conservation)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest

from service_runtime.errors import DomainError
from services.cashier.application import Cashier, audit_balanced
from services.cashier.ledger import Pool, TransferKind, TransferRequest, TransferStatus
from services.cashier.settlement import SeatResult, normalise_hand_result


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
async def cashier(request: pytest.FixtureRequest, clock, migrated_cashier) -> AsyncIterator[Cashier]:  # type: ignore[no-untyped-def]
    """Every race here runs on PostgreSQL and on SQLite: the embedded default keeps the same promises."""
    url: str = request.getfixturevalue(f"{request.param}_url")
    service: Cashier = await migrated_cashier(url, clock, pool_size=20)
    try:
        yield service
    finally:
        await service.engine.dispose()


async def test_one_hundred_concurrent_identical_requests_apply_exactly_once(cashier: Cashier, fund) -> None:  # type: ignore[no-untyped-def]
    await fund(cashier, "alice", gram_chips=1000)
    await fund(cashier, "bob", gram_chips=1)
    request = TransferRequest(
        "same-1", "wallet:GRAM:alice", "wallet:GRAM:bob", Pool.GRAM, 7, TransferKind.ADJUSTMENT
    )
    results = await asyncio.gather(*(cashier.create_transfers([request], linked=False) for _ in range(100)))
    statuses = [outcomes[0].status for outcomes in results]
    assert statuses.count(TransferStatus.CREATED) == 1
    assert statuses.count(TransferStatus.EXISTS) == 99
    wallets, _ = await cashier.balances("alice")
    assert wallets[0].balance == 993


async def test_one_hundred_concurrent_identical_purchases_credit_once(cashier: Cashier) -> None:
    from services.cashier.payments import PaymentSource

    results = await asyncio.gather(
        *(
            cashier.purchase(
                payment_reference="pay-1", player_id="dave", source=PaymentSource.GRAM, amount_minor=5 * 10**9
            )
            for _ in range(100)
        )
    )
    assert sum(not r.existing for r in results) == 1
    wallets, _ = await cashier.balances("dave")
    assert wallets[0].balance == 5000


async def test_purchases_racing_with_one_reference_and_different_sources_credit_one_of_them(
    cashier: Cashier,
) -> None:
    """Issue 41 under concurrency: the reference is claimed by a unique key, so two first attempts
    with different sources (which lock different accounts) cannot both apply."""
    from services.cashier.payments import PaymentSource

    sources = [PaymentSource.GRAM, PaymentSource.MPX] * 20
    results = await asyncio.gather(
        *(
            cashier.purchase(payment_reference="race-1", player_id="erin", source=source, amount_minor=10**9)
            for source in sources
        ),
        return_exceptions=True,
    )
    applied = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BaseException)]
    assert sum(not r.existing for r in applied) == 1
    assert len({r.record.request.pool for r in applied}) == 1
    assert all(isinstance(e, DomainError) and e.reason == "IDEMPOTENCY_CONFLICT" for e in refused), refused
    assert len(applied) == len(refused) == 20
    wallets, _ = await cashier.balances("erin")
    assert sorted(w.balance for w in wallets) == [
        0,
        1000 if applied[0].record.request.pool is Pool.GRAM else 10,
    ]
    figures, _ = await cashier.audit()
    assert all(audit_balanced(f) for f in figures)


async def test_two_tables_racing_to_seat_one_player_exactly_one_wins(cashier: Cashier, fund) -> None:  # type: ignore[no-untyped-def]
    await fund(cashier, "eve", gram_chips=5000)

    async def sit(table: int) -> str:
        try:
            await cashier.open_seat_session(
                session_id=f"table-{table}/eve",
                player_id="eve",
                table_id=f"table-{table}",
                seat_index=0,
                pool=Pool.GRAM,
                buy_in_amount=1000,
                min_buy_in=1000,
                max_buy_in=1000,
            )
            return "seated"
        except DomainError as error:
            return error.reason

    outcomes = await asyncio.gather(*(sit(table) for table in range(10)))
    assert outcomes.count("seated") == 1
    assert outcomes.count("SEAT_SESSION_ALREADY_OPEN") == 9
    wallets, session = await cashier.balances("eve")
    assert wallets[0].balance == 4000
    assert session is not None
    assert session.stack == 1000


async def test_settlement_racing_a_cash_out_has_one_consistent_outcome(cashier: Cashier, fund) -> None:  # type: ignore[no-untyped-def]
    for round_number in range(8):
        players = [f"p{round_number}-{i}" for i in range(2)]
        for seat, player in enumerate(players):
            await fund(cashier, player, gram_chips=1000)
            await cashier.open_seat_session(
                session_id=f"s-{player}",
                player_id=player,
                table_id=f"race-{round_number}",
                seat_index=seat,
                pool=Pool.GRAM,
                buy_in_amount=1000,
                min_buy_in=100,
                max_buy_in=1000,
            )
        hand = normalise_hand_result(
            f"hand-{round_number}",
            f"race-{round_number}",
            Pool.GRAM,
            [SeatResult(f"s-{players[0]}", 300), SeatResult(f"s-{players[1]}", -300)],
            0,
            0,
        )
        settle, cash_out = await asyncio.gather(
            cashier.settle_hand(hand), cashier.cash_out(f"s-{players[1]}"), return_exceptions=True
        )
        loser_wallet = (await cashier.balances(players[1]))[0][0].balance
        winner_stack = (await cashier.seat_session(f"s-{players[0]}")).stack
        assert not isinstance(cash_out, BaseException)
        if isinstance(settle, BaseException):
            # Cash-out came first: the hand touched a closed seat and changed nothing.
            assert isinstance(settle, DomainError)
            assert settle.reason == "SEAT_SESSION_CLOSED"
            assert (loser_wallet, winner_stack) == (1000, 1000)
        else:
            # Settlement came first: the loser cashed out what was left.
            assert (loser_wallet, winner_stack) == (700, 1300)
        figures, _ = await cashier.audit()
        assert all(audit_balanced(f) for f in figures)


@pytest.mark.parametrize("hot_accounts", [0, 10], ids=["uniform", "ten-hot-accounts"])
async def test_bank_concurrent_transfers_keep_every_pool_conserved(
    cashier: Cashier, fund, hot_accounts: int
) -> None:  # type: ignore[no-untyped-def]
    players = [f"bank-{i}" for i in range(40)]
    for player in players:
        await fund(cashier, player, gram_chips=1000, mpx_chips=1000)
    initial, _ = await cashier.audit()
    totals = {f.pool: f.accounts_total for f in initial}
    counts = {"attempted": 0, "applied": 0, "rejected": 0, "audits_passed": 0}
    rng = random.Random(hot_accounts)
    stop = asyncio.Event()
    candidates = players[:hot_accounts] if hot_accounts else players

    async def worker(worker_id: int) -> None:
        for n in range(40):
            pool = rng.choice(list(Pool))
            debit, credit = rng.sample(candidates, 2)
            batch = [
                TransferRequest(
                    f"bank-{hot_accounts}-{worker_id}-{n}-{k}",
                    f"wallet:{pool.value}:{debit if k == 0 else credit}",
                    f"wallet:{pool.value}:{credit if k == 0 else rng.choice(players)}",
                    pool,
                    rng.randint(1, 400),
                    TransferKind.ADJUSTMENT,
                )
                for k in range(rng.randint(1, 3))
            ]
            batch = [t for t in batch if t.debit_account_id != t.credit_account_id]
            outcomes = await cashier.create_transfers(batch, linked=rng.random() < 0.5)
            counts["attempted"] += len(outcomes)
            counts["applied"] += sum(o.status is TransferStatus.CREATED for o in outcomes)
            counts["rejected"] += sum(o.status is TransferStatus.FAILED for o in outcomes)

    async def auditor() -> None:
        while not stop.is_set():
            figures, _ = await cashier.audit()
            for f in figures:
                assert audit_balanced(f), f
                assert f.accounts_total == totals[f.pool]
            counts["audits_passed"] += 1
            await asyncio.sleep(0.01)

    audit_task = asyncio.create_task(auditor())
    await asyncio.gather(*(worker(i) for i in range(12)))
    stop.set()
    await audit_task
    print(f"bank test ({'uniform' if not hot_accounts else f'{hot_accounts} hot accounts'}): {counts}")
    assert counts["applied"] > 0
    assert counts["audits_passed"] > 0
    assert counts["applied"] + counts["rejected"] == counts["attempted"]
    final, _ = await cashier.audit()
    assert all(audit_balanced(f) and f.accounts_total == totals[f.pool] for f in final)


async def test_hands_settled_together_keep_their_own_outcomes(cashier: Cashier, fund) -> None:  # type: ignore[no-untyped-def]
    tables = []
    for table in range(6):
        sessions = []
        for seat in range(2):
            player = f"co-{table}-{seat}"
            await fund(cashier, player, gram_chips=1000)
            await cashier.open_seat_session(
                session_id=f"co-{table}/{player}", player_id=player, table_id=f"co-{table}", seat_index=seat,
                pool=Pool.GRAM, buy_in_amount=500, min_buy_in=100, max_buy_in=1000,
            )  # fmt: skip
            sessions.append(f"co-{table}/{player}")
        tables.append(sessions)

    def hand(table: int, amount: int, hand_id: str | None = None) -> object:
        first, second = tables[table]
        return normalise_hand_result(
            hand_id or f"co-{table}:h1", f"co-{table}", Pool.GRAM, [SeatResult(first, amount), SeatResult(second, -amount)], 0, 0
        )  # fmt: skip

    # Table 3 overdraws a seat; table 5 sends its hand twice; all arrive together.
    hands = [hand(t, 900 if t == 3 else 100) for t in range(6)] + [hand(5, 100)]
    outcomes = await asyncio.gather(*(cashier.settle_hand(h) for h in hands), return_exceptions=True)  # type: ignore[arg-type]
    failed = [i for i, o in enumerate(outcomes) if isinstance(o, BaseException)]
    assert failed == [3]
    assert isinstance(outcomes[3], DomainError)
    assert outcomes[3].reason == "INSUFFICIENT_FUNDS"
    existing = [o[1] for o in outcomes if not isinstance(o, BaseException)]
    assert existing.count(True) == 1
    stacks = {t: [s.stack for s in await cashier.open_seat_sessions(f"co-{t}")] for t in range(6)}
    assert stacks == {t: [500, 500] if t == 3 else [600, 400] for t in range(6)}


async def test_hands_of_one_table_settled_at_once_apply_once_each_and_conserve_chips(
    cashier: Cashier,
    fund,  # type: ignore[no-untyped-def]
) -> None:
    # With two coalesced transactions in flight, hands of one table (and resent copies of a hand)
    # land in transactions that run at once: they wait on the same seat and rake rows, and a copy
    # recorded by the other transaction fails the unique index and is run again as EXISTS.
    sessions = []
    for seat in range(3):
        player = f"one-table-{seat}"
        await fund(cashier, player, gram_chips=10_000)
        await cashier.open_seat_session(
            session_id=f"busy/{player}", player_id=player, table_id="busy", seat_index=seat,
            pool=Pool.GRAM, buy_in_amount=5_000, min_buy_in=100, max_buy_in=10_000,
        )  # fmt: skip
        sessions.append(f"busy/{player}")
    before, _ = await cashier.audit()
    rng = random.Random(5)
    hands = []
    for n in range(60):
        winner = rng.randrange(3)
        losses = [0 if seat == winner else rng.randint(1, 40) for seat in range(3)]
        rake = sum(losses) // 10
        results = [
            SeatResult(s, sum(losses) - rake if seat == winner else -losses[seat])
            for seat, s in enumerate(sessions)
        ]
        hands.append(normalise_hand_result(f"busy:h{n}", "busy", Pool.GRAM, results, rake, 0))
    # Distinct hands first (a lost update would show in the stacks), then resent copies mixed in
    # with new hands (a copy recorded by the other transaction must come back EXISTS, not twice).
    first = await asyncio.gather(*(cashier.settle_hand(h) for h in hands[:40]))
    assert not any(existing for _, existing in first)
    resent = [hands[n] for n in range(0, 40, 2)]
    submitted = hands[40:] + resent
    rng.shuffle(submitted)
    outcomes = await asyncio.gather(*(cashier.settle_hand(h) for h in submitted))
    assert sorted(view.hand.hand_id for view, existing in outcomes if not existing) == sorted(
        h.hand_id for h in hands[40:]
    )
    assert sum(existing for _, existing in outcomes) == len(resent)
    expected = {s: 5_000 for s in sessions}
    for hand in hands:
        for result in hand.seat_results:
            expected[result.session_id] += result.net_amount
    stacks = {view.session.session_id: view.stack for view in await cashier.open_seat_sessions("busy")}
    assert stacks == expected
    after, _ = await cashier.audit()
    assert all(audit_balanced(f) for f in after)
    assert [f.accounts_total for f in after] == [f.accounts_total for f in before]
    rake_taken = sum(h.rake for h in hands)
    assert sum(5_000 - stack for stack in stacks.values()) == rake_taken


async def test_house_rounds_opened_at_once_at_many_tables_never_over_commit_the_bank(
    cashier: Cashier,
) -> None:
    """Issue 44: twelve rounds of both house games, opened at the same moment at four tables of one
    pool, each reserving a largest payout of 50,000 against a bank of 160,000 that covers three:
    exactly three are accepted (the ledger's no-overdraft rule is the cover check, one transaction
    for all tables), the reservations never exceed the bank's own money, every accepted round then
    pays its maximum, and the pool is conserved."""
    from house_games import BoxWager
    from services.cashier.ledger import AccountKind
    from services.cashier.payments import PaymentSource
    from services.table.house import house_core
    from tests.table.house_players import ledger_requests

    await cashier.fund_house_account(
        request_id="bank", pool=Pool.MPX, account=AccountKind.HOUSE_BANK, amount=160_000, reason="test"
    )
    tables = ("casino-holdem-mpx.1", "casino-holdem-mpx.2", "russian-poker-mpx.1", "russian-poker-mpx.2")
    rounds = []
    for n in range(12):
        player = f"p{n}"
        await cashier.purchase(
            payment_reference=f"buy-{n}", player_id=player, source=PaymentSource.MPX, amount_minor=10**11
        )
        wagers = (BoxWager(1, player, 1_000),)
        round_id = f"house:{tables[n % 4]}:{n}:0"
        batch = house_core.stake_transfers(round_id, wagers, 1_000 + 50_000)
        rounds.append((player, tables[n % 4], round_id, wagers, batch))

    async def open_round(player: str, table: str, batch: tuple) -> bool:  # type: ignore[type-arg]
        outcomes = await cashier.create_transfers(
            ledger_requests(Pool.MPX, player, batch, table), linked=True
        )
        return all(o.status is TransferStatus.CREATED for o in outcomes)

    accepted = await asyncio.gather(*(open_round(p, t, b) for p, t, _, _, b in rounds))
    assert sum(accepted) == 3
    bank, _, reserved = await cashier.house_balances(Pool.MPX)
    assert (bank, reserved) == (160_000 - 3 * 50_000, 3 * 51_000)
    # The defunding operator can take only the bank's own money, never a round's reservation.
    with pytest.raises(DomainError) as refused:
        await cashier.fund_house_account(
            request_id="take", pool=Pool.MPX, account=AccountKind.HOUSE_BANK, amount=-10_001, reason="test"
        )
    assert refused.value.reason == "INSUFFICIENT_FUNDS"
    # Every accepted round wins its maximum: the reservation goes back first, then the bank pays.
    for (player, table, round_id, wagers, _), ok in zip(rounds, accepted, strict=True):
        if not ok:
            continue
        opened = house_core.Round(round_id, player, "r", "c", "x", 0, 0.0, 50_000, wagers, reserve=True)
        release = house_core.release_transfers(opened)
        win = house_core.PlannedTransfer(f"hgr:{round_id}:out:1", True, "bank", 51_000, "win")
        outcomes = await cashier.create_transfers(
            ledger_requests(Pool.MPX, player, (*release, win), table), linked=True
        )
        assert all(o.status is TransferStatus.CREATED for o in outcomes), outcomes
    assert await cashier.house_balances(Pool.MPX) == (10_000, 0, 0)
    figures, _ = await cashier.audit()
    assert all(audit_balanced(f) for f in figures)
