"""Quality figure of simclock-lint against ruff on the tricky-case corpus (SPEC §13).

The corpus (``tests/lint/corpus/*.py.txt``, not ``.py`` so no tool lints it as
project code) marks each line that must be flagged with ``# expect: CODE``;
every other line must stay clean. ``declared_*`` files are linted as declared
simulation code (a ``simulation-code`` glob, C-LINT-1), the others with the
defaults. A line counts as caught by ruff when ruff
(``NPY002``, ``S311``, ``DTZ``) reports anything on it, since its codes differ.

Run as a script to print the table that docs/lint.md carries:
``.venv/bin/python tests/lint/test_lint_quality.py``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from simclock_lint import lint_source

HERE = Path(__file__).resolve().parent
CORPUS = sorted((HERE / "corpus").glob("*.py.txt"))
DOC = HERE.parents[1] / "docs" / "lint.md"
RUFF_SELECT = "NPY002,S311,DTZ"
_EXPECT = re.compile(r"#\s*expect:\s*(SCK\d+(?:[ ,]+SCK\d+)*)\s*(\(missed: [^)]*\))?$")
_KNOWN_FALSE_POSITIVE = "# known false positive:"

Lines = dict[tuple[str, int], set[str]]


def expected() -> tuple[Lines, set[tuple[str, int]]]:
    """Expected codes per (file, line), and every code line that must stay clean."""
    positives: Lines = {}
    negatives: set[tuple[str, int]] = set()
    for path in CORPUS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stripped = line.strip()
            match = _EXPECT.search(line)
            if match:
                positives[(path.name, number)] = set(match.group(1).replace(",", " ").split())
            elif stripped and not stripped.startswith(("#", "import ", "from ")):
                negatives.add((path.name, number))
    return positives, negatives


def known_limits() -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """Lines marked as known misses and as known false positives of simclock-lint."""
    missed: set[tuple[str, int]] = set()
    false: set[tuple[str, int]] = set()
    for path in CORPUS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = _EXPECT.search(line)
            if match and match.group(2):
                missed.add((path.name, number))
            if _KNOWN_FALSE_POSITIVE in line:
                false.add((path.name, number))
    return missed, false


def simulation_of(path: Path) -> str | tuple[str, ...]:
    """``declared_*`` files are declared simulation code (C-LINT-1); the others get the defaults."""
    return "matches simulation-code 'declared_*'" if path.name.startswith("declared_") else ()


def ours() -> Lines:
    found: Lines = defaultdict(set)
    for path in CORPUS:
        for finding in lint_source(path.read_bytes(), path.name, simulation=simulation_of(path)):
            found[(path.name, finding.line)].add(finding.code)
    return dict(found)


def ruff(workdir: Path) -> Lines:
    ruff_bin = Path(sys.executable).parent / "ruff"
    for path in CORPUS:
        shutil.copyfile(path, workdir / path.name.removesuffix(".txt"))
    done = subprocess.run(
        [
            *(str(ruff_bin), "check", "--isolated", "--no-cache", "--exit-zero"),
            *("--select", RUFF_SELECT, "--output-format", "json", str(workdir)),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found: Lines = defaultdict(set)
    for item in json.loads(done.stdout):
        name = Path(item["filename"]).name + ".txt"
        found[(name, item["location"]["row"])].add(item["code"])
    return dict(found)


def score(found: Lines, exact: bool) -> dict[str, tuple[int, int]]:
    """Per expected code: (caught, total); plus "FP": (false-positive lines, clean lines)."""
    positives, negatives = expected()
    table: dict[str, tuple[int, int]] = {}
    for key, codes in sorted(positives.items()):
        for code in sorted(codes):
            hit = code in found.get(key, set()) if exact else bool(found.get(key))
            caught, total = table.get(code, (0, 0))
            table[code] = (caught + hit, total + 1)
    false = sum(1 for key in found if key not in positives)
    table["FP"] = (false, len(negatives))
    return table


def markdown(workdir: Path) -> str:
    mine = score(ours(), exact=True)
    theirs = score(ruff(workdir), exact=False)
    codes = sorted(code for code in mine if code != "FP")
    rows = ["| expected | cases | simclock-lint | ruff " + RUFF_SELECT + " |", "|---|---|---|---|"]
    for code in codes:
        rows.append(f"| {code} | {mine[code][1]} | {mine[code][0]} | {theirs[code][0]} |")
    total = sum(mine[c][1] for c in codes)
    ours_caught = sum(mine[c][0] for c in codes)
    ruff_caught = sum(theirs[c][0] for c in codes)
    rows.append(
        f"| **recall** | {total} | {ours_caught}/{total} ({100 * ours_caught / total:.0f} %) "
        f"| {ruff_caught}/{total} ({100 * ruff_caught / total:.0f} %) |"
    )
    rows.append(
        f"| **false positives** (lines that must stay clean) | {mine['FP'][1]} | {mine['FP'][0]} "
        f"| {theirs['FP'][0]} |"
    )
    return "\n".join(rows)


def test_C_RNG_6_corpus_findings_are_exactly_the_expected_ones_bar_known_limits() -> None:
    positives, _ = expected()
    missed, false = known_limits()
    assert len(positives) >= 60
    found = ours()
    assert {k: v for k, v in found.items() if k not in false} == {
        k: v for k, v in positives.items() if k not in missed
    }
    assert false <= set(found)


def test_C_RNG_6_quality_table_in_docs_is_current(tmp_path: Path) -> None:
    table = markdown(tmp_path)
    assert table in DOC.read_text(encoding="utf-8"), (
        "docs/lint.md is stale: regenerate with .venv/bin/python tests/lint/test_lint_quality.py\n"
        + table
    )


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        print(markdown(Path(scratch)))
