"""Fair-play detectors (rules 17) over real hands recorded through the application: a scripted
chip-dumping pattern is flagged, ordinary random play is not; two accounts dealt in from one client
fingerprint are flagged once per table and group, different fingerprints are not."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta

from poker.history.v1 import history_pb2
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand
from services.history import detectors
from services.history.application import HistoryApplication
from services.history.records import Viewer
from tests.history.engine_hands import START, play_randomly, record_of

ADMIN = Viewer("ops", admin=True)


def _config(rng: random.Random, players: list[str], number: int) -> HandConfig:
    deck = list(range(52))
    rng.shuffle(deck)
    return HandConfig(
        variant=Variant.NO_LIMIT,
        seats=tuple(SeatConfig(seat, player, 2000) for seat, player in enumerate(players)),
        button=number % len(players),
        small_blind=5,
        big_blind=10,
        deck=tuple(deck),
        rake=RakeRule(0, 30),
    )


def dumping_hand(rng: random.Random, players: list[str], dumper: str, partner: str, number: int) -> Hand:
    """The others fold; the dumper raises to 200, the partner calls; on the flop the dumper bets 300,
    the partner min-raises to 600 and the dumper folds, throwing away 500 chips for a 300 call."""
    hand = Hand(_config(rng, players, number))
    seat = {s.player_id: s.seat for s in hand.config.seats}
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        actor = legal.seat
        if actor not in (seat[dumper], seat[partner]):
            hand.fold(actor) if legal.can_call else hand.check(actor)
        elif hand.street.value == "PREFLOP":
            if actor == seat[dumper] and hand.bets[actor] < 200:
                hand.raise_to(actor, 200)
            else:
                hand.call(actor) if legal.can_call else hand.check(actor)
        elif actor == seat[dumper]:
            hand.bet(actor, 300) if legal.can_bet else hand.fold(actor)
        else:
            hand.raise_to(actor, 600) if legal.can_raise else hand.check(actor)
    return hand


async def record_hands(application: HistoryApplication, hands: list[Hand], table_id: str) -> None:
    for number, hand in enumerate(hands):
        record = record_of(hand, table_id=table_id, start=START + timedelta(minutes=number))
        await application.record_hand(record)


async def events_of(application: HistoryApplication, kind: str) -> list[history_pb2.AuditEvent]:
    events, _ = await application.list_audit_events(ADMIN, kind, page_size=500)
    return events


async def test_a_scripted_chip_dumping_pattern_is_flagged_with_the_pair_and_the_evidence(
    application: HistoryApplication,
) -> None:
    prefix = f"dump{uuid.uuid4().hex[:6]}"
    players = [f"{prefix}-{name}" for name in ("dumper", "partner", "x", "y")]
    dumper, partner = players[0], players[1]
    rng = random.Random(1)
    hands = []
    for number in range(30):
        if number % 3 == 0:
            hands.append(dumping_hand(rng, players, dumper, partner, number))
        else:
            hand = Hand(_config(rng, players, number))
            play_randomly(hand, rng)
            hands.append(hand)
    await record_hands(application, hands, f"{prefix}-table")
    flagged = [
        e for e in await events_of(application, detectors.SUSPECTED_CHIP_DUMPING) if dumper in e.player_ids
    ]
    assert len(flagged) == 1
    event = flagged[0]
    assert list(event.player_ids) == [dumper, partner]
    assert event.table_id == f"{prefix}-table"
    assert len(event.hand_ids) >= detectors.MIN_SIGNALS


async def test_ordinary_random_play_is_not_flagged(application: HistoryApplication) -> None:
    prefix = f"fair{uuid.uuid4().hex[:6]}"
    players = [f"{prefix}-{i}" for i in range(5)]
    rng = random.Random(2)
    hands = []
    for number in range(200):
        seated = rng.sample(players, rng.randint(2, 5))
        hand = Hand(_config(rng, seated, number))
        play_randomly(hand, rng, aggression=0.35, fold=0.2)
        hands.append(hand)
    assert sum(len(detectors.dumping_signals(record_of(h, table_id="t"))) for h in hands) > 0, (
        "random play should produce some single signals, or this test proves nothing about the verdict"
    )
    await record_hands(application, hands, f"{prefix}-table")
    flagged = [
        e
        for e in await events_of(application, detectors.SUSPECTED_CHIP_DUMPING)
        if set(e.player_ids) & set(players)
    ]
    assert flagged == []


async def test_two_accounts_from_one_client_fingerprint_are_flagged_once_per_table(
    application: HistoryApplication,
) -> None:
    prefix = f"fp{uuid.uuid4().hex[:6]}"
    players = [f"{prefix}-{name}" for name in ("ann", "bob", "cyd")]
    rng = random.Random(3)
    table = f"{prefix}-table"
    shared = {players[0]: "device-1", players[1]: "device-1", players[2]: "device-2"}
    for number in range(3):
        hand = Hand(_config(rng, players, number))
        play_randomly(hand, rng)
        await application.record_hand(
            record_of(hand, table_id=table, fingerprints=shared, start=START + timedelta(minutes=number))
        )
    events = [
        e for e in await events_of(application, detectors.SHARED_CLIENT_FINGERPRINT) if e.table_id == table
    ]
    assert len(events) == 1
    assert list(events[0].player_ids) == sorted(players[:2])

    other_table = f"{prefix}-other"
    distinct = {player: f"device-{player}" for player in players}
    hand = Hand(_config(rng, players, 9))
    play_randomly(hand, rng)
    await application.record_hand(record_of(hand, table_id=other_table, fingerprints=distinct))
    assert [
        e
        for e in await events_of(application, detectors.SHARED_CLIENT_FINGERPRINT)
        if e.table_id == other_table
    ] == []


def test_a_fold_to_a_small_bet_after_a_big_investment_is_a_signal_and_a_fold_to_a_big_bet_is_not() -> None:
    rng = random.Random(4)
    players = ["a", "b", "c"]
    signals = detectors.dumping_signals(record_of(dumping_hand(rng, players, "a", "b", 0), table_id="t"))
    assert [(s.loser_id, s.winner_id, s.amount, s.pattern) for s in signals] == [
        ("a", "b", 500, "FOLD_TO_SMALL_BET")
    ]
    # The same line but the partner shoves: folding to a pot-sized bet is ordinary poker.
    hand = Hand(_config(rng, players, 0))
    seat = {s.player_id: s.seat for s in hand.config.seats}
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        actor = legal.seat
        if actor == seat["c"]:
            hand.fold(actor) if legal.can_call else hand.check(actor)
        elif hand.street.value == "PREFLOP":
            hand.raise_to(actor, 200) if actor == seat["a"] and hand.bets[actor] < 200 else (
                hand.call(actor) if legal.can_call else hand.check(actor)
            )
        elif actor == seat["a"]:
            hand.bet(actor, 300) if legal.can_bet else hand.fold(actor)
        else:
            hand.all_in(actor)
    assert detectors.dumping_signals(record_of(hand, table_id="t")) == []
