"""The seeded catalogue matches the operator's rules text exactly, read from the rules files, so a
change of the rules shows up here as a failing test."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession

from service_runtime.database import create_engine, create_session_factory
from services.lobby import storage
from services.lobby.rooms import Pool, Room, Variant, validate_spec
from services.lobby.storage import RoomFilter

# The operator's rules as they wrote them, kept in the repository (docs/rules/).
RULES = Path(__file__).resolve().parents[2] / "docs" / "rules"

ROOM_KEYS = {"Дуэль": "duel", "Classic": "classic", "High Roller": "high-roller", "Prestige": "prestige"}
_ROOM_LINE = re.compile(
    r"^(Дуэль|Classic|High Roller|Prestige) — вход ([\d ]+) (GRAM|MPX) \(([\d ]+) фишек\), "
    r"блайнды (\d+) / (\d+), (\d+) мест"
)


def _section(text: str, number: int) -> str:
    start = re.search(rf"^{number}\. ", text, re.MULTILINE)
    end = re.search(rf"^{number + 1}\. ", text, re.MULTILINE)
    assert start is not None
    assert end is not None
    return text[start.start() : end.start()]


def _int(text: str) -> int:
    return int(text.replace(" ", "").replace("\u00a0", ""))


def no_limit_rooms_from_rules() -> dict[str, dict[str, int | str]]:
    """Rules 6, line by line: pool, entry in currency and chips, blinds, seats."""
    text = (RULES / "nlhe-cash-tables.txt").read_text(encoding="utf-8")
    rooms: dict[str, dict[str, int | str]] = {}
    for line in _section(text, 6).splitlines():
        match = _ROOM_LINE.match(line.strip())
        if match:
            name, _, pool, chips, small, big, seats = match.groups()
            rooms[f"nlhe-{pool.lower()}-{ROOM_KEYS[name]}"] = {
                "pool": pool,
                "buy_in": _int(chips),
                "small_blind": int(small),
                "big_blind": int(big),
                "seats": int(seats),
            }
    return rooms


def allowed_steps_from_rules() -> set[int]:
    text = (RULES / "nlhe-cash-tables.txt").read_text(encoding="utf-8")
    match = re.search(r"шагу комнаты \(([\d, ]+) или (\d+) фишек\)", _section(text, 10))
    assert match is not None
    return {int(x) for x in match.group(1).split(",")} | {int(match.group(2))}


def rake_model_from_rules() -> tuple[int, int]:
    text = _section((RULES / "nlhe-cash-tables.txt").read_text(encoding="utf-8"), 11)
    percent = re.search(r"До (\d+)% от разыгранного банка", text)
    cap = re.search(r"более (\d+) фишек с одной раздачи", text)
    assert percent is not None
    assert cap is not None
    return int(percent.group(1)) * 100, int(cap.group(1))


def casino_max_payout_from_rules() -> int:
    match = re.search(
        r"Максимальная выплата ([\d ]+)", (RULES / "casino-holdem.txt").read_text(encoding="utf-8")
    )
    assert match is not None
    return _int(match.group(1))


async def _seeded(url: str) -> dict[str, Room]:
    engine = create_engine(url)
    try:
        async with create_session_factory(engine)() as session:
            assert isinstance(session, AsyncSession)
            found = await storage.list_rooms(session, RoomFilter(), after_room_id="", limit=500)
    finally:
        await engine.dispose()
    return {room.room_id: room for room in found}


async def test_the_no_limit_rooms_are_rules_6_exactly(lobby_database_url: str) -> None:
    rules = no_limit_rooms_from_rules()
    assert len(rules) == 8, "rules 6 lists four rooms per pool"
    rooms = await _seeded(lobby_database_url)
    seeded = {
        room_id: room for room_id, room in rooms.items() if room.spec.variant is Variant.NO_LIMIT_HOLDEM
    }
    assert set(seeded) == set(rules)
    steps = allowed_steps_from_rules()
    for room_id, expected in rules.items():
        spec = seeded[room_id].spec
        assert spec.pool == Pool(str(expected["pool"]))
        assert (spec.min_buy_in, spec.max_buy_in) == (expected["buy_in"], expected["buy_in"])
        assert (spec.small_blind, spec.big_blind) == (expected["small_blind"], expected["big_blind"])
        assert spec.seats_per_table == expected["seats"]
        assert spec.step in steps
        assert spec.step == spec.small_blind


async def test_the_rake_is_zero_today_with_the_model_of_rules_11_ready(lobby_database_url: str) -> None:
    max_basis_points, cap = rake_model_from_rules()
    cash = [r for r in (await _seeded(lobby_database_url)).values() if r.spec.variant.is_cash_game]
    assert cash
    for room in cash:
        assert room.spec.rake_basis_points == 0, "rules 11: the commission is 0% at publication"
        assert room.spec.rake_basis_points <= max_basis_points
        assert room.spec.rake_cap == cap
        assert room.spec.rake_no_flop_no_drop


async def test_fixed_limit_rooms_are_6_and_10_max_at_two_stakes_per_pool(lobby_database_url: str) -> None:
    rooms = [
        r
        for r in (await _seeded(lobby_database_url)).values()
        if r.spec.variant is Variant.FIXED_LIMIT_HOLDEM
    ]
    for pool in Pool:
        of_pool = [r.spec for r in rooms if r.spec.pool is pool]
        assert sorted((s.seats_per_table, s.small_bet) for s in of_pool) == [
            (6, 10),
            (6, 50),
            (10, 10),
            (10, 50),
        ]
        for spec in of_pool:
            # limit-holdem.txt: the big blind is the small bet, the small blind half of it, and the
            # turn and river bets are the upper limit, twice the lower one ($5/$10).
            assert spec.big_bet == 2 * spec.small_bet
            assert spec.small_bet % 2 == 0
            assert spec.seats_per_table <= 10, "up to 10 players"


async def test_one_casino_holdem_and_one_russian_poker_room_per_pool(lobby_database_url: str) -> None:
    rooms = (await _seeded(lobby_database_url)).values()
    payout = casino_max_payout_from_rules()
    for variant in (Variant.CASINO_HOLDEM, Variant.RUSSIAN_POKER):
        of_variant = [r.spec for r in rooms if r.spec.variant is variant]
        assert sorted(s.pool for s in of_variant) == [Pool.GRAM, Pool.MPX]
        for spec in of_variant:
            assert spec.max_payout == payout
            assert 0 < spec.min_ante <= spec.max_ante
            assert (spec.min_buy_in, spec.max_buy_in, spec.rake_basis_points) == (0, 0, 0)


async def test_every_seeded_room_passes_the_validation_admins_face(lobby_database_url: str) -> None:
    rooms = await _seeded(lobby_database_url)
    assert len(rooms) == 8 + 8 + 4
    for room in rooms.values():
        assert validate_spec(room.spec) == room.spec
        assert room.revision == 1
        assert not room.disabled
