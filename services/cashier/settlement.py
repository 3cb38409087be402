"""Hand settlement (no I/O): turn each seat's net result into one linked batch with derived ids.

The table reports a net change per seat session, the rake and, for house games, the house bank's
change; they must sum to zero. Losers (and the house bank when it pays) are matched to winners, then
the rake account, then the house bank, in a fixed order, so the same hand always yields the same
transfers with ids `hand:<hand_id>:<n>`, whichever shard settles it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from service_runtime.errors import FailedPrecondition, InvalidArgument
from services.cashier.ledger import (
    MAX_HAND_ID_LENGTH,
    MAX_SESSION_ID_LENGTH,
    MAX_TEXT_LENGTH,
    Pool,
    TransferKind,
    TransferRequest,
    bank_account_id,
    check_amount,
    check_signed_amount,
    check_text,
    rake_account_id,
    seat_account_id,
)

# Seats (or boxes) settled in one hand: with the rake and the house bank, at most 202 transfers, so
# `hand:<hand_id>:<n>` is at most 5 + 100 + 1 + 3 = 109 characters.
MAX_SEAT_RESULTS = 100


@dataclass(frozen=True, slots=True)
class SeatResult:
    session_id: str
    net_amount: int


@dataclass(frozen=True)
class HandResult:
    """The settlement request, normalised: seat results sorted by session id."""

    hand_id: str
    table_id: str
    pool: Pool
    seat_results: tuple[SeatResult, ...]
    rake: int
    house_bank_amount: int

    def seat_results_key(self) -> str:
        """A canonical text form of the seat results, stored to compare retries."""
        return json.dumps([[r.session_id, r.net_amount] for r in self.seat_results], separators=(",", ":"))


# The fields compared when a hand id is settled again, in the order a conflict names them.
SETTLEMENT_FIELDS = ("table_id", "pool", "seat_results", "rake", "house_bank_amount")


def settlement_transfer_id(hand_id: str, index: int) -> str:
    return f"hand:{hand_id}:{index}"


def normalise_hand_result(
    hand_id: str,
    table_id: str,
    pool: Pool | None,
    seat_results: Sequence[SeatResult],
    rake: int,
    house_bank_amount: int,
) -> HandResult:
    """Validate a settlement request; malformed or unbalanced ones are refused and not recorded."""
    check_text(hand_id, "hand_id", MAX_HAND_ID_LENGTH)
    check_text(table_id, "table_id", MAX_TEXT_LENGTH)
    if pool is None:
        raise InvalidArgument("POOL_INVALID", "pool is required", {"field": "pool"})
    if not seat_results:
        raise InvalidArgument("FIELD_REQUIRED", "seat_results is required", {"field": "seat_results"})
    if len(seat_results) > MAX_SEAT_RESULTS:
        raise InvalidArgument(
            "FIELD_INVALID", f"a hand settles at most {MAX_SEAT_RESULTS} seats", {"field": "seat_results"}
        )
    seen: set[str] = set()
    for result in seat_results:
        check_text(result.session_id, "seat_results.session_id", MAX_SESSION_ID_LENGTH)
        if result.session_id in seen:
            raise InvalidArgument(
                "FIELD_INVALID",
                "a session appears twice in seat_results",
                {"field": "seat_results.session_id"},
            )
        seen.add(result.session_id)
        check_signed_amount(result.net_amount, "seat_results.net_amount")
    if rake:
        check_amount(rake, "rake")
    check_signed_amount(house_bank_amount, "house_bank_amount")
    total = sum(r.net_amount for r in seat_results) + rake + house_bank_amount
    if total != 0:
        raise FailedPrecondition(
            "SETTLEMENT_UNBALANCED",
            "seat results, rake and house bank change must sum to zero",
            {"imbalance": str(total)},
        )
    ordered = tuple(sorted(seat_results, key=lambda r: r.session_id))
    return HandResult(hand_id, table_id, pool, ordered, rake, house_bank_amount)


def settlement_transfers(hand: HandResult) -> list[TransferRequest]:
    """The linked batch that moves the hand's chips, matching payers to payees in a fixed order."""
    payers: list[tuple[str, int]] = [
        (seat_account_id(r.session_id), -r.net_amount) for r in hand.seat_results if r.net_amount < 0
    ]
    payees: list[tuple[str, int]] = [
        (seat_account_id(r.session_id), r.net_amount) for r in hand.seat_results if r.net_amount > 0
    ]
    bank = bank_account_id(hand.pool)
    rake_account = rake_account_id(hand.pool, hand.table_id)
    if hand.house_bank_amount < 0:
        payers.append((bank, -hand.house_bank_amount))
    if hand.rake > 0:
        payees.append((rake_account, hand.rake))
    if hand.house_bank_amount > 0:
        payees.append((bank, hand.house_bank_amount))

    transfers: list[TransferRequest] = []
    payer_index = payee_index = 0
    payer_left = payers[0][1] if payers else 0
    payee_left = payees[0][1] if payees else 0
    while payer_index < len(payers) and payee_index < len(payees):
        amount = min(payer_left, payee_left)
        debit, credit = payers[payer_index][0], payees[payee_index][0]
        if credit == rake_account:
            kind = TransferKind.RAKE
        elif bank in (debit, credit):
            kind = TransferKind.HOUSE_GAME_RESULT
        else:
            kind = TransferKind.HAND_RESULT
        transfers.append(
            TransferRequest(
                transfer_id=settlement_transfer_id(hand.hand_id, len(transfers)),
                debit_account_id=debit,
                credit_account_id=credit,
                pool=hand.pool,
                amount=amount,
                kind=kind,
                reference=hand.hand_id,
                table_id=hand.table_id,
            )
        )
        payer_left -= amount
        payee_left -= amount
        if payer_left == 0:
            payer_index += 1
            payer_left = payers[payer_index][1] if payer_index < len(payers) else 0
        if payee_left == 0:
            payee_index += 1
            payee_left = payees[payee_index][1] if payee_index < len(payees) else 0
    return transfers
