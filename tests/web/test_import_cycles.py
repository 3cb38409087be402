"""The web client's modules import one another without a circle (issue "The Mini App players would
choose"): web/e2e/import_cycles.mjs reads every module of web/src (the generated code included) with
the TypeScript compiler, `import type` and re-exports too, resolves the relative imports to files and
names each strongly connected component of more than one module. The screens reach each other through
router.ts, which main.ts gives the screens to, so no screen imports main.ts; the catalogue's parts
name an entry's shape from i18n/entry.ts, not from the catalogue that imports them. The script is
also run on a fixture with circles, so it is known to see them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.node import WEB, require_node


def _cycles(root: Path | None = None) -> dict[str, Any]:
    node = require_node("the import circle check", WEB / "node_modules" / "typescript")
    args = [node, "e2e/import_cycles.mjs"] + ([str(root)] if root else [])
    done = subprocess.run(args, cwd=WEB, capture_output=True, text=True, timeout=120, check=True)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_the_pages_modules_import_one_another_without_a_circle() -> None:
    found = _cycles()
    assert found["cycles"] == [], "import circles in web/src:\n" + "\n".join(
        " -> ".join([*cycle["circle"], cycle["circle"][0]]) for cycle in found["cycles"]
    )
    # The whole page was read (every screen, the catalogue, the generated code), not a scan of nothing.
    assert found["files"] > 30
    assert found["edges"] > 80


def test_the_check_names_each_circle_a_type_import_and_a_folder_index_included(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "i18n").mkdir(parents=True)
    files = {
        # main -> lobby -> main: the screens' old circle.
        "main.ts": 'import { showLobby } from "./lobby";\nexport function go(): void { showLobby(); }\n',
        "lobby.ts": 'import { go } from "./main";\nexport function showLobby(): void { void go; }\n',
        # A circle of types only, through a folder's index.
        "i18n/index.ts": 'import { PARTS } from "./parts";\nexport type Entry = { ru: string };\nexport const ALL = PARTS;\n',
        "i18n/parts.ts": 'import type { Entry } from ".";\nexport const PARTS: Entry[] = [];\n',
        # A module importing itself, and one outside any circle.
        "self.ts": 'export * from "./self";\n',
        "leaf.ts": 'import { ALL } from "./i18n";\nexport const n = ALL.length;\n',
    }
    for name, text in files.items():
        (src / name).write_text(text)
    found = _cycles(src)
    assert found["files"] == len(files)
    modules = sorted(cycle["modules"] for cycle in found["cycles"])
    assert modules == [["i18n/index.ts", "i18n/parts.ts"], ["lobby.ts", "main.ts"], ["self.ts"]]
    circles = {tuple(cycle["circle"]) for cycle in found["cycles"]}
    assert ("lobby.ts", "main.ts") in circles
