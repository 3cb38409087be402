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


def _outside_references() -> tuple[str, ...]:
    """What a file would contain to read beside the repository: the absolute path of the folder that
    holds this clone, or a relative climb into one of that folder's other entries. Computed from where
    the clone is, so the check holds for a clone anywhere and names no outside path itself."""
    around = ROOT.parent
    siblings = [entry.name for entry in around.iterdir() if entry.name != ROOT.name and entry.is_dir()]
    absolute = [f"{around}/{name}" for name in siblings] if str(around) != "/" else []
    return (*absolute, *(f"../{name}/" for name in siblings))


def test_nothing_in_the_repository_points_beside_it() -> None:
    """The design, the operator's rules and the conventions live here (docs/architecture.md,
    docs/rules/, CONTRIBUTING.md): no document, test, library, service, client or deploy file reads
    a folder beside the clone, by a relative climb or by an absolute path."""
    outside = _outside_references()
    files = [ROOT / name for name in ("README.md", "CONTRIBUTING.md", "Makefile")]
    for folder in ("docs", "tests", "libs", "services", "clients", "deploy", ".ci"):
        files += [
            path
            for path in (ROOT / folder).rglob("*")
            if path.is_file()
            and path.suffix in (".md", ".py", ".yaml", ".toml", ".txt", ".json", ".sh", "")
            and "node_modules" not in path.parts
        ]
    offenders = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")  # once per file, not per needle
        except FileNotFoundError:
            continue  # a file another test wrote and removed meanwhile: not part of the repository
        offenders += [f"{path.relative_to(ROOT)}: {needle}" for needle in outside if needle in text]
    assert offenders == []
    assert sorted(p.name for p in (ROOT / "docs" / "rules").glob("*.txt")) == [
        "casino-holdem.txt",
        "limit-holdem.txt",
        "nlhe-cash-tables.txt",
        "russian-poker.txt",
    ]
