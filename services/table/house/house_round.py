"""One player's round at a house-game table (Casino Hold'em, Russian Poker), as pure logic.

No I/O, no clock, no grpc: the table (`house_table.py`) feeds it the deck fairness sealed, the
wagers the cashier took, and the decisions; it answers what the player may do now and at what
price, the default decision for a timeout, the settlement (from `libs/house_games`) and the
cashier transfers that pay it. The rules are the library's; this module only adds what a live
table needs around them: the room's limits, a single decision vocabulary for both games, the
chips each decision takes from the wallet, the house bank's worst case, and transfer ids derived
from the round id (so a retry or a restarted shard sends the same ids).

Money model: every stake (ante, dark bet, bonus, and later bets, fees and insurance) moves from the
wallet to the house bank when it is placed. At settlement the house bank pays back, per box, the
box's stakes plus the box's net of every non-jackpot line (so a lost stake pays back nothing, a
returned one its stake, a won one its stake plus the win), and the jackpot pays its shares. The
jackpot's part of a lost bonus stake (the library's JACKPOT_CONTRIBUTION line, PLAYER_TO_JACKPOT)
is not in that net, so the house bank pays it back with the rest and the wallet passes it on to the
jackpot in the same linked batch. The wallet's change over the round is therefore exactly the
library's `player_delta`, the bank's its `house_delta`, the jackpot's its `jackpot_delta`.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from house_games import (
    Account,
    BoxWager,
    BuyGame,
    BuySixthCard,
    CasinoHoldemRound,
    CasinoHoldemSettings,
    Direction,
    Exchange,
    Fold,
    HoldemDecision,
    HoldemPhase,
    IllegalDecisionError,
    InvalidWagerError,
    Play,
    RoundSettlement,
    RussianDecision,
    RussianPhase,
    RussianPokerRound,
    RussianPokerSettings,
    TakeAnte,
)
from house_games.russian_poker import DecisionKind


class HouseGame(enum.Enum):
    CASINO_HOLDEM = "CASINO_HOLDEM"
    RUSSIAN_POKER = "RUSSIAN_POKER"


class Decision(enum.Enum):
    """The decisions of both games in one vocabulary (the proto's HouseDecisionKind)."""

    CALL = "CALL"  # Casino Hold'em: call; Russian Poker: play
    FOLD = "FOLD"
    EXCHANGE = "EXCHANGE"
    BUY_SIXTH_CARD = "BUY_SIXTH_CARD"
    INSURE = "INSURE"  # Russian Poker: play with insurance on top
    BUY_GAME = "BUY_GAME"
    TAKE_ANTE = "TAKE_ANTE"


@dataclass(frozen=True, slots=True)
class HouseRoom:
    """A house-game room of the lobby: the game, the pool, the boxes and the ante range."""

    room_id: str
    game: HouseGame
    pool: int  # poker.common.v1.ChipPool
    boxes: int
    min_ante: int
    max_ante: int
    max_payout: int


@dataclass(frozen=True, slots=True)
class BoxBet:
    """One box as the player asked for it."""

    box: int
    ante: int
    dark: bool = False
    bonus: int = 0


@dataclass(frozen=True, slots=True)
class Option:
    """A decision allowed now, what it takes from the wallet, and the insurance range for INSURE."""

    decision: Decision
    cost: int
    min_amount: int = 0
    max_amount: int = 0


@dataclass(frozen=True, slots=True)
class TakenDecision:
    """A decision as the round log keeps it (and history shows it)."""

    box: int
    decision: Decision
    cost: int
    cards: tuple[int, ...] = ()  # EXCHANGE: the discarded card codes
    insurance: int = 0
    timed_out: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "box": self.box,
            "decision": self.decision.value,
            "cost": self.cost,
            "cards": list(self.cards),
            "insurance": self.insurance,
            "timed_out": self.timed_out,
        }

    @staticmethod
    def from_json(raw: dict[str, object]) -> TakenDecision:
        cards = raw.get("cards", [])
        assert isinstance(cards, list)
        return TakenDecision(
            box=int(str(raw["box"])),
            decision=Decision(str(raw["decision"])),
            cost=int(str(raw["cost"])),
            cards=tuple(int(c) for c in cards),
            insurance=int(str(raw.get("insurance", 0))),
            timed_out=bool(raw.get("timed_out", False)),
        )


@dataclass(frozen=True, slots=True)
class PlannedTransfer:
    """One cashier transfer of a round, between a house account (`bank`, `jackpot`, `cover`) and
    `counter`: the player's wallet, or the bank for the cover's reservations and releases."""

    transfer_id: str
    to_player: bool  # True: house account -> counter; False: counter -> house account
    house_account: str  # "bank", "jackpot" or "cover"
    amount: int
    reference: str
    counter: str = "wallet"  # "wallet", or "bank" (bank -> cover reserves, cover -> bank releases)


def paid_back(transfers: Sequence[PlannedTransfer]) -> int:
    """What a batch leaves in the wallet: house accounts -> wallet less wallet -> jackpot (contributions)."""
    return sum(t.amount if t.to_player else -t.amount for t in transfers if t.counter == "wallet")


def settings_for(room: HouseRoom) -> CasinoHoldemSettings | RussianPokerSettings:
    if room.game is HouseGame.CASINO_HOLDEM:
        return CasinoHoldemSettings(table_maximum=room.max_payout, max_boxes=room.boxes)
    return RussianPokerSettings(table_maximum=room.max_payout, max_boxes=room.boxes)


def initial_stake(wager: BoxWager) -> int:
    """What a box takes from the wallet before the deal: the ante, a dark box's bet, the bonus."""
    return wager.ante + (2 * wager.ante if wager.dark else 0) + wager.bonus


def check_bets(room: HouseRoom, player: str, bets: Sequence[BoxBet]) -> tuple[BoxWager, ...]:
    """The library's wagers for `bets`, or InvalidWagerError with its reason (nothing else checked
    by hand: the library's own rules run on a throwaway deck, so the table refuses what the game would)."""
    if not bets:
        raise InvalidWagerError("a round needs at least one box", reason="NO_BOXES")
    if len(bets) > room.boxes:
        raise InvalidWagerError(f"the table has {room.boxes} boxes", reason="TOO_MANY_BOXES")
    for bet in bets:
        if not 1 <= bet.box <= room.boxes:
            raise InvalidWagerError(f"box {bet.box} is not a box of this table", reason="BAD_BOX")
        if not room.min_ante <= bet.ante <= room.max_ante:
            raise InvalidWagerError(
                f"the ante is {room.min_ante} to {room.max_ante}", reason="ANTE_OUT_OF_RANGE"
            )
    wagers = tuple(BoxWager(b.box, player, b.ante, dark=b.dark, bonus=b.bonus) for b in bets)
    deck = list(range(52))
    settings = settings_for(room)
    if isinstance(settings, CasinoHoldemSettings):
        CasinoHoldemRound(deck, wagers, settings)
    else:
        RussianPokerRound(deck, wagers, settings)
    return tuple(sorted(wagers, key=lambda w: w.box))


def largest_payout(room: HouseRoom, wagers: Sequence[BoxWager]) -> int:
    """What the house bank may have to pay beyond the stakes in the worst case: the table maximum per
    box (ante, bet, combinations and insurance together) plus the best fixed bonus odds on a bonus."""
    settings = settings_for(room)
    best_bonus = (
        max(settings.bonus_pay_table.odds.values(), default=0)
        if isinstance(settings, RussianPokerSettings)
        else 0
    )
    return sum(room.max_payout + w.bonus * best_bonus for w in wagers)


def stake_transfer_ids(round_id: str, wagers: Sequence[BoxWager]) -> list[str]:
    return [f"hgr:{round_id}:in:{w.box}" for w in wagers]


def fairness_chain(table_id: str, player: str) -> str:
    """Each player's rounds at a table form their own fairness chain (no contention between players)."""
    return f"{table_id}~{hashlib.sha256(player.encode()).hexdigest()[:16]}"


@dataclass
class LiveRound:
    """The library's round plus what the table adds: the log of decisions and the chips staked."""

    game: HouseGame
    round_id: str
    player: str
    wagers: tuple[BoxWager, ...]
    deck: tuple[int, ...]
    room: HouseRoom
    jackpot_before: int = 0
    decisions: list[TakenDecision] = field(default_factory=list)
    staked: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        settings = settings_for(self.room)
        self._holdem: CasinoHoldemRound | None = None
        self._russian: RussianPokerRound | None = None
        if isinstance(settings, CasinoHoldemSettings):
            self._holdem = CasinoHoldemRound(self.deck, self.wagers, settings)
        else:
            self._russian = RussianPokerRound(self.deck, self.wagers, settings, jackpot=self.jackpot_before)
        self._ante = {w.box: w.ante for w in self.wagers}
        if not self.staked:
            self.staked = {w.box: initial_stake(w) for w in self.wagers}
        replay, self.decisions = self.decisions, []
        for taken in replay:
            self.apply(taken)

    # ------------------------------------------------------------------ state

    @property
    def phase(self) -> str:
        if self._holdem is not None:
            return "COMPLETE" if self._holdem.phase is HoldemPhase.COMPLETE else "DECISIONS"
        assert self._russian is not None
        return self._russian.phase.value

    @property
    def complete(self) -> bool:
        return self.phase == "COMPLETE"

    @property
    def boxes(self) -> tuple[int, ...]:
        return tuple(w.box for w in self.wagers)

    def wager(self, box: int) -> BoxWager:
        for w in self.wagers:
            if w.box == box:
                return w
        raise IllegalDecisionError(f"no box {box} in this round", reason="UNKNOWN_BOX")

    def due_boxes(self) -> tuple[int, ...]:
        """The boxes whose decision is due now (any order in Casino Hold'em, one at a time in Russian)."""
        if self._holdem is not None:
            return self._holdem.pending_boxes()
        assert self._russian is not None
        current = self._russian.current_box
        return () if current is None else (current,)

    def box_to_act(self) -> int:
        if self._russian is not None:
            return self._russian.current_box or 0
        return 0

    def cards(self, box: int) -> tuple[int, ...]:
        if self._holdem is not None:
            return self._holdem.hole_cards(box)
        assert self._russian is not None
        return self._russian.cards(box)

    def dealer_visible(self) -> tuple[int, ...]:
        """The dealer's cards the player may see: none (Casino Hold'em) or the up card until the end."""
        if self._holdem is not None:
            return self._holdem.dealer_cards if self.complete else ()
        assert self._russian is not None
        if self._russian.phase is RussianPhase.DECISIONS:
            up = self._russian.dealer_upcard
            return () if up is None else (up,)
        return self._russian.dealer_cards

    def dealer_replaced(self) -> tuple[int, ...]:
        if self._russian is None:
            return ()
        return tuple(c for r in self._russian.dealer_replacements for c in (r.removed, r.added))

    def board_visible(self) -> tuple[int, ...]:
        if self._holdem is None:
            return ()
        return self._holdem.board if self.complete else self._holdem.flop

    def box_status(self, box: int) -> str:
        wager = self.wager(box)
        for taken in reversed(self.decisions):
            if taken.box == box and taken.decision in (Decision.CALL, Decision.INSURE):
                return "CALLED"
            if taken.box == box and taken.decision is Decision.FOLD:
                return "FOLDED"
        return "DARK" if wager.dark else "WAITING"

    # ------------------------------------------------------------------ decisions

    def options(self, box: int) -> list[Option]:
        """The decisions `box` may take now, with the chips each takes from the wallet."""
        ante = self.wager(box).ante
        if self._holdem is not None:
            return [
                Option(
                    Decision.CALL if d is HoldemDecision.CALL else Decision.FOLD,
                    2 * ante if d is HoldemDecision.CALL else 0,
                )
                for d in sorted(self._holdem.legal_decisions(box), key=lambda d: d.value)
            ]
        assert self._russian is not None
        kinds = self._russian.legal_decisions(box)
        found: list[Option] = []
        costs = {
            DecisionKind.PLAY: (Decision.CALL, 2 * ante),
            DecisionKind.FOLD: (Decision.FOLD, 0),
            DecisionKind.EXCHANGE: (Decision.EXCHANGE, ante),
            DecisionKind.BUY_SIXTH_CARD: (Decision.BUY_SIXTH_CARD, ante),
            DecisionKind.BUY_GAME: (Decision.BUY_GAME, ante),
            DecisionKind.TAKE_ANTE: (Decision.TAKE_ANTE, 0),
        }
        for kind, (decision, cost) in costs.items():
            if kind in kinds:
                found.append(Option(decision, cost))
        insurance = self._russian.insurance_range(box)
        if insurance is not None:
            found.append(Option(Decision.INSURE, 2 * ante, insurance[0], insurance[1]))
        return found

    def prepare(
        self, box: int, decision: Decision, card_indexes: Sequence[int] = (), amount: int = 0
    ) -> TakenDecision:
        """Check a decision against the rules (raises with the rules' reason) and price it; nothing changes."""
        ante = self.wager(box).ante
        if self._holdem is not None:
            if decision not in (Decision.CALL, Decision.FOLD):
                raise IllegalDecisionError(
                    "Casino Hold'em decides call or fold", reason="DECISION_NOT_ALLOWED"
                )
            holdem = HoldemDecision.CALL if decision is Decision.CALL else HoldemDecision.FOLD
            self._holdem.check_decision(box, holdem)
            return TakenDecision(box, decision, 2 * ante if decision is Decision.CALL else 0)
        assert self._russian is not None
        cards: tuple[int, ...] = ()
        if decision is Decision.EXCHANGE:
            held = self._russian.cards(box)
            if (
                not 1 <= len(card_indexes) <= 5
                or len(set(card_indexes)) != len(card_indexes)
                or any(not 0 <= i < len(held) for i in card_indexes)
            ):
                raise IllegalDecisionError(
                    "exchange 1 to 5 of the box's card positions", "BAD_EXCHANGE_CARDS"
                )
            cards = tuple(held[i] for i in card_indexes)
        taken = TakenDecision(
            box,
            decision,
            {
                Decision.CALL: 2 * ante,
                Decision.FOLD: 0,
                Decision.EXCHANGE: ante,
                Decision.BUY_SIXTH_CARD: ante,
                Decision.INSURE: 2 * ante + amount,
                Decision.BUY_GAME: ante,
                Decision.TAKE_ANTE: 0,
            }[decision],
            cards=cards,
            insurance=amount if decision is Decision.INSURE else 0,
        )
        if decision is Decision.INSURE and amount <= 0:
            raise IllegalDecisionError("insurance needs a stake", reason="INSURANCE_OUT_OF_RANGE")
        self._russian.check_decision(box, _russian_decision(taken))
        return taken

    def apply(self, taken: TakenDecision) -> None:
        """Apply a prepared decision (its cost already paid in)."""
        if self._holdem is not None:
            self._holdem.decide(
                taken.box, HoldemDecision.CALL if taken.decision is Decision.CALL else HoldemDecision.FOLD
            )
        else:
            assert self._russian is not None
            self._russian.decide(taken.box, _russian_decision(taken))
        self.decisions.append(taken)
        self.staked[taken.box] = self.staked.get(taken.box, 0) + taken.cost

    def default_decision(self, box: int) -> TakenDecision:
        """The rules' default for a box that did not decide in time: fold where folding is allowed,
        otherwise (Russian Poker, dealer without a game) take the ante."""
        allowed = {option.decision for option in self.options(box)}
        choice = Decision.FOLD if Decision.FOLD in allowed else Decision.TAKE_ANTE
        return TakenDecision(box, choice, 0, timed_out=True)

    def extra_transfer_id(self, index: int) -> str:
        return f"hgr:{self.round_id}:d{index}"

    # ------------------------------------------------------------------ settlement

    def settle(self) -> RoundSettlement:
        if self._holdem is not None:
            return self._holdem.settle()
        assert self._russian is not None
        return self._russian.settle()

    def settlement_transfers(self, settlement: RoundSettlement) -> list[PlannedTransfer]:
        """The round's linked settlement batch: per box, the house bank pays back the box's stakes plus
        its net of the non-jackpot lines, the jackpot pays the box's jackpot shares, and the wallet
        passes the box's jackpot contribution on to the jackpot (after the bank's payment, which
        includes it, so the batch never needs more than the wallet receives)."""
        transfers: list[PlannedTransfer] = []
        for box in settlement.boxes:
            from_bank = self.staked.get(box.box, 0)
            from_jackpot = to_jackpot = 0
            for line in box.lines:
                if line.direction is Direction.JACKPOT_TO_PLAYER:
                    from_jackpot += line.amount
                elif line.direction is Direction.PLAYER_TO_JACKPOT:
                    to_jackpot += line.amount
                else:
                    from_bank += line.delta(Account.PLAYER)
            if from_bank < 0:
                raise AssertionError(f"box {box.box} lost more than it staked")
            reference = f"{self.round_id}:box{box.box}"
            if from_bank:
                transfers.append(
                    PlannedTransfer(f"hgr:{self.round_id}:out:{box.box}", True, "bank", from_bank, reference)
                )
            if from_jackpot:
                transfers.append(
                    PlannedTransfer(
                        f"hgr:{self.round_id}:jp:{box.box}", True, "jackpot", from_jackpot, reference
                    )
                )
            if to_jackpot:
                transfers.append(
                    PlannedTransfer(
                        f"hgr:{self.round_id}:jc:{box.box}", False, "jackpot", to_jackpot, reference
                    )
                )
        return transfers

    def refund_transfers(self) -> list[PlannedTransfer]:
        """Every chip the round took, back from the house bank (a round voided before it could settle)."""
        return [
            PlannedTransfer(f"hgr:{self.round_id}:void:{box}", True, "bank", amount, f"{self.round_id}:void")
            for box, amount in sorted(self.staked.items())
            if amount
        ]


def _russian_decision(taken: TakenDecision) -> RussianDecision:
    if taken.decision is Decision.CALL:
        return Play()
    if taken.decision is Decision.INSURE:
        return Play(insurance=taken.insurance)
    if taken.decision is Decision.FOLD:
        return Fold()
    if taken.decision is Decision.EXCHANGE:
        return Exchange(taken.cards)
    if taken.decision is Decision.BUY_SIXTH_CARD:
        return BuySixthCard()
    if taken.decision is Decision.BUY_GAME:
        return BuyGame()
    return TakeAnte()
