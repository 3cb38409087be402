"""What one recorded hand says about fair play (rules 17), pair by pair: pure, no I/O.

The history service sees every hand in full (every seat's hole cards), so it can judge each
decision against the cards: `hand_evidence` walks the record's actions once and, for every two
players dealt into the hand, returns what passed between them:

- chips: what each lost to the other (a loser's loss shared among the hand's winners in proportion
  to what they won);
- gift: the chips each gave away by decisions their cards did not justify, judged on the pot
  equity of their hand against the hands still live (known to us, not to them), credited to the
  player the decision answered (the bettor a fold or call faced, the first player who met a bet). A fold facing a bet gives away `equity * (pot + call) - call`
  when that is positive (folding a hand that should have called); a call gives away
  `call - equity * (pot + call)` when positive (calling with too little); a bet or raise that
  someone matched gives away `bet - equity * (pot + 2 * bet)` when positive (shoving with nothing).
  Decisions the table took (timeouts, leaving) are not the player's and are not judged. Honest
  players make such mistakes too, in every direction; the verdict (`cases.py`) looks for gifts that
  go one way, to one player, far above the giver's mistakes against everyone else;
- blatant: the part of the gift from decisions that gave away at least half of what they put at
  stake (calling or shoving with a fraction of the equity needed, folding a hand that was ahead
  after investing in it);
- heads-up (a hand dealt to two), calls judged by where the chips ended (issue 43): what a
  player's calls gave away in a hand is at most what they lost in it, so a weak call that built a
  pot the caller then won (the other folded it away) is no gift back;
- strong folds: folds of a hand with at least half the pot's equity while facing a bet;
- soft play: post-flop streets on which only these two were left with chips to play
  (`heads_up_streets`) and how many of them went by without a bet (`passive_streets`), and
  squeezes: streets on which both bet or raised while a third player was caught between them and
  folded, after which the two did not contest the pot against each other;
- multiway: both saw the flop with at least one other player;
- soft play in multiway pots: each player's decisions after the flop, with a strong hand
  (`STRONG_EQUITY` of the pot against the live hands), facing a bet while at least three players
  were live and the player had chips to raise: facing the other's bet (`strong_facing`, and
  `strong_raised` when they raised into them) or a third player's bet with the other still live
  (`strong_facing_others`, `strong_raised_others`). An honest player raises a strong hand whoever
  bet; a soft pair raises third players and only calls each other;
- whipsaws: hands in which both bet or raised on a street with a third player still live when the
  second of them did and every third player then folded (`whipsaw_chances`, at most one a hand),
  and those after which the two did not contest the pot (neither bet or raised again, and it did
  not end with both live and one of them all in), by who gave the pot up, the one who came out of
  the hand worse (`whipsaws_to_*`);
- shared device / network: both came with the same device or network signal (the `dev` / `net`
  claims the gateway signs; empty signals never match).

And per player, the decision times of their own decisions (`decision_timings`), in buckets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations

from poker.history.v1 import history_pb2
from services.history.equity import equities
from services.history.records import POKER_VARIANTS

DECISIONS = ("FOLD", "CHECK", "CALL", "BET", "RAISE")
STRONG_FOLD_EQUITY = 0.5
# A hand with at least this share of the pot against the live hands is strong: with three or more
# live hands, an honest player raises it facing a bet as readily whoever made the bet.
STRONG_EQUITY = 0.5
# A mistake that gives away at least this share of what the decision put at stake is blatant (a
# call or shove with under a quarter of the equity it needed, a fold of a hand that was ahead).
BLATANT_SHARE = 0.5
MIN_JUDGED_BIG_BLINDS = 3
INFINITY = float("inf")


@dataclass
class PairEvidence:
    """What passed between two players (`first` < `second`) in one hand; `*_to_second` counts what
    `first` gave `second`, `*_to_first` the reverse. Chip figures are whole chips."""

    first: str
    second: str
    chips_to_second: int = 0
    chips_to_first: int = 0
    gift_to_second: int = 0
    gift_to_first: int = 0
    blatant_to_second: int = 0
    blatant_to_first: int = 0
    strong_folds_to_second: int = 0
    strong_folds_to_first: int = 0
    heads_up_streets: int = 0
    passive_streets: int = 0
    squeezes: int = 0
    multiway: int = 0
    with_others: int = 0
    strong_facing_to_second: int = 0
    strong_facing_to_first: int = 0
    strong_raised_to_second: int = 0
    strong_raised_to_first: int = 0
    strong_facing_others_to_second: int = 0
    strong_facing_others_to_first: int = 0
    strong_raised_others_to_second: int = 0
    strong_raised_others_to_first: int = 0
    whipsaw_chances: int = 0
    whipsaws_to_second: int = 0
    whipsaws_to_first: int = 0
    shared_device: int = 0
    shared_network: int = 0


@dataclass(frozen=True)
class PlayerTiming:
    """How long one player's own decisions of the hand took, counted in `DECISION_TIME_BOUNDS_MS`
    buckets (the last bucket is everything slower)."""

    player_id: str
    buckets: tuple[int, ...]


# Upper bounds (exclusive) of the decision-time buckets, in milliseconds; one more bucket holds the
# slower decisions. Automation shows as decisions faster than a person reads the table, or as
# nearly every decision in one bucket.
DECISION_TIME_BOUNDS_MS = (250, 500, 1000, 2000, 5000, 10000)


@dataclass(frozen=True)
class HandEvidence:
    """The evidence of one hand: its pairs (every two players dealt in), the timing of each
    player's own decisions, and the big blind that scales it."""

    hand_id: str
    table_id: str
    pool: int
    big_blind: int
    pairs: tuple[PairEvidence, ...]
    timings: tuple[PlayerTiming, ...] = ()


def _bucket(milliseconds: int) -> int:
    for index, bound in enumerate(DECISION_TIME_BOUNDS_MS):
        if milliseconds < bound:
            return index
    return len(DECISION_TIME_BOUNDS_MS)


def decision_timings(record: history_pb2.HandRecord) -> tuple[PlayerTiming, ...]:
    """Each player's timed decisions (the table measures those the player took; 0 is unmeasured)."""
    seats = {s.seat: s.player_id for s in record.seats}
    counts: dict[str, list[int]] = {}
    for action in record.actions:
        if (
            action.cause == history_pb2.ACTION_CAUSE_PLAYER
            and action.decision_ms > 0
            and action.seat in seats
        ):
            buckets = counts.setdefault(seats[action.seat], [0] * (len(DECISION_TIME_BOUNDS_MS) + 1))
            buckets[_bucket(int(action.decision_ms))] += 1
    return tuple(PlayerTiming(player, tuple(buckets)) for player, buckets in sorted(counts.items()))


@dataclass
class _Street:
    name: str
    live_at_start: frozenset[int]
    all_in_at_start: frozenset[int]
    aggressors: list[int] = field(default_factory=list)
    folded: list[tuple[int, int]] = field(default_factory=list)  # (seat, position in the street)
    aggression_positions: list[int] = field(default_factory=list)
    steps: int = 0
    # Positions in the whole hand (`_Walk.position`): each seat's first bet or raise, each fold.
    first_aggression: dict[int, int] = field(default_factory=dict)
    fold_positions: dict[int, int] = field(default_factory=dict)


class _Walk:
    """One pass over the actions: equities where decisions need them, per-seat gifts, streets."""

    def __init__(self, record: history_pb2.HandRecord) -> None:
        self.record = record
        self.holes = {
            s.seat: (int(s.hole_cards[0].index), int(s.hole_cards[1].index))
            for s in record.seats
            if len(s.hole_cards) == 2
        }
        self.judged = len(self.holes) == len(record.seats)
        self.live = {s.seat for s in record.seats}
        self.all_in: set[int] = set()
        self.board: list[int] = []
        self.pot = 0
        self.bets: dict[int, int] = {}
        # (giver seat, receiver seat) -> chips given away to the receiver by the giver's decisions.
        self.gift: dict[tuple[int, int], float] = {}
        self.blatant: dict[tuple[int, int], float] = {}
        # The same, of calls alone: a call gives away no more than the caller lost in the hand.
        self.call_gift: dict[tuple[int, int], float] = {}
        self.call_blatant: dict[tuple[int, int], float] = {}
        self.invested: dict[int, int] = {}
        self.strong_folds: dict[tuple[int, int], int] = {}
        self.streets: list[_Street] = []
        self.pending: list[tuple[int, int, float, int]] = []  # (seat, amount, equity, pot before)
        self.matched: dict[int, int] = {}  # index into pending -> the first seat that met it
        self._equity_cache: dict[tuple[int, frozenset[int]], dict[int, float]] = {}
        self.stacks = {s.seat: int(s.starting_stack) for s in record.seats}
        # (seat, other seat) -> decisions with a strong hand facing the other's bet in a multiway pot,
        # and those that raised; facing a third player's bet with the other live, and those raised.
        self.strong_facing: dict[tuple[int, int], int] = {}
        self.strong_raised: dict[tuple[int, int], int] = {}
        self.strong_facing_others: dict[tuple[int, int], int] = {}
        self.strong_raised_others: dict[tuple[int, int], int] = {}
        self.position = 0
        self.last_aggression: dict[int, int] = {}  # seat -> position of its last bet or raise
        self._new_street("PREFLOP")

    def _new_street(self, name: str) -> None:
        self._close_pending()
        self.streets.append(_Street(name, frozenset(self.live), frozenset(self.all_in)))
        self.bets = {}
        self.raisers: list[int] = []

    def _close_pending(self) -> None:
        for index, (seat, amount, equity, pot) in enumerate(self.pending):
            if index in self.matched:
                self._give(seat, self.matched[index], amount - equity * (pot + 2 * amount), amount)
        self.pending, self.matched = [], {}

    def _return_pending(self, seat: int, amount: int) -> None:
        """The uncalled part of a bet was never at stake: only what was met is judged."""
        for index in range(len(self.pending) - 1, -1, -1):
            owner, bet, equity, pot = self.pending[index]
            if owner == seat:
                self.pending[index] = (owner, max(0, bet - amount), equity, pot)
                return

    def _give(self, seat: int, receiver: int, chips: float, stake: int, *, call: bool = False) -> None:
        if chips > 0 and receiver != seat:
            key = (seat, receiver)
            gift, blatant = (self.call_gift, self.call_blatant) if call else (self.gift, self.blatant)
            gift[key] = gift.get(key, 0.0) + chips
            if chips >= BLATANT_SHARE * stake:
                blatant[key] = blatant.get(key, 0.0) + chips

    def _top_bettor(self, seat: int) -> int:
        """Whom a fold or call answers: the last to raise to the street's highest bet."""
        top = max(self.bets.values(), default=0)
        for other in reversed(self.raisers):
            if other != seat and self.bets.get(other, 0) == top:
                return other
        return max((s for s in self.bets if s != seat), key=lambda s: self.bets[s], default=seat)

    def equity(self, seat: int) -> float:
        key = (len(self.board), frozenset(self.live))
        table = self._equity_cache.get(key)
        if table is None:
            holes = {s: self.holes[s] for s in sorted(self.live)}
            table = equities(
                holes, self.board, seed=f"{self.record.hand_id}\x00{key[0]}\x00{sorted(self.live)}"
            )
            self._equity_cache[key] = table
        return table.get(seat, 0.0)

    def run(self) -> None:
        for action in self.record.actions:
            kind, seat, amount = action.kind, action.seat, int(action.amount)
            street = self.streets[-1]
            if kind == "DEAL_BOARD":
                self.board.extend(int(card.index) for card in action.cards)
                self._new_street(action.street)
                continue
            if kind == "UNCALLED_RETURN":
                self.pot -= amount
                self.invested[seat] = self.invested.get(seat, 0) - amount
                self.bets[seat] = self.bets.get(seat, 0) - amount
                self._return_pending(seat, amount)
                continue
            if kind.startswith("POST_"):
                self.pot += amount
                self.invested[seat] = self.invested.get(seat, 0) + amount
                if kind != "POST_DEAD_SMALL_BLIND":
                    self.bets[seat] = self.bets.get(seat, 0) + amount
                if action.all_in:
                    self.all_in.add(seat)
                continue
            if kind not in DECISIONS:
                continue
            street.steps += 1
            self.position += 1
            to_call = max(self.bets.values(), default=0) - self.bets.get(seat, 0)
            if self.judged and action.cause == history_pb2.ACTION_CAUSE_PLAYER and len(self.live) > 1:
                self._judge(kind, seat, amount, to_call)
                if to_call > 0 and len(self.live) >= 3 and street.name != "PREFLOP":
                    self._multiway(kind, seat, to_call)
            if kind in ("CALL", "RAISE"):
                # Meeting a bet: every earlier bet or raise of another player this street was matched.
                for index, pending in enumerate(self.pending):
                    if pending[0] != seat:
                        self.matched.setdefault(index, seat)
            if kind in ("BET", "RAISE"):
                self.raisers.append(seat)
                street.aggressors.append(seat)
                street.aggression_positions.append(street.steps)
                street.first_aggression.setdefault(seat, self.position)
                self.last_aggression[seat] = self.position
            self.pot += amount
            self.invested[seat] = self.invested.get(seat, 0) + amount
            self.bets[seat] = self.bets.get(seat, 0) + amount
            if kind == "FOLD":
                self.live.discard(seat)
                street.folded.append((seat, street.steps))
                street.fold_positions[seat] = self.position
            if action.all_in:
                self.all_in.add(seat)
        self._close_pending()

    def _multiway(self, kind: str, seat: int, to_call: int) -> None:
        """A decision facing a bet with at least two others live: with a strong hand and chips to
        raise, it is a chance to raise into the bettor, and, for each other live player with chips,
        a chance to raise a third player's bet with them live. Only strong hands need the equity."""
        bettor = self._top_bettor(seat)
        if (
            bettor == seat
            or bettor in self.all_in
            or self.stacks.get(seat, 0) - self.invested.get(seat, 0) <= to_call
        ):
            return
        if self.equity(seat) < STRONG_EQUITY:
            return
        raised = int(kind == "RAISE")
        key = (seat, bettor)
        self.strong_facing[key] = self.strong_facing.get(key, 0) + 1
        self.strong_raised[key] = self.strong_raised.get(key, 0) + raised
        for other in self.live:
            if other not in (seat, bettor) and other not in self.all_in:
                key = (seat, other)
                self.strong_facing_others[key] = self.strong_facing_others.get(key, 0) + 1
                self.strong_raised_others[key] = self.strong_raised_others.get(key, 0) + raised

    def _judge(self, kind: str, seat: int, amount: int, to_call: int) -> None:
        # What the decision could give away at most: a fold the pot, a call or bet its chips. Below
        # `MIN_JUDGED_BIG_BLINDS` it cannot matter to any verdict, so its equity is not computed
        # (most pre-flop folds and blind calls: the bulk of the decisions and of the work).
        at_stake = self.pot + to_call if kind == "FOLD" else amount
        if at_stake < MIN_JUDGED_BIG_BLINDS * self.record.big_blind:
            return
        equity = self.equity(seat)
        if kind == "FOLD" and to_call > 0:
            # A fold gives away at most what the folder had put in: a player who folds everything
            # loses blinds, not the pots they might have won.
            invested = self.invested.get(seat, 0)
            given = min(equity * (self.pot + to_call) - to_call, invested)
            receiver = self._top_bettor(seat)
            self._give(seat, receiver, given, invested)
            if equity >= STRONG_FOLD_EQUITY and given > 0:
                key = (seat, receiver)
                self.strong_folds[key] = self.strong_folds.get(key, 0) + 1
        elif kind == "CALL":
            self._give(seat, self._top_bettor(seat), amount - equity * (self.pot + amount), amount, call=True)
        elif kind in ("BET", "RAISE"):
            self.pending.append((seat, amount, equity, self.pot))


def _winner_shares(record: history_pb2.HandRecord) -> dict[str, float]:
    won = {s.player_id: s.net_result for s in record.seats if s.net_result > 0}
    total = sum(won.values())
    return {player: amount / total for player, amount in won.items()} if total else {}


def _squeezes(walk: _Walk, first: int, second: int) -> int:
    """Streets where both bet or raised around a third player who folded to it, after which the two
    did not contest the pot: one of them folded to the other on that street, or the hand went on
    to at least one more street between them and no later street had a bet."""
    count = 0
    for index, street in enumerate(walk.streets):
        if first not in street.aggressors or second not in street.aggressors:
            continue
        first_aggression = street.aggression_positions[0]
        caught = [
            s for s, position in street.folded if s not in (first, second) and position > first_aggression
        ]
        if not caught:
            continue
        folded_between = any(s in (first, second) for s, _ in street.folded)
        later = walk.streets[index + 1 :]
        quiet = bool(later) and all(not s.aggressors for s in later)
        if folded_between or quiet:
            count += 1
    return count


def _whipsaw(walk: _Walk, first: int, second: int) -> tuple[int, int]:
    """(chance, whipsaw), each 0 or 1. A chance: on some street both bet or raised while a third
    player was still live when the second of them did (neither of the two all in at its start), and
    every third player folded on it, leaving the two alone. A whipsaw: after such a squeeze the two
    did not contest the pot (neither bet or raised again, and the hand did not end with both live
    and one of them all in). Honest players squeezed together play the pot out as their cards say;
    colluders give it to each other."""
    chance = 0
    two = {first, second}
    for street in walk.streets:
        if first not in street.first_aggression or second not in street.first_aggression:
            continue
        thirds = street.live_at_start - two
        both = max(street.first_aggression[first], street.first_aggression[second])
        caught = [s for s in thirds if street.fold_positions.get(s, both + 1) > both]
        if not caught or street.all_in_at_start & two:
            continue  # nobody was left between the two when both had bet or raised
        folds = [street.fold_positions.get(s) for s in thirds]
        if any(position is None for position in folds):
            continue  # a third player stayed in the pot: the squeeze did not work
        chance = 1
        last_fold = max(p for p in folds if p is not None)
        if any(walk.last_aggression.get(s, 0) > last_fold for s in two):
            continue  # they bet into each other once alone
        if two <= walk.live and walk.all_in & two:
            continue  # they played it out all in
        return 1, 1
    return chance, 0


def _whipsaws(walk: _Walk, first: history_pb2.HandSeat, second: history_pb2.HandSeat) -> tuple[int, int, int]:
    """(chance, whipsaw given by first to second, by second to first): the one who gave the pot up
    is the one of the two who came out of the hand worse."""
    chance, whipsaw = _whipsaw(walk, first.seat, second.seat)
    if not whipsaw:
        return chance, 0, 0
    return (1, 1, 0) if first.net_result < second.net_result else (1, 0, 1)


def _heads_up(walk: _Walk, first: int, second: int) -> tuple[int, int]:
    streets = passive = 0
    for street in walk.streets:
        if street.name == "PREFLOP":
            continue
        if street.live_at_start != {first, second} or street.all_in_at_start & {first, second}:
            continue
        streets += 1
        passive += not street.aggressors
    return streets, passive


def hand_evidence(record: history_pb2.HandRecord) -> HandEvidence | None:
    """The evidence of one full record; None for voided hands, house games and hands without blinds."""
    if (
        record.voided
        or record.variant not in POKER_VARIANTS
        or record.big_blind <= 0
        or len(record.seats) < 2
    ):
        return None
    walk = _Walk(record)
    walk.run()
    shares = _winner_shares(record)
    seats = {s.player_id: s for s in record.seats}
    flop_multiway = len(walk.streets) > 1 and len(walk.streets[1].live_at_start) >= 3
    heads_up = len(record.seats) == 2
    pairs = []
    for first_id, second_id in combinations(sorted(seats), 2):
        first, second = seats[first_id], seats[second_id]
        evidence = PairEvidence(first_id, second_id)
        for giver, receiver, direction in ((first, second, "second"), (second, first, "first")):
            share = shares.get(receiver.player_id, 0.0)
            if giver.net_result < 0 and share:
                setattr(evidence, f"chips_to_{direction}", round(-giver.net_result * share))
            key = (giver.seat, receiver.seat)
            # Heads-up, calls are judged by where the chips ended (issue 43): a player's calls give
            # away no more than the player lost in the hand. A weak call that builds a pot the
            # caller then wins (the other side folds it away) gave nothing; a hopeless call that
            # lost, up to its cost. At a table of more (where the verdict compares the pair with
            # each player's play against everyone else) a call is judged on its equity alone: there,
            # discounting a random caller's lucky wins made one honest pair look one-way.
            lost = max(0, -giver.net_result) if heads_up else INFINITY
            gift = walk.gift.get(key, 0.0) + min(walk.call_gift.get(key, 0.0), lost)
            blatant = walk.blatant.get(key, 0.0) + min(walk.call_blatant.get(key, 0.0), lost)
            setattr(evidence, f"gift_to_{direction}", round(gift))
            setattr(evidence, f"blatant_to_{direction}", round(blatant))
            setattr(evidence, f"strong_folds_to_{direction}", walk.strong_folds.get(key, 0))
            if walk.strong_facing or walk.strong_facing_others:
                setattr(evidence, f"strong_facing_to_{direction}", walk.strong_facing.get(key, 0))
                setattr(evidence, f"strong_raised_to_{direction}", walk.strong_raised.get(key, 0))
                setattr(
                    evidence, f"strong_facing_others_to_{direction}", walk.strong_facing_others.get(key, 0)
                )
                setattr(
                    evidence, f"strong_raised_others_to_{direction}", walk.strong_raised_others.get(key, 0)
                )
        evidence.heads_up_streets, evidence.passive_streets = _heads_up(walk, first.seat, second.seat)
        evidence.squeezes = _squeezes(walk, first.seat, second.seat)
        evidence.whipsaw_chances, evidence.whipsaws_to_second, evidence.whipsaws_to_first = _whipsaws(
            walk, first, second
        )
        evidence.with_others = int(len(record.seats) > 2)
        if flop_multiway:
            evidence.multiway = int({first.seat, second.seat} <= walk.streets[1].live_at_start)
        evidence.shared_device = int(
            bool(first.client_fingerprint) and first.client_fingerprint == second.client_fingerprint
        )
        evidence.shared_network = int(
            bool(first.network_fingerprint) and first.network_fingerprint == second.network_fingerprint
        )
        pairs.append(evidence)
    return HandEvidence(
        record.hand_id,
        record.table_id,
        int(record.pool),
        int(record.big_blind),
        tuple(pairs),
        decision_timings(record),
    )


def players_of(pairs: Iterable[PairEvidence]) -> set[str]:
    return {p for pair in pairs for p in (pair.first, pair.second)}
