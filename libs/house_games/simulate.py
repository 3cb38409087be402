"""Simulator: plays N seeded rounds with the basic strategy and prints RTP and house edge with a 95% CI.

    python -m house_games.simulate casino-holdem --rounds 100000 --seed 1
    python -m house_games.simulate russian-poker --rounds 100000 --seed 1 --settings table.json
    python -m house_games.simulate russian-poker --dark --bonus 10 --jackpot 100000
    python -m house_games.simulate casino-holdem --odds FLUSH=3 --odds STRAIGHT=2

Deck orders come from ``random.Random(seed)`` (one shuffle of 0..51 per round), so a run is exactly
reproducible. The optional settings file is JSON in the shape of ``CasinoHoldemSettings.from_mapping``
or ``RussianPokerSettings.from_mapping`` (a partial pay table overrides only the entries it names).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from house_games.basic_strategy import (
    holdem_should_call,
    russian_cards_to_exchange,
    russian_should_buy_game,
    russian_should_play,
)
from house_games.casino_holdem import CasinoHoldemRound
from house_games.errors import HouseGameError
from house_games.russian_poker import RussianPhase, RussianPokerRound
from house_games.russian_poker_bonus import bonus_return_to_player, max_bonus_return
from house_games.settings import CasinoHoldemSettings, RussianPokerSettings
from house_games.settlement import Account, BoxSettlement, Item
from house_games.wagers import BoxWager

_Z95 = 1.959963984540054


@dataclass
class Tally:
    """Running sums of one simulation: per-round net result and stakes, and totals per line item."""

    ante: int
    rounds: int = 0
    net_sum: int = 0
    net_squares: int = 0
    staked_sum: int = 0
    staked_squares: int = 0
    net_staked_products: int = 0
    played: int = 0  # rounds in which the box placed the bet (called or played) rather than folding
    by_item: dict[str, int] = field(default_factory=dict)

    def add(self, box: BoxSettlement) -> None:
        net, staked = box.player_delta, box.total_staked
        self.rounds += 1
        self.net_sum += net
        self.net_squares += net * net
        self.staked_sum += staked
        self.staked_squares += staked * staked
        self.net_staked_products += net * staked
        self.played += any(line.item is Item.BET for line in box.lines)
        for line in box.lines:
            self.by_item[line.item.value] = self.by_item.get(line.item.value, 0) + line.delta(Account.PLAYER)

    def house_edge_per_ante(self) -> tuple[float, float]:
        """Mean house win per round in antes, and the half-width of its 95% interval."""
        n = self.rounds
        mean = self.net_sum / n
        variance = max(self.net_squares / n - mean * mean, 0.0) * n / max(n - 1, 1)
        return -mean / self.ante, _Z95 * math.sqrt(variance / n) / self.ante

    def return_to_player(self) -> tuple[float, float]:
        """(Returned to players) / (staked, fees included), and its 95% half-width (delta method)."""
        n = self.rounds
        ratio = self.net_sum / self.staked_sum
        mean_staked = self.staked_sum / n
        # Variance of (net - ratio * staked) per round, from the running sums.
        residual = (
            self.net_squares - 2 * ratio * self.net_staked_products + ratio * ratio * self.staked_squares
        ) / n
        half = _Z95 * math.sqrt(max(residual, 0.0) / n) / mean_staked
        return 1.0 + ratio, half


def simulate_casino_holdem(rounds: int, seed: int, settings: CasinoHoldemSettings, ante: int) -> Tally:
    rng = random.Random(seed)
    deck = list(range(52))
    tally = Tally(ante)
    for _ in range(rounds):
        rng.shuffle(deck)
        game = CasinoHoldemRound(deck, [BoxWager(1, "sim", ante)], settings)
        if holdem_should_call(game.hole_cards(1), game.flop):
            game.call(1)
        else:
            game.fold(1)
        tally.add(game.settle().boxes[0])
    return tally


def simulate_russian_poker(
    rounds: int, seed: int, settings: RussianPokerSettings, ante: int, dark: bool, bonus: int, jackpot: int
) -> Tally:
    rng = random.Random(seed)
    deck = list(range(52))
    tally = Tally(ante)
    wager = BoxWager(1, "sim", ante, dark=dark, bonus=bonus)
    for _ in range(rounds):
        rng.shuffle(deck)
        game = RussianPokerRound(deck, [wager], settings, jackpot=jackpot)
        if game.phase is RussianPhase.DECISIONS:
            discard = russian_cards_to_exchange(game.hand(1))
            if discard:
                game.exchange(1, discard)
            if russian_should_play(game.hand(1)):
                game.play(1)
            else:
                game.fold(1)
        if game.phase is RussianPhase.NO_GAME_CHOICES:
            if russian_should_buy_game(game.hand(1)):
                game.buy_game(1)
            else:
                game.take_ante(1)
        tally.add(game.settle().boxes[0])
    return tally


def _report(title: str, tally: Tally, out: list[str]) -> None:
    edge, edge_half = tally.house_edge_per_ante()
    rtp, rtp_half = tally.return_to_player()
    out.append(f"{title}: {tally.rounds} rounds, ante {tally.ante}")
    out.append(
        f"  return to player (per chip staked, fees included): {100 * rtp:.3f}% +/- {100 * rtp_half:.3f}% (95% CI)"
    )
    out.append(f"  house edge (per chip staked): {100 * (1 - rtp):.3f}% +/- {100 * rtp_half:.3f}%")
    out.append(f"  house edge per initial ante: {100 * edge:.3f}% +/- {100 * edge_half:.3f}% (95% CI)")
    out.append(f"  average staked per round: {tally.staked_sum / tally.rounds / tally.ante:.4f} antes")
    out.append(f"  bet placed (called or played) in {100 * tally.played / tally.rounds:.2f}% of rounds")
    for item in Item:
        if item.value in tally.by_item:
            per_ante = tally.by_item[item.value] / tally.rounds / tally.ante
            out.append(f"  player net on {item.value}: {per_ante:+.5f} antes per round")


def _load_settings(path: str | None) -> dict[str, object]:
    if path is None:
        return {}
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    if not isinstance(raw, dict):
        raise SystemExit("the settings file must hold a JSON object")
    return raw


def _as_dict(value: object) -> dict[str, object]:
    return dict(value) if isinstance(value, dict) else {}


def _parse_odds_args(parser: argparse.ArgumentParser, items: Sequence[str]) -> dict[str, int]:
    odds: dict[str, int] = {}
    for item in items:
        name, _, value = item.partition("=")
        if not value.strip().isdigit():
            parser.error(f"--odds takes NAME=N with a whole number N, got {item!r}")
        odds[name.strip().upper()] = int(value)
    return odds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m house_games.simulate", description=__doc__.split("\n")[0]
    )
    parser.add_argument("game", choices=["casino-holdem", "russian-poker"])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ante", type=int, default=10)
    parser.add_argument("--settings", help="JSON file with pay tables and table settings")
    parser.add_argument(
        "--odds",
        action="append",
        default=[],
        metavar="NAME=N",
        help="override one entry of the ante (Casino Hold'em) or main (Russian Poker) pay table",
    )
    parser.add_argument("--dark", action="store_true", help="Russian Poker: play a dark box (blind)")
    parser.add_argument(
        "--bonus",
        type=int,
        default=0,
        help="Russian Poker: bonus stake (dark box, or any box with bonus_on_light_boxes in the settings)",
    )
    parser.add_argument("--jackpot", type=int, default=0, help="Russian Poker: jackpot balance every round")
    args = parser.parse_args(argv)
    if args.rounds < 2 or args.ante < 1:
        parser.error("need at least 2 rounds and a positive ante")
    raw = _load_settings(args.settings)
    if args.odds:
        table_key = "ante_odds" if args.game == "casino-holdem" else "odds"
        raw[table_key] = {**_as_dict(raw.get(table_key)), **_parse_odds_args(parser, args.odds)}
    out: list[str] = []
    try:
        if args.game == "casino-holdem":
            holdem = CasinoHoldemSettings.from_mapping(raw)
            _report("Casino Hold'em", simulate_casino_holdem(args.rounds, args.seed, holdem, args.ante), out)
        else:
            settings = RussianPokerSettings.from_mapping(raw)
            tally = simulate_russian_poker(
                args.rounds, args.seed, settings, args.ante, args.dark, args.bonus, args.jackpot
            )
            kind = "dark box" if args.dark else "light box"
            extra = f", bonus {args.bonus}, jackpot {args.jackpot}" if args.bonus else ""
            _report(f"Russian Poker ({kind}{extra})", tally, out)
            if args.bonus:
                table, cap = settings.bonus_pay_table, settings.jackpot_award_stakes
                exact = bonus_return_to_player(table, Fraction(args.jackpot, args.bonus), cap)
                out.append(f"  bonus bet alone, exact: return to player {100 * float(exact):.3f}%")
                worst = max_bonus_return(table, cap)
                out.append(
                    f"  bonus bet alone, exact, at any jackpot (awards capped at {cap} stakes): "
                    f"return to player at most {100 * float(worst):.3f}%"
                )
    except HouseGameError as error:
        # Bad settings or wagers (a bonus on a light box, ...): say which, without a traceback.
        parser.error(f"{error.reason}: {error}")
    out.append(f"  seed {args.seed}")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
