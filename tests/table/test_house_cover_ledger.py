"""The house bank's cover as a ledger reservation (issue 44), as a property: random interleavings of
rounds opened at four tables of one pool (two Casino Hold'em, two Russian Poker, each its own round
core), stakes answered, deals that fail, decisions with stakes, clock runs, settlements, refunds after
a table reopens, and the operator funding and defunding the bank, all against the cashier's real
ledger rules (`services.cashier.ledger.plan_transfers`, in memory: no I/O).

After every step:
- a round is accepted exactly when the bank's own money (its balance: what no open round reserved)
  covers its largest payout and the wallet its stakes; another open round's stake never counts;
- the cover account holds exactly what the open rounds reserved (stakes, decisions' stakes and the
  largest payout), so the bank's reservations never exceed its own money;
- every settlement and every refund the ledger is given applies (an accepted round can always pay,
  whatever its cards), and the pool is conserved (its accounts sum to minted less burned).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from house_games import HouseGameError
from service_runtime.errors import DomainError
from services.cashier.ledger import (
    HOUSE_FUNDING_SOURCE,
    Account,
    AccountKind,
    Pool,
    TransferKind,
    TransferRecord,
    TransferRequest,
    TransferStatus,
    bank_account_id,
    cover_account_id,
    jackpot_account_id,
    mint_account_id,
    plan_transfers,
    wallet_account_id,
)
from services.table.house import house_core as core
from services.table.house.house_round import (
    BoxBet,
    HouseGame,
    HouseRoom,
    PlannedTransfer,
    check_bets,
    largest_payout,
)
from tests.table.house_players import ledger_requests

POOL = Pool.MPX
NOW = datetime(2026, 12, 6, tzinfo=UTC)
PLAYERS = ("ann", "bob", "cyd", "dan")
TABLES = (
    ("casino-holdem-mpx.1", HouseGame.CASINO_HOLDEM),
    ("casino-holdem-mpx.2", HouseGame.CASINO_HOLDEM),
    ("russian-poker-mpx.1", HouseGame.RUSSIAN_POKER),
    ("russian-poker-mpx.2", HouseGame.RUSSIAN_POKER),
)
MAX_PAYOUT = 1_000
APPLIED = (TransferStatus.CREATED, TransferStatus.EXISTS)


class Ledger:
    """The pool's accounts and the transfers recorded by id, moved only by `plan_transfers`."""

    def __init__(self) -> None:
        self.mint = mint_account_id(HOUSE_FUNDING_SOURCE, POOL)
        kinds = {
            self.mint: AccountKind.EXTERNAL_MINT,
            bank_account_id(POOL): AccountKind.HOUSE_BANK,
            cover_account_id(POOL): AccountKind.HOUSE_COVER,
            jackpot_account_id(POOL): AccountKind.JACKPOT,
            **{wallet_account_id(POOL, p): AccountKind.PLAYER_WALLET for p in PLAYERS},
        }
        self.accounts = {a: Account(a, "system/house", POOL, kind) for a, kind in kinds.items()}
        self.transfers: dict[str, TransferRecord] = {}
        self.ids = itertools.count()

    def balance(self, account_id: str) -> int:
        return self.accounts[account_id].balance

    def apply(self, requests: list[TransferRequest]) -> bool:
        """One linked batch; True when every transfer of it is applied (now or before)."""
        plan = plan_transfers(requests, linked=True, accounts=self.accounts, existing=self.transfers, now=NOW)
        self.transfers.update((r.request.transfer_id, r) for r in plan.new_records)
        self.accounts.update(plan.changed_accounts)
        return all(o.status in APPLIED for o in plan.outcomes)

    def fund(self, account_id: str, amount: int) -> bool:
        """The operator's FundHouseAccount: from the mint (positive) or back to it (negative)."""
        debit, credit = (self.mint, account_id) if amount > 0 else (account_id, self.mint)
        request = TransferRequest(
            f"funding:{next(self.ids)}", debit, credit, POOL, abs(amount), TransferKind.HOUSE_FUNDING
        )
        return self.apply([request])

    def applied(self, transfer_id: str) -> bool:
        record = self.transfers.get(transfer_id)
        return record is not None and record.applied

    def house(
        self, player: str, planned: tuple[PlannedTransfer, ...], table_id: str
    ) -> list[TransferRequest]:
        """The round's transfers as the shell sends them (services.table.ports.dependencies.house_transfer)."""
        return ledger_requests(POOL, player, planned, table_id)


class HouseCover(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ledger = Ledger()
        self.tables: dict[str, core.HouseState] = {}
        for table_id, game in TABLES:
            room = HouseRoom(
                table_id.rsplit(".", 1)[0], game, 2, boxes=3, min_ante=10, max_ante=200, max_payout=MAX_PAYOUT
            )
            self.tables[table_id] = core.empty(table_id, room, 20.0)
        self.now = 1_000.0
        self.rounds = itertools.count()
        self.accepted = self.refused_for_cover = 0
        for player in PLAYERS:
            # Wallets as purchases leave them (the mint here stands for the payment sources).
            self.ledger.apply(
                [
                    TransferRequest(
                        f"buy:{player}", self.ledger.mint, wallet_account_id(POOL, player), POOL, 5_000,
                        TransferKind.PURCHASE,
                    )
                ]
            )  # fmt: skip
        self.ledger.fund(bank_account_id(POOL), 2_500)

    # ------------------------------------------------------------------ the shell's part

    def feed(self, table_id: str, given: core.Input, deck: tuple[int, ...] = ()) -> core.Step | None:
        try:
            step = core.feed(self.tables[table_id], given)
        except DomainError:  # a refused command changes nothing
            return None
        self.tables[table_id] = step.state
        self.run(table_id, step.effects, deck)
        return step

    def run(self, table_id: str, effects: tuple[core.Effect, ...], deck: tuple[int, ...]) -> None:
        """The effects the rules below do not answer themselves, answered at once."""
        for effect in effects:
            round_ = self.tables[table_id].rounds.get(effect.round_id)
            if isinstance(effect, core.Seal):
                if deck:  # else the seal fails (the rule says so)
                    self.feed(table_id, core.Sealed(effect.round_id, deck, self.now))
            elif isinstance(effect, core.Pay):
                ok = self.ledger.apply(self.ledger.house(effect.player, effect.transfers, table_id))
                outcome = core.Outcome.OK if ok else core.Outcome.REFUSED
                self.feed(table_id, core.PayAnswer(effect.round_id, effect.transfer.transfer_id, outcome))
            elif isinstance(effect, core.Settle):
                # Whatever the cards, an accepted round's settlement applies.
                assert self.ledger.apply(self.ledger.house(effect.player, effect.transfers, table_id)), effect
                self.feed(table_id, core.SettleAnswer(effect.round_id, core.Outcome.OK))
            elif isinstance(effect, core.Refund):
                if self.ledger.apply(self.ledger.house(effect.player, effect.stakes, table_id)):
                    assert self.ledger.apply(self.ledger.house(effect.player, effect.refunds, table_id)), (
                        effect
                    )
                self.feed(table_id, core.RefundAnswer(effect.round_id))
            elif isinstance(effect, core.RevealVoid):
                self.feed(table_id, core.VoidRevealed(effect.round_id))
            else:
                assert isinstance(effect, (core.Stake, core.Finish)), effect
                assert round_ is not None

    def staking(self) -> list[tuple[str, core.Round]]:
        return [
            (t, r)
            for t, state in self.tables.items()
            for r in state.rounds.values()
            if r.stage is core.Stage.STAKING
        ]

    def playing(self) -> list[tuple[str, core.Round]]:
        return [
            (t, r)
            for t, state in self.tables.items()
            for r in state.rounds.values()
            if r.stage is core.Stage.PLAYING
        ]

    # ------------------------------------------------------------------ rules

    @rule(
        table=st.sampled_from([t for t, _ in TABLES]),
        player=st.sampled_from(PLAYERS),
        antes=st.lists(st.integers(10, 200), min_size=1, max_size=3),
        bonus=st.sampled_from([0, 0, 10, 50]),
    )
    def bet(self, table: str, player: str, antes: list[int], bonus: int) -> None:
        """PlaceHouseBets up to the commitment: the round is open, its stakes not yet answered."""
        state = self.tables[table]
        russian = state.room.game is HouseGame.RUSSIAN_POKER
        bets = [BoxBet(box, ante, bonus=bonus if russian else 0) for box, ante in enumerate(antes, 1)]
        try:
            wagers = check_bets(state.room, player, bets)
        except HouseGameError:
            return
        round_id = f"r{next(self.rounds)}"
        bets_in = core.Bets(
            player, round_id, round_id, "chain", "c", wagers, 0, largest_payout(state.room, wagers), self.now
        )
        self.feed(table, bets_in)

    @rule(data=st.data(), deck=st.permutations(range(52)), seal_fails=st.booleans())
    @precondition(lambda self: bool(self.staking()))
    def answer_stakes(self, data: st.DataObject, deck: list[int], seal_fails: bool) -> None:
        """The stake batch reaches the ledger: accepted exactly when the bank's own money covers the
        round and the wallet its stakes; then the deal (or a seal that fails: refunded)."""
        table, round_ = data.draw(st.sampled_from(self.staking()))
        stakes = sum(core.initial_stake(w) for w in round_.wagers)
        covered = self.ledger.balance(bank_account_id(POOL)) >= round_.cover
        funded = self.ledger.balance(wallet_account_id(POOL, round_.player)) >= stakes
        (stake,) = [e for e in core.outstanding(self.tables[table]) if e.round_id == round_.round_id]
        assert isinstance(stake, core.Stake)
        ok = self.ledger.apply(self.ledger.house(round_.player, stake.transfers, table))
        assert ok == (covered and funded), (ok, covered, funded)
        self.accepted += ok
        self.refused_for_cover += funded and not covered
        outcome = core.Outcome.OK if ok else core.Outcome.REFUSED
        step = self.feed(table, core.StakeAnswer(round_.round_id, outcome), () if seal_fails else tuple(deck))
        if ok and seal_fails:
            assert step is not None
            self.feed(table, core.SealFailed(round_.round_id))

    @rule(data=st.data())
    @precondition(lambda self: bool(self.playing()))
    def decide(self, data: st.DataObject) -> None:
        table, round_ = data.draw(st.sampled_from(self.playing()))
        state = self.tables[table]
        live = round_.live(state.room)
        box = data.draw(st.sampled_from(live.due_boxes()))
        option = data.draw(st.sampled_from(live.options(box)))
        amount = data.draw(st.integers(option.min_amount, option.max_amount)) if option.max_amount else 0
        cards = (0, 2) if option.decision.value == "EXCHANGE" else ()
        request = f"d{next(self.rounds)}"
        self.feed(
            table,
            core.Decide(
                round_.player, request, round_.round_id, box, option.decision, cards, amount, self.now
            ),
        )

    @rule()
    def clock(self) -> None:
        """Time runs out for every box waiting: the rules' defaults."""
        self.now += 30.0
        for table in self.tables:
            self.feed(table, core.Tick(self.now))

    @rule(table=st.sampled_from([t for t, _ in TABLES]))
    def reopen(self, table: str) -> None:
        """The table opens again on its journal (a restart): rounds never dealt are refunded."""
        self.feed(table, core.Reopen(self.now))

    @rule(amount=st.integers(-3_000, 3_000).filter(bool))
    def fund(self, amount: int) -> None:
        """The operator funds or defunds the bank: only its own money can leave."""
        free = self.ledger.balance(bank_account_id(POOL))
        assert self.ledger.fund(bank_account_id(POOL), amount) == (amount > 0 or -amount <= free)

    # ------------------------------------------------------------------ invariants

    @invariant()
    def the_cover_is_exactly_what_the_open_rounds_reserved(self) -> None:
        reserved = 0
        for state in self.tables.values():
            for r in state.rounds.values():
                if self.ledger.applied(f"hgr:{r.round_id}:cover") and not self.ledger.applied(
                    f"hgr:{r.round_id}:free"
                ):
                    assert r.stage.open, r
                    reserved += core.reserved(r)
        assert self.ledger.balance(cover_account_id(POOL)) == reserved
        assert self.ledger.balance(bank_account_id(POOL)) >= 0

    @invariant()
    def the_pool_is_conserved(self) -> None:
        accounts = self.ledger.accounts.values()
        held = sum(a.balance for a in accounts if a.kind is not AccountKind.EXTERNAL_MINT)
        assert held == -self.ledger.balance(self.ledger.mint)
        assert all(a.balance >= 0 for a in accounts if a.kind is not AccountKind.EXTERNAL_MINT)


HouseCover.TestCase.settings = settings(
    max_examples=60, stateful_step_count=60, deadline=None, suppress_health_check=list(HealthCheck)
)
test_the_house_bank_cover_under_random_interleavings = HouseCover.TestCase


def test_a_round_an_older_build_opened_keeps_its_batches_without_a_reservation() -> None:
    """A round journaled before issue 44 (its `open` has no `reserve`): its stake batch is the old
    one (ids the cashier may have recorded already), and neither its refund nor its settlement gives
    back a reservation it never made; a new round reserves and releases."""
    table_id, game = TABLES[0]
    room = HouseRoom("r", game, 2, boxes=3, min_ante=10, max_ante=200, max_payout=MAX_PAYOUT)
    old_open = {
        "type": "open", "round_id": "old", "table_id": table_id, "player": "ann", "rid": "q",
        "chain": "c", "commitment": "x", "jackpot_before": 0, "started_at": 1.0, "cover": MAX_PAYOUT,
        "wagers": [[1, 10, False, 0]],
    }  # fmt: skip
    state = core.replay([old_open], table_id=table_id, room=room, decision_seconds=20.0, decks={})
    (stake,) = core.outstanding(state)
    assert isinstance(stake, core.Stake)
    assert [t.transfer_id for t in stake.transfers] == ["hgr:old:in:1"]
    refund = core.outstanding(core.feed(state, core.Reopen(2.0)).state)[0]
    assert isinstance(refund, core.Refund)
    assert [t.transfer_id for t in refund.refunds] == ["hgr:old:void:1"]
    new = core.feed(
        state, core.Bets("bob", "q2", "new", "c", "x", check_bets(room, "bob", [BoxBet(1, 10)]), 0, 400, 3.0)
    )
    (stake,) = [e for e in core.outstanding(new.state) if e.round_id == "new"]
    assert isinstance(stake, core.Stake)
    assert [t.transfer_id for t in stake.transfers] == ["hgr:new:in:1", "hgr:new:cover"]
    assert stake.transfers[-1].amount == 10 + 400
