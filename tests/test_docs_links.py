"""The repository stands on its own: every link in README.md, CONTRIBUTING.md and docs/ resolves to a
file or folder inside it, and nothing a reader or a test follows points outside it (issue 39)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# [text](target) and [text](target "title"), not images of the web; the anchor is not checked.
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_OUTSIDE = ("http://", "https://", "mailto:", "tg://")


def documents() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [path for path in found if path.is_file()]


def test_every_link_in_the_docs_resolves_inside_the_repository() -> None:
    broken = []
    for document in documents():
        for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1):
            for target in _LINK.findall(line):
                if target.startswith(_OUTSIDE) or target.startswith("#"):
                    continue
                path = (document.parent / target.split("#", 1)[0]).resolve()
                inside = path == ROOT or ROOT in path.parents
                if not inside or not path.exists():
                    broken.append(f"{document.relative_to(ROOT)}:{number}: {target}")
    assert broken == []
    assert len(documents()) > 10


def test_nothing_in_the_repository_points_at_the_workplace_outside_it() -> None:
    """The design, the operator's rules and the conventions live here (docs/architecture.md,
    docs/rules/, CONTRIBUTING.md); no document or test reads ../shared or an absolute workplace path."""
    offenders = []
    for folder in ("docs", "tests", "libs", "services", "clients", "deploy"):
        for path in (ROOT / folder).rglob("*"):
            if not path.is_file() or path.suffix not in (".md", ".py", ".yaml", ".toml", ".txt", ".json"):
                continue
            if "node_modules" in path.parts or path == Path(__file__).resolve():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if "../shared/" in text or "/work/shared" in text:
                offenders.append(str(path.relative_to(ROOT)))
    for name in ("README.md", "CONTRIBUTING.md", "Makefile"):
        path = ROOT / name
        if path.is_file() and (
            "../shared/" in path.read_text(encoding="utf-8") or "/work/shared" in path.read_text()
        ):
            offenders.append(name)
    assert offenders == []
    assert sorted(p.name for p in (ROOT / "docs" / "rules").glob("*.txt")) == [
        "casino-holdem.txt",
        "limit-holdem.txt",
        "nlhe-cash-tables.txt",
        "russian-poker.txt",
    ]
