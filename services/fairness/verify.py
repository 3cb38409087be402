"""`python -m services.fairness.verify`: check a hand from its published values, or by hand id.

From published values (the mode whenever `--seed` is given) it needs nothing but this package's pure
modules (hashlib and hmac). A version 2 hand (the default) names everything its commitment binds:

    python -m services.fairness.verify --seed HEX64 --nonce HEX32 --commitment HEX64 \\
        --server-seed-hash HEX64 --table-id T --hand-id H --sequence 1 --previous-commitment HEX64 \\
        --client-seeds 1:616c696365,4:626f62 --dealt 0:Ac,1:9c

A version 1 hand needs `--version 1` and only the seed, nonce, commitment and client seeds.

By hand id it fetches the reveal from a running fairness service, re-derives the deck locally (so the
verdict does not rest on the server's word), checks the commitment you were shown before the deal
when you give it (`--commitment`), and asks the service for the chain link check:

    python -m services.fairness.verify --hand-id ID --commitment HEX64 --target 127.0.0.1:50054 \\
        --token TOKEN --dealt-prefix Ac,9c

A published value of a bad shape (a seed that is not 32 bytes, text that is not hex, a seat listed
twice, ...) is a FAIL with a MALFORMED mismatch, as `VerifyHand` answers it; `--version 0` means
version 1, as the RPC's 0 does. Exit status: 0 PASS, 1 FAIL, 2 bad usage or the service refused
(for example a hand not yet ended).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from services.fairness.shuffle import SeatSeed, ShuffleInputError, card_index, deck_text
from services.fairness.verification import (
    DealtCard,
    MalformedValue,
    Mismatch,
    MismatchKind,
    PublishedHand,
    VerificationResult,
    check_shown_commitment,
    dealt_from_prefix,
    openings_from,
    published_hand,
    published_hex,
    verify_hand,
)

if TYPE_CHECKING:  # published values need nothing but the standard library: no import at run time
    from poker.fairness.v1 import fairness_pb2


class UsageError(Exception):
    """A command-line value cannot be read."""


def _hex(value: str, field: str) -> bytes:
    """A published byte string as hex text; text that is not hex is a MALFORMED verdict."""
    return published_hex(value.strip(), field)


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
            seeds.append(SeatSeed(int(seat), _hex(value, f"client_seeds (seat {seat})")))
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
    if result.openings_checked:
        print(f"openings checked     {result.openings_checked}", file=out)
    if chain_checked:
        print(f"chain link           {'FAIL' if chain else 'OK'}", file=out)
    first = result.first_mismatch or chain
    if first is None:
        if result.openings_checked:
            print(f"the {result.openings_checked} cards you saw were fixed before the deal", file=out)
        print("VERDICT: PASS", file=out)
        return 0
    print(f"VERDICT: FAIL - first mismatch: {describe_mismatch(first)}", file=out)
    return 1


def _server_mismatch(kind: MismatchKind, given: fairness_pb2.Mismatch) -> Mismatch:
    """A mismatch only the service can find (the chain link, a damaged stored row), as it gave it."""
    return Mismatch(kind, given.description, expected=given.expected, actual=given.actual)


async def _fetch_and_verify(args: argparse.Namespace, dealt: list[DealtCard], out: TextIO) -> int:
    import grpc

    from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc

    shown = (args.commitment or "").strip()
    metadata = (("authorization", f"Bearer {args.token}"),) if args.token else ()
    from pathlib import Path

    from service_runtime.tls import TlsFiles, channel_credentials

    if args.tls_cert:
        files = TlsFiles(Path(args.tls_cert), Path(args.tls_key), Path(args.tls_ca))
        opened = grpc.aio.secure_channel(args.target, channel_credentials(files.read()))
    else:
        opened = grpc.aio.insecure_channel(args.target)
    async with opened as channel:
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
                fairness_pb2.VerifyHandRequest(hand_id=args.hand_id),
                metadata=metadata,
                timeout=args.timeout,
            )
        except grpc.aio.AioRpcError as error:
            print(f"the fairness service refused: {error.code().name}: {error.details()}", file=sys.stderr)
            return 2
    record = reveal.commitment
    print(
        f"hand {record.hand_id} of table {record.table_id}, sequence {record.sequence}, "
        f"shuffle version {record.shuffle_version}",
        file=out,
    )
    print(f"published commitment {record.commitment}", file=out)
    for seed in record.client_seeds:
        shown_player = f" ({seed.player_id})" if seed.player_id else ""
        value = bytes(seed.client_seed).hex() or "withheld (left out of the deal)"
        hashed = f", hash {seed.client_seed_hash}" if seed.client_seed_hash else ""
        print(f"client seed          seat {seed.seat}{shown_player}: {value}{hashed}", file=out)
    try:
        published = published_hand(bytes(reveal.server_seed), record)
        # Version 3: the openings the service gave this caller (the positions they saw).
        published = dataclasses.replace(published, openings=openings_from(reveal.openings))
    except MalformedValue as bad:
        return report(bad.result(), out)
    # The order of VerifyHand by id: the published values, the commitment you were shown, the chain
    # link, then (version 3) the openings, then the dealt cards.
    result = verify_hand(dataclasses.replace(published, openings=()))
    first: Mismatch | None = result.first_mismatch
    if first is None and server_view.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_MALFORMED:
        # A stored hand only the service can tell is damaged (a version 3 deck secret it cannot
        # read, so it opened nothing): MALFORMED, as VerifyHand answers it.
        first = _server_mismatch(MismatchKind.MALFORMED, server_view.first_mismatch)
    if first is None and shown:
        first = check_shown_commitment(shown, record.commitment)
    chain = None
    if server_view.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_CHAIN_LINK:
        chain = _server_mismatch(MismatchKind.CHAIN_LINK, server_view.first_mismatch)
    if first is None and chain is None:
        result = verify_hand(published, dealt)
    elif first is not None:
        result = dataclasses.replace(result, first_mismatch=first)
    if shown:
        print(
            f"shown before deal    {'OK' if first is None or first.kind != MismatchKind.SHOWN_BEFORE_DEAL else 'FAIL'}",
            file=out,
        )
    return report(result, out, chain=chain, chain_checked=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m services.fairness.verify",
        description="Check a hand's commitment, recompute its deck (docs/fairness.md) and check the dealt cards.",
    )
    by_id = parser.add_argument_group(
        "by hand id, from a running fairness service (when --seed is not given)"
    )
    by_id.add_argument("--target", default="127.0.0.1:50054", help="HOST:PORT of the fairness service")
    by_id.add_argument("--token", default="", help="bearer token (see `mint-token`)")
    by_id.add_argument("--timeout", type=float, default=10.0, help="seconds per call")
    # A fairness service that speaks mutual TLS (production): a client certificate of its CA.
    by_id.add_argument("--tls-ca", default="", help="PEM CA bundle the service's certificate chains to")
    by_id.add_argument("--tls-cert", default="", help="PEM client certificate (with --tls-key and --tls-ca)")
    by_id.add_argument("--tls-key", default="", help="PEM private key of --tls-cert")
    values = parser.add_argument_group(
        "the hand's values (published ones, or with --hand-id alone what you kept)"
    )
    values.add_argument(
        "--hand-id", help="the hand id: bound by a version 2 commitment; alone, the hand to fetch"
    )
    values.add_argument("--seed", help="the revealed server seed, 64 hex digits")
    values.add_argument("--nonce", help="the nonce, 32 hex digits")
    values.add_argument(
        "--commitment", help="the commitment published before the deal, 64 hex digits (checked in both modes)"
    )
    values.add_argument(
        "--client-seeds",
        "--client-seed",
        action="append",
        default=[],
        help="SEAT:HEX, comma-separated or repeated",
    )
    values.add_argument(
        "--version",
        type=int,
        default=2,
        help="shuffle version of published values (default 2; 0 means 1, as in the VerifyHand RPC); "
        "a version 3 hand is checked by --hand-id, with the openings the service gives you",
    )
    values.add_argument(
        "--server-seed-hash", default="", help="version 2: SHA-256 of the seed, 64 hex digits"
    )
    values.add_argument("--table-id", default="", help="version 2: the table id")
    values.add_argument(
        "--sequence", type=int, default=0, help="version 2: the hand's position in its table's chain"
    )
    values.add_argument(
        "--previous-commitment", default="", help="version 2: the previous commitment of the table's chain"
    )
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
        if args.seed is None:
            if args.hand_id:
                return asyncio.run(_fetch_and_verify(args, dealt, out))
            raise UsageError("give --hand-id (to fetch the hand), or --seed, --nonce and --commitment")
        if args.nonce is None or args.commitment is None:
            raise UsageError("with --seed, give --nonce and --commitment too")
        try:
            published = PublishedHand(
                server_seed=_hex(args.seed, "server_seed"),
                client_seeds=parse_client_seeds(args.client_seeds),
                nonce=_hex(args.nonce, "nonce"),
                commitment=args.commitment.strip(),
                # 0 means 1, as proto3's unset version does in VerifyHand.
                shuffle_version=args.version or 1,
                table_id=args.table_id,
                hand_id=args.hand_id or "",
                sequence=args.sequence,
                previous_commitment=args.previous_commitment.strip(),
                server_seed_hash=args.server_seed_hash.strip(),
            )
        except MalformedValue as bad:
            return report(bad.result(), out)
    except UsageError as error:
        print(f"verify: {error}", file=sys.stderr)
        return 2
    return report(verify_hand(published, dealt), out)


if __name__ == "__main__":
    raise SystemExit(main())
