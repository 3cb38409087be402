"""The `verify` command: verdicts and first mismatches from published values (with nothing but the
standard library importable) and by hand id against a real server."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import uuid
from pathlib import Path

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.testing import auth_metadata, running_server, token_for
from services.fairness.application import FairnessApplication
from services.fairness.assembly import ACCESS, fairness_service
from services.fairness.verify import main

ROOT = Path(__file__).resolve().parents[2]
SEED = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
NONCE = "000102030405060708090a0b0c0d0e0f"
COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
PUBLISHED = ["--seed", SEED, "--nonce", NONCE, "--commitment", COMMITMENT]


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


def test_published_values_of_an_honest_hand_pass() -> None:
    status, text = _run(*PUBLISHED, "--dealt-prefix", "Ac,9c,3s", "--dealt", "10:9h")
    assert status == 0
    assert "VERDICT: PASS" in text
    assert "dealt cards checked  4" in text


def test_a_wrong_commitment_fails_with_the_commitment_named() -> None:
    status, text = _run("--seed", SEED, "--nonce", NONCE, "--commitment", "0" * 64)
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
            fairness_pb2.CommitHandRequest(request_id=uuid.uuid4().hex, table_id="cli-table", deal_now=True),
            metadata=service,
        )
        hand_id = committed.commitment.hand_id
        prefix = ",".join(card.text for card in committed.deck[:5])
        target = ["--hand-id", hand_id, "--target", f"127.0.0.1:{running.port}", "--token", token_for("bob")]

        refused = await asyncio.to_thread(_run, *target)
        assert refused[0] == 2

        await stub.RevealHand(
            fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
            metadata=service,
        )
        status, text = await asyncio.to_thread(_run, *target, "--dealt-prefix", prefix)
        assert (status, "VERDICT: PASS") == (0, text.strip().splitlines()[-1])
        assert "chain link           OK" in text
        wrong = ",".join(card.text for card in reversed(committed.deck[:5]))
        status, text = await asyncio.to_thread(_run, *target, "--dealt-prefix", wrong)
        assert status == 1
        assert "DEALT_CARD at deck position 0" in text
