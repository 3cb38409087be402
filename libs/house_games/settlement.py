"""Itemised settlement records: what each box staked, won or lost, line by line, in integer chips.

A line is one transfer between three kinds of account that the table service maps onto cashier
accounts: the box owner's seat (PLAYER), the house bank (HOUSE_BANK) and the jackpot (JACKPOT).
Stakes stay with the player until settlement; a stake that is returned or pushes moves nothing; the
jackpot's share of a lost bonus stake (the setting ``jackpot_contribution_percent``) moves
PLAYER_TO_JACKPOT on a line of its own.
Because every line moves chips from one account to another, the sum over players, house bank and
jackpot never changes (proven by the conservation property tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Account(Enum):
    PLAYER = "PLAYER"
    HOUSE_BANK = "HOUSE_BANK"
    JACKPOT = "JACKPOT"


class Direction(Enum):
    """Which way the line's chips move; NO_TRANSFER for a returned or pushed stake."""

    PLAYER_TO_HOUSE = "PLAYER_TO_HOUSE"
    HOUSE_TO_PLAYER = "HOUSE_TO_PLAYER"
    JACKPOT_TO_PLAYER = "JACKPOT_TO_PLAYER"
    PLAYER_TO_JACKPOT = "PLAYER_TO_JACKPOT"
    NO_TRANSFER = "NO_TRANSFER"

    @property
    def source(self) -> Account | None:
        return _SOURCE[self]

    @property
    def destination(self) -> Account | None:
        return _DESTINATION[self]


_SOURCE = {
    Direction.PLAYER_TO_HOUSE: Account.PLAYER,
    Direction.HOUSE_TO_PLAYER: Account.HOUSE_BANK,
    Direction.JACKPOT_TO_PLAYER: Account.JACKPOT,
    Direction.PLAYER_TO_JACKPOT: Account.PLAYER,
    Direction.NO_TRANSFER: None,
}
_DESTINATION = {
    Direction.PLAYER_TO_HOUSE: Account.HOUSE_BANK,
    Direction.HOUSE_TO_PLAYER: Account.PLAYER,
    Direction.JACKPOT_TO_PLAYER: Account.PLAYER,
    Direction.PLAYER_TO_JACKPOT: Account.JACKPOT,
    Direction.NO_TRANSFER: None,
}


class Item(Enum):
    """What a line settles."""

    ANTE = "ANTE"
    BET = "BET"
    EXCHANGE_FEE = "EXCHANGE_FEE"
    SIXTH_CARD_FEE = "SIXTH_CARD_FEE"
    BUY_GAME_FEE = "BUY_GAME_FEE"
    BONUS = "BONUS"
    JACKPOT = "JACKPOT"
    # The part of a lost bonus stake that goes to the jackpot (the rest is the BONUS line's).
    JACKPOT_CONTRIBUTION = "JACKPOT_CONTRIBUTION"
    INSURANCE = "INSURANCE"
    SECOND_COMBINATION = "SECOND_COMBINATION"


class Outcome(Enum):
    WON = "WON"
    LOST = "LOST"
    RETURNED = "RETURNED"


@dataclass(frozen=True, slots=True)
class SettlementLine:
    """One item of a box's settlement.

    ``stake`` is what the player risked on the item (0 for a line that is only a payout, such as the
    jackpot share); ``amount`` is what moves in ``direction``; ``withheld`` is what the table maximum
    payout cut from a win (already deducted from ``amount``); ``reason`` is a stable UPPER_SNAKE code.
    """

    item: Item
    stake: int
    outcome: Outcome
    amount: int
    direction: Direction
    reason: str
    withheld: int = 0

    def delta(self, account: Account) -> int:
        """Signed change of ``account`` caused by this line."""
        if self.direction.destination is account:
            return self.amount
        if self.direction.source is account:
            return -self.amount
        return 0


def lost(item: Item, stake: int, reason: str) -> SettlementLine:
    return SettlementLine(item, stake, Outcome.LOST, stake, Direction.PLAYER_TO_HOUSE, reason)


def returned(item: Item, stake: int, reason: str) -> SettlementLine:
    return SettlementLine(item, stake, Outcome.RETURNED, 0, Direction.NO_TRANSFER, reason)


def won(item: Item, stake: int, amount: int, reason: str) -> SettlementLine:
    return SettlementLine(item, stake, Outcome.WON, amount, Direction.HOUSE_TO_PLAYER, reason)


def fee(item: Item, amount: int, reason: str) -> SettlementLine:
    """A fee is never returned: it goes to the house bank whatever the outcome."""
    return SettlementLine(item, amount, Outcome.LOST, amount, Direction.PLAYER_TO_HOUSE, reason)


@dataclass(frozen=True, slots=True)
class BoxSettlement:
    """All lines of one box, in the order they were settled."""

    box: int
    player: str
    lines: tuple[SettlementLine, ...]

    def delta(self, account: Account) -> int:
        return sum(line.delta(account) for line in self.lines)

    @property
    def player_delta(self) -> int:
        return self.delta(Account.PLAYER)

    @property
    def house_delta(self) -> int:
        return self.delta(Account.HOUSE_BANK)

    @property
    def jackpot_delta(self) -> int:
        return self.delta(Account.JACKPOT)

    @property
    def total_staked(self) -> int:
        return sum(line.stake for line in self.lines)

    @property
    def paid_to_player(self) -> int:
        """Chips the house bank pays this box (the table maximum applies to this, bonus aside)."""
        return sum(line.amount for line in self.lines if line.direction is Direction.HOUSE_TO_PLAYER)

    def line(self, item: Item) -> SettlementLine:
        """The single line for ``item``; raises KeyError if the box has none."""
        for candidate in self.lines:
            if candidate.item is item:
                return candidate
        raise KeyError(item)

    def has(self, item: Item) -> bool:
        return any(line.item is item for line in self.lines)


@dataclass(frozen=True, slots=True)
class Transfer:
    """A net movement of chips for one player, ready to become one cashier transfer."""

    player: str
    source: Account
    destination: Account
    amount: int


@dataclass(frozen=True, slots=True)
class RoundSettlement:
    """Settlement of every box of a round plus the jackpot balance before and after."""

    boxes: tuple[BoxSettlement, ...]
    jackpot_before: int = 0

    @property
    def jackpot_after(self) -> int:
        return self.jackpot_before + self.delta(Account.JACKPOT)

    def delta(self, account: Account) -> int:
        return sum(box.delta(account) for box in self.boxes)

    def box(self, box: int) -> BoxSettlement:
        for settlement in self.boxes:
            if settlement.box == box:
                return settlement
        raise KeyError(box)

    def net_transfers(self) -> tuple[Transfer, ...]:
        """Per player (in box order): the net with the house bank, then the net with the jackpot.

        Applying these moves exactly what applying every line would; the table service can use them
        as the round's linked batch (seat <-> house bank, seat <-> jackpot: a jackpot win less the
        player's contributions, or the contributions less a win).
        """
        house: dict[str, int] = {}
        jackpot: dict[str, int] = {}
        for settlement in self.boxes:
            house.setdefault(settlement.player, 0)
            for line in settlement.lines:
                side = (
                    jackpot
                    if Account.JACKPOT in (line.direction.source, line.direction.destination)
                    else house
                )
                side[settlement.player] = side.get(settlement.player, 0) + line.delta(Account.PLAYER)
        transfers: list[Transfer] = []
        for player, net in house.items():
            for account, amount in ((Account.HOUSE_BANK, net), (Account.JACKPOT, jackpot.get(player, 0))):
                if amount > 0:
                    transfers.append(Transfer(player, account, Account.PLAYER, amount))
                elif amount < 0:
                    transfers.append(Transfer(player, Account.PLAYER, account, -amount))
        return tuple(transfers)

    def player_deltas(self) -> dict[str, int]:
        """Net change per player across all their boxes (what the seat account gains or loses)."""
        totals: dict[str, int] = {}
        for settlement in self.boxes:
            totals[settlement.player] = totals.get(settlement.player, 0) + settlement.player_delta
        return totals


def cap_winnings(lines: list[SettlementLine], table_maximum: int, capped_items: frozenset[Item]) -> None:
    """Cut the house's payouts on ``capped_items`` so that together they do not exceed the maximum.

    Lines keep their order; the cut is taken from the last capped lines first, so the earlier items
    (the ante, then the first combination) are paid in full as far as the maximum allows.
    """
    budget = table_maximum
    for index, line in enumerate(lines):
        if line.item not in capped_items or line.direction is not Direction.HOUSE_TO_PLAYER:
            continue
        paid = min(line.amount, budget)
        budget -= paid
        if paid != line.amount:
            lines[index] = SettlementLine(
                line.item,
                line.stake,
                line.outcome,
                paid,
                line.direction,
                line.reason,
                withheld=line.withheld + line.amount - paid,
            )
