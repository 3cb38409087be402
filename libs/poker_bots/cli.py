"""`poker-bots`: bot players against a running cluster, then a summary.

    poker-bots --bots 6 --tables 2 --rooms nlhe-gram-classic,flhe-mpx-6max-10-20 --hands 200
    poker-bots --bots 3 --rooms nlhe-gram-classic            # until Ctrl-C (leaves the tables first)
    poker-bots --bots 0 --house-bots 2 --house-rooms casino-holdem-gram,russian-poker-mpx --house-rounds 50

House bots play their own rounds at a house table with the library's basic strategy; the pool's
house bank must be funded (cashier RequestHouseFunding + DecideHouseFunding, two people of finance) or the table refuses the bets.

Development (POKER_ENVIRONMENT unset or `development`): each bot's player token and the payments
gateway's token (for chip purchases) are minted with the first of POKER_AUTH_KEYS, the key the
services verify with. Production: `--tokens FILE` (`player_id token` per line; the bots are the
players of that file, in order) and, for purchases, `--payments-token-file`; without it the bots play
with the chips they have.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from poker_bots.bot import Behaviour, Credentials
from poker_bots.credentials import GivenCredentials, MintedCredentials, read_token_file
from poker_bots.run import PlanError, RunPlan, run_bots
from poker_bots.strategies import STRATEGIES
from service_runtime.auth import TokenKeys
from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import SettingsError, load_settings
from service_runtime.tls import TlsFiles


@dataclass(frozen=True, kw_only=True)
class BotsSettings(ServiceSettings):
    ENV_PREFIX: ClassVar[str] = "POKER_BOTS_"
    SERVICE: ClassVar[str] = "poker-bots"

    def validate(self) -> list[str]:
        # A client: no port, no database; in production it mints nothing, so no key rule applies.
        return []


def _rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError("a rate between 0 and 1")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="poker-bots", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--lobby", default="127.0.0.1:50051", help="lobby address (the routing starts there)")
    p.add_argument("--cashier", default="127.0.0.1:50053", help="cashier address (chip purchases)")
    p.add_argument("--rooms", default="nlhe-gram-classic", help="comma-separated room ids")
    p.add_argument("--bots", type=int, default=4, help="bot players")
    p.add_argument(
        "--house-bots", type=int, default=0, help="house-game bots (basic strategy, rounds of their own)"
    )
    p.add_argument(
        "--house-rooms",
        default="casino-holdem-gram,russian-poker-gram",
        help="comma-separated house-game rooms (house bot i plays at table .1 of room i mod R)",
    )
    p.add_argument("--house-rounds", type=int, default=0, help="house rounds in all (0: until the run stops)")
    p.add_argument("--tables", type=int, default=1, help="tables, taken from the rooms in turn")
    p.add_argument("--strategies", default="random,tag", help=f"assigned in turn: {', '.join(STRATEGIES)}")
    p.add_argument("--hands", type=int, default=0, help="stop after this many hands (0: no limit)")
    p.add_argument("--seconds", type=float, default=0.0, help="stop after this long (0: no limit)")
    p.add_argument("--timeout-rate", type=_rate, default=0.02, help="share of turns left to the clock")
    p.add_argument(
        "--leave-rate", type=_rate, default=0.02, help="share of hands after which a bot leaves and rejoins"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the bots' choices")
    p.add_argument("--prefix", default="", help="bot player ids are <prefix>-1..N (default: bot-<random>)")
    p.add_argument("--tokens", type=Path, help="production: file of `player_id token` lines")
    p.add_argument("--payments-token-file", type=Path, help="production: the payments service token")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    return p


def credentials_for(args: argparse.Namespace, settings: BotsSettings) -> Credentials:
    if args.tokens is None:
        if settings.environment == "production":
            raise SystemExit("poker-bots: production needs --tokens (tokens are not minted there)")
        return MintedCredentials(TokenKeys.from_settings(settings.auth_keys))
    try:
        tokens = read_token_file(args.tokens.read_text())
        payments = args.payments_token_file.read_text().strip() if args.payments_token_file else ""
    except (OSError, ValueError) as error:
        raise SystemExit(f"poker-bots: {error}") from error
    return GivenCredentials(tokens, payments)


async def main_async(args: argparse.Namespace, credentials: Credentials, tls: TlsFiles | None = None) -> int:
    plan = RunPlan(
        lobby=args.lobby,
        cashier=args.cashier,
        rooms=tuple(r.strip() for r in args.rooms.split(",") if r.strip()),
        bots=args.bots,
        tables=args.tables,
        strategies=tuple(s.strip() for s in args.strategies.split(",") if s.strip()),
        hands=args.hands,
        seconds=args.seconds,
        seed=args.seed,
        player_prefix=args.prefix,
        player_ids=tuple(credentials.tokens) if isinstance(credentials, GivenCredentials) else (),
        behaviour=Behaviour(timeout_rate=args.timeout_rate, leave_rate=args.leave_rate),
        house_rooms=tuple(r.strip() for r in args.house_rooms.split(",") if r.strip()),
        house_bots=args.house_bots,
        house_rounds=args.house_rounds,
        tls=tls,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        run = await run_bots(plan, credentials, stop)
    except PlanError as error:
        print(f"poker-bots: {error}", file=sys.stderr)
        return 2
    print(run.stats.to_json() if args.json else run.stats.summary(), flush=True)
    return 1 if run.stats.unexpected_errors() else 0


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.bots < 0 or args.house_bots < 0 or args.bots + args.house_bots < 1 or args.tables < 1:
        parser().error("--tables must be at least 1 and there must be at least one bot")
    try:
        settings = load_settings(BotsSettings)
    except SettingsError as error:
        raise SystemExit(str(error)) from error
    credentials = credentials_for(args, settings)
    raise SystemExit(asyncio.run(main_async(args, credentials, TlsFiles.from_settings(settings))))


if __name__ == "__main__":
    main()
