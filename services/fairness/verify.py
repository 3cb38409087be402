"""`python -m services.fairness.verify`: check a hand from its published values, or by hand id.

From published values it needs nothing but this package's pure modules (hashlib and hmac):

    python -m services.fairness.verify --seed HEX64 --nonce HEX32 --commitment HEX64 \\
        --client-seeds 1:616c696365,4:626f62 --dealt 0:Ac,1:9c

By hand id it fetches the reveal from a running fairness service, re-derives the deck locally (so the
verdict does not rest on the server's word), and asks the service for the chain link check:

    python -m services.fairness.verify --hand-id ID --target 127.0.0.1:50054 --token TOKEN --dealt-prefix Ac,9c

Exit status: 0 PASS, 1 FAIL, 2 bad usage or the service refused (for example a hand not yet ended).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from services.fairness.shuffle import SHUFFLE_VERSION, SeatSeed, ShuffleInputError, card_index, deck_text
from services.fairness.verification import (
    DealtCard,
    Mismatch,
    MismatchKind,
    PublishedHand,
    VerificationResult,
    dealt_from_prefix,
    verify_hand,
)


class UsageError(Exception):
    """A command-line value cannot be read."""


def _hex(value: str, name: str) -> bytes:
    try:
        return bytes.fromhex(value.strip())
    except ValueError as exc:
        raise UsageError(f"{name} must be hex, got {value!r}") from exc


def _card(text: str) -> int:
    text = text.strip()
    if text.isdigit():
        return int(text)
    try:
        return card_index(text)
    except ShuffleInputError as exc:
        raise UsageError(str(exc)) from exc


def parse_client_seeds(items: Sequence[str]) -> tuple[SeatSeed, ...]:
    """`SEAT:HEX` items, each possibly a comma-separated list."""
    seeds = []
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            seat, sep, value = part.partition(":")
            if not sep or not seat.isdigit():
                raise UsageError(f"a client seed is SEAT:HEX, got {part!r}")
            seeds.append(SeatSeed(int(seat), _hex(value, f"client seed of seat {seat}")))
    return tuple(seeds)


def parse_dealt(items: Sequence[str], prefixes: Sequence[str]) -> list[DealtCard]:
    """`POSITION:CARD` pairs plus deck prefixes `CARD,CARD,...`; cards as text (`As`) or index (`51`)."""
    dealt = []
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            position, sep, card = part.partition(":")
            if not sep or not position.isdigit():
                raise UsageError(f"a dealt card is POSITION:CARD, got {part!r}")
            dealt.append(DealtCard(int(position), _card(card)))
    for prefix in prefixes:
        cards = [_card(c) for c in prefix.split(",") if c.strip()]
        dealt.extend(d for d in dealt_from_prefix(cards) if d not in dealt)
    return dealt


def describe_mismatch(mismatch: Mismatch) -> str:
    where = f" at deck position {mismatch.position}" if mismatch.kind is MismatchKind.DEALT_CARD else ""
    detail = f" (expected {mismatch.expected}, found {mismatch.actual})" if mismatch.expected else ""
    return f"{mismatch.kind.value}{where}: {mismatch.description}{detail}"


def report(
    result: VerificationResult, out: TextIO, *, chain: Mismatch | None = None, chain_checked: bool = False
) -> int:
    """Print the verdict and return the exit status."""
    if result.computed_commitment:
        print(f"computed commitment  {result.computed_commitment}", file=out)
    if result.deck:
        print(f"deck                 {deck_text(result.deck)}", file=out)
    print(f"dealt cards checked  {result.dealt_cards_checked}", file=out)
    if chain_checked:
        print(f"chain link           {'FAIL' if chain else 'OK'}", file=out)
    first = result.first_mismatch or chain
    if first is None:
        print("VERDICT: PASS", file=out)
        return 0
    print(f"VERDICT: FAIL - first mismatch: {describe_mismatch(first)}", file=out)
    return 1


async def _fetch_and_verify(args: argparse.Namespace, dealt: list[DealtCard], out: TextIO) -> int:
    import grpc

    from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc

    metadata = (("authorization", f"Bearer {args.token}"),) if args.token else ()
    async with grpc.aio.insecure_channel(args.target) as channel:
        stub = fairness_pb2_grpc.FairnessServiceStub(channel)
        try:
            reveal = (
                await stub.GetReveal(
                    fairness_pb2.GetRevealRequest(hand_id=args.hand_id),
                    metadata=metadata,
                    timeout=args.timeout,
                )
            ).reveal
            server_view = await stub.VerifyHand(
                fairness_pb2.VerifyHandRequest(hand_id=args.hand_id), metadata=metadata, timeout=args.timeout
            )
        except grpc.aio.AioRpcError as error:
            print(f"the fairness service refused: {error.code().name}: {error.details()}", file=sys.stderr)
            return 2
    record = reveal.commitment
    print(f"hand {record.hand_id} of table {record.table_id}, sequence {record.sequence}", file=out)
    print(f"published commitment {record.commitment}", file=out)
    published = PublishedHand(
        server_seed=bytes(reveal.server_seed),
        client_seeds=tuple(SeatSeed(int(s.seat), bytes(s.client_seed)) for s in record.client_seeds),
        nonce=_hex(record.nonce, "nonce"),
        commitment=record.commitment,
        shuffle_version=record.shuffle_version or SHUFFLE_VERSION,
    )
    for seed in record.client_seeds:
        print(
            f"client seed          seat {seed.seat} ({seed.player_id}): {bytes(seed.client_seed).hex()}",
            file=out,
        )
    result = verify_hand(published, dealt)
    chain = None
    if server_view.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_CHAIN_LINK:
        chain = Mismatch(
            MismatchKind.CHAIN_LINK,
            server_view.first_mismatch.description,
            expected=server_view.first_mismatch.expected,
            actual=server_view.first_mismatch.actual,
        )
    return report(result, out, chain=chain, chain_checked=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m services.fairness.verify",
        description="Check a hand's commitment, recompute its deck (docs/fairness.md) and check the dealt cards.",
    )
    by_id = parser.add_argument_group("by hand id, from a running fairness service")
    by_id.add_argument("--hand-id", help="the hand to check (it must have ended)")
    by_id.add_argument("--target", default="127.0.0.1:50054", help="HOST:PORT of the fairness service")
    by_id.add_argument("--token", default="", help="bearer token (see `mint-token`)")
    by_id.add_argument("--timeout", type=float, default=10.0, help="seconds per call")
    values = parser.add_argument_group("from published values")
    values.add_argument("--seed", help="the revealed server seed, 64 hex digits")
    values.add_argument("--nonce", help="the nonce, 32 hex digits")
    values.add_argument("--commitment", help="the commitment published before the hand, 64 hex digits")
    values.add_argument(
        "--client-seeds",
        "--client-seed",
        action="append",
        default=[],
        help="SEAT:HEX, comma-separated or repeated",
    )
    values.add_argument("--version", type=int, default=SHUFFLE_VERSION, help="shuffle version")
    dealt = parser.add_argument_group("dealt cards (either form, or both)")
    dealt.add_argument("--dealt", action="append", default=[], help="POSITION:CARD pairs, e.g. 0:Ac,1:9c")
    dealt.add_argument(
        "--dealt-prefix", action="append", default=[], help="the deck prefix used, e.g. Ac,9c,3s"
    )
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        dealt = parse_dealt(args.dealt, args.dealt_prefix)
        if args.hand_id:
            return asyncio.run(_fetch_and_verify(args, dealt, out))
        if not (args.seed and args.nonce and args.commitment):
            raise UsageError("give --hand-id, or all of --seed, --nonce and --commitment")
        published = PublishedHand(
            server_seed=_hex(args.seed, "--seed"),
            client_seeds=parse_client_seeds(args.client_seeds),
            nonce=_hex(args.nonce, "--nonce"),
            commitment=args.commitment.strip().lower(),
            shuffle_version=args.version,
        )
    except UsageError as error:
        print(f"verify: {error}", file=sys.stderr)
        return 2
    return report(verify_hand(published, dealt), out)


if __name__ == "__main__":
    raise SystemExit(main())
