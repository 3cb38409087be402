"""The page's fairness verifier (web/src/fairness/verifier.ts, run in Node with its Web Crypto) gets
the known-answer vectors of docs/fairness.md right, and catches a moved card and a wrong commitment."""

from __future__ import annotations

from pathlib import Path

from tests.fairness.test_deck_commitment import DOC_VECTORS
from tests.fairness.test_shuffle import SHUFFLE_VECTORS, VECTORS
from tests.node import run_web_script


def test_the_browser_verifier_agrees_with_the_known_answer_vectors(tmp_path: Path) -> None:
    results = run_web_script("e2e/verifier_vectors.ts", VECTORS, tmp_path, "the browser verifier")
    assert [r["name"] for r in results] == [v["name"] for v in SHUFFLE_VECTORS]
    for result, vector in zip(results, SHUFFLE_VECTORS, strict=True):
        assert result["ok"] is True, result
        assert result["checked"] == 52
        assert result["computed"] == vector["commitment"]
        assert result["movedCardCaught"] is True
        assert result["wrongCommitmentCaught"] is True


def test_the_browser_verifier_checks_version_3_openings_and_catches_each_change(tmp_path: Path) -> None:
    vectors = DOC_VECTORS
    results = run_web_script(
        "e2e/verifier_v3_vectors.ts", {"hands": vectors}, tmp_path, "the browser verifier"
    )
    assert [r["name"] for r in results] == [v["name"] for v in vectors]
    for result, vector in zip(results, vectors, strict=True):
        assert result["ok"] is True, result
        assert (result["checked"], result["computed"]) == (1, vector["commitment"])
        for caught in ("saltCaught", "cardCaught", "notOpenedCaught", "rootCaught"):
            assert result[caught] is True, (caught, result)
        # The hash the page sends before the seed is the one docs/fairness.md defines.
        assert result["seedHashes"] == vector["client_seed_hashes"], vector["name"]
        for check in ("keptPasses", "missingCaught", "changedCaught"):
            assert result[check] is True, (check, result)
    assert any(v["client_seeds"] for v in vectors)  # the hash is checked on some seed at all
