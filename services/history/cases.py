"""Fair-play cases (rules 17): what the evidence of a pair's hands adds up to, pure, no I/O.

Every hand adds its `detectors.PairEvidence` to the running totals of each pair of players in its
pool (`PairTotals.add`; the storage keeps the same sums). The verdicts below read the totals, so a
case grows with the evidence: each new hand updates the chips moved, the gifts, the hands and the
last time seen. Amounts that are compared across tables are in hundredths of a big blind of the
hand they came from ("cbb"), so stakes never mix.

Verdicts and their thresholds (their false-positive rate on the suite's honest bots is measured by
tests/history/test_fair_play_detectors.py and written in docs/integrity.md):

- CHIP_DUMPING (one way, giver to receiver), over at least `DUMPING_MIN_HANDS` hands together: the
  giver's blatant gifts to the receiver (chips given away by decisions the cards did not justify)
  came in at least `DUMPING_MIN_GIFT_HANDS` hands and add up to at least `DUMPING_MIN_GIFT_BB`,
  both at least `DUMPING_ONE_WAY_RATIO` times the gifts back (in hands and in chips), the chips
  moved net at least `DUMPING_MIN_NET_BB`,
  and the gifts are targeted: per hand together, at least `DUMPING_CONCENTRATION` times the
  giver's gifts per hand with everyone else (when the giver has played `BASELINE_MIN_HANDS` pair
  hands with others). Without that baseline (heads-up) the record must be long and lopsided: at
  least `HEADS_UP_MIN_HANDS` hands, `HEADS_UP_MIN_GIFT_HANDS` gift hands, `HEADS_UP_ONE_WAY_RATIO`
  times the chips and `HEADS_UP_ONE_WAY_HANDS_RATIO` times the hands given back (plus one); heads-up
  a call's gift counts only up to what the caller lost in the hand (detectors.py, issue 43), so a
  receiver's weak calls into pots the dumper then folds away are no gifts back. A poor player loses to everyone
  alike; a dumper loses to one. Each hand's blatant gift counts up to `BLATANT_CLIP_BB`.
- COLLUSION (both ways): soft play, at least `SOFT_PLAY_MIN_STREETS` post-flop streets on which the
  two were alone in the pot and at least `SOFT_PLAY_PASSIVE_SHARE` of them went by without a bet
  (checking it down together). Squeezes of a third player (`detectors.PairEvidence.squeezes`, all-ins
  between the two counted as not contested) are evidence only: they add to the score and the summary
  of a case, and open none by themselves; WHIPSAW below judges squeezes with its own stricter count.
- MULTIWAY_SOFT_PLAY (both ways): soft play with a third player in the pot. Each of the two faced
  the other's bet after the flop with a strong hand at least `MULTIWAY_MIN_CHANCES` times, and a
  third player's bet (the other live) at least `MULTIWAY_MIN_OTHERS` times, and for each of them
  so few raises into the other are unlikely given their raises of third players: the score
  (`multiway_soft_play_score`, the smaller of the two `-log10` binomial tails) is at least
  `MULTIWAY_MIN_SCORE`.
- WHIPSAW (both ways): squeezing third players. Over at least `WHIPSAW_MIN_HANDS` hands together,
  at least `WHIPSAW_MIN` hands in which both bet or raised around third players who all folded and
  the two then left the pot to each other, in at least `WHIPSAW_MIN_SHARE` of the hands in which
  such a squeeze left them alone, and targeted: at least `WHIPSAW_CONCENTRATION` times each
  player's whipsaws per hand with everyone else (floor `WHIPSAW_RATE_FLOOR`).
- SHARED_DEVICE (multi-accounting): the two were dealt into a hand with the same device signal
  (`shared_device_hands`). The same network signal alone (a household, a NAT) opens no case; it
  is shown in the evidence and corroborates a dumping case against the receiver.

- AUTOMATION (one player, any pool): at least `AUTOMATION_MIN_DECISIONS` timed decisions, and
  either at least `AUTOMATION_FAST_SHARE` of them faster than 250 ms (faster than a person reads
  the table and clicks) or at least `AUTOMATION_ONE_BUCKET_SHARE` of them in one bucket of
  `detectors.DECISION_TIME_BOUNDS_MS` (a machine's steady pace; a person's times spread from quick
  folds to long thoughts). Players the operator allows to automate (the house's own bots) are not
  judged (rules 17: automation "without Ampex's permission").

Framing (a player who loses on purpose to an innocent one): a dumping case names the giver as the
suspect and the receiver as the beneficiary only, unless something the receiver did corroborates
it: a shared device or network with the giver, or soft play between them. Losing to someone
cannot by itself make them a suspect.
"""

from __future__ import annotations

import enum
import hashlib
import math
import operator
from dataclasses import dataclass, fields, replace

from services.history.detectors import PairEvidence

DUMPING_MIN_HANDS = 60
DUMPING_MIN_GIFT_HANDS = 10
BLATANT_CLIP_BB = 20
DUMPING_MIN_GIFT_BB = 25
DUMPING_MIN_NET_BB = 30
DUMPING_ONE_WAY_RATIO = 4
DUMPING_CONCENTRATION = 4
BASELINE_MIN_HANDS = 100
HEADS_UP_MIN_HANDS = 100
HEADS_UP_MIN_GIFT_HANDS = 10  # issue 43: was 15
HEADS_UP_ONE_WAY_RATIO = 10  # in chips
HEADS_UP_ONE_WAY_HANDS_RATIO = 5  # in hands, with one hand back added (issue 43: was 10)
SOFT_PLAY_MIN_STREETS = 12
SOFT_PLAY_PASSIVE_SHARE = 0.9
MULTIWAY_MIN_CHANCES = 8
MULTIWAY_MIN_OTHERS = 8
MULTIWAY_MIN_SCORE = 5.0
WHIPSAW_MIN_HANDS = 100
WHIPSAW_MIN = 20
WHIPSAW_MIN_SHARE = 0.75
WHIPSAW_CONCENTRATION = 3
WHIPSAW_RATE_FLOOR = 0.01
AUTOMATION_MIN_DECISIONS = 200
AUTOMATION_FAST_SHARE = 0.5
AUTOMATION_ONE_BUCKET_SHARE = 0.95
EVIDENCE_HANDS = 50


class CaseKind(enum.StrEnum):
    CHIP_DUMPING = "CHIP_DUMPING"
    COLLUSION = "COLLUSION"
    SHARED_DEVICE = "SHARED_DEVICE"
    AUTOMATION = "AUTOMATION"
    MULTIWAY_SOFT_PLAY = "MULTIWAY_SOFT_PLAY"
    WHIPSAW = "WHIPSAW"


class Role(enum.StrEnum):
    SUSPECT = "SUSPECT"
    BENEFICIARY = "BENEFICIARY"


def _cbb(chips: int, big_blind: int) -> int:
    return round(chips * 100 / big_blind)


@dataclass(frozen=True)
class PairTotals:
    """The running sums of a pair (`first` < `second`) in one pool; `*_to_second` is what `first`
    gave `second`. `chips_*` are chips, `*_cbb` hundredths of a big blind."""

    pool: int
    first: str
    second: str
    hands: int = 0
    chips_to_second: int = 0
    chips_to_first: int = 0
    chips_cbb_to_second: int = 0
    chips_cbb_to_first: int = 0
    gift_cbb_to_second: int = 0
    gift_cbb_to_first: int = 0
    blatant_cbb_to_second: int = 0
    blatant_cbb_to_first: int = 0
    blatant_hands_to_second: int = 0
    blatant_hands_to_first: int = 0
    strong_folds_to_second: int = 0
    strong_folds_to_first: int = 0
    heads_up_streets: int = 0
    passive_streets: int = 0
    squeezes: int = 0
    multiway_hands: int = 0
    hands_with_others: int = 0
    shared_device_hands: int = 0
    shared_network_hands: int = 0
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

    def add(self, evidence: PairEvidence, big_blind: int) -> PairTotals:
        return replace(
            self,
            **{name: getattr(self, name) + value for name, value in increments(evidence, big_blind).items()},
        )

    def flipped(self) -> PairTotals:
        """The same totals seen from `second` (swaps every directional figure). Several times per pair
        per recorded hand: the fields are read through one getter built once (_FLIP, 4 us against
        19 for a field-by-field `replace`)."""
        return PairTotals(*_FLIP(self))


COUNTERS = tuple(f.name for f in fields(PairTotals) if f.name not in ("pool", "first", "second"))


def _flip_source(name: str) -> str:
    """The field of a pair's totals that `name` takes its value from once the pair is seen from the
    other player."""
    if name in ("first", "second"):
        return "second" if name == "first" else "first"
    if name.endswith("_to_second"):
        return name.removesuffix("_to_second") + "_to_first"
    if name.endswith("_to_first"):
        return name.removesuffix("_to_first") + "_to_second"
    return name


_FLIP = operator.attrgetter(*(_flip_source(f.name) for f in fields(PairTotals)))


def increments(evidence: PairEvidence, big_blind: int) -> dict[str, int]:
    """What one hand adds to each counter of `PairTotals` (the storage's upsert adds the same)."""
    return {
        "hands": 1,
        "chips_to_second": evidence.chips_to_second,
        "chips_to_first": evidence.chips_to_first,
        "chips_cbb_to_second": _cbb(evidence.chips_to_second, big_blind),
        "chips_cbb_to_first": _cbb(evidence.chips_to_first, big_blind),
        "gift_cbb_to_second": _cbb(evidence.gift_to_second, big_blind),
        "gift_cbb_to_first": _cbb(evidence.gift_to_first, big_blind),
        # Clipped per hand: a dump is repeated, while one honest call-off of a whole stack is one
        # event, which must not outweigh many small ones.
        "blatant_cbb_to_second": min(_cbb(evidence.blatant_to_second, big_blind), BLATANT_CLIP_BB * 100),
        "blatant_cbb_to_first": min(_cbb(evidence.blatant_to_first, big_blind), BLATANT_CLIP_BB * 100),
        "blatant_hands_to_second": int(evidence.blatant_to_second >= big_blind),
        "blatant_hands_to_first": int(evidence.blatant_to_first >= big_blind),
        "strong_folds_to_second": evidence.strong_folds_to_second,
        "strong_folds_to_first": evidence.strong_folds_to_first,
        "heads_up_streets": evidence.heads_up_streets,
        "passive_streets": evidence.passive_streets,
        "squeezes": evidence.squeezes,
        "multiway_hands": evidence.multiway,
        "hands_with_others": evidence.with_others,
        "shared_device_hands": evidence.shared_device,
        "shared_network_hands": evidence.shared_network,
        "strong_facing_to_second": evidence.strong_facing_to_second,
        "strong_facing_to_first": evidence.strong_facing_to_first,
        "strong_raised_to_second": evidence.strong_raised_to_second,
        "strong_raised_to_first": evidence.strong_raised_to_first,
        "strong_facing_others_to_second": evidence.strong_facing_others_to_second,
        "strong_facing_others_to_first": evidence.strong_facing_others_to_first,
        "strong_raised_others_to_second": evidence.strong_raised_others_to_second,
        "strong_raised_others_to_first": evidence.strong_raised_others_to_first,
        "whipsaw_chances": evidence.whipsaw_chances,
        "whipsaws_to_second": evidence.whipsaws_to_second,
        "whipsaws_to_first": evidence.whipsaws_to_first,
    }


@dataclass(frozen=True)
class Baseline:
    """A giver's figures over all their pairs in the pool (this pair included)."""

    pair_hands: int
    blatant_cbb: int
    whipsaws: int = 0


@dataclass(frozen=True)
class CasePlayer:
    player_id: str
    role: Role
    why: str


@dataclass(frozen=True)
class Verdict:
    """A pair's case as the evidence stands: kind, who, score against its threshold, in words."""

    kind: CaseKind
    giver: str  # CHIP_DUMPING: the giver; otherwise `first`
    receiver: str
    score: float
    threshold: float
    players: tuple[CasePlayer, ...]
    summary: str


def dumping_gate(totals: PairTotals) -> bool:
    """Cheap first check (no baseline yet): could `first` be dumping to `second` at all?"""
    blatant = totals.blatant_cbb_to_second
    return (
        totals.hands >= DUMPING_MIN_HANDS
        and totals.blatant_hands_to_second >= DUMPING_MIN_GIFT_HANDS
        and totals.blatant_hands_to_second >= DUMPING_ONE_WAY_RATIO * totals.blatant_hands_to_first
        and blatant >= DUMPING_MIN_GIFT_BB * 100
        and blatant >= DUMPING_ONE_WAY_RATIO * totals.blatant_cbb_to_first
        and totals.chips_cbb_to_second - totals.chips_cbb_to_first >= DUMPING_MIN_NET_BB * 100
    )


def _soft_play(totals: PairTotals) -> bool:
    return (
        totals.heads_up_streets >= SOFT_PLAY_MIN_STREETS
        and totals.passive_streets >= SOFT_PLAY_PASSIVE_SHARE * totals.heads_up_streets
    )


def dumping(totals: PairTotals, baseline: Baseline) -> Verdict | None:
    """`first` dumping to `second` (flip the totals for the other way)."""
    if not dumping_gate(totals):
        return None
    rate = totals.blatant_cbb_to_second / totals.hands
    other_hands = baseline.pair_hands - totals.hands
    if other_hands >= BASELINE_MIN_HANDS:
        other_rate = max(0, baseline.blatant_cbb - totals.blatant_cbb_to_second) / other_hands
        # A floor of a tenth of a big blind per hand, so a giver who never errs elsewhere still
        # needs a real rate of gifts to this receiver.
        targeted = rate >= DUMPING_CONCENTRATION * max(other_rate, 10)
        basis = f"{rate / 100:.2f} bb per hand together against {other_rate / 100:.2f} with everyone else"
    else:
        # Without others to compare with, a poor player losing to a good one looks alike for a
        # while: only a long, lopsided record (the receiver almost never errs back) is a case.
        gift_hands, back_hands = totals.blatant_hands_to_second, totals.blatant_hands_to_first
        targeted = (
            totals.hands >= HEADS_UP_MIN_HANDS
            and gift_hands >= HEADS_UP_MIN_GIFT_HANDS
            and gift_hands >= HEADS_UP_ONE_WAY_HANDS_RATIO * (back_hands + 1)
            and totals.blatant_cbb_to_second >= HEADS_UP_ONE_WAY_RATIO * totals.blatant_cbb_to_first
        )
        basis = f"{rate / 100:.2f} bb per hand together (too few hands with others to compare)"
    if not targeted:
        return None
    blatant_bb = totals.blatant_cbb_to_second / 100
    net_bb = (totals.chips_cbb_to_second - totals.chips_cbb_to_first) / 100
    receiver_why = (
        "received the chips; nothing the receiver did corroborates it (no shared device or network, "
        "no soft play)"
    )
    receiver_role = Role.BENEFICIARY
    corroboration = _corroboration(totals)
    if corroboration:
        receiver_role, receiver_why = Role.SUSPECT, f"received the chips, and {corroboration}"
    players = (
        CasePlayer(
            totals.first,
            Role.SUSPECT,
            f"gave away {blatant_bb:.1f} bb by decisions the cards did not justify",
        ),
        CasePlayer(totals.second, receiver_role, receiver_why),
    )
    summary = (
        f"{totals.first} lost {net_bb:.1f} bb net ({totals.chips_to_second - totals.chips_to_first} chips) "
        f"to {totals.second} in {totals.hands} hands together; blatant gifts {blatant_bb:.1f} bb against "
        f"{totals.blatant_cbb_to_first / 100:.1f} bb back, {basis}; {totals.strong_folds_to_second} "
        "strong folds"
    )
    score = (totals.blatant_cbb_to_second - totals.blatant_cbb_to_first) / 100
    return Verdict(
        CaseKind.CHIP_DUMPING, totals.first, totals.second, score, DUMPING_MIN_GIFT_BB, players, summary
    )


def _corroboration(totals: PairTotals) -> str:
    found = []
    if totals.shared_device_hands:
        found.append(f"shared a device signal with the giver in {totals.shared_device_hands} hands")
    if totals.shared_network_hands:
        found.append(f"shared a network signal with the giver in {totals.shared_network_hands} hands")
    if _soft_play(totals):
        found.append("played softly with the giver")
    return " and ".join(found)


def collusion(totals: PairTotals) -> Verdict | None:
    if not _soft_play(totals):
        return None
    score = max(0.0, totals.passive_streets - 0.5 * totals.heads_up_streets) + totals.squeezes
    summary = (
        f"{totals.first} and {totals.second}: {totals.passive_streets} of {totals.heads_up_streets} post-flop "
        f"streets alone together went by without a bet; {totals.squeezes} squeezes of a third player in "
        f"{totals.hands_with_others} hands with others; {totals.hands} hands together"
    )
    players = tuple(CasePlayer(p, Role.SUSPECT, "soft play") for p in (totals.first, totals.second))
    return Verdict(
        CaseKind.COLLUSION, totals.first, totals.second, score, SOFT_PLAY_MIN_STREETS / 2, players, summary
    )


def _binomial_at_most(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), 0 < p < 1 (summed in logs: n may be in the thousands)."""
    log_p, log_q = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)
    return sum(
        math.exp(base - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q)
        for i in range(k + 1)
    )


def _one_way_score(facing: int, raised: int, others: int, raised_others: int) -> float:
    rate = (raised_others + 1) / (others + 2)
    if not facing or raised >= rate * facing / 2:
        return 0.0
    return -math.log10(max(_binomial_at_most(raised, facing, rate), 1e-300))


def multiway_soft_play_score(totals: PairTotals) -> float:
    """How unlikely the pair's raises into each other are, given how often each raises third players,
    for the one of the two it is less unlikely for (both must avoid raising each other). For one
    player: `-log10 P(X <= raised)` for X ~ Binomial(facing, rate), where `facing` are their
    decisions with a strong hand facing the other's bet in a multiway pot after the flop, `raised`
    those that raised, and `rate` their raise rate with a strong hand facing a third player's bet
    with the other live (Laplace: (raised + 1) / (faced + 2)); 0 when they raise into the other at
    least half as often as into third players. It grows with every chance they pass up."""
    return min(
        _one_way_score(
            totals.strong_facing_to_second,
            totals.strong_raised_to_second,
            totals.strong_facing_others_to_second,
            totals.strong_raised_others_to_second,
        ),
        _one_way_score(
            totals.strong_facing_to_first,
            totals.strong_raised_to_first,
            totals.strong_facing_others_to_first,
            totals.strong_raised_others_to_first,
        ),
    )


def multiway_soft_play(totals: PairTotals) -> Verdict | None:
    """Two players who, with a third player in the pot after the flop, raise third players' bets
    with strong hands and only call each other's: each of the two with at least
    `MULTIWAY_MIN_CHANCES` strong hands facing the other's bet and `MULTIWAY_MIN_OTHERS` facing a
    third player's, and a score (`multiway_soft_play_score`) of at least `MULTIWAY_MIN_SCORE`."""
    if (
        min(totals.strong_facing_to_second, totals.strong_facing_to_first) < MULTIWAY_MIN_CHANCES
        or min(totals.strong_facing_others_to_second, totals.strong_facing_others_to_first)
        < MULTIWAY_MIN_OTHERS
    ):
        return None
    score = multiway_soft_play_score(totals)
    if score < MULTIWAY_MIN_SCORE:
        return None

    def why(facing: int, raised: int, others: int, raised_others: int) -> str:
        return (
            f"with a strong hand and a third player in the pot raised {raised} of {facing} bets of the "
            f"other and {raised_others} of {others} bets of third players"
        )

    players = (
        CasePlayer(
            totals.first,
            Role.SUSPECT,
            why(
                totals.strong_facing_to_second,
                totals.strong_raised_to_second,
                totals.strong_facing_others_to_second,
                totals.strong_raised_others_to_second,
            ),
        ),
        CasePlayer(
            totals.second,
            Role.SUSPECT,
            why(
                totals.strong_facing_to_first,
                totals.strong_raised_to_first,
                totals.strong_facing_others_to_first,
                totals.strong_raised_others_to_first,
            ),
        ),
    )
    raised = totals.strong_raised_to_second + totals.strong_raised_to_first
    facing = totals.strong_facing_to_second + totals.strong_facing_to_first
    raised_others = totals.strong_raised_others_to_second + totals.strong_raised_others_to_first
    others = totals.strong_facing_others_to_second + totals.strong_facing_others_to_first
    summary = (
        f"{totals.first} and {totals.second}, in multiway pots with a strong hand: raised {raised} of "
        f"{facing} bets of each other against {raised_others} of {others} bets of third players; "
        f"{totals.hands} hands together"
    )
    return Verdict(
        CaseKind.MULTIWAY_SOFT_PLAY,
        totals.first,
        totals.second,
        round(score, 2),
        MULTIWAY_MIN_SCORE,
        players,
        summary,
    )


def whipsaw_gate(totals: PairTotals) -> bool:
    """Cheap first check (no baselines yet): could the two be whipsawing third players at all?"""
    whipsaws = totals.whipsaws_to_second + totals.whipsaws_to_first
    return (
        totals.hands >= WHIPSAW_MIN_HANDS
        and whipsaws >= WHIPSAW_MIN
        and whipsaws >= WHIPSAW_MIN_SHARE * totals.whipsaw_chances
    )


def whipsaw(totals: PairTotals, baselines: dict[str, Baseline]) -> Verdict | None:
    """Two players who bet and raise around third players until they fold, then leave the pot to
    each other: over at least `WHIPSAW_MIN_HANDS` hands together, at least `WHIPSAW_MIN` whipsaws, in
    at least `WHIPSAW_MIN_SHARE` of the hands in which their bets and raises left them alone, and
    targeted: per hand together at least `WHIPSAW_CONCENTRATION` times the whipsaws per hand of each
    of the two with everyone else (floor `WHIPSAW_RATE_FLOOR`). A player who bets and gives up to
    any raise makes whipsaws with every raiser alike; colluders make them with each other."""
    if not whipsaw_gate(totals):
        return None
    whipsaws = totals.whipsaws_to_second + totals.whipsaws_to_first
    rate = whipsaws / totals.hands
    elsewhere = []
    for player in (totals.first, totals.second):
        baseline = baselines.get(player)
        if baseline is None:
            return None
        other_hands = baseline.pair_hands - totals.hands
        other_rate = max(0, baseline.whipsaws - whipsaws) / other_hands if other_hands > 0 else 0.0
        if rate < WHIPSAW_CONCENTRATION * max(other_rate, WHIPSAW_RATE_FLOOR):
            return None
        elsewhere.append(f"{player} {other_rate:.3f}")
    summary = (
        f"{totals.first} and {totals.second}: {totals.whipsaw_chances} hands in which both bet or raised with a "
        f"third player in the pot and the third players folded; in {whipsaws} of them the two did not "
        f"contest the pot afterwards ({totals.first} gave it up {totals.whipsaws_to_second} times, "
        f"{totals.second} {totals.whipsaws_to_first}); {rate:.3f} a hand together against "
        f"{' and '.join(elsewhere)} with everyone else; {totals.hands} hands together"
    )
    why = (
        f"bet and raised around third players until they folded, then left the pot to the other "
        f"({whipsaws} of {totals.whipsaw_chances} hands)"
    )
    players = tuple(CasePlayer(p, Role.SUSPECT, why) for p in (totals.first, totals.second))
    return Verdict(
        CaseKind.WHIPSAW, totals.first, totals.second, float(whipsaws), WHIPSAW_MIN, players, summary
    )


def shared_device(totals: PairTotals) -> Verdict | None:
    # A shared network alone is common (a household, a NAT, a mobile carrier): it corroborates
    # other evidence but opens no case by itself.
    if not totals.shared_device_hands:
        return None
    summary = (
        f"{totals.first} and {totals.second} were dealt into {totals.shared_device_hands} hands with one device "
        f"signal and {totals.shared_network_hands} with one network signal ({totals.hands} hands together)"
    )
    players = tuple(CasePlayer(p, Role.SUSPECT, "multi-accounting") for p in (totals.first, totals.second))
    score = 2.0 * totals.shared_device_hands + totals.shared_network_hands
    return Verdict(CaseKind.SHARED_DEVICE, totals.first, totals.second, score, 1.0, players, summary)


def verdicts(totals: PairTotals, baselines: dict[str, Baseline]) -> list[Verdict]:
    """Every case the pair's totals make, given the baselines of the players the gates let through."""
    found = []
    for oriented in (totals, totals.flipped()):
        baseline = baselines.get(oriented.first)
        if baseline is not None:
            verdict = dumping(oriented, baseline)
            if verdict is not None:
                found.append(verdict)
    for verdict in (
        collusion(totals),
        multiway_soft_play(totals),
        whipsaw(totals, baselines),
        shared_device(totals),
    ):
        if verdict is not None:
            found.append(verdict)
    return found


def givers_to_check(totals: PairTotals) -> list[str]:
    """The players whose baseline the verdicts need: a giver the cheap dumping gate lets through, and
    both players when the whipsaw gate does."""
    found = [oriented.first for oriented in (totals, totals.flipped()) if dumping_gate(oriented)]
    if whipsaw_gate(totals):
        found.extend(player for player in (totals.first, totals.second) if player not in found)
    return found


def case_id(kind: CaseKind, pool: int, giver: str, receiver: str) -> str:
    """One case per kind, pool and pair (ordered for dumping); it is updated, never duplicated."""
    digest = hashlib.sha256(f"{kind}\x00{pool}\x00{giver}\x00{receiver}".encode()).hexdigest()[:32]
    return f"{kind.lower().replace('_', '-')}:{digest}"


@dataclass(frozen=True)
class TimingTotals:
    """A player's timed decisions so far, per bucket of `detectors.DECISION_TIME_BOUNDS_MS`."""

    player_id: str
    buckets: tuple[int, ...]

    @property
    def decisions(self) -> int:
        return sum(self.buckets)

    def add(self, buckets: tuple[int, ...]) -> TimingTotals:
        return TimingTotals(self.player_id, tuple(a + b for a, b in zip(self.buckets, buckets, strict=True)))


def automation(totals: TimingTotals) -> Verdict | None:
    decisions = totals.decisions
    if decisions < AUTOMATION_MIN_DECISIONS:
        return None
    fast = totals.buckets[0] / decisions
    steady = max(totals.buckets) / decisions
    if fast < AUTOMATION_FAST_SHARE and steady < AUTOMATION_ONE_BUCKET_SHARE:
        return None
    why = f"{fast:.0%} of {decisions} decisions under 250 ms, {steady:.0%} in one time bucket"
    summary = f"{totals.player_id}: {why} (buckets {list(totals.buckets)})"
    player = CasePlayer(totals.player_id, Role.SUSPECT, f"decision times of a machine: {why}")
    return Verdict(
        CaseKind.AUTOMATION,
        totals.player_id,
        "",
        round(100 * max(fast, steady), 1),
        100 * AUTOMATION_FAST_SHARE,
        (player,),
        summary,
    )
