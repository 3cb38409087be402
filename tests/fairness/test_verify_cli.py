"""The `verify` command: verdicts and first mismatches from published values (with nothing but the
standard library importable), the same verdict as the VerifyHand RPC for every input (malformed ones
and `--version 0` included), and by hand id against a real server, checking the commitment shown
before the deal."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.testing import auth_metadata, running_server, token_for
from service_runtime.testing_pki import TestAuthority
from services.fairness.application import FairnessApplication
from services.fairness.assembly import ACCESS, fairness_service
from services.fairness.verify import main
from tests.fairness.test_shuffle import SHUFFLE_VECTORS

ROOT = Path(__file__).resolve().parents[2]
SEED = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
NONCE = "000102030405060708090a0b0c0d0e0f"
COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
PUBLISHED = ["--version", "1", "--seed", SEED, "--nonce", NONCE, "--commitment", COMMITMENT]
V2 = SHUFFLE_VECTORS[4]
PUBLISHED_V2 = [
    "--seed", V2["server_seed"], "--nonce", V2["nonce"], "--commitment", V2["commitment"],
    "--server-seed-hash", V2["server_seed_hash"], "--table-id", V2["table_id"], "--hand-id", V2["hand_id"],
    "--sequence", str(V2["sequence"]), "--previous-commitment", V2["previous_commitment"],
    "--client-seeds", ",".join(f"{s['seat']}:{s['client_seed']}" for s in V2["client_seeds"]),
]  # fmt: skip


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


def test_published_values_of_an_honest_hand_pass() -> None:
    status, text = _run(*PUBLISHED, "--dealt-prefix", "Ac,9c,3s", "--dealt", "10:9h")
    assert status == 0
    assert "VERDICT: PASS" in text
    assert "dealt cards checked  4" in text


def test_a_version_2_hand_passes_with_everything_its_commitment_binds() -> None:
    status, text = _run(*PUBLISHED_V2, "--dealt-prefix", ",".join(V2["deck_text"].split()[:5]))
    assert (status, text.strip().splitlines()[-1]) == (0, "VERDICT: PASS")
    status, text = _run(*PUBLISHED_V2, "--sequence", "3")
    assert status == 1
    assert "first mismatch: COMMITMENT" in text


def test_a_wrong_commitment_fails_with_the_commitment_named() -> None:
    status, text = _run("--version", "1", "--seed", SEED, "--nonce", NONCE, "--commitment", "0" * 64)
    assert status == 1
    assert "first mismatch: COMMITMENT" in text


def test_a_wrong_dealt_card_fails_with_its_position() -> None:
    status, text = _run(*PUBLISHED, "--dealt-prefix", "Ac,9c,3h")
    assert status == 1
    assert "DEALT_CARD at deck position 2" in text
    assert "expected 3s, found 3h" in text


def test_client_seeds_change_the_deck() -> None:
    status, text = _run(*PUBLISHED, "--client-seeds", "1:616c696365", "--dealt-prefix", "Ac")
    assert status == 1
    assert "DEALT_CARD at deck position 0" in text


def test_bad_usage_exits_2() -> None:
    assert _run("--seed", SEED)[0] == 2
    assert _run(*PUBLISHED, "--dealt", "0:Zz")[0] == 2
    assert _run()[0] == 2


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [
        ("--seed", "", "server_seed"),
        ("--seed", "00" * 65, "server_seed"),
        ("--seed", "zz" * 32, "server_seed"),
        ("--nonce", "00" * 15, "nonce"),
        ("--commitment", "0" * 63, "commitment"),
        ("--client-seeds", "1:61,1:62", "client_seeds"),
        ("--client-seeds", "1024:61", "client_seeds"),
        ("--client-seeds", "1:" + "61" * 65, "client_seeds"),
        ("--table-id", "", "table_id"),
        ("--version", "7", "shuffle_version"),
    ],
)
def test_a_malformed_published_value_is_a_malformed_verdict(flag: str, value: str, field: str) -> None:
    status, text = _run(*PUBLISHED_V2, flag, value)
    assert status == 1
    assert f"first mismatch: MALFORMED: {field}:" in text


def test_published_mode_needs_only_the_standard_library() -> None:
    script = (
        "import sys\n"
        "for name in ('grpc', 'sqlalchemy', 'cryptography', 'google', 'poker', 'service_runtime'):\n"
        "    sys.modules[name] = None\n"
        "from services.fairness.verify import main\n"
        f"raise SystemExit(main({[*PUBLISHED, '--dealt-prefix', 'Ac,9c']!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "VERDICT: PASS" in done.stdout


async def test_by_hand_id_the_command_re_derives_the_deck_from_the_reveal(
    application: FairnessApplication,
) -> None:
    service = auth_metadata("table", "service")
    async with running_server([fairness_service(application)], ACCESS) as (running, channel):
        stub = fairness_pb2_grpc.FairnessServiceStub(channel)
        committed = await stub.CommitHand(
            fairness_pb2.CommitHandRequest(
                request_id=uuid.uuid4().hex,
                table_id="cli-table",
                deal_now=True,
                participant_ids=["bob"],
                shuffle_version=2,
            ),
            metadata=service,
        )
        hand_id = committed.commitment.hand_id
        prefix = ",".join(card.text for card in committed.deck[:5])
        target = ["--hand-id", hand_id, "--target", f"127.0.0.1:{running.port}", "--token", token_for("bob")]

        refused = await asyncio.to_thread(_run, *target)
        assert refused[0] == 2
        shown = ["--commitment", committed.commitment.commitment]

        await stub.RevealHand(
            fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
            metadata=service,
        )
        status, text = await asyncio.to_thread(_run, *target, *shown, "--dealt-prefix", prefix)
        assert (status, "VERDICT: PASS") == (0, text.strip().splitlines()[-1])
        assert "chain link           OK" in text
        # The commitment a player kept from before the deal is checked, not ignored.
        status, text = await asyncio.to_thread(_run, *target, "--commitment", "ab" * 32)
        assert status == 1
        assert "first mismatch: SHOWN_BEFORE_DEAL" in text
        status, text = await asyncio.to_thread(_run, *target, "--commitment", "ab")
        assert status == 1
        assert "first mismatch: MALFORMED: shown commitment:" in text
        wrong = ",".join(card.text for card in reversed(committed.deck[:5]))
        status, text = await asyncio.to_thread(_run, *target, "--dealt-prefix", wrong)
        assert status == 1
        assert "DEALT_CARD at deck position 0" in text


def _values(vector: dict[str, Any], **changes: Any) -> dict[str, Any]:
    values = {
        key: vector.get(key, "") for key in ("server_seed", "nonce", "commitment", "table_id", "hand_id")
    }
    values |= {
        "version": vector["shuffle_version"],
        "sequence": vector.get("sequence", 0),
        "previous_commitment": vector.get("previous_commitment", ""),
        "server_seed_hash": vector.get("server_seed_hash", ""),
        "client_seeds": [(s["seat"], s["client_seed"]) for s in vector["client_seeds"]],
    }
    return values | changes


def _cli_args(values: dict[str, Any]) -> list[str]:
    args = ["--seed", values["server_seed"], "--nonce", values["nonce"], "--commitment", values["commitment"]]
    args += ["--version", str(values["version"]), "--sequence", str(values["sequence"])]
    args += ["--table-id", values["table_id"], "--hand-id", values["hand_id"]]
    args += [
        "--previous-commitment",
        values["previous_commitment"],
        "--server-seed-hash",
        values["server_seed_hash"],
    ]
    for seat, seed in values["client_seeds"]:
        args += ["--client-seed", f"{seat}:{seed}"]
    return args


def _published_pb(values: dict[str, Any]) -> fairness_pb2.PublishedHand:
    return fairness_pb2.PublishedHand(
        server_seed=bytes.fromhex(values["server_seed"]),
        nonce=values["nonce"],
        commitment=values["commitment"],
        shuffle_version=values["version"],
        table_id=values["table_id"],
        hand_id=values["hand_id"],
        sequence=values["sequence"],
        previous_commitment=values["previous_commitment"],
        server_seed_hash=values["server_seed_hash"],
        client_seeds=[
            fairness_pb2.ClientSeed(seat=seat, client_seed=bytes.fromhex(seed))
            for seat, seed in values["client_seeds"]
        ],
    )


AGREEMENT_CASES = {
    "v1-honest": _values(SHUFFLE_VECTORS[1]),
    "v1-as-version-0": _values(SHUFFLE_VECTORS[1], version=0),
    "v2-honest": _values(V2),
    "v2-as-version-0": _values(V2, version=0),
    "v2-unknown-version": _values(V2, version=9),
    "seed-of-0-bytes": _values(V2, server_seed=""),
    "seed-of-65-bytes": _values(V2, server_seed="00" * 65),
    "nonce-not-hex": _values(V2, nonce="zz" * 16),
    "commitment-of-63-digits": _values(V2, commitment="0" * 63),
    "commitment-upper-case": _values(V2, commitment=V2["commitment"].upper()),
    "seat-twice": _values(V2, client_seeds=[(1, "61"), (1, "62")]),
    "seat-out-of-range": _values(V2, client_seeds=[(1024, "61")]),
    "client-seed-of-65-bytes": _values(V2, client_seeds=[(1, "61" * 65)]),
    "table-id-empty": _values(V2, table_id=""),
    "sequence-0": _values(V2, sequence=0),
    "wrong-previous-commitment": _values(V2, previous_commitment="0" * 64),
    "wrong-seed-hash": _values(V2, server_seed_hash="0" * 64),
}


async def test_the_command_and_the_rpc_give_the_same_verdict_for_the_same_values(
    application: FairnessApplication,
) -> None:
    passed = set()
    async with running_server([fairness_service(application)], ACCESS) as (_, channel):
        stub = fairness_pb2_grpc.FairnessServiceStub(channel)
        for name, values in AGREEMENT_CASES.items():
            answer = await stub.VerifyHand(
                fairness_pb2.VerifyHandRequest(published=_published_pb(values)),
                metadata=auth_metadata("anyone"),
            )
            status, text = _run(*_cli_args(values))
            last = text.strip().splitlines()[-1]
            if answer.verdict == fairness_pb2.VERDICT_PASS:
                assert (status, last) == (0, "VERDICT: PASS"), name
                passed.add(name)
            else:
                kind = fairness_pb2.MismatchKind.Name(answer.first_mismatch.kind).removeprefix(
                    "MISMATCH_KIND_"
                )
                assert status == 1, name
                assert last.startswith(
                    f"VERDICT: FAIL - first mismatch: {kind}: {answer.first_mismatch.description}"
                ), (name, last)
    # Version 0 is version 1 in both: a version 1 hand passes, a version 2 hand fails its commitment.
    assert passed == {"v1-honest", "v1-as-version-0", "v2-honest", "commitment-upper-case"}


async def test_by_hand_id_against_a_mutual_tls_fairness_service(
    application: FairnessApplication, tmp_path: Path
) -> None:
    """Production's fairness speaks mutual TLS: the command connects with --tls-*, and without them
    it is refused at the handshake (exit 2, UNAVAILABLE)."""
    authority = TestAuthority(tmp_path)
    service = auth_metadata("table", "service")
    server_files = authority.issue("fairness")
    async with running_server([fairness_service(application)], ACCESS, tls=server_files) as (
        running,
        channel,
    ):
        committed = await fairness_pb2_grpc.FairnessServiceStub(channel).CommitHand(
            fairness_pb2.CommitHandRequest(
                request_id=uuid.uuid4().hex, table_id="tls-table", deal_now=True, participant_ids=["bob"]
            ),
            metadata=service,
        )
        await fairness_pb2_grpc.FairnessServiceStub(channel).RevealHand(
            fairness_pb2.RevealHandRequest(
                hand_id=committed.commitment.hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED
            ),
            metadata=service,
        )
        client = authority.issue("operator")
        target = ["--hand-id", committed.commitment.hand_id, "--target", f"127.0.0.1:{running.port}"]
        target += ["--token", token_for("bob"), "--timeout", "5"]
        tls = [
            "--tls-ca",
            str(client.ca_file),
            "--tls-cert",
            str(client.cert_file),
            "--tls-key",
            str(client.key_file),
        ]
        status, text = await asyncio.to_thread(_run, *target, *tls)
        assert (status, text.strip().splitlines()[-1]) == (0, "VERDICT: PASS")
        status, _ = await asyncio.to_thread(_run, *target)
        assert status == 2
