"""The house round core (services/table/house/house_core.py) reads journals the table wrote before it
existed: `open`, `dealt` and `decision` entries without request ids, `at`, `paid` or `resumed`
entries. A dealt round waits for its deck and the cashier's word (RESUMING) and is rebuilt as the
table rebuilt it (the logged decisions whose stakes the cashier applied, a free one always; what was
left of the clock plus the grace); an undealt one is refunded, never dealt."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from house_games import BoxWager
from service_runtime.redis_client import create_redis
from services.table.house import house_core as core
from services.table.house import house_journal
from services.table.house.house_round import BoxBet, Decision, HouseGame, HouseRoom, LiveRound, check_bets
from tests.table.test_house_core_simulation import DECISION_SECONDS, Sim

ROOM = HouseRoom("r-h", HouseGame.CASINO_HOLDEM, 1, boxes=3, min_ante=10, max_ante=100, max_payout=5_000)


def old_open(round_id: str, player: str, wagers: tuple[BoxWager, ...]) -> dict[str, Any]:
    """An `open` entry as house_table.py wrote it before the core (no request id)."""
    return {
        "type": "open",
        "round_id": round_id,
        "table_id": "t.1",
        "player": player,
        "chain": "chain",
        "commitment": "c",
        "jackpot_before": 0,
        "started_at": 100.0,
        "cover": 10_000,
        "wagers": [[w.box, w.ante, w.dark, w.bonus] for w in wagers],
    }


def test_a_round_journaled_before_the_core_resumes_as_the_table_resumed_it() -> None:
    wagers = check_bets(ROOM, "ann", [BoxBet(1, 10), BoxBet(2, 10), BoxBet(3, 10)])
    deck = list(range(52))
    random.Random(7).shuffle(deck)
    live = LiveRound(ROOM.game, "r1", "ann", wagers, tuple(deck), ROOM)
    call = live.prepare(1, Decision.CALL)
    fold = live.prepare(2, Decision.FOLD)
    journal = [
        old_open("r1", "ann", wagers),
        {"type": "dealt", "round_id": "r1", "deadline": 120.0, "table_id": "t.1"},
        # Paid (the cashier has it), free, and one whose stake never reached the cashier.
        {
            "type": "decision",
            "round_id": "r1",
            "decision": {**call.to_json(), "transfer": "x:call"},
            "deadline": 130.0,
        },
        {
            "type": "decision",
            "round_id": "r1",
            "decision": {**fold.to_json(), "transfer": "x:fold"},
            "deadline": 131.0,
        },
        {
            "type": "decision",
            "round_id": "r1",
            "decision": {**live.prepare(3, Decision.CALL).to_json(), "transfer": "x:lost"},
            "deadline": 140.0,
        },
        # Another round, opened and never dealt; and a closed one.
        old_open("r2", "bob", wagers),
        old_open("r3", "cyd", wagers),
        {"type": "closed", "round_id": "r3", "how": "settled", "table_id": "t.1"},
    ]
    state = core.replay(journal, table_id="t.1", room=ROOM, decision_seconds=20.0, decks={})
    assert state.rounds["r1"].stage is core.Stage.RESUMING
    assert state.rounds["r3"].stage is core.Stage.SETTLED

    reopened = core.feed(state, core.Reopen(200.0))
    assert reopened.entries == ({"type": "refunding", "round_id": "r2", "why": "reopened"},)
    assert [type(e) for e in reopened.effects] == [core.Seal, core.Refund]
    refund = reopened.effects[1]
    assert isinstance(refund, core.Refund)
    assert [t.transfer_id for t in refund.stakes] == ["hgr:r2:in:1", "hgr:r2:in:2", "hgr:r2:in:3"]
    assert [t.transfer_id for t in refund.refunds] == ["hgr:r2:void:1", "hgr:r2:void:2", "hgr:r2:void:3"]

    resumed = core.feed(reopened.state, core.Resume("r1", tuple(deck), frozenset({"x:call"}), 135.0, 5.0))
    round_ = resumed.state.rounds["r1"]
    assert round_.stage is core.Stage.PLAYING
    assert [t.decision for t in round_.taken] == [Decision.CALL, Decision.FOLD]
    assert round_.deadline == 135.0 + 5.0 + 5.0  # what was left (140 - 135) plus the grace
    assert round_.notes == [core.RESUMED_NOTE]
    assert [n.code for n in resumed.notices] == ["ROUND_RESUMED"]
    # The same round the table rebuilt: its LiveRound with the kept decisions.
    expected = LiveRound(ROOM.game, "r1", "ann", wagers, tuple(deck), ROOM)
    expected.apply(call)
    expected.apply(fold)
    assert round_.live(ROOM).staked == expected.staked
    # The journal with the `resumed` entry replays to the same state (with the deck fairness seals).
    again = core.replay(
        [*journal, *reopened.entries, *resumed.entries],
        table_id="t.1",
        room=ROOM,
        decision_seconds=20.0,
        decks={"r1": tuple(deck)},
    )
    assert again.durable() == resumed.state.durable()

    # Box 3 runs out of time: the default; the round settles with the ids the table always used.
    timed = core.feed(resumed.state, core.Tick(146.0))
    assert [e["decision"]["decision"] for e in timed.entries] == ["FOLD"]
    (settle,) = timed.effects
    assert isinstance(settle, core.Settle)
    expected.apply(expected.default_decision(3))
    assert list(settle.transfers) == expected.settlement_transfers(expected.settle())
    done = core.feed(timed.state, core.SettleAnswer("r1", core.Outcome.OK))
    assert done.entries[0]["type"] == "closed"
    assert done.state.rounds["r1"].stage is core.Stage.SETTLED
    # A late or repeated answer changes nothing.
    assert core.feed(done.state, core.SettleAnswer("r1", core.Outcome.OK)).entries == ()


def test_every_refund_says_why_the_round_was_refunded() -> None:
    """The operator (and a test) tells a round refunded because a table opened on it undealt (a
    restart or a takeover) from one whose stakes or deck the cashier or fairness did not answer for."""
    wagers = check_bets(ROOM, "ann", [BoxBet(1, 10)])
    journal = [
        old_open("staking", "ann", wagers),
        old_open("dealing", "bob", wagers),
        {"type": "staked", "round_id": "dealing"},
    ]
    state = core.replay(journal, table_id="t.1", room=ROOM, decision_seconds=20.0, decks={})
    assert state.rounds["staking"].stage is core.Stage.STAKING
    assert state.rounds["dealing"].stage is core.Stage.DEALING

    unanswered = core.feed(state, core.StakeAnswer("staking", core.Outcome.UNAVAILABLE))
    assert unanswered.entries == ({"type": "refunding", "round_id": "staking", "why": "stakes_unanswered"},)
    not_sealed = core.feed(state, core.SealFailed("dealing"))
    assert not_sealed.entries == ({"type": "refunding", "round_id": "dealing", "why": "deck_not_sealed"},)
    reopened = core.feed(state, core.Reopen(200.0))
    assert {e["why"] for e in reopened.entries} == {"reopened"}
    # The reason is the journal's word only: replayed, the entry is a refund like any other.
    for step in (unanswered, not_sealed, reopened):
        again = core.replay(
            [*journal, *step.entries], table_id="t.1", room=ROOM, decision_seconds=20.0, decks={}
        )
        assert again.durable() == step.state.durable()


async def test_the_file_journal_keeps_open_rounds_and_last_views_only_and_compacts_as_it_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(house_journal, "COMPACT_AFTER_LINES", 10)
    monkeypatch.setattr(house_journal, "LAST_VIEWS_PER_TABLE", 3)
    path = tmp_path / "j.jsonl"
    journal = house_journal.FileJournal(path)
    for n in range(20):
        await journal.append("r", "r.1", 0, {"type": "open", "round_id": f"h{n}", "player": f"p{n % 5}"})
        await journal.append("r", "r.1", 0, {"type": "dealt", "round_id": f"h{n}"})
        if n != 7:
            closed = {"type": "closed", "round_id": f"h{n}", "player": f"p{n % 5}", "view": f"v{n}"}
            await journal.append("r", "r.1", 0, closed)
    assert set(await journal.open_rounds("r.1")) == {"h7"}
    assert await journal.last_views("r.1") == {"p2": "v17", "p3": "v18", "p4": "v19"}
    # Compacted on the way (2 open entries and 3 views, then fewer than 10 lines since), not 59 lines.
    assert len(path.read_text().splitlines()) < 2 + 3 + 10
    journal.close()
    again = house_journal.FileJournal(path)
    assert set(await again.open_rounds("r.1")) == {"h7"}
    assert await again.last_views("r.1") == {"p2": "v17", "p3": "v18", "p4": "v19"}
    again.close()


@pytest.mark.redis
@pytest.mark.parametrize("kind", ["memory", "file", "redis"])
async def test_every_journal_gives_the_next_opener_the_open_rounds_entries_as_written(
    kind: str, tmp_path: Path, redis_server_url: str, redis_prefix: str
) -> None:
    """A journal cut at many points of a seeded run (every entry kind: staked, refunding, voiding, paid, unpaid,
    resumed...): what `open_entries` gives back, replayed, is exactly the core's open rounds at that
    point (the summary the table replayed before dropped every kind but open, dealt and decision)."""
    sim = Sim(11, HouseGame.RUSSIAN_POKER)
    sim.run(60)
    kinds = {str(e["type"]) for e in sim.history}
    assert {"paid", "refunding", "voiding", "resumed"} <= kinds, kinds
    client = create_redis(redis_server_url)
    try:
        for cut in range(0, len(sim.history) + 1, max(1, len(sim.history) // 12)):
            prefix = sim.history[:cut]
            if kind == "memory":
                journal: Any = house_journal.MemoryJournal()
            elif kind == "file":
                journal = house_journal.FileJournal(tmp_path / f"j{cut}.jsonl")
            else:
                journal = house_journal.RedisJournal(client, shard_id="a", prefix=f"{redis_prefix}{cut}:")
                await client.hset(f"{redis_prefix}{cut}:room-owner:r", mapping={"shard": "a", "token": "1"})
            for entry in prefix:
                await journal.append("r", "t.1", 1, dict(entry))
            if kind == "file":
                journal.close()
                journal = house_journal.FileJournal(tmp_path / f"j{cut}.jsonl")  # read back, compacted
            expected = core.replay(
                prefix, table_id="t.1", room=sim.room, decision_seconds=DECISION_SECONDS, decks=sim.decks
            )
            got = core.replay(
                await journal.open_entries("t.1"),
                table_id="t.1",
                room=sim.room,
                decision_seconds=DECISION_SECONDS,
                decks=sim.decks,
            )
            still_open = {r: v for r, v in expected.rounds.items() if v.stage.open}
            assert got.rounds == still_open, cut
            if kind == "file":
                journal.close()
    finally:
        await client.aclose()
