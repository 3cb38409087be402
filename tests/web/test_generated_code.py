"""The web client's generated code (web/src/gen, protoc-gen-es) is committed like the Python stubs
under libs/poker (issue 39: one convention for generated code in both languages), and matches what
protos/ generates now."""

from __future__ import annotations

import filecmp
import subprocess
from pathlib import Path

from tests.node import WEB, require_node

BUF = WEB / "node_modules" / ".bin" / "buf"
PLUGIN = WEB / "node_modules" / ".bin" / "protoc-gen-es"


def test_the_web_clients_generated_code_is_committed_and_not_stale(tmp_path: Path) -> None:
    require_node("the web client's generated-code check", BUF, PLUGIN)
    template = tmp_path / "buf.gen.yaml"
    # web/buf.gen.yaml with the output in a temporary folder.
    template.write_text(
        (WEB / "buf.gen.yaml").read_text().replace("out: src/gen", f"out: {tmp_path / 'gen'}")
    )
    subprocess.run(
        [str(BUF), "generate", "../protos", "--template", str(template)],
        cwd=WEB, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    fresh = {p.relative_to(tmp_path / "gen") for p in (tmp_path / "gen").rglob("*") if p.is_file()}
    committed = {p.relative_to(WEB / "src" / "gen") for p in (WEB / "src" / "gen").rglob("*") if p.is_file()}
    assert fresh == committed, "run `make web`: generated files were added or removed"
    stale = [
        str(p)
        for p in sorted(fresh)
        if not filecmp.cmp(tmp_path / "gen" / p, WEB / "src" / "gen" / p, shallow=False)
    ]
    assert not stale, f"run `make web`: these generated files are stale: {stale}"
    tracked = subprocess.run(
        ["git", "ls-files", "src/gen"], cwd=WEB, check=True, capture_output=True, text=True
    ).stdout.split()
    assert len(tracked) == len(committed), "web/src/gen is committed, as libs/poker is"
