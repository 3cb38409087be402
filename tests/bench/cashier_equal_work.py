"""The cashier benchmark's equal-work floors: pgbench scripts that send exactly the statements one
6-seat settlement (and one batch of 100 transfers) needs, in one transaction each.

The statements are not written by hand: they are captured from the cashier itself (every hot unit of
work sends two, the lock-and-load with its BEGIN and the write with its COMMIT, through
`storage._driver_execute`), with the values of one real settlement or batch, and replayed by pgbench
with the same two round trips (pipelines). Ids that must differ per transaction (hand and transfer
ids) get a random number per transaction; each pgbench client works on its own table or its own
wallets, as each benchmark caller does. The floor locks, reads and writes the same rows with the same
statement text as the cashier; what it leaves out is the cashier's Python: deciding, encoding, and
waiting for the answers. It runs in a database of its own, since replaying fixed balance totals
would break the audit of the benchmark's database.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from services.cashier import storage
from services.cashier.application import Cashier
from services.cashier.ledger import Pool, TransferKind, TransferRequest, TransferStatus
from services.cashier.payments import PaymentSource
from services.cashier.settlement import SeatResult, normalise_hand_result

# Marks in the captured values that each pgbench transaction replaces: its client and a fresh number.
CLIENT_MARK = "XCX"
UNIQUE_MARK = "XIDX"
SEATS = 6
BATCH = 100
# pgbench reads `:name` as a variable anywhere in a command, quoted or not (account ids and times hold
# colons), so the literals carry this instead and `translate` restores the colons on the server.
_COLON = "^"

Statement = tuple[str, Mapping[str, Any]]


@dataclass(frozen=True)
class EqualWorkScripts:
    settlement: str
    batch: str
    settlement_statements: list[Statement]
    batch_statements: list[Statement]


async def capture(work: Callable[[], Awaitable[object]]) -> list[Statement]:
    """The (sql, parameters) the cashier sends to PostgreSQL while `work` runs."""
    sent: list[Statement] = []
    original = storage._driver_execute

    async def recording(conn: Any, sql: str, params: Mapping[str, Any], **options: Any) -> list[Any]:
        sent.append((sql, dict(params)))
        return await original(conn, sql, params, **options)

    storage._driver_execute = recording
    try:
        await work()
    finally:
        storage._driver_execute = original
    return sent


def _expression(value: Any) -> str:
    """A SQL expression for one captured parameter, with the per-transaction marks replaced."""
    if isinstance(value, list):
        quoted = ('"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"' for item in value)
        text = "{" + ",".join(quoted) + "}"
    elif isinstance(value, str):
        text = value
    else:
        raise TypeError(f"no pgbench form for a parameter of type {type(value).__name__}")
    if _COLON in text:
        raise ValueError(f"a captured value holds {_COLON!r}, the stand-in for ':'")
    literal = "'" + text.replace("'", "''").replace(":", _COLON) + "'"
    return (
        f"replace(replace(translate({literal}, '{_COLON}', chr(58)), '{UNIQUE_MARK}', CAST(:uid AS text)), "
        f"'{CLIENT_MARK}', CAST(:client_id AS text))"
    )


def render(statement: Statement) -> str:
    sql, params = statement
    rendered = re.sub(r"%\((\w+)\)s", lambda match: _expression(params[match.group(1)]), sql)
    if ":" in rendered.replace(":uid", "").replace(":client_id", ""):
        raise ValueError("a colon is left in a statement: pgbench would read it as a variable")
    return rendered.strip()


def pgbench_script(statements: list[Statement]) -> str:
    """One transaction per run of the script, in the cashier's two round trips."""
    if len(statements) != 2:
        raise RuntimeError(f"expected the lock-and-load and the write, captured {len(statements)} statements")
    lock, write = (render(statement) for statement in statements)
    return "\n".join(
        [
            r"\set uid random(1, 9000000000000000000)",
            r"\startpipeline",
            "BEGIN;",
            f"{lock};",
            r"\endpipeline",
            r"\startpipeline",
            f"{write};",
            "COMMIT;",
            r"\endpipeline",
            "",
        ]
    )


def _seat_player(mark: str, seat: int) -> str:
    return f"floorp-{mark}-{seat}"


def _wallet_player(mark: str, index: int) -> str:
    return f"floorw-{mark}-{index}"


async def prepare_scripts(cashier: Cashier, clients: int) -> EqualWorkScripts:
    """Fund and seat one table and 2 x BATCH wallets per pgbench client (and one set to capture with),
    then capture one settlement and one batch of BATCH transfers."""
    marks = [CLIENT_MARK, *(str(client) for client in range(clients))]
    limit = asyncio.Semaphore(16)

    async def fund(player: str) -> None:
        async with limit:
            await cashier.purchase(
                payment_reference=f"fund-{player}", player_id=player, source=PaymentSource.GRAM,
                amount_minor=10**9 * 10**6,
            )  # fmt: skip

    players = [_seat_player(m, s) for m in marks for s in range(SEATS)]
    players += [_wallet_player(m, k) for m in marks for k in range(2 * BATCH)]
    await asyncio.gather(*(fund(player) for player in players))
    for mark in marks:
        for seat in range(SEATS):
            await cashier.open_seat_session(
                session_id=f"floor-{mark}/{seat}", player_id=_seat_player(mark, seat), table_id=f"floor-{mark}",
                seat_index=seat, pool=Pool.GRAM, buy_in_amount=10**8, min_buy_in=1, max_buy_in=10**9,
            )  # fmt: skip

    async def settle(hand_id: str) -> None:
        # The benchmark's hands: five seats lose to one, with rake.
        losses = [10, 20, 30, 40, 50, 0]
        rake = min(sum(losses) // 20, 30)
        results = [
            SeatResult(f"floor-{CLIENT_MARK}/{seat}", sum(losses) - rake if loss == 0 else -loss)
            for seat, loss in enumerate(losses)
        ]
        hand = normalise_hand_result(hand_id, f"floor-{CLIENT_MARK}", Pool.GRAM, results, rake, 0)
        _, existing = await cashier.settle_hand(hand)
        if existing:
            raise RuntimeError(f"hand {hand_id} was settled before")

    async def batch() -> None:
        requests = [
            TransferRequest(
                f"floor-batch-{UNIQUE_MARK}-{k}",
                f"wallet:GRAM:{_wallet_player(CLIENT_MARK, 2 * k)}",
                f"wallet:GRAM:{_wallet_player(CLIENT_MARK, 2 * k + 1)}",
                Pool.GRAM,
                1 + k % 100,
                TransferKind.ADJUSTMENT,
            )
            for k in range(BATCH)
        ]
        outcomes = await cashier.create_transfers(requests, linked=False)
        if any(outcome.status is not TransferStatus.CREATED for outcome in outcomes):
            raise RuntimeError("the captured batch was not created")

    await settle(f"floor-{CLIENT_MARK}:warm-up")
    settlement = await capture(lambda: settle(f"floor-{CLIENT_MARK}:hand-{UNIQUE_MARK}"))
    transfers = await capture(batch)
    return EqualWorkScripts(pgbench_script(settlement), pgbench_script(transfers), settlement, transfers)
