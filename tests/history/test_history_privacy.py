"""Rules 16 privacy table: for one real hand with a fold, two mucks and a showdown, every card each
reader receives from every read RPC and export, card by card.

| reader                | sees                                                        |
|-----------------------|-------------------------------------------------------------|
| the player who folded | own hole cards, the board, the winner's shown cards         |
| a player who mucked   | own hole cards, the board, the winner's shown cards         |
| the winner            | own hole cards, the board                                   |
| a non-participant     | nothing: NOT_FOUND for the hand, the table and the export   |
| an admin              | every card (rules 17), and the client fingerprints          |
"""

from __future__ import annotations

import json
import random
import re
import uuid

import grpc
import pytest

from poker.history.v1 import history_pb2, history_pb2_grpc
from poker_engine.cards import card_text
from poker_engine.config import HandConfig, SeatConfig, Variant
from poker_engine.events import ActionCause, PlayerActed
from poker_engine.hand import Hand
from service_runtime.auth import STAFF_ROLES
from service_runtime.testing import auth_metadata, reason_of
from tests.history.engine_hands import record_of

SERVICE = auth_metadata("table", "service")
ADMIN = auth_metadata("ops", *STAFF_ROLES)
_BRACKETS = re.compile(r"\[([^\]]*)\]")


def fold_muck_showdown_hand(players: list[str]) -> Hand:
    """A four-handed hand: the first to act folds, three check down, one wins alone, two muck."""
    rng = random.Random(5)
    while True:
        deck = list(range(52))
        rng.shuffle(deck)
        config = HandConfig(
            variant=Variant.NO_LIMIT,
            seats=tuple(SeatConfig(seat, player, 1000) for seat, player in enumerate(players)),
            button=0,
            small_blind=5,
            big_blind=10,
            deck=tuple(deck),
        )
        hand = Hand(config)
        first = hand.legal_actions()
        assert first is not None
        hand.fold(first.seat)
        while not hand.is_over:
            legal = hand.legal_actions()
            assert legal is not None
            hand.call(legal.seat) if legal.can_call else hand.check(legal.seat)
        events = [e.kind for e in hand.events]
        if events.count("CARDS_SHOWN") == 1 and events.count("CARDS_MUCKED") == 2:
            return hand


def _proto_cards(cards: object) -> set[str]:
    return {c.text for c in cards if not c.hidden}  # type: ignore[attr-defined]


def cards_in_record(record: history_pb2.HandRecord) -> set[str]:
    seen = _proto_cards(record.board)
    for seat in record.seats:
        seen |= _proto_cards(seat.hole_cards)
    for action in record.actions:
        seen |= _proto_cards(action.cards)
    return seen


def cards_in_pokerstars(text: str) -> set[str]:
    return {card for group in _BRACKETS.findall(text) for card in group.split()}


def cards_in_ohh(text: str) -> set[str]:
    seen: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "cards":
                    seen.update(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(json.loads(text))
    return seen


def cards_in_summaries(response: object) -> set[str]:
    # Summaries carry no card field at all; any card text in them would be a leak.
    return {card_text(c) for c in range(52) if f'"{card_text(c)}"' in str(response)}


async def read_everything(
    stub: history_pb2_grpc.HistoryServiceStub,
    metadata: tuple[tuple[str, str], ...],
    hand_id: str,
    table_id: str,
) -> dict[str, set[str] | str]:
    """What one reader gets from every read RPC: a set of visible cards, or the error reason."""
    results: dict[str, set[str] | str] = {}

    async def attempt(name: str, call: object, extract: object) -> None:
        try:
            response = await call  # type: ignore[misc]
        except grpc.aio.AioRpcError as error:
            results[name] = f"{error.code().name} {reason_of(error)}"
        else:
            results[name] = extract(response)  # type: ignore[operator]

    await attempt(
        "GetHand",
        stub.GetHand(history_pb2.GetHandRequest(hand_id=hand_id), metadata=metadata),
        lambda r: cards_in_record(r.hand),
    )
    await attempt(
        "ListMyHands",
        stub.ListMyHands(history_pb2.ListMyHandsRequest(), metadata=metadata),
        cards_in_summaries,
    )
    await attempt(
        "ListTableHands",
        stub.ListTableHands(history_pb2.ListTableHandsRequest(table_id=table_id), metadata=metadata),
        cards_in_summaries,
    )
    for name, export_format, extract in (
        ("Export PokerStars", history_pb2.EXPORT_FORMAT_POKERSTARS_TEXT, cards_in_pokerstars),
        ("Export OHH", history_pb2.EXPORT_FORMAT_OPEN_HAND_HISTORY_JSON, cards_in_ohh),
    ):
        await attempt(
            name,
            stub.ExportHands(
                history_pb2.ExportHandsRequest(hand_ids=[hand_id], format=export_format), metadata=metadata
            ),
            lambda r, extract=extract: extract(r.content),  # type: ignore[misc]
        )
    return results


async def test_privacy_table_of_a_hand_with_a_fold_two_mucks_and_a_showdown(
    stub: history_pb2_grpc.HistoryServiceStub,
) -> None:
    prefix = f"priv{uuid.uuid4().hex[:6]}"
    players = [f"{prefix}-{name}" for name in ("ann", "bob", "cyd", "dee")]
    hand = fold_muck_showdown_hand(players)
    table_id = f"{prefix}-table"
    fingerprints = {p: f"fp-{p}" for p in players}
    record = record_of(hand, table_id=table_id, fingerprints=fingerprints)
    await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)

    board = {c.text for c in record.board}
    holes = {s.player_id: {c.text for c in s.hole_cards} for s in record.seats}
    folder = next(s.player_id for s in record.seats if s.folded)
    winner = next(s.player_id for s in record.seats if s.shown)
    muckers = [s.player_id for s in record.seats if s.mucked]
    assert len(muckers) == 2
    assert {folder, winner}.isdisjoint(muckers)
    everything = board.union(*holes.values())

    participant_rpcs = ("GetHand", "Export PokerStars", "Export OHH")
    expected: dict[str, dict[str, set[str] | str]] = {
        "folder": dict.fromkeys(participant_rpcs, holes[folder] | board | holes[winner]),
        "mucker": dict.fromkeys(participant_rpcs, holes[muckers[0]] | board | holes[winner]),
        "winner": dict.fromkeys(participant_rpcs, holes[winner] | board),
        "non-participant": {
            "GetHand": "NOT_FOUND HAND_NOT_FOUND",
            "Export PokerStars": "NOT_FOUND HAND_NOT_FOUND",
            "Export OHH": "NOT_FOUND HAND_NOT_FOUND",
            "ListTableHands": "NOT_FOUND TABLE_NOT_FOUND",
            "ListMyHands": set(),
        },
        "admin": dict.fromkeys(participant_rpcs, everything),
    }
    for reader in ("folder", "mucker", "winner"):
        expected[reader] |= {"ListMyHands": set(), "ListTableHands": set()}
    expected["admin"] |= {"ListMyHands": set(), "ListTableHands": set()}
    readers = {
        "folder": auth_metadata(folder, "player"),
        "mucker": auth_metadata(muckers[0], "player"),
        "winner": auth_metadata(winner, "player"),
        "non-participant": auth_metadata(f"{prefix}-eve", "player"),
        "admin": ADMIN,
    }
    for reader, metadata in readers.items():
        got = await read_everything(stub, metadata, record.hand_id, table_id)
        for rpc, want in expected[reader].items():
            if isinstance(want, set):
                # Card by card over the whole deck, so a failure names the leaked or missing card.
                for card in (card_text(c) for c in range(52)):
                    assert (card in got[rpc]) == (card in want), f"{reader} / {rpc} / {card}"
            else:
                assert got[rpc] == want, f"{reader} / {rpc}"


async def test_players_never_see_client_fingerprints_or_unshown_cards_but_keep_placeholders(
    stub: history_pb2_grpc.HistoryServiceStub,
) -> None:
    prefix = f"fp{uuid.uuid4().hex[:6]}"
    players = [f"{prefix}-{name}" for name in ("ann", "bob", "cyd", "dee")]
    hand = fold_muck_showdown_hand(players)
    acted = [
        i for i, e in enumerate(hand.events) if isinstance(e, PlayerActed) and e.cause is ActionCause.PLAYER
    ]
    record = record_of(
        hand,
        table_id=f"{prefix}-t",
        fingerprints={p: "same-device" for p in players},
        networks={p: "same-network" for p in players},
        decision_ms={position: 4321 for position in acted},
    )
    await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)
    for reader in players:
        view = (
            await stub.GetHand(
                history_pb2.GetHandRequest(hand_id=record.hand_id), metadata=auth_metadata(reader, "player")
            )
        ).hand
        assert all(seat.client_fingerprint == seat.network_fingerprint == "" for seat in view.seats)
        # Decision times are fair-play evidence too (automation): operators only.
        assert all(action.decision_ms == 0 for action in view.actions)
        for seat in view.seats:
            hidden = seat.player_id != reader and not seat.shown
            assert [c.hidden for c in seat.hole_cards] == [hidden, hidden]
        for name, export_format in (
            ("ps", history_pb2.EXPORT_FORMAT_POKERSTARS_TEXT),
            ("ohh", history_pb2.EXPORT_FORMAT_OPEN_HAND_HISTORY_JSON),
        ):
            content = (
                await stub.ExportHands(
                    history_pb2.ExportHandsRequest(hand_ids=[record.hand_id], format=export_format),
                    metadata=auth_metadata(reader, "player"),
                )
            ).content
            assert "same-device" not in content, name
            assert "same-network" not in content, name
            assert "4321" not in content, name
    full = (await stub.GetHand(history_pb2.GetHandRequest(hand_id=record.hand_id), metadata=ADMIN)).hand
    assert {seat.client_fingerprint for seat in full.seats} == {"same-device"}
    assert {seat.network_fingerprint for seat in full.seats} == {"same-network"}
    assert {a.decision_ms for a in full.actions if a.cause == history_pb2.ACTION_CAUSE_PLAYER} == {4321}


@pytest.mark.parametrize("role", ["service"])
async def test_a_service_token_reads_no_player_hands(
    stub: history_pb2_grpc.HistoryServiceStub, role: str
) -> None:
    prefix = f"svc{uuid.uuid4().hex[:6]}"
    record = record_of(fold_muck_showdown_hand([f"{prefix}-{n}" for n in "abcd"]), table_id=f"{prefix}-t")
    await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await stub.GetHand(
            history_pb2.GetHandRequest(hand_id=record.hand_id), metadata=auth_metadata("table", role)
        )
    # No service reads player hands: the access policy refuses before the handler runs.
    assert (error.value.code(), reason_of(error.value)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )


async def test_a_participant_never_reads_another_players_id_in_the_hand_or_its_exports(
    stub: history_pb2_grpc.HistoryServiceStub,
) -> None:
    """Telegram players' ids (`tg:<account>`) name which account plays: a participant reads the others
    by their display names only, in GetHand and in both exports; a record written before the table
    sent names (the display name was the player id) names them by seat. Their own id stays theirs;
    an admin reads every id (fair-play review)."""
    accounts = [f"tg:{random.randrange(10**9, 10**10)}" for _ in range(4)]
    hand = fold_muck_showdown_hand(accounts)
    table_id = f"tgpriv{uuid.uuid4().hex[:6]}-table"
    record = record_of(hand, table_id=table_id)
    for seat, name in zip(record.seats, ("Анна", "Bob", "Cyd", "Dee"), strict=True):
        seat.display_name = name
    old = record_of(hand, table_id=table_id, hand_id=f"hand-{uuid.uuid4().hex}")
    for seat in old.seats:
        seat.display_name = seat.player_id  # what tables wrote before display names
    for written in (record, old):
        await stub.RecordHand(history_pb2.RecordHandRequest(hand=written), metadata=SERVICE)

    for written in (record, old):
        for reader in accounts:
            metadata = auth_metadata(reader, "player")
            got = await stub.GetHand(history_pb2.GetHandRequest(hand_id=written.hand_id), metadata=metadata)
            texts = [str(got.hand)]
            for export_format in (
                history_pb2.EXPORT_FORMAT_POKERSTARS_TEXT,
                history_pb2.EXPORT_FORMAT_OPEN_HAND_HISTORY_JSON,
            ):
                exported = await stub.ExportHands(
                    history_pb2.ExportHandsRequest(hand_ids=[written.hand_id], format=export_format),
                    metadata=metadata,
                )
                texts.append(exported.content)
            for other in accounts:
                if other != reader:
                    digits = other.removeprefix("tg:")
                    assert not [text for text in texts if digits in text], f"{reader} reads {other}"
            others = [s for s in got.hand.seats if s.player_id != reader]
            assert [s.player_id for s in others] == [""] * 3
            if written is record:
                assert sorted(s.display_name for s in got.hand.seats) == sorted(["Анна", "Bob", "Cyd", "Dee"])
            else:
                assert all(s.display_name == f"Seat {s.seat + 1}" for s in others)
    admin = await stub.GetHand(history_pb2.GetHandRequest(hand_id=record.hand_id), metadata=ADMIN)
    assert sorted(s.player_id for s in admin.hand.seats) == sorted(accounts)
