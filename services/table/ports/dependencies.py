"""The table's view of the cashier and fairness: the few calls it makes, with typed results and errors.

Every id sent here is derived (seat session from table, player and sit request; settlement from the
hand id; fairness request from the table and its hand counter), so a call retried after an outage,
or by a restarted shard, produces the same effect once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.errors import FailedPrecondition
from services.table.cash.hand_record import SeenPositions
from services.table.house.house_round import PlannedTransfer
from services.table.ports.remote import translate_rpc_error


@dataclass(frozen=True, slots=True)
class SeatSession:
    session_id: str
    player_id: str
    seat: int  # public seat number, from 1
    stack: int
    existing: bool = False


@dataclass(frozen=True, slots=True)
class Commitment:
    hand_id: str
    commitment: str
    # The fairness version the hand is dealt under (0 when not known): from 3 on, client seeds come
    # hash first (docs/fairness.md, the seed flow at a table).
    version: int = 0
    # Where fairness has the hand (fairness_pb2.HandState): COMMITTED for a new one; a request id that
    # committed before gets its first hand again, which may have been dealt, finished or voided since.
    state: int = fairness_pb2.HAND_STATE_COMMITTED

    @property
    def fresh(self) -> bool:
        """Still open for entropy: never dealt, never ended."""
        return self.state in (fairness_pb2.HAND_STATE_UNSPECIFIED, fairness_pb2.HAND_STATE_COMMITTED)

    @property
    def voided(self) -> bool:
        return self.state == fairness_pb2.HAND_STATE_VOIDED


class CashierClient:
    """Seat sessions and settlements through the cashier's gRPC API (service token, subject `table`)."""

    def __init__(self, stub: cashier_pb2_grpc.CashierServiceStub) -> None:
        self._stub = stub

    async def open_seat_session(
        self,
        *,
        session_id: str,
        player_id: str,
        table_id: str,
        seat: int,
        pool: int,
        buy_in: int,
        min_buy_in: int,
        max_buy_in: int,
    ) -> SeatSession:
        request = cashier_pb2.OpenSeatSessionRequest(
            session_id=session_id,
            player_id=player_id,
            table_id=table_id,
            seat_index=seat,
            pool=pool,  # type: ignore[arg-type]
            buy_in_amount=buy_in,
            min_buy_in=min_buy_in,
            max_buy_in=max_buy_in,
        )
        try:
            reply = await self._stub.OpenSeatSession(request)
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "cashier") from error
        session = reply.seat_session
        return SeatSession(
            session.session_id, session.player_id, int(session.seat_index), int(session.stack), reply.existing
        )

    async def settle_hand(
        self, *, hand_id: str, table_id: str, pool: int, nets: list[tuple[str, int]], rake: int
    ) -> None:
        request = cashier_pb2.SettleHandRequest(
            hand_id=hand_id,
            table_id=table_id,
            pool=pool,  # type: ignore[arg-type]
            seat_results=[cashier_pb2.SeatResult(session_id=s, net_amount=n) for s, n in nets],
            rake=rake,
        )
        try:
            await self._stub.SettleHand(request)
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "cashier") from error

    async def cash_out(self, session_id: str) -> int:
        try:
            reply = await self._stub.CashOutSeatSession(
                cashier_pb2.CashOutSeatSessionRequest(session_id=session_id)
            )
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "cashier") from error
        return int(reply.seat_session.cash_out_amount)

    async def hand_settled(self, hand_id: str) -> bool:
        """True when the cashier applied the hand's settlement (its first transfer exists)."""
        try:
            reply = await self._stub.LookupTransfers(
                cashier_pb2.LookupTransfersRequest(transfer_ids=[f"hand:{hand_id}:0"])
            )
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "cashier") from error
        return any(r.status == cashier_pb2.TRANSFER_STATUS_EXISTS for r in reply.results)

    async def open_sessions(self, table_id: str) -> list[SeatSession]:
        try:
            reply = await self._stub.ListOpenSeatSessions(
                cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id)
            )
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "cashier") from error
        return [
            SeatSession(s.session_id, s.player_id, int(s.seat_index), int(s.stack))
            for s in reply.seat_sessions
        ]


class FairnessClient:
    """Commit, player entropy, seal and reveal of each hand (service token, subject `table`)."""

    def __init__(self, stub: fairness_pb2_grpc.FairnessServiceStub) -> None:
        self._stub = stub

    async def commit(
        self,
        request_id: str,
        table_id: str,
        *,
        private_to: str = "",
        private_room: bool = False,
        shuffle_version: int = 0,
    ) -> Commitment:
        """`private_to`: the one player of a house-game round, who alone (with admins) may know of it;
        `private_room`: the hand is a private room's, known to the players dealt in and admins only;
        `shuffle_version` 2 for a room that reveals the whole seed, 0 for the default (version 3)."""
        request = fairness_pb2.CommitHandRequest(
            request_id=request_id,
            table_id=table_id,
            participant_ids=[private_to] if private_to else [],
            participants_only=bool(private_to),
            private_room=private_room,
            shuffle_version=shuffle_version,
        )
        try:
            reply = await self._stub.CommitHand(request)
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "fairness") from error
        return Commitment(
            reply.commitment.hand_id,
            reply.commitment.commitment,
            int(reply.commitment.shuffle_version),
            int(reply.commitment.state),
        )

    async def add_entropy(
        self, hand_id: str, seat: int, player_id: str, seed: bytes = b"", *, seed_hash: str = ""
    ) -> None:
        """The seat's client seed, or (version 3, first step) only its hash."""
        request = fairness_pb2.AddPlayerEntropyRequest(
            hand_id=hand_id, seat=seat, player_id=player_id, client_seed=seed, client_seed_hash=seed_hash
        )
        try:
            await self._stub.AddPlayerEntropy(request)
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "fairness") from error

    async def seal(self, hand_id: str, participants: Sequence[str] = ()) -> tuple[int, ...]:
        """The deck; `participants` are the players dealt in, who alone may read the reveal."""
        request = fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=list(participants))
        try:
            reply = await self._stub.SealHand(request)
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "fairness") from error
        return tuple(int(card.index) for card in reply.deck)

    async def reveal(self, hand_id: str, *, voided: bool = False, seen: SeenPositions | None = None) -> None:
        """End the hand; `seen` says which deal positions were public and which each player saw, so
        fairness (version 3) opens to each reader exactly the cards they saw."""
        outcome = fairness_pb2.HAND_OUTCOME_VOIDED if voided else fairness_pb2.HAND_OUTCOME_FINISHED
        request = fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=outcome)
        if seen is not None:
            request.public_positions.extend(seen.public)
            request.seen.extend(
                fairness_pb2.SeenPositions(player_id=player, positions=positions)
                for player, positions in seen.seen
            )
        try:
            await self._stub.RevealHand(request)
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "fairness") from error


# ---------------------------------------------------------------------- house games (issue 16)

_POOL_NAMES = {1: "GRAM", 2: "MPX"}  # poker.common.v1.ChipPool


def wallet_account(pool: int, player_id: str) -> str:
    return f"wallet:{_POOL_NAMES[pool]}:{player_id}"


def house_account(pool: int, which: str) -> str:
    """`house:bank:<POOL>`, `house:jackpot:<POOL>` or `house:cover:<POOL>` (`which`: "bank", "jackpot"
    or "cover", the bank's reservations)."""
    return f"house:{which}:{_POOL_NAMES[pool]}"


@dataclass(frozen=True, slots=True)
class HouseTransfer:
    """One transfer of a house-game round between a wallet and a house account."""

    transfer_id: str
    debit: str
    credit: str
    amount: int
    reference: str


def house_transfer(pool: int, player: str, planned: PlannedTransfer) -> HouseTransfer:
    """A round's planned transfer between the ledger's accounts: the house account and its counter
    (the player's wallet, or the bank for the cover's reservations and releases)."""
    house = house_account(pool, planned.house_account)
    counter = (
        wallet_account(pool, player) if planned.counter == "wallet" else house_account(pool, planned.counter)
    )
    debit, credit = (house, counter) if planned.to_player else (counter, house)
    return HouseTransfer(planned.transfer_id, debit, credit, planned.amount, planned.reference)


class HouseCashier:
    """The cashier calls of a house-game table: house balances and linked batches of round transfers."""

    def __init__(self, stub: cashier_pb2_grpc.CashierServiceStub) -> None:
        self._stub = stub

    async def house_balances(self, pool: int) -> tuple[int, int, int]:
        """(house bank, jackpot, reserved) of the pool: the bank's free money, the jackpot, and what
        the pool's open rounds reserved from the bank (the cover account)."""
        try:
            reply = await self._stub.GetHouseBalances(cashier_pb2.GetHouseBalancesRequest(pool=pool))  # type: ignore[arg-type]
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "cashier") from error
        return int(reply.bank_balance), int(reply.jackpot_balance), int(reply.reserved_balance)

    async def transfer(
        self, pool: int, table_id: str, transfers: list[HouseTransfer], *, round_in_play: bool = False
    ) -> None:
        """Apply the transfers as one linked batch; a retry with the same ids is harmless. A refusal
        (INSUFFICIENT_FUNDS, ...) is FAILED_PRECONDITION with the culprit's reason. The cashier
        refuses stakes past the player's loss limit, and a new round's stakes during a hold or a break
        the player took; `round_in_play`: a batch of a round already dealt (a decision's stake, the
        settlement), which a hold or a break lets finish."""
        if not transfers:
            return
        request = cashier_pb2.CreateTransfersRequest(
            linked=True,
            round_in_play=round_in_play,
            transfers=[
                cashier_pb2.Transfer(
                    transfer_id=t.transfer_id,
                    debit_account_id=t.debit,
                    credit_account_id=t.credit,
                    pool=pool,  # type: ignore[arg-type]
                    amount=t.amount,
                    kind=cashier_pb2.TRANSFER_KIND_HOUSE_GAME_RESULT,
                    reference=t.reference,
                    table_id=table_id,
                )
                for t in transfers
            ],
        )
        try:
            reply = await self._stub.CreateTransfers(request)
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "cashier") from error
        applied = (cashier_pb2.TRANSFER_STATUS_CREATED, cashier_pb2.TRANSFER_STATUS_EXISTS)
        if all(r.status in applied for r in reply.results):
            return
        failed = [r for r in reply.results if r.status not in applied]
        culprit = next((r for r in failed if r.reason != "LINKED_TRANSFER_FAILED"), failed[0])
        reason = culprit.reason or ("IDEMPOTENCY_CONFLICT" if culprit.field else "INSUFFICIENT_FUNDS")
        raise FailedPrecondition(
            reason,
            f"the cashier refused the transfer: {reason}",
            {"dependency": "cashier", "transfer_id": culprit.transfer_id},
        )

    async def applied(self, transfer_ids: list[str]) -> dict[str, bool]:
        """For each id: True when applied, False when recorded as failed; absent ids are unknown."""
        if not transfer_ids:
            return {}
        try:
            reply = await self._stub.LookupTransfers(
                cashier_pb2.LookupTransfersRequest(transfer_ids=transfer_ids)
            )
        except grpc.aio.AioRpcError as error:
            raise translate_rpc_error(error, "cashier") from error
        return {r.transfer_id: r.status == cashier_pb2.TRANSFER_STATUS_EXISTS for r in reply.results}
