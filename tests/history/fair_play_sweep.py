"""The figures of docs/integrity.md, reproducible: honest bots over many seeds and table shapes (the
false-positive sweep behind the thresholds), and at which hand each scripted cheat's case opens.

    .venv/bin/python -m tests.history.fair_play_sweep honest --seeds 0 36 --hands 300
    .venv/bin/python -m tests.history.fair_play_sweep honest --seeds 0 12 --hands 1000
    .venv/bin/python -m tests.history.fair_play_sweep cheats --hands 600

Offline (libs/poker_engine, no service); the verdicts are judged after every hand, as RecordHand does.
The honest sweep exits 1 when any case opened. Minutes of CPU: not part of the test suite.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable

from services.history import cases
from tests.history.fair_play_players import (
    Ledger,
    Player,
    Session,
    bet_fold_dumper,
    call_down_dumper,
    caller_with_anything,
    calling_station_for,
    colluder,
    honest,
    multiway_soft_player,
    pot_building_dumper,
    pot_building_receiver,
    shove_with_nothing,
    shover,
    tiny_bet_receiver,
    whipsaw_colluder,
)

SHAPES = (
    ("random", "tag", "random", "tag"),
    ("random", "random", "random", "tag", "tag", "tag"),
    ("random", "tag"),
    ("tag", "tag"),
    ("random", "random"),
)

CHEATS: dict[str, tuple[Callable[[], list[Player]], tuple[str, str, str]]] = {
    "bet-fold (4 seats)": (
        lambda: [
            Player("A", script=bet_fold_dumper("B")),
            Player("B", script=shover("A")),
            *honest("random", "tag"),
        ],
        ("CHIP_DUMPING", "A", "B"),
    ),
    "diluted bet-fold (4 seats)": (
        lambda: [
            Player("A", script=bet_fold_dumper("B", every=8, warm_up=40)),
            Player("B", script=shover("A", every=8, warm_up=40)),
            *honest("random", "tag"),
        ],
        ("CHIP_DUMPING", "A", "B"),
    ),
    "heads-up call-down": (
        lambda: [Player("A", script=call_down_dumper("B")), Player("B", script=tiny_bet_receiver("A"))],
        ("CHIP_DUMPING", "A", "B"),
    ),
    "heads-up pot building (issue 43)": (
        lambda: [
            Player("A", script=pot_building_dumper("B")),
            Player("B", script=pot_building_receiver("A")),
        ],
        ("CHIP_DUMPING", "A", "B"),
    ),
    "diluted heads-up pot building (issue 43)": (
        lambda: [
            Player("A", script=pot_building_dumper("B", every=8, warm_up=40)),
            Player("B", script=pot_building_receiver("A", every=8, warm_up=40)),
        ],
        ("CHIP_DUMPING", "A", "B"),
    ),
    "shove with nothing (4 seats)": (
        lambda: [
            Player("A", script=shove_with_nothing("B")),
            Player("B", script=caller_with_anything("A")),
            *honest("random", "tag"),
        ],
        ("CHIP_DUMPING", "A", "B"),
    ),
    "framing a TAG heads-up": (
        lambda: [Player("A", script=calling_station_for("B")), Player("B", "tag")],
        ("CHIP_DUMPING", "A", "B"),
    ),
    "colluders (4 seats)": (
        lambda: [
            Player("A", script=colluder("B")),
            Player("B", script=colluder("A")),
            *honest("random", "tag"),
        ],
        ("COLLUSION", "A", "B"),
    ),
    "multiway soft play (4 seats)": (
        lambda: [
            Player("A", script=multiway_soft_player("B")),
            Player("B", script=multiway_soft_player("A")),
            *honest("random", "tag"),
        ],
        ("MULTIWAY_SOFT_PLAY", "A", "B"),
    ),
    "whipsawing a third (4 seats)": (
        lambda: [
            Player("A", script=whipsaw_colluder("B")),
            Player("B", script=whipsaw_colluder("A")),
            *honest("random", "tag"),
        ],
        ("WHIPSAW", "A", "B"),
    ),
    "one device (4 seats)": (
        lambda: [Player("A", "tag", device="d"), Player("B", "random", device="d"), *honest("random", "tag")],
        ("SHARED_DEVICE", "A", "B"),
    ),
}


def sweep_honest(first_seed: int, last_seed: int, hands: int) -> int:
    """Every case any hand opens, by kind, and how near the new verdicts came: the highest multiway
    soft-play score any pair reached on the way (once it had the verdict's minimum chances) and the
    most whipsaws of any pair."""
    started, played, found = time.monotonic(), 0, Counter[str]()
    nearest_soft, most_whipsaws = (0.0, ""), (0, 0, "")
    for seed in range(first_seed, last_seed):
        for shape in SHAPES:
            ledger = Ledger()
            for record in Session(honest(*shape), "honest", seed=seed).hands(hands):
                ledger.record([record])
                for totals in ledger.totals.values():
                    if (
                        min(totals.strong_facing_to_second, totals.strong_facing_to_first)
                        >= cases.MULTIWAY_MIN_CHANCES
                    ):
                        score = cases.multiway_soft_play_score(totals)
                        if score > nearest_soft[0]:
                            nearest_soft = (score, f"seed {seed} {shape} {totals.first}/{totals.second}")
            played += hands
            for totals in ledger.totals.values():
                whipsaws = totals.whipsaws_to_second + totals.whipsaws_to_first
                if whipsaws > most_whipsaws[0]:
                    where = f"seed {seed} {shape} {totals.first}/{totals.second}"
                    most_whipsaws = (whipsaws, totals.whipsaw_chances, where)
            for verdict in ledger.verdicts():
                found[verdict.kind.value] += 1
                print(
                    f"seed {seed} {shape}: {verdict.kind} {verdict.giver} {verdict.receiver}: {verdict.summary}"
                )
    print(
        f"{played} honest hands, {sum(found.values())} cases {dict(found)}, {time.monotonic() - started:.0f} s"
    )
    print(f"highest multiway soft-play score on the way: {nearest_soft[0]:.2f} ({nearest_soft[1]})")
    print(f"most whipsaws of a pair: {most_whipsaws[0]} of {most_whipsaws[1]} squeezes ({most_whipsaws[2]})")
    return 1 if found else 0


def cheats(hands: int, seeds: tuple[int, ...] = (1, 2, 3)) -> int:
    for name, (players, wanted) in CHEATS.items():
        for seed in seeds:
            ledger, session, opened_at = Ledger(), Session(players(), "cheat", seed=seed), None
            for number in range(1, hands + 1):
                ledger.record([session.play()])
                if opened_at is None and wanted in ledger.opened:
                    opened_at = number
            pair = ledger.pair(wanted[1], wanted[2])
            moved = (pair.chips_cbb_to_second - pair.chips_cbb_to_first) / 100
            print(f"{name}, seed {seed}: case at hand {opened_at}; {moved:.0f} bb moved net by hand {hands}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("honest", "cheats"))
    parser.add_argument("--seeds", nargs=2, type=int, default=(0, 36), metavar=("FIRST", "END"))
    parser.add_argument("--hands", type=int, default=300)
    args = parser.parse_args(argv)
    if args.what == "honest":
        return sweep_honest(args.seeds[0], args.seeds[1], args.hands)
    return cheats(args.hands)


if __name__ == "__main__":
    sys.exit(main())
