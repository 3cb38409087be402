"""Holds for fair-play reviews (rules 17): who is held, in which scope, and what a hold forbids.

A hold moves no chip. A full hold (the operators' HoldPlayer) stops new seat sessions
(FAILED_PRECONDITION PLAYER_ON_HOLD) and withdrawals (FAILED_PRECONDITION
WITHDRAWAL_HELD_FOR_REVIEW: the payout waits; the same payment reference goes through once the
player is released). A withdrawals hold (history's automatic hold of a strong chip-dumping case)
stops the withdrawals only: seats go on. The two scopes are independent: a player may have both, and
releasing one leaves the other. Hands already in play settle and cash out as usual, so every chip
stays where the ledger says. Only the history service sets holds (it audits them); each change is
idempotent by its request id.
"""

from __future__ import annotations

import enum
from collections.abc import Collection

from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.errors import AlreadyExists, FailedPrecondition
from services.cashier import storage
from services.cashier.ledger import check_player_id, check_text
from services.cashier.storage import HoldChange
from services.cashier.unit_of_work import UnitOfWork


class HoldScope(enum.StrEnum):
    """What a hold stops; stored by value."""

    FULL = "FULL"  # no new seat session and no withdrawal
    WITHDRAWALS = "WITHDRAWALS"  # withdrawals only


# Which holds stop what.
STOPS_SEATS: tuple[HoldScope, ...] = (HoldScope.FULL,)
STOPS_WITHDRAWALS: tuple[HoldScope, ...] = (HoldScope.FULL, HoldScope.WITHDRAWALS)


async def refuse_if_held(
    conn: AsyncConnection, player_id: str, reason: str, action: str, scopes: Collection[HoldScope]
) -> None:
    """Raise `reason` (PLAYER_ON_HOLD, WITHDRAWAL_HELD_FOR_REVIEW) when a hold of one of `scopes` is on."""
    for hold in await storage.player_holds_in_force(conn, player_id):
        if hold.scope in scopes:
            raise FailedPrecondition(
                reason,
                f"the player is on hold for a fair-play review: {action}",
                {"player_id": player_id},
            )


class HoldUseCases(UnitOfWork):
    async def set_player_hold(
        self,
        *,
        request_id: str,
        player_id: str,
        held: bool,
        reason: str,
        scope: HoldScope = HoldScope.FULL,
    ) -> tuple[HoldChange, bool]:
        """Hold or release a player in one scope; (the change now in force, whether this request id
        was applied before)."""
        check_text(request_id, "request_id")
        check_player_id(player_id)
        check_text(reason, "reason")

        async def work(conn: AsyncConnection) -> tuple[HoldChange, bool]:
            # The player's hold row first: a try of the same change still in its transaction holds
            # it, and the request id is looked up only once that try has committed (on PostgreSQL a
            # statement after the lock sees it), so a retry answers the change, not the state it left.
            current = await storage.player_hold(conn, player_id, scope.value, lock=True)
            earlier = await storage.hold_change(conn, request_id)
            if earlier is not None:
                for field, value in (
                    ("player_id", player_id),
                    ("held", held),
                    ("reason", reason),
                    ("scope", scope.value),
                ):
                    if getattr(earlier, field) != value:
                        raise AlreadyExists(
                            "IDEMPOTENCY_CONFLICT",
                            "the request id was used with different fields",
                            {"field": field},
                        )
                return earlier, True
            if held and current is not None and current.held:
                raise FailedPrecondition(
                    "PLAYER_ALREADY_ON_HOLD",
                    "the player is already on hold in this scope",
                    {"request_id": current.request_id, "scope": scope.value},
                )
            if not held and (current is None or not current.held):
                raise FailedPrecondition(
                    "PLAYER_NOT_ON_HOLD",
                    "the player is not on hold in this scope",
                    {"player_id": player_id, "scope": scope.value},
                )
            change = HoldChange(request_id, player_id, held, reason, self._clock(), scope.value)
            await storage.record_hold_change(conn, change)
            return change, False

        return await self._transaction(work)
