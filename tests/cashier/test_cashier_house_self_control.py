"""House games answer to the limits a player sets on themself and to an operator's hold (issue 37,
item 7), on PostgreSQL and the embedded SQLite default, with time moved by the test's clock.

A house round's opening stakes (a CreateTransfers batch that takes chips out of a wallet on net) are
refused during a break (COOLING_OFF / SELF_EXCLUDED) and a full hold (PLAYER_ON_HOLD), as a new seat
is, recording nothing; a round already in play (`round_in_play`: its decisions' stakes, its
settlement) finishes. A loss limit counts house games (stakes lost, payments back won) beside cash
tables, and refuses any stake that would pass it, a decision's too, also when two stakes of the
player share one coalesced transaction; a settlement, which pays back on net, is never refused. A
retry of an applied batch answers as recorded. Pools conserved.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from service_runtime.errors import DomainError
from services.cashier.application import Cashier
from services.cashier.holds import HoldScope
from services.cashier.ledger import (
    AccountKind,
    Pool,
    TransferKind,
    TransferRequest,
    TransferStatus,
    bank_account_id,
    jackpot_account_id,
    wallet_account_id,
)
from services.cashier.payments import PaymentSource
from services.cashier.self_limits import BreakKind, LimitKind

from .conftest import FakeClock
from .test_cashier_self_limits import balance, balanced

GRAM = Pool.GRAM
DAY = timedelta(days=1)


async def setup_player(cashier: Cashier, player: str, chips: int) -> None:
    await cashier.fund_house_account(
        request_id=f"bank-{player}", pool=GRAM, account=AccountKind.HOUSE_BANK, amount=100_000, reason="seed"
    )
    await cashier.purchase(
        payment_reference=f"buy-{player}",
        player_id=player,
        source=PaymentSource.GRAM,
        amount_minor=chips * 10**6,
    )


def stake(player: str, transfer_id: str, chips: int) -> TransferRequest:
    return TransferRequest(
        transfer_id,
        wallet_account_id(GRAM, player),
        bank_account_id(GRAM),
        GRAM,
        chips,
        TransferKind.HOUSE_GAME_RESULT,
        transfer_id,
    )


def payment(player: str, transfer_id: str, chips: int) -> TransferRequest:
    return TransferRequest(
        transfer_id,
        bank_account_id(GRAM),
        wallet_account_id(GRAM, player),
        GRAM,
        chips,
        TransferKind.HOUSE_GAME_RESULT,
        transfer_id,
    )


async def applied(
    cashier: Cashier, *requests: TransferRequest, round_in_play: bool = False
) -> list[TransferStatus]:
    outcomes = await cashier.create_transfers(list(requests), linked=True, round_in_play=round_in_play)
    return [o.status for o in outcomes]


async def refused(
    cashier: Cashier, request: TransferRequest, reason: str, *, round_in_play: bool = False
) -> DomainError:
    before = await balance(cashier, request.debit_account_id.rsplit(":", 1)[1])
    with pytest.raises(DomainError) as error:
        await cashier.create_transfers([request], linked=True, round_in_play=round_in_play)
    assert error.value.reason == reason, error.value
    # Nothing recorded: the same id goes through once the refusal no longer holds.
    assert await cashier.lookup_transfers([request.transfer_id]) == []
    assert await balance(cashier, request.debit_account_id.rsplit(":", 1)[1]) == before
    return error.value


CREATED, EXISTS = [TransferStatus.CREATED], [TransferStatus.EXISTS]


async def test_a_break_refuses_a_new_round_but_the_round_in_play_finishes(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    cashier = any_cashier
    await setup_player(cashier, "ann", 1000)
    assert await applied(cashier, stake("ann", "r1:in", 100)) == CREATED
    await cashier.start_break(player_id="ann", request_id="b1", kind=BreakKind.COOLING_OFF, days=1)
    # The round dealt before the break: its decision's stake and its payment go through.
    assert await applied(cashier, stake("ann", "r1:call", 200), round_in_play=True) == CREATED
    assert await applied(cashier, payment("ann", "r1:win", 600), round_in_play=True) == CREATED
    # A retry of its opening stakes answers as recorded.
    assert await applied(cashier, stake("ann", "r1:in", 100)) == EXISTS
    error = await refused(cashier, stake("ann", "r2:in", 100), "COOLING_OFF")
    assert error.metadata["until"] == (clock.now + DAY).isoformat()
    assert await balance(cashier, "ann") == 1300
    await balanced(cashier)
    clock.advance(DAY + timedelta(seconds=1))
    assert await applied(cashier, stake("ann", "r2:in", 100)) == CREATED
    # A self-exclusion says so.
    await cashier.start_break(player_id="ann", request_id="b2", kind=BreakKind.SELF_EXCLUSION, days=183)
    await refused(cashier, stake("ann", "r3:in", 100), "SELF_EXCLUDED")
    await balanced(cashier)


async def test_a_full_hold_refuses_a_new_round_and_a_withdrawals_hold_does_not(any_cashier: Cashier) -> None:
    cashier = any_cashier
    await setup_player(cashier, "bea", 1000)
    await cashier.set_player_hold(request_id="h1", player_id="bea", held=True, reason="review")
    await refused(cashier, stake("bea", "r1:in", 100), "PLAYER_ON_HOLD")
    await cashier.set_player_hold(request_id="h2", player_id="bea", held=False, reason="cleared")
    await cashier.set_player_hold(
        request_id="h3", player_id="bea", held=True, reason="dumping", scope=HoldScope.WITHDRAWALS
    )
    assert await applied(cashier, stake("bea", "r1:in", 100)) == CREATED
    await balanced(cashier)


async def test_a_loss_limit_counts_house_games_and_stops_any_stake_that_would_pass_it(
    any_cashier: Cashier, clock: FakeClock
) -> None:
    cashier = any_cashier
    await setup_player(cashier, "cid", 1000)
    await cashier.set_self_limit(
        player_id="cid", request_id="l1", pool=GRAM, kind=LimitKind.LOSS_DAILY, amount=300
    )
    assert await applied(cashier, stake("cid", "r1:in", 100)) == CREATED
    assert await applied(cashier, stake("cid", "r1:call", 100), round_in_play=True) == CREATED  # 200 lost
    # A decision's stake that would pass the limit is refused too (the player can still fold).
    error = await refused(cashier, stake("cid", "r1:raise", 150), "SELF_LIMIT_REACHED", round_in_play=True)
    assert error.metadata == {"kind": "LOSS_DAILY", "limit": "300", "remaining": "100"}
    assert await applied(cashier, payment("cid", "r1:win", 50), round_in_play=True) == CREATED  # 150 lost
    # Cash tables and house games count together: this buy-in would take the day past 300.
    with pytest.raises(DomainError) as seated:
        await cashier.open_seat_session(
            session_id="t1/cid-1",
            player_id="cid",
            table_id="t1",
            seat_index=0,
            pool=GRAM,
            buy_in_amount=200,
            min_buy_in=1,
            max_buy_in=10_000,
        )
    assert (seated.value.reason, seated.value.metadata["remaining"]) == ("SELF_LIMIT_REACHED", "150")
    assert await applied(cashier, stake("cid", "r2:in", 150)) == CREATED
    view = await cashier.self_limits("cid")
    [daily] = view.limits
    assert (daily.used, daily.remaining) == (300, 0)
    await refused(cashier, stake("cid", "r3:in", 1), "SELF_LIMIT_REACHED")
    # Another pool's stakes are not this limit's.
    await cashier.purchase(
        payment_reference="mpx", player_id="cid", source=PaymentSource.MPX, amount_minor=500 * 10**8
    )
    await cashier.fund_house_account(
        request_id="bank-mpx", pool=Pool.MPX, account=AccountKind.HOUSE_BANK, amount=1000, reason="seed"
    )
    mpx = TransferRequest(
        "m1:in",
        wallet_account_id(Pool.MPX, "cid"),
        bank_account_id(Pool.MPX),
        Pool.MPX,
        400,
        TransferKind.HOUSE_GAME_RESULT,
        "m1",
    )
    assert await applied(cashier, mpx) == CREATED
    clock.advance(DAY + timedelta(seconds=1))
    assert await applied(cashier, stake("cid", "r3:in", 300)) == CREATED
    await balanced(cashier)


async def test_a_settlement_that_pays_back_on_net_is_never_refused_at_the_limit(
    any_cashier: Cashier,
) -> None:
    """A Russian Poker round whose bonus is lost pays its box back from the bank and passes a quarter of
    the bonus on to the jackpot from the wallet: on net a payment, whatever the limit or a break."""
    cashier = any_cashier
    await setup_player(cashier, "dot", 1000)
    await cashier.fund_house_account(
        request_id="jackpot", pool=GRAM, account=AccountKind.JACKPOT, amount=1000, reason="seed"
    )
    await cashier.set_self_limit(
        player_id="dot", request_id="l1", pool=GRAM, kind=LimitKind.LOSS_DAILY, amount=100
    )
    assert await applied(cashier, stake("dot", "r1:in", 100)) == CREATED  # exactly at the limit
    await cashier.start_break(player_id="dot", request_id="b1", kind=BreakKind.COOLING_OFF, days=1)
    to_jackpot = TransferRequest(
        "r1:jc",
        wallet_account_id(GRAM, "dot"),
        jackpot_account_id(GRAM),
        GRAM,
        5,
        TransferKind.HOUSE_GAME_RESULT,
        "r1",
    )
    settled = await applied(cashier, payment("dot", "r1:out", 20), to_jackpot, round_in_play=True)
    assert settled == CREATED * 2
    assert await balance(cashier, "dot") == 915
    await balanced(cashier)


async def test_two_stakes_of_one_player_in_one_coalesced_transaction_pass_a_limit_only_once(
    any_cashier: Cashier,
) -> None:
    """The cashier decides concurrent CreateTransfers batches in one transaction: the second stake of
    a player counts the first, not yet committed (a reviewer had both pass a limit of 100)."""
    cashier = any_cashier
    await setup_player(cashier, "eve", 1000)
    await cashier.set_self_limit(
        player_id="eve", request_id="l1", pool=GRAM, kind=LimitKind.LOSS_DAILY, amount=100
    )
    answers = await asyncio.gather(
        *(cashier.create_transfers([stake("eve", f"t{n}:in", 80)], linked=True) for n in range(4)),
        return_exceptions=True,
    )
    passed = [a for a in answers if not isinstance(a, BaseException)]
    refusals = [a for a in answers if isinstance(a, DomainError)]
    assert len(passed) == 1, answers
    assert [r.reason for r in refusals] == ["SELF_LIMIT_REACHED"] * 3
    assert await balance(cashier, "eve") == 920
    [daily] = (await cashier.self_limits("eve")).limits
    assert daily.used == 80
    await balanced(cashier)
