"""What finance reads of the money that came in and went out (issue 38): the play figures of a window
(hands, rake, purchases, withdrawals per pool) and the payouts list (the withdrawals applied, newest
first), which finance reconciles with the payments system. Reads only; no chip moves here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.errors import InvalidArgument
from services.cashier import storage
from services.cashier.ledger import Pool, TransferKind
from services.cashier.pages import page_position
from services.cashier.pages import page_token as page_token_of
from services.cashier.storage import WithdrawalRow
from services.cashier.unit_of_work import UnitOfWork

# GetPlayFigures looks back at most this far (the dashboard asks for an hour and a day, the money
# screen for 30 days).
PLAY_FIGURES_DAYS = 31
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50


@dataclass(frozen=True)
class PlayFigures:
    """One pool's figures over a window."""

    hands_settled: int = 0
    rake: int = 0
    purchases: int = 0
    chips_purchased: int = 0
    withdrawals: int = 0
    chips_withdrawn: int = 0


def _page_scope(pool: Pool | None, since: datetime | None) -> str:
    """What a page token was issued for: the pool and the window's start (a token of another filter
    is refused, never continued under the wrong one)."""
    start = "ever" if since is None else str(int(since.timestamp() * 1_000_000))
    return f"{pool.value if pool else 'ALL'}-{start}"


class PayoutUseCases(UnitOfWork):
    async def play_figures(self, since: datetime) -> tuple[dict[Pool, PlayFigures], datetime]:
        """Every pool's figures since `since` (within the last 31 days), and when they were read."""
        now = self._clock()
        if since > now or now - since > timedelta(days=PLAY_FIGURES_DAYS):
            raise InvalidArgument(
                "FIELD_INVALID",
                f"since is a moment of the last {PLAY_FIGURES_DAYS} days, not in the future",
                {"field": "since"},
            )

        async def work(
            conn: AsyncConnection,
        ) -> tuple[dict[Pool, tuple[int, int]], dict[tuple[Pool, str], tuple[int, int]]]:
            return await storage.play_figures(conn, since), await storage.payment_figures(conn, since)

        play, payments = await self._snapshot(work)
        figures = {}
        for pool in Pool:
            hands, rake = play.get(pool, (0, 0))
            bought, chips_in = payments.get((pool, TransferKind.PURCHASE.value), (0, 0))
            paid, chips_out = payments.get((pool, TransferKind.WITHDRAWAL.value), (0, 0))
            figures[pool] = PlayFigures(hands, rake, bought, chips_in, paid, chips_out)
        return figures, now

    async def list_withdrawals(
        self, pool: Pool | None, since: datetime | None, *, page_size: int, page_token: str
    ) -> tuple[list[WithdrawalRow], str]:
        """The withdrawals applied, newest first; (the page, the next page's token)."""
        if not 0 <= page_size <= MAX_PAGE_SIZE:
            raise InvalidArgument(
                "FIELD_INVALID", f"page_size is 0 to {MAX_PAGE_SIZE}", {"field": "page_size"}
            )
        if since is not None and since > self._clock():
            raise InvalidArgument("FIELD_INVALID", "since is in the future", {"field": "since"})
        size = page_size or DEFAULT_PAGE_SIZE
        scope = _page_scope(pool, since)
        before = page_position(page_token, scope)

        async def work(conn: AsyncConnection) -> tuple[list[WithdrawalRow], str]:
            rows = await storage.withdrawals_page(
                conn, pool=pool, since=since, before_seq=before, limit=size + 1
            )
            page, more = rows[:size], len(rows) > size
            return page, page_token_of(scope, page[-1].seq) if more else ""

        return await self._snapshot(work)
