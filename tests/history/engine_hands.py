"""Real hands for the history tests, played through libs/poker_engine and turned into HandRecords the
way the table service does (`service_runtime.history_records`), in the shapes the issue names."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker_engine.cards import parse_cards
from poker_engine.config import HandConfig, RakeRule, SeatConfig, Variant
from poker_engine.hand import Hand
from service_runtime.history_records import hand_record_from_events

SHAPES = (
    "random",
    "fold_to_big_blind",
    "all_in_preflop",
    "side_pots",
    "split_pot",
    "fixed_limit",
    "showdown",
)
START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def _deck(
    rng: random.Random, board: str = "", holes: tuple[str, ...] = (), players: int = 0
) -> tuple[int, ...]:
    """A shuffled deck, optionally with fixed hole cards (in dealing order) and a fixed board."""
    fixed_holes = [parse_cards(h) for h in holes]
    fixed_board = parse_cards(board) if board else ()
    used = {c for h in fixed_holes for c in h} | set(fixed_board)
    rest = [c for c in range(52) if c not in used]
    rng.shuffle(rest)
    deck: list[int | None] = [None] * 52
    if fixed_holes:
        for i, cards in enumerate(fixed_holes):  # dealing: one card each round, two rounds
            deck[i], deck[players + i] = cards
    if fixed_board:
        base = 2 * players
        for offset, card in zip((1, 2, 3, 5, 7), fixed_board, strict=True):
            deck[base + offset] = card
    filled = iter(rest)
    return tuple(c if c is not None else next(filled) for c in deck)


def play_randomly(hand: Hand, rng: random.Random, *, aggression: float = 0.3, fold: float = 0.15) -> None:
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        roll = rng.random()
        if roll < fold and legal.can_call:
            hand.fold(legal.seat)
        elif roll < fold + aggression and (legal.can_bet or legal.can_raise):
            if hand.config.variant is Variant.FIXED_LIMIT:
                hand.bet(legal.seat, legal.min_to) if legal.can_bet else hand.raise_to(
                    legal.seat, legal.min_to
                )
            elif rng.random() < 0.15:
                hand.all_in(legal.seat)
            else:
                to = rng.randint(legal.min_to, max(legal.min_to, min(legal.max_to, legal.min_to * 3)))
                to = legal.max_to if to >= legal.max_to else to
                hand.bet(legal.seat, to) if legal.can_bet else hand.raise_to(legal.seat, to)
        elif legal.can_check:
            hand.check(legal.seat)
        else:
            hand.call(legal.seat)


def build_hand(rng: random.Random, shape: str, players: list[str], number: int = 0) -> Hand:
    n = len(players)
    seat_numbers = sorted(rng.sample(range(10), n)) if shape != "split_pot" else list(range(n))
    stacks = [rng.randint(200, 3000) for _ in range(n)]
    if shape == "side_pots":
        stacks = sorted(rng.sample(range(100, 2000, 10), n))
    seats = tuple(SeatConfig(s, p, st) for s, p, st in zip(seat_numbers, players, stacks, strict=True))
    button = seat_numbers[rng.randrange(n)]
    variant = Variant.FIXED_LIMIT if shape == "fixed_limit" else Variant.NO_LIMIT
    deck = _deck(rng, board="Ts Js Qs Ks As" if shape == "split_pot" else "", players=n)
    config = HandConfig(
        variant=variant,
        seats=seats,
        button=button,
        small_blind=5,
        big_blind=10,
        deck=deck,
        rake=RakeRule(500 if rng.random() < 0.5 else 0, 30),
        hand_id=f"h{number}",
    )
    hand = Hand(config)
    if shape == "fold_to_big_blind":
        while not hand.is_over:
            legal = hand.legal_actions()
            assert legal is not None
            hand.fold(legal.seat) if legal.can_call else hand.check(legal.seat)
    elif shape in ("all_in_preflop", "side_pots"):
        while not hand.is_over:
            legal = hand.legal_actions()
            assert legal is not None
            hand.all_in(legal.seat) if hand.can_all_in(legal.seat) else (
                hand.call(legal.seat) if legal.can_call else hand.check(legal.seat)
            )
    elif shape in ("split_pot", "showdown"):
        while not hand.is_over:
            legal = hand.legal_actions()
            assert legal is not None
            hand.call(legal.seat) if legal.can_call else hand.check(legal.seat)
    else:
        play_randomly(hand, rng)
    return hand


def record_of(
    hand: Hand,
    *,
    table_id: str,
    pool: common_pb2.ChipPool.ValueType = common_pb2.CHIP_POOL_GRAM,
    start: datetime | None = None,
    fingerprints: dict[str, str] | None = None,
    networks: dict[str, str] | None = None,
    decision_ms: dict[int, int] | None = None,
    hand_id: str = "",
) -> history_pb2.HandRecord:
    started = start or START
    return hand_record_from_events(
        hand.events,
        hand_id=hand_id or f"hand-{uuid.uuid4().hex}",
        table_id=table_id,
        room_id="room-classic",
        pool=pool,
        start_time=started,
        end_time=started + timedelta(seconds=40),
        table_size=10,
        display_names={s.player_id: s.player_id.capitalize() for s in hand.config.seats},
        client_fingerprints=fingerprints,
        network_fingerprints=networks,
        decision_ms=decision_ms,
        seed_commitment="ab" * 32,
        seed_reveal_reference="",
    )


def varied_records(
    count: int, *, seed: int = 7, table_id: str = "table-1", prefix: str = "p"
) -> list[history_pb2.HandRecord]:
    """`count` records cycling through every shape, 2-6 players, one minute apart."""
    rng = random.Random(seed)
    records = []
    for number in range(count):
        shape = SHAPES[number % len(SHAPES)]
        players = [
            f"{prefix}{i}" for i in rng.sample(range(8), rng.randint(3 if shape == "side_pots" else 2, 6))
        ]
        hand = build_hand(rng, shape, players, number)
        records.append(record_of(hand, table_id=table_id, start=START + timedelta(minutes=number)))
    return records
