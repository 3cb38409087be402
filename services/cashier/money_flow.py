"""What each ledger operation the cashier applies adds to the money figures of a pool (no I/O).

An operator runs a poker room by a few sums of the journal: what players bought and withdrew, what
the hands took as rake, what the house put into its bank and what its games took and paid. The
cashier works them out here from the operations it has just applied and hands them to a
`FlowObserver` once their transaction has committed (`unit_of_work.py`), so each operation is
counted once: an idempotent retry applies nothing, a refusal moves nothing, and a transaction rolled
back and run again reports only the run that committed. The process's observer turns them into
Prometheus counters (`money_metrics.py`); this module knows nothing of that.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from services.cashier.ledger import (
    Pool,
    TransferOutcome,
    TransferRequest,
    TransferStatus,
    bank_account_id,
    is_mint_account_id,
    jackpot_account_id,
)
from services.cashier.settlement import HandResult


class Figure(enum.Enum):
    """One money figure of a pool: a number of operations, or chips."""

    PURCHASES = "purchases"
    PURCHASED_CHIPS = "purchased_chips"
    # A withdrawal the cashier applied: the chips left the player's wallet for the mint (burned) and
    # the payments gateway pays them out. The cashier has no "requested" or "paid" state of its own.
    WITHDRAWALS = "withdrawals"
    WITHDRAWN_CHIPS = "withdrawn_chips"
    HANDS_SETTLED = "hands_settled"
    RAKE_CHIPS = "rake_chips"
    # What the losing seats of a settled hand paid (to the winners, the rake and the house bank): the
    # sum of its negative net results. The cashier sees net results, not what each seat put into the
    # pot, so a winner's own chips coming back to them are not in it.
    HAND_LOSS_CHIPS = "hand_loss_chips"
    HOUSE_FUNDED_CHIPS = "house_funded_chips"
    HOUSE_DEFUNDED_CHIPS = "house_defunded_chips"
    # Transfers between players' wallets and the house bank or jackpot (the house games' stakes and
    # jackpot contributions one way; wins, jackpot payouts and refunds of rounds never dealt the other).
    HOUSE_GAME_FROM_PLAYERS_CHIPS = "house_game_from_players_chips"
    HOUSE_GAME_TO_PLAYERS_CHIPS = "house_game_to_players_chips"


@dataclass(frozen=True, slots=True)
class Flow:
    """`amount` added to `figure` of `pool` (1 for a count of operations)."""

    pool: Pool
    figure: Figure
    amount: int


class FlowObserver(Protocol):
    """Who hears of the money figures: the process's metrics, or nobody."""

    def applied(self, flows: Sequence[Flow]) -> None:
        """Operations whose transaction has just committed, each reported once."""

    def withdrawal_refused(self, pool: Pool, reason: str) -> None:
        """A Withdraw call answered FAILED_PRECONDITION with `reason` (every such call: a refusal
        recorded with its reference is refused again, the same way, on each retry)."""


class IgnoredFlows:
    """The observer of a cashier nobody watches (tests, tools)."""

    def applied(self, flows: Sequence[Flow]) -> None:
        return None

    def withdrawal_refused(self, pool: Pool, reason: str) -> None:
        return None


def _applied_now(outcome: TransferOutcome) -> tuple[Pool, TransferRequest] | None:
    """The pool and request of a transfer this operation applied; None for an id seen before (a
    retry, a conflict, a recorded refusal) and for a refusal recorded now."""
    if outcome.status is not TransferStatus.CREATED or outcome.record is None:
        return None
    request = outcome.record.request
    return None if request.pool is None else (request.pool, request)


def _payment_flows(outcome: TransferOutcome, operations: Figure, chips: Figure) -> list[Flow]:
    applied = _applied_now(outcome)
    if applied is None:
        return []
    pool, request = applied
    return [Flow(pool, operations, 1), Flow(pool, chips, request.amount)]


def purchase_flows(outcome: TransferOutcome) -> list[Flow]:
    """A purchase applied now: one purchase and its chips."""
    return _payment_flows(outcome, Figure.PURCHASES, Figure.PURCHASED_CHIPS)


def withdrawal_flows(outcome: TransferOutcome) -> list[Flow]:
    """A withdrawal applied now: one withdrawal and its chips."""
    return _payment_flows(outcome, Figure.WITHDRAWALS, Figure.WITHDRAWN_CHIPS)


def funding_flows(outcome: TransferOutcome) -> list[Flow]:
    """A house funding applied now: chips minted into the bank or jackpot, or burned out of it."""
    applied = _applied_now(outcome)
    if applied is None:
        return []
    pool, request = applied
    minted = is_mint_account_id(request.debit_account_id)
    return [Flow(pool, Figure.HOUSE_FUNDED_CHIPS if minted else Figure.HOUSE_DEFUNDED_CHIPS, request.amount)]


def settlement_flows(hand: HandResult) -> list[Flow]:
    """A hand settled now (its settlement applied, not a retry of it, not refused)."""
    losses = sum(-result.net_amount for result in hand.seat_results if result.net_amount < 0)
    flows = [Flow(hand.pool, Figure.HANDS_SETTLED, 1)]
    if hand.rake:
        flows.append(Flow(hand.pool, Figure.RAKE_CHIPS, hand.rake))
    if losses:
        flows.append(Flow(hand.pool, Figure.HAND_LOSS_CHIPS, losses))
    return flows


def house_game_flows(outcomes: Iterable[TransferOutcome]) -> list[Flow]:
    """Chips the transfers applied now moved between players' wallets and the house bank or jackpot
    (the house games' rounds; the bank's reservations with its cover account are not money that
    changes hands, and seat accounts are the hand settlements')."""
    flows = []
    for outcome in outcomes:
        applied = _applied_now(outcome)
        if applied is None:
            continue
        pool, request = applied
        house = (bank_account_id(pool), jackpot_account_id(pool))
        wallets = f"wallet:{pool.value}:"
        if request.credit_account_id in house and request.debit_account_id.startswith(wallets):
            flows.append(Flow(pool, Figure.HOUSE_GAME_FROM_PLAYERS_CHIPS, request.amount))
        elif request.debit_account_id in house and request.credit_account_id.startswith(wallets):
            flows.append(Flow(pool, Figure.HOUSE_GAME_TO_PLAYERS_CHIPS, request.amount))
    return flows
