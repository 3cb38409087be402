"""Operator holds for fair-play reviews (rules 17): who is held, and what a hold forbids.

A hold moves no chip. While a player is held the cashier opens no new seat session for them
(FAILED_PRECONDITION PLAYER_ON_HOLD) and pays out no withdrawal (FAILED_PRECONDITION
WITHDRAWAL_HELD_FOR_REVIEW: the payout waits; the same payment reference goes through once the
player is released). Hands already in play settle and cash out as usual, so every chip stays where
the ledger says. Only the history service sets holds (its admin RPCs audit them); each change is
idempotent by its request id.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.errors import AlreadyExists, FailedPrecondition
from services.cashier import storage
from services.cashier.ledger import check_player_id, check_text
from services.cashier.storage import HoldChange
from services.cashier.unit_of_work import UnitOfWork


async def refuse_if_held(conn: AsyncConnection, player_id: str, reason: str, action: str) -> None:
    """Raise `reason` (PLAYER_ON_HOLD, WITHDRAWAL_HELD_FOR_REVIEW) when the player is on hold."""
    hold = await storage.player_hold(conn, player_id)
    if hold is not None and hold.held:
        raise FailedPrecondition(
            reason, f"the player is on hold for a fair-play review: {action}", {"player_id": player_id}
        )


class HoldUseCases(UnitOfWork):
    async def set_player_hold(
        self, *, request_id: str, player_id: str, held: bool, reason: str
    ) -> tuple[HoldChange, bool]:
        """Hold or release a player; (the change now in force, whether this request id was applied before)."""
        check_text(request_id, "request_id")
        check_player_id(player_id)
        check_text(reason, "reason")

        async def work(conn: AsyncConnection) -> tuple[HoldChange, bool]:
            earlier = await storage.hold_change(conn, request_id)
            if earlier is not None:
                for field, value in (("player_id", player_id), ("held", held), ("reason", reason)):
                    if getattr(earlier, field) != value:
                        raise AlreadyExists(
                            "IDEMPOTENCY_CONFLICT",
                            "the request id was used with different fields",
                            {"field": field},
                        )
                return earlier, True
            current = await storage.player_hold(conn, player_id, lock=True)
            if held and current is not None and current.held:
                raise FailedPrecondition(
                    "PLAYER_ALREADY_ON_HOLD",
                    "the player is already on hold",
                    {"request_id": current.request_id},
                )
            if not held and (current is None or not current.held):
                raise FailedPrecondition(
                    "PLAYER_NOT_ON_HOLD", "the player is not on hold", {"player_id": player_id}
                )
            change = HoldChange(request_id, player_id, held, reason, self._clock())
            await storage.record_hold_change(conn, change)
            return change, False

        return await self._transaction(work)
