"""The page's version 3 verifier (web/src/fairness/verifier.ts, run in Node with its Web Crypto)
refuses, as the service's verdict does, a revealed client seed that does not give the hash its seat
published before the seal, or comes without one; and leaves a withheld seat (a hash and no seed) out
of the deal (docs/fairness.md, version 3)."""

from __future__ import annotations

from pathlib import Path

from tests.fairness.test_deck_commitment import DOC_VECTORS
from tests.node import run_web_script


def test_the_browser_verifier_refuses_a_seed_that_does_not_give_its_published_hash(tmp_path: Path) -> None:
    results = run_web_script(
        "e2e/verifier_v3_vectors.ts", {"hands": DOC_VECTORS}, tmp_path, "the browser verifier"
    )
    assert [r["name"] for r in results] == [v["name"] for v in DOC_VECTORS]
    for result in results:
        assert result["ok"] is True, result
        for check in ("seedHashCaught", "missingHashCaught", "withheldPasses", "upperPasses"):
            assert result[check] is True, (check, result)
    assert any(v["client_seeds"] for v in DOC_VECTORS)  # some vector has a seed to check at all
