"""Players for the fair-play tests: the suite's honest bots (libs/poker_bots strategies) and the
scripted cheats of issue 29's table (dumpers, colluders, multi-accounts), playing real hands through
libs/poker_engine, offline, turned into records the way the table service does."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta

from poker.history.v1 import history_pb2
from poker_bots.strategies import (
    ALL_IN,
    BET,
    CALL,
    CHECK,
    FOLD,
    RAISE,
    RandomLegal,
    Situation,
    TightAggressive,
)
from poker_engine.actions import LegalActions
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.evaluator import HandCategory, category_of, strength_of
from poker_engine.events import ActionCause, ActionKind, BoardDealt, PlayerActed
from poker_engine.hand import Hand
from services.history import cases, detectors
from tests.history.engine_hands import START, record_of

BIG_BLIND = 10
STACK = 200 * BIG_BLIND

# What a scripted player does on its turn: return True when it acted, False to play honestly.
Script = Callable[["Turn"], bool]


@dataclass
class Turn:
    """One decision of one player in one hand, with what the scripts need to know."""

    hand: Hand
    legal: LegalActions
    seat: int
    number: int  # the hand's number in the session
    seats: dict[str, int]  # player id -> seat

    @property
    def street(self) -> str:
        return self.hand.street.value

    def live(self, player: str) -> bool:
        return player in self.seats and self.hand.in_hand(self.seats[player])

    def made(self) -> HandCategory:
        cards = [*self.hand.hole_cards(self.seat), *self.hand.board]
        return category_of(strength_of(cards)) if len(cards) >= 5 else HandCategory.HIGH_CARD

    def bet_or_raise(self, to: int) -> None:
        to = max(self.legal.min_to, min(to, self.legal.max_to))
        if self.legal.can_bet:
            self.hand.bet(self.seat, to)
        else:
            self.hand.raise_to(self.seat, to)

    def passive(self) -> None:
        if self.legal.can_check:
            self.hand.check(self.seat)
        else:
            self.hand.call(self.seat)

    def fold_or_check(self) -> None:
        if self.legal.can_check:
            self.hand.check(self.seat)
        else:
            self.hand.fold(self.seat)


def situation(hand: Hand, legal: LegalActions) -> Situation:
    kinds = set()
    for kind, allowed in ((FOLD, legal.can_fold), (CHECK, legal.can_check), (CALL, legal.can_call)):
        if allowed:
            kinds.add(kind)
    if legal.can_bet:
        kinds.add(BET)
    if legal.can_raise:
        kinds.add(RAISE)
    if hand.can_all_in(legal.seat):
        kinds.add(ALL_IN)
    aggressive = legal.can_bet or legal.can_raise
    return Situation(
        actions=frozenset(kinds),
        call_amount=legal.call_amount,
        min_amount=legal.min_to if aggressive else 0,
        max_amount=legal.max_to if aggressive else 0,
        step=legal.step,
        hole_cards=hand.hole_cards(legal.seat),
        board=hand.board,
        pot=hand.pot_total,
        stack=hand.stacks[legal.seat],
        no_limit=True,
    )


def play_bot(hand: Hand, legal: LegalActions, strategy: str, rng: random.Random) -> None:
    bot = RandomLegal() if strategy == "random" else TightAggressive()
    decision = bot.decide(situation(hand, legal), rng)
    seat = legal.seat
    if decision.kind == FOLD:
        hand.fold(seat)
    elif decision.kind == CHECK:
        hand.check(seat)
    elif decision.kind == CALL:
        hand.call(seat)
    elif decision.kind == BET:
        hand.bet(seat, decision.amount)
    elif decision.kind == RAISE:
        hand.raise_to(seat, decision.amount)
    else:
        hand.all_in(seat)


@dataclass
class Player:
    player_id: str
    strategy: str = "tag"  # the honest part: "random" or "tag"
    script: Script | None = None
    device: str = ""
    network: str = ""
    # Milliseconds each own decision takes (the table measures it); None: not measured.
    timing: Callable[[random.Random], int] | None = None


@dataclass
class Session:
    """A table playing hand after hand: every hand starts with full stacks (a rebuy table)."""

    players: list[Player]
    table_id: str
    seed: int = 1
    number: int = 0
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def play(self, seated: list[Player] | None = None) -> history_pb2.HandRecord:
        seated = seated or self.players
        deck = list(range(52))
        self.rng.shuffle(deck)
        config = HandConfig(
            variant=Variant.NO_LIMIT,
            seats=tuple(SeatConfig(i, p.player_id, STACK) for i, p in enumerate(seated)),
            button=self.number % len(seated),
            small_blind=BIG_BLIND // 2,
            big_blind=BIG_BLIND,
            deck=tuple(deck),
            rake=RakeRule(500, 30),
        )
        hand = Hand(config)
        seats = {p.player_id: i for i, p in enumerate(seated)}
        while not hand.is_over:
            legal = hand.legal_actions()
            assert legal is not None
            player = seated[legal.seat]
            turn = Turn(hand, legal, legal.seat, self.number, seats)
            if player.script is None or not player.script(turn):
                play_bot(hand, legal, player.strategy, self.rng)
        timed = {p.player_id: p.timing for p in seated if p.timing is not None}
        decision_ms = {
            position: max(1, timed[seated[event.seat].player_id](self.rng))
            for position, event in enumerate(hand.events)
            if isinstance(event, PlayerActed)
            and event.cause is ActionCause.PLAYER
            and seated[event.seat].player_id in timed
        }
        record = record_of(
            hand,
            decision_ms=decision_ms,
            table_id=self.table_id,
            start=START + timedelta(minutes=self.number),
            fingerprints={p.player_id: p.device for p in seated if p.device},
            networks={p.player_id: p.network for p in seated if p.network},
            hand_id=f"{self.table_id}-{self.number}",
        )
        self.number += 1
        return record

    def hands(self, count: int) -> Iterator[history_pb2.HandRecord]:
        for _ in range(count):
            yield self.play()


# --- The scripted cheats of issue 29's table. -------------------------------------------------------


def call_down_dumper(partner: str, every: int = 1, warm_up: int = 0) -> Script:
    """Heads-up dumping: in a dumping hand, folds to the partner's tiny bet or calls down with
    nothing: it calls everything the partner bets and folds the river to a bet when it holds little."""

    def script(turn: Turn) -> bool:
        if turn.number < warm_up or turn.number % every:
            return False
        if not turn.live(partner):
            return False
        if turn.legal.can_call and turn.street == "RIVER" and turn.made() <= HandCategory.ONE_PAIR:
            turn.hand.fold(turn.seat)
        elif turn.legal.can_call:
            turn.hand.call(turn.seat)
        elif turn.street != "PREFLOP" or not turn.legal.can_check:
            turn.bet_or_raise(turn.legal.min_to)
        else:
            turn.hand.check(turn.seat)
        return True

    return script


def tiny_bet_receiver(partner: str, every: int = 1, warm_up: int = 0) -> Script:
    """The willing receiver of a dump: bets the minimum into the dumper on every street."""

    def script(turn: Turn) -> bool:
        if turn.number < warm_up or turn.number % every or not turn.live(partner):
            return False
        if turn.legal.can_bet or turn.legal.can_raise:
            turn.bet_or_raise(turn.legal.min_to)
        else:
            turn.passive()
        return True

    return script


def bet_fold_dumper(partner: str, every: int = 1, warm_up: int = 0) -> Script:
    """Bet-fold dumping: raises to 15 bb before the flop whatever it holds, folds to the partner's
    shove; folds everything else (40 hands of folding, then every `every`-th hand, when diluted)."""

    def script(turn: Turn) -> bool:
        dumping = turn.number >= warm_up and turn.number % every == 0 and turn.live(partner)
        if not dumping:
            turn.fold_or_check()
            return True
        if (
            turn.street == "PREFLOP"
            and turn.hand.bets[turn.seat] < 15 * BIG_BLIND
            and (turn.legal.can_raise or turn.legal.can_bet)
        ):
            turn.bet_or_raise(15 * BIG_BLIND)
        else:
            turn.fold_or_check()
        return True

    return script


def pot_building_dumper(partner: str, every: int = 1, warm_up: int = 0) -> Script:
    """Heads-up dumping the issue 43 probe missed: in a dumping hand it builds the pot (raises to 3 bb
    before the flop, bets the pot on the flop) for the partner to call with anything, then gives it
    away: facing the partner's bet it folds whatever it holds with a pair or better, and calls with
    nothing (a hopeless call). Other hands (the warm-up, and between dumps when diluted) it folds."""

    def script(turn: Turn) -> bool:
        dumping = turn.number >= warm_up and turn.number % every == 0 and turn.live(partner)
        if not dumping:
            turn.fold_or_check()
            return True
        facing = turn.legal.call_amount > 0
        if turn.street == "PREFLOP":
            if turn.hand.bets[turn.seat] < 3 * BIG_BLIND and (turn.legal.can_raise or turn.legal.can_bet):
                turn.bet_or_raise(3 * BIG_BLIND)
            else:
                turn.passive()
        elif facing:
            if turn.made() >= HandCategory.ONE_PAIR:
                turn.hand.fold(turn.seat)
            else:
                turn.hand.call(turn.seat)
        elif turn.street == "FLOP" and turn.legal.can_bet:
            turn.bet_or_raise(turn.hand.pot_total)
        else:
            turn.hand.check(turn.seat)
        return True

    return script


def pot_building_receiver(partner: str, every: int = 1, warm_up: int = 0) -> Script:
    """Its partner: calls the dumper's raises and pot-sized bets with any hand (building the pot),
    checks the flop to let the dumper bet, and bets the minimum on the turn and the river."""

    def script(turn: Turn) -> bool:
        if turn.number < warm_up or turn.number % every or not turn.live(partner):
            return False
        if turn.legal.call_amount > 0:
            turn.hand.call(turn.seat)
        elif turn.street in ("TURN", "RIVER") and turn.legal.can_bet:
            turn.bet_or_raise(turn.legal.min_to)
        else:
            turn.passive()
        return True

    return script


def shover(partner: str, every: int = 1, warm_up: int = 0) -> Script:
    """The receiver of bet-fold dumping: shoves over the partner's raise."""

    def script(turn: Turn) -> bool:
        if turn.number < warm_up or turn.number % every or not turn.live(partner):
            return False
        if turn.street == "PREFLOP" and turn.hand.bets[turn.seats[partner]] >= 15 * BIG_BLIND:
            turn.hand.all_in(turn.seat)
            return True
        return False

    return script


def shove_with_nothing(partner: str) -> Script:
    """Sees the flop with the partner (calls before it), then, when the two are alone in the pot,
    shoves its stack into the partner holding nothing (no pair); otherwise it checks or folds."""

    def script(turn: Turn) -> bool:
        if not turn.live(partner):
            return False
        if turn.street == "PREFLOP":
            turn.passive() if turn.legal.call_amount <= 3 * BIG_BLIND else turn.fold_or_check()
        elif (
            turn.made() == HandCategory.HIGH_CARD
            and turn.hand.can_all_in(turn.seat)
            and sum(turn.hand.in_hand(s) for s in turn.seats.values()) == 2
        ):
            turn.hand.all_in(turn.seat)
        else:
            turn.fold_or_check()
        return True

    return script


def caller_with_anything(partner: str) -> Script:
    """The receiver of the shove: sees the flop with the partner and, knowing the partner shoves
    nothing, calls the all-in with any pair."""

    def script(turn: Turn) -> bool:
        if not turn.live(partner):
            return False
        if turn.legal.can_call and turn.hand.stacks[turn.seats[partner]] == 0:
            turn.hand.call(turn.seat) if turn.made() >= HandCategory.ONE_PAIR else turn.hand.fold(turn.seat)
            return True
        if turn.street == "PREFLOP" and turn.legal.call_amount <= 3 * BIG_BLIND:
            turn.passive()
            return True
        return False

    return script


def colluder(partner: str) -> Script:
    """Plays with a partner (it would read the partner's cards): never bets into the partner when
    the two are alone in the pot (checks it down, calls a couple of big blinds at most, else folds),
    and squeezes third players: after the flop the first of the two to act bets half the pot, and
    the other raises it to three times, so a third player in between pays twice or folds."""

    def script(turn: Turn) -> bool:
        if not turn.live(partner):
            return False
        live = [s for s in turn.seats.values() if turn.hand.in_hand(s)]
        partner_seat = turn.seats[partner]
        if len(live) == 2:
            if turn.legal.can_check or turn.legal.call_amount <= 2 * BIG_BLIND:
                turn.passive()
            else:
                turn.fold_or_check()
            return True
        if turn.street == "PREFLOP":
            return False
        bets = turn.hand.bets
        top = max(bets.values(), default=0)
        partner_bet, mine = bets.get(partner_seat, 0), bets.get(turn.seat, 0)
        if top == 0 and turn.legal.can_bet:
            turn.bet_or_raise(max(turn.legal.min_to, turn.hand.pot_total // 2))
            return True
        if partner_bet == top > mine and turn.legal.can_raise and mine == 0:
            turn.bet_or_raise(3 * partner_bet)
            return True
        return False

    return script


def _facing(turn: Turn) -> int | None:
    """The seat whose bet the player faces this street: the last to bet or raise on it (blinds
    before the flop are not bets), if the player has not matched it."""
    bets = turn.hand.bets
    if max(bets.values(), default=0) <= bets.get(turn.seat, 0):
        return None
    for event in reversed(turn.hand.events):
        if isinstance(event, BoardDealt):
            return None
        if isinstance(event, PlayerActed) and event.action in (ActionKind.BET, ActionKind.RAISE):
            return event.seat if event.seat != turn.seat else None
    return None


def multiway_soft_player(partner: str) -> Script:
    """Soft play in multiway pots: sees flops with the partner and the others (calls up to 3 big
    blinds before the flop); after the flop, with the partner and at least one other player in the
    pot, it never raises the partner's bet (it calls it, whatever it holds). Everything else is its
    honest strategy (a tight-aggressive bot raises third players' bets with two pair or better), so
    alone with the partner it plays honestly: the heads-up soft-play verdict does not see it."""

    def script(turn: Turn) -> bool:
        if not turn.live(partner):
            return False
        live = [s for s in turn.seats.values() if turn.hand.in_hand(s)]
        if turn.street == "PREFLOP":
            # Sees the flop with the partner and the others for up to 3 big blinds.
            if len(live) >= 3 and turn.legal.call_amount <= 3 * BIG_BLIND:
                turn.passive()
                return True
            return False
        bettor = _facing(turn)
        if len(live) < 3 or bettor is None:
            return False
        if bettor == turn.seats[partner]:
            turn.hand.call(turn.seat)
            return True
        return False

    return script


def whipsaw_colluder(partner: str) -> Script:
    """Squeezing a third player (whipsaw): sees flops with the partner and the others (calls up to
    3 big blinds before the flop); after the flop, with the partner and a third player in the
    pot, the first of the two to act bets half the pot and the other raises it to three times, so a
    third player caught between pays twice or folds; once the third has folded, the one who was
    raised gives the pot up to the partner (folds). Otherwise it plays its honest strategy, also
    when alone with the partner from the start of a street (no checking it down)."""

    def script(turn: Turn) -> bool:
        if not turn.live(partner):
            return False
        live = [s for s in turn.seats.values() if turn.hand.in_hand(s)]
        if turn.street == "PREFLOP":
            # Sees the flop with the partner and the others for up to 3 big blinds.
            if len(live) >= 3 and turn.legal.call_amount <= 3 * BIG_BLIND:
                turn.passive()
                return True
            return False
        partner_seat = turn.seats[partner]
        bets = turn.hand.bets
        mine, partners = bets.get(turn.seat, 0), bets.get(partner_seat, 0)
        if len(live) == 2:
            # The third has just folded to the squeeze: the raised one gives the pot up.
            if 0 < mine < partners and _facing(turn) == partner_seat:
                turn.hand.fold(turn.seat)
                return True
            return False
        top = max(bets.values(), default=0)
        if top == 0 and turn.legal.can_bet:
            turn.bet_or_raise(max(turn.legal.min_to, turn.hand.pot_total // 2))
            return True
        if partners == top > mine == 0 and turn.legal.can_raise:
            turn.bet_or_raise(3 * partners)
            return True
        return False

    return script


def calling_station_for(victim: str) -> Script:
    """Loses on purpose to one player (framing, or a dump to an unknowing receiver): sees every
    flop the victim sees, never bets, calls every bet of the victim to the river and folds the
    river to it; against everyone else it folds."""

    def script(turn: Turn) -> bool:
        if not turn.live(victim):
            turn.fold_or_check()
            return True
        if turn.legal.can_check:
            turn.hand.check(turn.seat)
        elif turn.street == "RIVER":
            turn.hand.fold(turn.seat)
        else:
            turn.hand.call(turn.seat)
        return True

    return script


def machine_timing(rng: random.Random) -> int:
    """A bot's pace: a few tens of milliseconds, whatever the decision."""
    return rng.randint(5, 60)


def steady_timing(rng: random.Random) -> int:
    """A bot that waits about a second and a half before each decision, to look human."""
    return rng.randint(1100, 1900)


def human_timing(rng: random.Random) -> int:
    """A person: log-normal around 1.8 s (quick folds, long thoughts), never under 300 ms."""
    return max(300, round(rng.lognormvariate(7.5, 0.8)))


POOL = 1


def honest(*strategies: str) -> list[Player]:
    return [Player(f"{strategy}{index}", strategy) for index, strategy in enumerate(strategies)]


class Ledger:
    """The running pair totals of a pool as the service keeps them, and the verdicts they make."""

    def __init__(self) -> None:
        self.totals: dict[tuple[str, str], cases.PairTotals] = {}
        # Every case any hand made, as the service judges after each hand (a case once opened stays).
        self.opened: dict[tuple[str, str, str], cases.Verdict] = {}
        self.timing: dict[str, cases.TimingTotals] = {}

    def record(self, records: Iterable[history_pb2.HandRecord]) -> Ledger:
        for record in records:
            evidence = detectors.hand_evidence(record)
            assert evidence is not None
            for pair in evidence.pairs:
                key = (pair.first, pair.second)
                totals = self.totals.get(key, cases.PairTotals(POOL, *key)).add(pair, evidence.big_blind)
                self.totals[key] = totals
                baselines = {player: self.baseline(player) for player in cases.givers_to_check(totals)}
                for verdict in cases.verdicts(totals, baselines):
                    self.opened[(verdict.kind.value, verdict.giver, verdict.receiver)] = verdict
            for timing in evidence.timings:
                empty = cases.TimingTotals(timing.player_id, (0,) * len(timing.buckets))
                player = self.timing.get(timing.player_id, empty).add(timing.buckets)
                self.timing[timing.player_id] = player
                found = cases.automation(player)
                if found is not None:
                    self.opened[(found.kind.value, found.giver, "")] = found
        return self

    def baseline(self, player: str) -> cases.Baseline:
        hands = blatant = whipsaws = 0
        for totals in self.totals.values():
            if player in (totals.first, totals.second):
                oriented = totals if totals.first == player else totals.flipped()
                hands += oriented.hands
                blatant += oriented.blatant_cbb_to_second
                whipsaws += oriented.whipsaws_to_second + oriented.whipsaws_to_first
        return cases.Baseline(hands, blatant, whipsaws)

    def verdicts(self) -> list[cases.Verdict]:
        """The cases opened so far, each as its last hand left it."""
        return list(self.opened.values())

    def pair(self, first: str, second: str) -> cases.PairTotals:
        return self.totals[(first, second)] if first < second else self.totals[(second, first)].flipped()
