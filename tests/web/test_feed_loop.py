"""The table stream's reconnect logic (web/src/feed_loop.ts, which table_feed.ts wires to the gateway's
stream and the WebView's network events), run in Node against scripted streams: the backoff (0.2 s
doubling, never over 3 s), the stream opened again after a drop and the player told of the break and
of the way back, a token renewal mid-stream re-opened at once without a word, a refusal another try
would not change ending the loop in words, an offline network waited for, and the full view after a
re-open replacing the stale one in the table's model (a new hand clears a ticked pre-action)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.node import run_web_script


def _run(tmp_path: Path, scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return run_web_script("e2e/feed_loop_cases.ts", scenarios, tmp_path, "the table stream's reconnect loop")


def _kinds(trace: list[dict[str, Any]]) -> list[str]:
    """The trace in short: open, live, lost, timer <ms>, update <hand>, failed, offline, online, ended."""
    short = []
    for entry in trace:
        if "open" in entry:
            short.append("open")
        elif "timer" in entry:
            short.append(f"timer {entry['timer']}")
        elif "update" in entry:
            short.append(f"update {entry['update']}")
        elif "network" in entry:
            short.append(entry["network"])
        elif "ended" in entry:
            short.append("ended")
        else:
            short.append(entry["link"])
    return short


UNAVAILABLE = {"error": {"code": "Unavailable"}}


def test_the_backoff_doubles_from_a_fifth_of_a_second_and_never_passes_three_seconds(tmp_path: Path) -> None:
    attempts = [0, 1, 2, 3, 4, 5, 6, 10, 40, 1000]
    [result] = _run(
        tmp_path,
        [
            {
                "delays": attempts,
                "streams": [[UNAVAILABLE]] * 7 + [[{"view": "A"}, UNAVAILABLE], [{"view": "A"}]],
            }
        ],
    )
    assert result["delays"] == [200, 200, 400, 800, 1600, 3000, 3000, 3000, 3000, 3000]
    assert all(200 <= d <= 3000 for d in result["delays"])
    # Seven breaks in a row before the stream is live: each said with its attempt, each wait longer
    # up to the cap; once live, the count starts again (the next break waits 0.2 s).
    timers = [entry["timer"] for entry in result["trace"] if "timer" in entry]
    assert timers == [200, 400, 800, 1600, 3000, 3000, 3000, 200]
    lost = [entry for entry in result["trace"] if entry.get("link") == "reconnecting"]
    assert [entry["attempts"] for entry in lost] == [1, 2, 3, 4, 5, 6, 7, 1]
    assert lost[0]["text"] == "connection lost; reconnecting (attempt 1)…"
    live = [entry["text"] for entry in result["trace"] if entry.get("link") == "live"]
    assert live == ["reconnected — your seat was kept"] * 2
    assert result["reconnects"] == 2


def test_a_dropped_stream_is_opened_again_and_its_first_full_view_replaces_the_stale_one(
    tmp_path: Path,
) -> None:
    [same_hand, new_hand] = _run(
        tmp_path,
        [
            # Mid-hand: the link drops and the table comes back in the same hand, my turn now.
            {
                "streams": [
                    [{"view": "A"}, {"view": "A", "events": 2}, UNAVAILABLE],
                    [{"view": "A", "stack": 950, "turn": True}],
                ]
            },
            # Away over the end of the hand: a pre-action ticked in hand A, the next view is hand B.
            {
                "streams": [
                    [
                        {"view": "A"},
                        {"input": {"type": "pre", "choice": "call-any"}},
                        {"view": "A", "events": 1},
                        UNAVAILABLE,
                    ],
                    [{"view": "B", "stack": 900}],
                ]
            },
        ],
    )
    assert _kinds(same_hand["trace"]) == [
        "connecting", "open", "live", "update A", "update A", "reconnecting", "timer 200", "open", "live", "update A", "ended",
    ]  # fmt: skip
    # The first message after the re-open is a full view (no events), said as the way back.
    after = same_hand["trace"][same_hand["trace"].index({"open": 2}) :]
    assert after[1] == {"link": "live", "text": "reconnected — your seat was kept", "attempts": 0}
    assert after[2] == {"update": "A", "events": 0}
    assert same_hand["reconnects"] == 1
    stale, fresh = same_hand["models"][-2], same_hand["models"][-1]
    assert (stale["stack"], stale["turn"]) == (1000, False)
    assert (fresh["hand"], fresh["stack"], fresh["turn"]) == ("A", 950, True)
    assert fresh["heads"] == ["Hand 1"]  # the same hand: no new heading

    before, after_b = new_hand["models"][-2], new_hand["models"][-1]
    assert (before["hand"], before["pre"]) == ("A", "call-any")
    assert (after_b["hand"], after_b["stack"], after_b["pre"]) == ("B", 900, "")
    assert after_b["heads"] == ["Hand 1", "Hand 2"]


def test_a_token_renewal_mid_stream_reopens_at_once_without_a_word(tmp_path: Path) -> None:
    expired = {"error": {"code": "Unauthenticated", "reason": "TOKEN_EXPIRED"}}
    [renewed, twice, refused_at_once] = _run(
        tmp_path,
        [
            {
                "streams": [
                    [{"view": "A"}, {"view": "A", "events": 2}, expired],
                    [{"view": "A"}, {"view": "A", "events": 1}],
                ]
            },
            # Renewed twice in a long session, then a real drop: told of the break, and the way back.
            {
                "streams": [
                    [{"view": "A"}, expired],
                    [{"view": "A"}, expired],
                    [{"view": "A"}, UNAVAILABLE],
                    [{"view": "A"}],
                ]
            },
            # A stream the token ended before it was live: the session is gone (not a renewal).
            {"streams": [[expired]]},
        ],
    )
    assert _kinds(renewed["trace"]) == [
        "connecting",
        "open",
        "live",
        "update A",
        "update A",
        "open",
        "update A",
        "update A",
        "ended",
    ]
    assert renewed["reconnects"] == 0
    assert _kinds(twice["trace"]) == [
        "connecting", "open", "live", "update A", "open", "update A", "open", "update A",
        "reconnecting", "timer 200", "open", "live", "update A", "ended",
    ]  # fmt: skip
    assert twice["reconnects"] == 1
    assert _kinds(refused_at_once["trace"]) == ["connecting", "open", "failed", "ended"]


def test_a_refusal_ends_the_loop_in_words_and_an_ended_stream_is_opened_again(tmp_path: Path) -> None:
    [not_found, denied, ended] = _run(
        tmp_path,
        [
            {"streams": [[{"error": {"code": "NotFound", "reason": "TABLE_NOT_FOUND"}}]]},
            {
                "streams": [
                    [{"view": "A"}, {"error": {"code": "PermissionDenied", "reason": "NOT_YOUR_RESOURCE"}}]
                ]
            },
            {"streams": [[{"view": "A"}, {"end": True}], [{"view": "A"}]]},
        ],
    )
    for result in (not_found, denied):
        failed = [entry for entry in result["trace"] if entry.get("link") == "failed"]
        assert len(failed) == 1, result["trace"]
        assert failed[0]["text"].startswith("the table refused the stream: ")
        assert not re.search("TABLE_NOT_FOUND|NOT_YOUR_RESOURCE", failed[0]["text"]), failed
        assert not any("timer" in entry for entry in result["trace"])
        assert _kinds(result["trace"])[-1] == "ended"
    assert _kinds(ended["trace"]) == [
        "connecting", "open", "live", "update A", "reconnecting", "timer 200", "open", "live", "update A", "ended",
    ]  # fmt: skip


def test_offline_the_loop_says_so_and_waits_for_the_network_before_trying_again(tmp_path: Path) -> None:
    [result] = _run(tmp_path, [{"streams": [[{"view": "A"}, {"offline": 300}], [{"view": "A"}]]}])
    kinds = _kinds(result["trace"])
    assert kinds == [
        "connecting",
        "open",
        "live",
        "update A",
        "offline",
        "reconnecting",
        "timer 200",
        "online",
        "open",
        "live",
        "update A",
        "ended",
    ]
    lost = next(entry for entry in result["trace"] if entry.get("link") == "reconnecting")
    assert lost["text"] == "the network is offline; reconnecting once it is back (attempt 1)…"
