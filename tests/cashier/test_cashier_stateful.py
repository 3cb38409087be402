"""A stateful hypothesis test: the PostgreSQL ledger against a small in-memory reference ledger.

Each example uses fresh players and ids on one migrated database, drives random batches (linked or
not, reused ids, over-spends, cross-pool and unknown accounts, bad amounts) through the real
application layer, and checks every outcome and every balance against the reference.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from service_runtime.errors import DomainError
from services.cashier.application import Cashier, audit_balanced
from services.cashier.ledger import Pool, TransferKind, TransferRequest, TransferStatus
from services.cashier.payments import PaymentSource

pytestmark = pytest.mark.postgres

_examples = itertools.count()
START = 100


@dataclass
class ReferenceLedger:
    """The rules written as plainly as possible: balances, and per id its fields and failure."""

    balances: dict[str, int]
    pools: dict[str, Pool]
    recorded: dict[str, tuple[tuple[object, ...], str | None]] = field(default_factory=dict)

    def apply(self, batch: list[TransferRequest], linked: bool) -> list[tuple[TransferStatus, str]] | str:
        for t in batch:
            if t.debit_account_id == t.credit_account_id:
                return "SAME_ACCOUNT"
            if t.amount <= 0:
                return "AMOUNT_INVALID"
        new = [t for t in batch if t.transfer_id not in self.recorded]
        for t in new:
            for account in (t.debit_account_id, t.credit_account_id):
                if account not in self.balances:
                    return "ACCOUNT_NOT_FOUND"
                if self.pools[account] != t.pool:
                    return "POOL_MISMATCH"
        results: dict[str, tuple[TransferStatus, str]] = {}
        for t in batch:
            if t.transfer_id in self.recorded:
                fields, failure = self.recorded[t.transfer_id]
                if fields != self._fields(t):
                    results[t.transfer_id] = (TransferStatus.EXISTS_WITH_DIFFERENT_FIELD, "")
                elif failure:
                    results[t.transfer_id] = (TransferStatus.FAILED, failure)
                else:
                    results[t.transfer_id] = (TransferStatus.EXISTS, "")
        if linked and new and len(new) < len(batch):
            for t in new:
                results[t.transfer_id] = (TransferStatus.FAILED, "LINKED_TRANSFER_FAILED")
            return [results[t.transfer_id] for t in batch]
        trial = dict(self.balances)
        culprit = None
        for t in new:
            if trial[t.debit_account_id] < t.amount:
                if linked:
                    culprit = t.transfer_id
                    break
                results[t.transfer_id] = (TransferStatus.FAILED, "INSUFFICIENT_FUNDS")
                self.recorded[t.transfer_id] = (self._fields(t), "INSUFFICIENT_FUNDS")
                continue
            trial[t.debit_account_id] -= t.amount
            trial[t.credit_account_id] += t.amount
            results[t.transfer_id] = (TransferStatus.CREATED, "")
            self.recorded[t.transfer_id] = (self._fields(t), None)
        if culprit is not None:
            for t in new:
                reason = "INSUFFICIENT_FUNDS" if t.transfer_id == culprit else "LINKED_TRANSFER_FAILED"
                results[t.transfer_id] = (TransferStatus.FAILED, reason)
                self.recorded[t.transfer_id] = (self._fields(t), reason)
        else:
            self.balances = trial
        return [results[t.transfer_id] for t in batch]

    @staticmethod
    def _fields(t: TransferRequest) -> tuple[object, ...]:
        return (t.debit_account_id, t.credit_account_id, t.pool, t.amount, t.kind)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_ledger_matches_an_in_memory_reference(
    postgres_url: str,
    loop: asyncio.AbstractEventLoop,
    migrated_cashier,  # type: ignore[no-untyped-def]
    clock,
) -> None:
    cashier: Cashier = loop.run_until_complete(migrated_cashier(postgres_url, clock))

    class LedgerMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.prefix = f"ex{next(_examples)}"
            players = [f"{self.prefix}-p{i}" for i in range(3)]
            self.accounts = [f"wallet:{pool.value}:{p}" for p in players for pool in Pool]
            for player in players:
                for source, minor in ((PaymentSource.GRAM, 10**6), (PaymentSource.MPX, 10**8)):
                    loop.run_until_complete(
                        cashier.purchase(
                            payment_reference=f"{player}-{source.value}",
                            player_id=player,
                            source=source,
                            amount_minor=START * minor,
                        )
                    )
            self.reference = ReferenceLedger(
                balances=dict.fromkeys(self.accounts, START),
                pools={a: Pool(a.split(":")[1]) for a in self.accounts},
            )

        @rule(
            data=st.data(),
            size=st.integers(1, 3),
            linked=st.booleans(),
        )
        def batch(self, data: st.DataObject, size: int, linked: bool) -> None:
            ids = data.draw(st.lists(st.integers(0, 7), min_size=size, max_size=size, unique=True))
            batch = []
            for n in ids:
                pool = data.draw(st.sampled_from(list(Pool)))
                debit = data.draw(
                    st.sampled_from([*self.accounts, f"wallet:{pool.value}:{self.prefix}-ghost"])
                )
                credit = data.draw(st.sampled_from(self.accounts))
                amount = data.draw(st.one_of(st.integers(1, 150), st.just(0)))
                batch.append(
                    TransferRequest(
                        f"{self.prefix}-t{n}", debit, credit, pool, amount, TransferKind.ADJUSTMENT
                    )
                )
            expected = self.reference.apply(batch, linked)
            if isinstance(expected, str):
                with pytest.raises(DomainError) as error:
                    loop.run_until_complete(cashier.create_transfers(batch, linked=linked))
                assert error.value.reason == expected
                return
            outcomes = loop.run_until_complete(cashier.create_transfers(batch, linked=linked))
            assert [(o.status, o.reason) for o in outcomes] == expected

        @invariant()
        def balances_match_the_reference(self) -> None:
            for account in self.accounts:
                player = account.split(":", 2)[2]
                pool = Pool(account.split(":")[1])
                wallets, _ = loop.run_until_complete(cashier.balances(player))
                actual = next(w.balance for w in wallets if w.pool is pool)
                assert actual == self.reference.balances[account], account

    options = settings(
        max_examples=12,
        stateful_step_count=12,
        deadline=None,
        # Shrinking replays whole database histories and can take minutes; the failing case is printed.
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    try:
        run_state_machine_as_test(LedgerMachine, settings=options)
        figures, _ = loop.run_until_complete(cashier.audit())
        assert all(audit_balanced(f) for f in figures)
    finally:
        loop.run_until_complete(cashier.engine.dispose())
