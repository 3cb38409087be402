"""The pure, deterministic core of a house-game table's rounds (issue 30; docs/house-games.md
"The round core").

No asyncio, no gRPC, no clock, no I/O: every time is an input, as in the cash table's core
(`services/table/cash/core.py`). The shell feeds the core inputs and gets back, for each, a `Step`: the
core's new state, the journal entries to append (durably, before anybody hears of the step), the
notices to publish (each to one player: rounds are private) and the effects to run. The state it is
given is never changed (the state is immutable; a step builds a new one), so a shell whose append
fails keeps the state it had and nothing happened.

The journal entries are the round journal's (`services/table/house/house_journal.py`: `open`, `dealt`,
`decision`, `closed`, with the same keys) plus five that older journals lack:
`refunding` (the round will be refunded), `voiding` (never dealt and nothing kept: closed once fairness
knows its hand is void), `paid` / `unpaid` (a decision's stake acknowledged or not) and `resumed` (a
round rebuilt by the table's next opener: which logged decisions the cashier had, and the box's new
clock). `apply_entry` is the only way the state changes, live and in a replay, so
`replay(entries, decks)` is exactly the state the core had after them. The deck is not in the
journal (it stays with fairness): a replay is given the decks the seal returns.

Inputs: `Bets`, `StakeAnswer`, `Sealed`, `SealFailed`, `Decide`, `PayAnswer`, `Tick`,
`SettleAnswer`, `RefundAnswer`, `VoidRevealed`, `Reopen`, `Resume` (see each). Effects: `Stake`, `Seal`, `Pay`,
`Settle`, `Refund`, `RevealVoid`, `Finish`; `outstanding(state)` lists the calls the rounds wait for
(a retry, and a next owner, sends the same ones: their ids are the round's own).

The house bank's cover is the ledger's (issue 44): a round's stake batch ends with a transfer of its
stakes plus its largest possible payout from the pool's house bank to the pool's cover account
(`hgr:<round>:cover`), each costly decision's stake is reserved with it (`hgr:<round>:c<box>:...`, in
the same linked batch), and the settlement and refund batches start by giving the whole reservation
back (`hgr:<round>:free`). The cashier refuses a batch that would take the bank below zero, so the
rounds of every table and shard of a pool never promise more than the bank holds.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from house_games import (
    BoxWager,
    HouseGameError,
    IllegalDecisionError,
    InvalidWagerError,
    RoundSettlement,
)
from service_runtime.errors import (
    AlreadyExists,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Unavailable,
)
from services.table.house.house_round import (
    Decision,
    HouseRoom,
    LiveRound,
    PlannedTransfer,
    TakenDecision,
    initial_stake,
    paid_back,
)

RESUMED_NOTE = "RESUMED after a shard restart or takeover"
_INVALID_DECISION_REASONS = frozenset({"BAD_EXCHANGE_CARDS", "INSURANCE_OUT_OF_RANGE"})


def house_room_error(error: HouseGameError) -> DomainError:
    """The library's refusal as the table answers it (reasons pass through)."""
    if isinstance(error, InvalidWagerError) or error.reason in _INVALID_DECISION_REASONS:
        return InvalidArgument(error.reason, str(error))
    if error.reason == "UNKNOWN_BOX":
        return NotFound(error.reason, str(error), {"field": "box"})
    # A deck run out is the round's state, not the request's (the catalogue's FAILED_PRECONDITION).
    if isinstance(error, IllegalDecisionError) or error.reason == "DECK_EXHAUSTED":
        return FailedPrecondition(error.reason, str(error))
    return InvalidArgument(error.reason, str(error))


class Stage(enum.Enum):
    STAKING = "STAKING"  # opened; the stake batch is outstanding
    DEALING = "DEALING"  # staked; the seal (the deck) is outstanding
    RESUMING = "RESUMING"  # dealt, rebuilt from a journal: the deck and the cashier's word are due
    PLAYING = "PLAYING"
    SETTLING = "SETTLING"  # complete; the settlement batch is outstanding
    REFUNDING = "REFUNDING"  # never dealt: the stakes are sent again and given back
    # Never dealt and nothing kept (refused, or refunded): fairness is told the hand is void before
    # the round closes. A request's next attempt asks fairness for its hand again (the table may
    # have forgotten the round): one still "committed" would be this round again, whose stake ids
    # the cashier answers with their first answer (the refusal; or "taken" for stakes refunded).
    VOIDING = "VOIDING"
    SETTLED = "SETTLED"
    VOIDED = "VOIDED"  # refunded
    REFUSED = "REFUSED"  # the cashier refused the stakes: nothing was taken

    @property
    def open(self) -> bool:
        return self not in (Stage.SETTLED, Stage.VOIDED, Stage.REFUSED)


class Outcome(enum.Enum):
    OK = "OK"
    UNAVAILABLE = "UNAVAILABLE"  # may or may not have been applied: the same ids again
    REFUSED = "REFUSED"  # for good (funds, an account missing)


# ------------------------------------------------------------------ inputs


@dataclass(frozen=True, slots=True)
class Bets:
    """PlaceHouseBets after the shell's checks (the rules', the room's) and the fairness commitment
    (which names the round). `cover`: the round's largest possible payout beyond its stakes, reserved
    in the ledger with the stakes."""

    player: str
    request_id: str
    round_id: str
    chain: str
    commitment: str
    wagers: tuple[BoxWager, ...]
    jackpot_before: int
    cover: int
    at: float


@dataclass(frozen=True, slots=True)
class StakeAnswer:
    round_id: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Sealed:
    round_id: str
    deck: tuple[int, ...]
    at: float


@dataclass(frozen=True, slots=True)
class SealFailed:
    round_id: str


@dataclass(frozen=True, slots=True)
class Decide:
    player: str
    request_id: str
    round_id: str
    box: int
    decision: Decision
    cards: tuple[int, ...]  # EXCHANGE: the positions of the cards
    amount: int
    at: float

    @property
    def fingerprint(self) -> tuple[Any, ...]:
        return (self.round_id, self.box, self.decision.value, self.cards, self.amount)


@dataclass(frozen=True, slots=True)
class PayAnswer:
    round_id: str
    transfer: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Tick:
    at: float


@dataclass(frozen=True, slots=True)
class SettleAnswer:
    round_id: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class RefundAnswer:
    """The refund is done: the stakes were sent again and given back, or refused (nothing taken)."""

    round_id: str


@dataclass(frozen=True, slots=True)
class VoidRevealed:
    """Fairness has the round's hand voided (or refused the void for good: nothing to wait for)."""

    round_id: str


@dataclass(frozen=True, slots=True)
class Reopen:
    """The table opened again on a journal (restart, takeover): undealt rounds are refunded."""

    at: float


@dataclass(frozen=True, slots=True)
class Resume:
    """A dealt round rebuilt: its deck (sealed again) and the decisions' transfers the cashier has."""

    round_id: str
    deck: tuple[int, ...]
    paid: frozenset[str]
    at: float
    grace: float


Input = (
    Bets
    | StakeAnswer
    | Sealed
    | SealFailed
    | Decide
    | PayAnswer
    | Tick
    | SettleAnswer
    | RefundAnswer
    | VoidRevealed
    | Reopen
    | Resume
)


# ------------------------------------------------------------------ effects


@dataclass(frozen=True)
class Stake:
    round_id: str
    player: str
    # wallet -> bank, `hgr:<round>:in:<box>`; then bank -> cover, `hgr:<round>:cover` (the reservation)
    transfers: tuple[PlannedTransfer, ...]


@dataclass(frozen=True)
class Seal:
    round_id: str


@dataclass(frozen=True)
class Pay:
    round_id: str
    player: str
    transfer: PlannedTransfer  # a decision's stake, wallet -> bank
    cover: PlannedTransfer | None = None  # the same chips bank -> cover, linked with it (reserved)

    @property
    def transfers(self) -> tuple[PlannedTransfer, ...]:
        return (self.transfer,) if self.cover is None else (self.transfer, self.cover)


@dataclass(frozen=True)
class Settle:
    round_id: str
    player: str
    transfers: tuple[PlannedTransfer, ...]


@dataclass(frozen=True)
class Refund:
    round_id: str
    player: str
    stakes: tuple[PlannedTransfer, ...]  # sent again first (applied at most once)
    refunds: tuple[PlannedTransfer, ...]  # then these (the reservation back first), if the stakes were taken


@dataclass(frozen=True)
class RevealVoid:
    round_id: str


@dataclass(frozen=True)
class Finish:
    """Settled: keep and send the record, reveal the round (the shell builds the record)."""

    round_id: str
    player: str
    paid_out: int


Effect = Stake | Seal | Pay | Settle | Refund | RevealVoid | Finish


@dataclass(frozen=True)
class Notice:
    player: str  # the only player who hears of it
    round_id: str
    code: str
    text: str


# ------------------------------------------------------------------ state


@dataclass(frozen=True, slots=True)
class Logged:
    """A decision as the journal holds it: `paid` once it took effect (its stake acknowledged, or
    it cost nothing), `pending` while its stake is outstanding."""

    taken: TakenDecision
    transfer: str
    request: tuple[str, str] | None  # (player, request id); None for the clock's
    paid: bool


@dataclass(frozen=True, slots=True)
class Round:
    round_id: str
    player: str
    request_id: str
    chain: str
    commitment: str
    jackpot_before: int
    started_at: float
    cover: int
    wagers: tuple[BoxWager, ...]
    stage: Stage = Stage.STAKING
    deck: tuple[int, ...] | None = None
    logged: tuple[Logged, ...] = ()
    deadline: float | None = None
    refusals: int = 0  # a refused decision stake id stays refused: the next needs a new id
    resumed: bool = False
    paid_out: int = 0
    ending: str = ""  # VOIDING: how it closes ("refused" or "voided")
    # Its cover is a ledger reservation (every round opened since issue 44; a round an older build
    # opened keeps that build's batches, whose ids the cashier may have seen already).
    reserve: bool = False

    @property
    def pending(self) -> Logged | None:
        return next((d for d in self.logged if not d.paid), None)

    @property
    def taken(self) -> tuple[TakenDecision, ...]:
        return tuple(d.taken for d in self.logged if d.paid)

    def live(self, room: HouseRoom) -> LiveRound:
        """The library's round with the decisions that took effect (a logged one the rules refuse,
        superseded after an outage, never took effect and is skipped)."""
        if self.deck is None:
            raise ValueError("the round is not dealt")
        live = LiveRound(
            room.game, self.round_id, self.player, self.wagers, self.deck, room, self.jackpot_before
        )
        for taken in self.taken:
            try:
                live.apply(taken)
            except HouseGameError:
                continue
        return live

    @property
    def notes(self) -> list[str]:
        notes = [RESUMED_NOTE] if self.resumed else []
        notes.extend(f"TIMEOUT box {t.box} {t.decision.value}" for t in self.taken if t.timed_out)
        return notes


@dataclass(frozen=True, slots=True)
class HouseState:
    table_id: str
    room: HouseRoom  # not in the journal: the shell's
    decision_seconds: float
    rounds: Mapping[str, Round]  # by round id, in the order they opened: the open ones and the last
    # `keep_finished` finished ones (older finished rounds are forgotten as new ones open)
    latest: Mapping[str, str]  # player -> their latest round id (while that round is kept)
    bets: Mapping[tuple[str, str], tuple[str, ...]]  # (player, request id) -> its rounds, in order
    keep_finished: int = 1_000  # not in the journal: the shell's (a replay uses the same)

    def current(self, player: str) -> Round | None:
        round_id = self.latest.get(player)
        return None if round_id is None else self.rounds[round_id]

    def attempt(self, player: str, request_id: str) -> int:
        """How many rounds a PlaceHouseBets request id opened that did not deal (refunded or
        refused): its next attempt commits a new fairness hand under this count."""
        return len(self.bets.get((player, request_id), ()))

    def durable(self) -> tuple[Any, ...]:
        return (self.rounds, self.latest, self.bets)


# A table remembers this many finished rounds (their answers to a retried PlaceHouseBets or
# MakeHouseDecision, the player's last round in the view). Older ones are forgotten when a round opens,
# oldest first, so a table that runs for months holds a bounded state and each step copies a bounded
# map; a retry comes within seconds, a thousand rounds later it is a new request.
KEEP_FINISHED_ROUNDS = 1_000


def empty(
    table_id: str, room: HouseRoom, decision_seconds: float, *, keep_finished: int = KEEP_FINISHED_ROUNDS
) -> HouseState:
    return HouseState(table_id, room, decision_seconds, {}, {}, {}, keep_finished)


def _forget_finished(state: HouseState) -> HouseState:
    """The state without its oldest finished rounds beyond `keep_finished` (with their request ids
    and, where such a round was a player's latest, that player's latest). Decided by the entries
    alone (the rounds' opening order and stages), so a replay forgets the same rounds."""
    finished = [round_id for round_id, r in state.rounds.items() if not r.stage.open]
    excess = len(finished) - state.keep_finished
    if excess <= 0:
        return state
    gone = set(finished[:excess])
    return replace(
        state,
        rounds={round_id: r for round_id, r in state.rounds.items() if round_id not in gone},
        latest={player: round_id for player, round_id in state.latest.items() if round_id not in gone},
        bets={key: ids for key, ids in state.bets.items() if ids[-1] not in gone},
    )


@dataclass(frozen=True)
class Step:
    state: HouseState
    entries: tuple[dict[str, Any], ...] = ()
    notices: tuple[Notice, ...] = ()
    effects: tuple[Effect, ...] = ()
    round_id: str = ""  # the round a command's answer shows
    again: bool = False  # a retry's first answer


# ------------------------------------------------------------------ transfers


def stake_transfers(
    round_id: str, wagers: Sequence[BoxWager], reserve: int = 0
) -> tuple[PlannedTransfer, ...]:
    """The stake batch: each box's stake wallet -> bank, then (`reserve` > 0) the round's reservation
    bank -> cover, linked, so the round opens only if the bank's own money covers it."""
    stakes = tuple(
        PlannedTransfer(
            f"hgr:{round_id}:in:{w.box}", False, "bank", initial_stake(w), f"{round_id}:box{w.box}"
        )
        for w in wagers
    )
    if not reserve:
        return stakes
    return (
        *stakes,
        PlannedTransfer(f"hgr:{round_id}:cover", False, "cover", reserve, f"{round_id}:cover", "bank"),
    )


def reserved(round_: Round) -> int:
    """What the round holds in the pool's cover account: its stakes (the deal's, and every decision's
    that took effect) plus its largest possible payout beyond them; 0 for an older build's round."""
    if not round_.reserve:
        return 0
    stakes = sum(initial_stake(w) for w in round_.wagers)
    return stakes + round_.cover + sum(d.taken.cost for d in round_.logged if d.paid)


def release_transfers(round_: Round) -> tuple[PlannedTransfer, ...]:
    """The reservation back to the bank, first in the settlement or refund batch (none before issue 44)."""
    amount = reserved(round_)
    if not amount:
        return ()
    return (
        PlannedTransfer(
            f"hgr:{round_.round_id}:free", True, "cover", amount, f"{round_.round_id}:free", "bank"
        ),
    )


def refund_transfers(round_id: str, wagers: Sequence[BoxWager]) -> tuple[PlannedTransfer, ...]:
    return tuple(
        PlannedTransfer(f"hgr:{round_id}:void:{w.box}", True, "bank", initial_stake(w), f"{round_id}:void")
        for w in wagers
    )


def decision_cover_transfer(transfer: str) -> str:
    """The reservation of a decision's stake: `hgr:<round>:b<box>:<n>:<refusals>:<decision>` ->
    `hgr:<round>:c<box>:<n>:<refusals>` (unique as its stake's id is; no longer than it)."""
    head, _, rest = transfer.rpartition(":b")
    return f"{head}:c{rest.rsplit(':', 1)[0]}"


def decision_transfer(round_: Round, taken: TakenDecision) -> str:
    """Derived from the round's state: a retry after an outage sends the same id (applied once);
    after a refusal the count moves on so that a retry after a top-up can succeed."""
    return f"hgr:{round_.round_id}:b{taken.box}:{len(round_.taken)}:{round_.refusals}:{taken.decision.value}"


# ------------------------------------------------------------------ transitions


def _put(state: HouseState, round_: Round) -> HouseState:
    return replace(state, rounds={**state.rounds, round_.round_id: round_})


def apply_entry(
    state: HouseState, entry: Mapping[str, Any], deck: tuple[int, ...] | None = None
) -> HouseState:
    """One journal entry applied: the only way the state changes, live or in a replay. `deck`: the
    round's deck where the entry deals it (`dealt`, `resumed`); without it a dealt round waits in
    RESUMING for its deck."""
    kind = str(entry["type"])
    round_id = str(entry["round_id"])
    if kind == "open":
        player = str(entry["player"])
        request_id = str(entry.get("rid", ""))
        wagers = tuple(
            BoxWager(int(box), player, int(ante), dark=bool(dark), bonus=int(bonus))
            for box, ante, dark, bonus in entry["wagers"]
        )
        opened = Round(
            round_id=round_id,
            player=player,
            request_id=request_id,
            chain=str(entry["chain"]),
            commitment=str(entry["commitment"]),
            jackpot_before=int(entry["jackpot_before"]),
            started_at=float(entry["started_at"]),
            cover=int(entry["cover"]),
            wagers=wagers,
            reserve=bool(entry.get("reserve", False)),
        )
        key = (player, request_id)
        state = _forget_finished(state)
        return replace(
            _put(state, opened),
            latest={**state.latest, player: round_id},
            bets={**state.bets, key: (*state.bets.get(key, ()), round_id)},
        )
    round_ = state.rounds.get(round_id)
    if round_ is None:
        return state  # a round this table never opened (another table's line): nothing
    if kind == "closed":
        how = str(entry["how"])
        stage = {"settled": Stage.SETTLED, "voided": Stage.VOIDED}.get(how, Stage.REFUSED)
        paid_out = int(entry.get("paid_out", round_.paid_out)) if stage is Stage.SETTLED else 0
        return _put(state, replace(round_, stage=stage, deadline=None, paid_out=paid_out))
    if kind == "staked":
        return _put(state, replace(round_, stage=Stage.DEALING))
    if kind == "refunding":
        return _put(state, replace(round_, stage=Stage.REFUNDING, deadline=None))
    if kind == "voiding":
        return _put(state, replace(round_, stage=Stage.VOIDING, deadline=None, ending=str(entry["how"])))
    deadline = float(entry["deadline"]) if entry.get("deadline") is not None else round_.deadline
    if kind == "dealt":
        stage = Stage.PLAYING if deck is not None else Stage.RESUMING
        round_ = replace(round_, stage=stage, deck=deck, deadline=deadline)
        return _put(state, _settle_if_complete(state.room, round_))
    if kind == "decision":
        raw = dict(entry["decision"])
        taken = TakenDecision.from_json(raw)
        rid = entry.get("rid")
        request = (str(rid[0]), str(rid[1])) if rid else None
        # Without a stake it takes effect at once; a journal older than `paid` entries: at resume.
        paid = taken.cost == 0 and round_.stage is not Stage.RESUMING
        one = Logged(taken, str(raw["transfer"]), request, paid)
        round_ = replace(round_, logged=(*round_.logged, one), deadline=deadline)
        return _put(state, _settle_if_complete(state.room, round_))
    if kind in ("paid", "unpaid"):
        transfer = str(entry["transfer"])
        if kind == "paid":
            logged = tuple(replace(d, paid=True) if d.transfer == transfer else d for d in round_.logged)
            round_ = replace(round_, logged=logged)
        else:
            logged = tuple(d for d in round_.logged if d.paid or d.transfer != transfer)
            refusals = round_.refusals + (1 if entry.get("refused") else 0)
            round_ = replace(round_, logged=logged, refusals=refusals)
        return _put(state, _settle_if_complete(state.room, round_))
    if kind == "resumed":
        kept = set(entry["kept"])
        logged = tuple(
            replace(d, paid=True) for d in round_.logged if d.transfer in kept or d.taken.cost == 0
        )
        # Replayed without its deck (the next opener's replay): resumed again once sealed.
        stage = Stage.PLAYING if deck is not None else Stage.RESUMING
        round_ = replace(round_, stage=stage, deck=deck, logged=logged, deadline=deadline, resumed=True)
        return _put(state, _settle_if_complete(state.room, round_))
    raise ValueError(f"unknown journal entry {kind!r}")


def _settle_if_complete(room: HouseRoom, round_: Round) -> Round:
    if round_.stage is Stage.PLAYING and round_.pending is None and round_.live(room).complete:
        return replace(round_, stage=Stage.SETTLING, deadline=None)
    return round_


def replay(
    entries: Iterable[Mapping[str, Any]],
    *,
    table_id: str,
    room: HouseRoom,
    decision_seconds: float,
    decks: Mapping[str, tuple[int, ...]],
    keep_finished: int = KEEP_FINISHED_ROUNDS,
) -> HouseState:
    """The state a journal gives (its entries applied in order), with the decks fairness seals."""
    state = empty(table_id, room, decision_seconds, keep_finished=keep_finished)
    for entry in entries:
        if entry.get("table_id", table_id) != table_id:
            continue
        state = apply_entry(state, entry, decks.get(str(entry.get("round_id"))))
    return state


def _step(
    state: HouseState, entries: Sequence[dict[str, Any]], deck: tuple[int, ...] | None = None
) -> HouseState:
    for entry in entries:
        state = apply_entry(state, entry, deck)
    return state


def feed(state: HouseState, given: Input) -> Step:
    """The core's one transition; raises a DomainError for a command it refuses (nothing happened)."""
    if isinstance(given, Bets):
        return _bets(state, given)
    if isinstance(given, Decide):
        return _decide(state, given)
    if isinstance(given, Tick):
        return _tick(state, given.at)
    if isinstance(given, Reopen):
        return _reopen(state)
    round_ = state.rounds.get(given.round_id)
    if round_ is None:
        return Step(state)
    if isinstance(given, StakeAnswer):
        return _stake_answer(state, round_, given.outcome)
    if isinstance(given, Sealed):
        if round_.stage is not Stage.DEALING:
            return Step(state)
        entry = {"type": "dealt", "round_id": round_.round_id, "deadline": given.at + state.decision_seconds}
        return _after(state, round_, [entry], given.deck, "ROUND_STARTED", f"round {round_.round_id} dealt")
    if isinstance(given, SealFailed):
        if round_.stage is not Stage.DEALING:
            return Step(state)
        return _refunding(state, round_, "deck_not_sealed")
    if isinstance(given, PayAnswer):
        return _pay_answer(state, round_, given)
    if isinstance(given, SettleAnswer):
        if round_.stage is not Stage.SETTLING or given.outcome is not Outcome.OK:
            return Step(state)
        live = round_.live(state.room)
        paid_out = paid_back(live.settlement_transfers(live.settle()))
        entry = {"type": "closed", "round_id": round_.round_id, "how": "settled", "paid_out": paid_out}
        new = _step(state, [entry])
        return Step(
            new,
            entries=(entry,),
            effects=(Finish(round_.round_id, round_.player, paid_out),),
            notices=(
                Notice(round_.player, round_.round_id, "ROUND_SETTLED", f"round {round_.round_id} settled"),
            ),
        )
    if isinstance(given, RefundAnswer):
        if round_.stage is not Stage.REFUNDING:
            return Step(state)
        return _voiding(state, round_, "voided")
    if isinstance(given, VoidRevealed):
        if round_.stage is not Stage.VOIDING:
            return Step(state)
        entry = {"type": "closed", "round_id": round_.round_id, "how": round_.ending}
        return Step(_step(state, [entry]), entries=(entry,))
    return _resume(state, round_, given)


def _after(
    state: HouseState,
    round_: Round,
    entries: list[dict[str, Any]],
    deck: tuple[int, ...] | None,
    code: str,
    text: str,
) -> Step:
    new = _step(state, entries, deck)
    after = new.rounds[round_.round_id]
    return Step(
        new,
        entries=tuple(entries),
        notices=(Notice(round_.player, round_.round_id, code, text),),
        effects=_due(new, after),
        round_id=round_.round_id,
    )


def _bets(state: HouseState, bets: Bets) -> Step:
    current = state.current(bets.player)
    if current is not None and current.stage.open:
        if current.request_id == bets.request_id and current.round_id == bets.round_id:
            return Step(state, round_id=current.round_id, again=True)
        raise FailedPrecondition("ROUND_IN_PROGRESS", "your round at this table is still running")
    earlier = state.bets.get((bets.player, bets.request_id), ())
    if earlier and state.rounds[earlier[-1]].stage not in (Stage.VOIDED, Stage.REFUSED):
        # The request opened a round that was dealt (or is being opened): its answer again, never a
        # second round; only a refunded or refused attempt lets the request open another one.
        return Step(state, round_id=earlier[-1], again=True)
    if bets.round_id in state.rounds:
        raise AlreadyExists("IDEMPOTENCY_CONFLICT", "that round was opened already")
    entry = {
        "type": "open",
        "round_id": bets.round_id,
        "table_id": state.table_id,
        "player": bets.player,
        "rid": bets.request_id,
        "chain": bets.chain,
        "commitment": bets.commitment,
        "jackpot_before": bets.jackpot_before,
        "started_at": bets.at,
        "cover": bets.cover,
        "reserve": True,
        "wagers": [[w.box, w.ante, w.dark, w.bonus] for w in bets.wagers],
    }
    new = _step(state, [entry])
    return Step(new, entries=(entry,), effects=_due(new, new.rounds[bets.round_id]), round_id=bets.round_id)


def _stake_answer(state: HouseState, round_: Round, outcome: Outcome) -> Step:
    if round_.stage is not Stage.STAKING:
        return Step(state)
    if outcome is Outcome.OK:
        entry = {"type": "staked", "round_id": round_.round_id}
        new = _step(state, [entry])
        return Step(new, entries=(entry,), effects=_due(new, new.rounds[round_.round_id]))
    if outcome is Outcome.UNAVAILABLE:
        # The stakes may or may not have been taken: make it certain, then give them back.
        return _refunding(state, round_, "stakes_unanswered")
    return _voiding(state, round_, "refused")


def _voiding(state: HouseState, round_: Round, how: str) -> Step:
    """Nothing of the round is kept (its stakes and reservation refused, or given back): it closes
    `how` once fairness has its hand voided."""
    entry = {"type": "voiding", "round_id": round_.round_id, "how": how}
    return Step(_step(state, [entry]), entries=(entry,), effects=(RevealVoid(round_.round_id),))


def _refunding(state: HouseState, round_: Round, why: str) -> Step:
    """The round is refunded; `why` (the journal's word for the operator, not read back): the
    cashier did not answer for its stakes (`stakes_unanswered`), fairness did not seal its deck
    (`deck_not_sealed`), or a table opened on it undealt after a restart or takeover (`reopened`)."""
    entry = {"type": "refunding", "round_id": round_.round_id, "why": why}
    new = _step(state, [entry])
    return Step(new, entries=(entry,), effects=_due(new, new.rounds[round_.round_id]))


def _decide(state: HouseState, decide: Decide) -> Step:
    current = state.current(decide.player)
    if current is None:
        raise FailedPrecondition("NO_ROUND_IN_PROGRESS", "you have no round at this table")
    round_ = state.rounds.get(decide.round_id)
    if round_ is not None and round_.player == decide.player:
        for d in round_.logged:
            if d.request == (decide.player, decide.request_id):
                first = (round_.round_id, d.taken.box, d.taken.decision.value)
                if first != decide.fingerprint[:3]:
                    raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the request id was used with other fields")
                if not d.paid:
                    raise Unavailable("UNAVAILABLE", "the decision's stake is on its way; retry")
                return Step(state, round_id=round_.round_id, again=True)
    if current.round_id != decide.round_id or current.stage is not Stage.PLAYING:
        if current.stage is Stage.RESUMING and current.round_id == decide.round_id:
            raise Unavailable("UNAVAILABLE", "the round is being resumed; retry")
        raise FailedPrecondition("HAND_IS_OVER", "that round is not your running round")
    if current.pending is not None:
        raise Unavailable("UNAVAILABLE", "the round's last decision is being paid; retry")
    try:
        taken = current.live(state.room).prepare(decide.box, decide.decision, decide.cards, decide.amount)
    except HouseGameError as error:
        raise house_room_error(error) from error
    return _take(state, current, taken, (decide.player, decide.request_id), decide.at)


def _take(
    state: HouseState, round_: Round, taken: TakenDecision, request: tuple[str, str] | None, at: float
) -> Step:
    transfer = decision_transfer(round_, taken)
    entry: dict[str, Any] = {
        "type": "decision",
        "round_id": round_.round_id,
        "decision": {**taken.to_json(), "transfer": transfer},
        # The box's next clock, were it to run out of time at whoever resumes the round.
        "deadline": at + state.decision_seconds,
        "at": at,
    }
    if request is not None:
        entry["rid"] = list(request)
    new = _step(state, [entry])
    after = new.rounds[round_.round_id]
    notices: tuple[Notice, ...] = ()
    if taken.cost == 0:
        notices = (
            Notice(
                round_.player, round_.round_id, "HOUSE_DECISION", f"box {taken.box}: {taken.decision.value}"
            ),
        )
    return Step(new, entries=(entry,), notices=notices, effects=_due(new, after), round_id=round_.round_id)


def _pay_answer(state: HouseState, round_: Round, answer: PayAnswer) -> Step:
    pending = round_.pending
    if pending is None or pending.transfer != answer.transfer:
        return Step(state)
    if answer.outcome is Outcome.OK:
        entry: dict[str, Any] = {"type": "paid", "round_id": round_.round_id, "transfer": answer.transfer}
        taken = pending.taken
        return _after(
            state, round_, [entry], None, "HOUSE_DECISION", f"box {taken.box}: {taken.decision.value}"
        )
    if answer.outcome is Outcome.UNAVAILABLE:
        # It may have been applied: the same stake is sent again (same id) until the cashier says
        # yes or no; the decision stays in flight meanwhile (never dropped with its chips taken).
        return Step(state)
    entry = {"type": "unpaid", "round_id": round_.round_id, "transfer": answer.transfer, "refused": True}
    new = _step(state, [entry])
    return Step(new, entries=(entry,), round_id=round_.round_id)


def _tick(state: HouseState, at: float) -> Step:
    """Every round whose box ran out of time takes the rules' default (one entry per box)."""
    entries: list[dict[str, Any]] = []
    notices: list[Notice] = []
    effects: list[Effect] = []
    for round_id in sorted(state.rounds):
        round_ = state.rounds[round_id]
        while (
            round_.stage is Stage.PLAYING
            and round_.pending is None
            and round_.deadline is not None
            and at >= round_.deadline
        ):
            live = round_.live(state.room)
            box = live.due_boxes()[0]
            step = _take(state, round_, live.default_decision(box), None, at)
            state = step.state
            round_ = state.rounds[round_id]
            entries.extend(step.entries)
            notices.extend(step.notices)
            effects.extend(step.effects)
    return Step(state, entries=tuple(entries), notices=tuple(notices), effects=tuple(effects))


def _reopen(state: HouseState) -> Step:
    """The table opened on a journal: a round never dealt is refunded (never dealt on)."""
    entries: list[dict[str, Any]] = []
    for round_ in state.rounds.values():
        if round_.stage in (Stage.STAKING, Stage.DEALING):
            entries.append({"type": "refunding", "round_id": round_.round_id, "why": "reopened"})
    new = _step(state, entries)
    return Step(new, entries=tuple(entries), effects=outstanding(new))


def _resume(state: HouseState, round_: Round, resume: Resume) -> Step:
    """A dealt round rebuilt at the table's next opener: the decisions whose stakes the cashier has
    count (a free one always); the box gets what was left of its clock plus the grace."""
    if round_.stage is not Stage.RESUMING:
        return Step(state)
    kept = sorted(d.transfer for d in round_.logged if d.taken.cost and d.transfer in resume.paid)
    left = max(0.0, round_.deadline - resume.at) if round_.deadline is not None else state.decision_seconds
    entry = {
        "type": "resumed",
        "round_id": round_.round_id,
        "kept": kept,
        "deadline": resume.at + left + resume.grace,
    }
    return _after(state, round_, [entry], resume.deck, "ROUND_RESUMED", f"round {round_.round_id} resumed")


# ------------------------------------------------------------------ what is due


def _due(state: HouseState, round_: Round) -> tuple[Effect, ...]:
    """The call `round_` waits for now (its ids are the round's own: sending it twice is harmless)."""
    if round_.stage is Stage.STAKING:
        stakes = stake_transfers(round_.round_id, round_.wagers, reserved(round_))
        return (Stake(round_.round_id, round_.player, stakes),)
    if round_.stage in (Stage.DEALING, Stage.RESUMING):
        return (Seal(round_.round_id),)
    if round_.stage is Stage.VOIDING:
        return (RevealVoid(round_.round_id),)
    if round_.stage is Stage.REFUNDING:
        return (
            Refund(
                round_.round_id,
                round_.player,
                stake_transfers(round_.round_id, round_.wagers, reserved(round_)),
                (*release_transfers(round_), *refund_transfers(round_.round_id, round_.wagers)),
            ),
        )
    if round_.stage is Stage.PLAYING and round_.pending is not None:
        taken = round_.pending.taken
        reference = f"{round_.round_id}:box{taken.box}:{taken.decision.value}"
        transfer = PlannedTransfer(round_.pending.transfer, False, "bank", taken.cost, reference)
        cover = None
        if round_.reserve:
            cover_id = decision_cover_transfer(round_.pending.transfer)
            cover = PlannedTransfer(cover_id, False, "cover", taken.cost, reference, "bank")
        return (Pay(round_.round_id, round_.player, transfer, cover),)
    if round_.stage is Stage.SETTLING:
        live = round_.live(state.room)
        transfers = (*release_transfers(round_), *live.settlement_transfers(live.settle()))
        return (Settle(round_.round_id, round_.player, transfers),)
    return ()


def outstanding(state: HouseState) -> tuple[Effect, ...]:
    """Every call the open rounds wait for (a retry, or the table's next opener, sends them again)."""
    return tuple(e for round_id in sorted(state.rounds) for e in _due(state, state.rounds[round_id]))


def settlement(state: HouseState, round_id: str) -> RoundSettlement:
    return state.rounds[round_id].live(state.room).settle()
