"""What a house-game table shows: the recipient's view (their own round only, the dealer's cards as
the rules reveal them, options with prices, every settlement line) and the round's history record."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from house_games import Account, RoundSettlement
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from service_runtime.history_records import house_game_record
from services.table.cash.views import card_pb
from services.table.house import house_core as core
from services.table.house.house_round import Decision, HouseGame, HouseRoom, LiveRound

_DISPLAY = re.compile(r"[^A-Za-z0-9 _.-]")


@dataclass
class RoundRun:
    """A dealt round as the views and the record show it, built from the core's round."""

    live: LiveRound
    chain: str
    commitment: str
    started_at: float
    cover: int
    state: str = "PLAYING"  # PLAYING, SETTLING, COMPLETE
    deadline: float | None = None  # wall clock
    settlement: RoundSettlement | None = None
    paid_out: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def round_id(self) -> str:
        return self.live.round_id


_RUN_STATES = {
    core.Stage.PLAYING: "PLAYING",
    core.Stage.SETTLING: "SETTLING",
    core.Stage.SETTLED: "COMPLETE",
}


def run_of(room: HouseRoom, round_: core.Round) -> RoundRun | None:
    """The view's round: a dealt round of the core (None while it has no deck)."""
    if round_.deck is None or round_.stage not in _RUN_STATES:
        return None
    live = round_.live(room)
    state = _RUN_STATES[round_.stage]
    settlement = live.settle() if state != "PLAYING" else None
    return RoundRun(
        live,
        round_.chain,
        round_.commitment,
        round_.started_at,
        round_.cover,
        state=state,
        deadline=round_.deadline if state == "PLAYING" else None,
        settlement=settlement,
        paid_out=round_.paid_out,
        notes=round_.notes,
    )


DECISION_PB: dict[Decision, table_pb2.HouseDecisionKind.ValueType] = {
    Decision.CALL: table_pb2.HOUSE_DECISION_KIND_CALL,
    Decision.FOLD: table_pb2.HOUSE_DECISION_KIND_FOLD,
    Decision.EXCHANGE: table_pb2.HOUSE_DECISION_KIND_EXCHANGE,
    Decision.BUY_SIXTH_CARD: table_pb2.HOUSE_DECISION_KIND_BUY_SIXTH_CARD,
    Decision.INSURE: table_pb2.HOUSE_DECISION_KIND_INSURE,
    Decision.BUY_GAME: table_pb2.HOUSE_DECISION_KIND_BUY_GAME,
    Decision.TAKE_ANTE: table_pb2.HOUSE_DECISION_KIND_TAKE_ANTE,
}
DECISION_OF_PB = {int(value): key for key, value in DECISION_PB.items()}
VARIANT_PB: dict[HouseGame, common_pb2.GameVariant.ValueType] = {
    HouseGame.CASINO_HOLDEM: common_pb2.GAME_VARIANT_CASINO_HOLDEM,
    HouseGame.RUSSIAN_POKER: common_pb2.GAME_VARIANT_RUSSIAN_POKER,
}


def table_view(
    table_id: str,
    room: HouseRoom,
    run: RoundRun | None,
    *,
    jackpot: int,
    paused_reason: str,
    next_round: tuple[str, str] | None,
    now: float,
) -> table_pb2.TableView:
    """The table as one player sees it: limits, jackpot, pause reason, their round (nobody else's)."""
    running = run is not None and run.state in ("PLAYING", "SETTLING")
    if running:
        phase = table_pb2.TABLE_PHASE_HAND_IN_PROGRESS
    elif paused_reason:
        phase = table_pb2.TABLE_PHASE_PAUSED
    else:
        phase = table_pb2.TABLE_PHASE_BETWEEN_HANDS
    view = table_pb2.TableView(
        table_id=table_id,
        room_id=room.room_id,
        variant=VARIANT_PB[room.game],
        pool=room.pool,  # type: ignore[arg-type]
        phase=phase,
    )
    house = view.house
    house.jackpot_balance = jackpot
    house.min_ante, house.max_ante, house.max_payout = room.min_ante, room.max_ante, room.max_payout
    house.boxes = room.boxes
    house.paused = bool(paused_reason)
    house.paused_reason = paused_reason
    if next_round is not None:
        house.next_round_id, house.next_seed_commitment = next_round
    if run is not None:
        house.round.CopyFrom(round_view(run))
        view.hand_id, view.seed_commitment = run.round_id, run.commitment
        view.board.extend(card_pb(c) for c in run.live.board_visible())
    view.as_of.FromNanoseconds(int(now * 1e9))
    return view


def round_view(run: RoundRun) -> table_pb2.HouseRoundView:
    live = run.live
    playing = run.state == "PLAYING"
    view = table_pb2.HouseRoundView(
        round_id=run.round_id,
        seed_commitment=run.commitment,
        phase=run.state if run.state != "PLAYING" else live.phase,
        box_to_act=live.box_to_act() if playing else 0,
        staked=sum(live.staked.values()),
        paid_out=run.paid_out,
        notes=run.notes,
    )
    view.dealer_cards.extend(card_pb(c) for c in live.dealer_visible())
    view.dealer_replaced.extend(card_pb(c) for c in live.dealer_replaced())
    view.board.extend(card_pb(c) for c in live.board_visible())
    if playing and run.deadline is not None:
        view.deadline.FromNanoseconds(int(run.deadline * 1e9))
    settled = {b.box: b for b in run.settlement.boxes} if run.settlement is not None else {}
    for wager in live.wagers:
        box = view.boxes.add(
            box=wager.box,
            ante=wager.ante,
            dark=wager.dark,
            bonus_bet=wager.bonus,
            status=live.box_status(wager.box),
        )
        box.cards.extend(card_pb(c) for c in live.cards(wager.box))
        if playing:
            for option in live.options(wager.box):
                kind = DECISION_PB[option.decision]
                box.legal_decisions.append(kind)
                box.options.add(
                    decision=kind,
                    cost=option.cost,
                    min_amount=option.min_amount,
                    max_amount=option.max_amount,
                )
        if wager.box in settled and run.state == "COMPLETE":
            for line in settled[wager.box].lines:
                box.settlement.add(
                    reason=line.reason,
                    amount=line.delta(Account.PLAYER),
                    item=line.item.value,
                    stake=line.stake,
                    outcome=line.outcome.value,
                    withheld=line.withheld,
                )
    return view


def round_record(
    table_id: str, room: HouseRoom, player: str, run: RoundRun, *, now: float
) -> history_pb2.HandRecord:
    """The round's full record, built by the shared builder history's tests use too, plus the
    decisions (timeouts marked) and the fairness reference."""
    live, settlement = run.live, run.settlement
    assert settlement is not None
    staked = sum(live.staked.values())
    record = house_game_record(
        settlement,
        variant=VARIANT_PB[room.game],
        hand_id=run.round_id,
        table_id=table_id,
        room_id=room.room_id,
        pool=room.pool,  # type: ignore[arg-type]
        start_time=datetime.fromtimestamp(run.started_at, UTC),
        end_time=datetime.fromtimestamp(max(now, run.started_at), UTC),
        table_size=room.boxes,
        seats={player: 0},
        # The stake the round took is its "stack": the final stack is what the settlement paid back.
        starting_stacks={player: staked},
        box_cards={w.box: live.cards(w.box) for w in live.wagers},
        dealer_cards=live.dealer_visible(),
        board=live.board_visible(),
        display_names={player: _DISPLAY.sub("_", player)[:32] or "player"},
        seed_commitment=run.commitment,
    )
    record.seed_reveal_reference = run.round_id
    record.seats[0].folded = all(live.box_status(w.box) == "FOLDED" for w in live.wagers)
    for taken in live.decisions:
        record.house_game.decisions.add(
            box=taken.box,
            decision=taken.decision.value,
            amount=taken.cost,
            timed_out=taken.timed_out,
            insurance=taken.insurance,
        )
    return record
