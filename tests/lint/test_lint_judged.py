"""Precision and recall of simclock-lint's defaults on judged real code (SPEC §13, issue 15).

``tests/lint/judged/sites.json`` holds every hazard and a sample of the other
candidate sites from twelve installed RL and robotics code bases (gym,
gymnasium, pettingzoo, dm-control, stable-baselines3, sb3-contrib, mesa,
habitat-lab, highway-env, minigrid, pybullet's examples/envs and mujoco's
Python package), each judged by hand as a real hazard or not, with
the reason, and a short snippet of its file (the imports of tracked modules
and the enclosing definition). Candidates are the union of what simclock-lint
finds with its defaults, what it finds "wide" (every rule, SCK301 everywhere),
what ruff's nearest rules find and a text search for known misses
(``benchmarks/lint_quality.py collect``), so a hazard the defaults miss is in
the sample too.

This test lints the stored snippets (no network, no installed packages) and
holds the defaults to the issue's bar: every rule that reports is at least
95 % precise, and at least 97 % of the hazards are found. Run as a script to
print the table that docs/lint.md carries, with ruff's rules on the same
snippets: ``.venv/bin/python tests/lint/test_lint_judged.py``.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from simclock_lint import DEFAULT_RULES, INTERNAL_ERROR, PARSE_ERROR, RULES, Finding, lint_source

HERE = Path(__file__).resolve().parent
JUDGED = HERE / "judged" / "sites.json"
DOC = HERE.parents[1] / "docs" / "lint.md"
RUFF_SELECT = "NPY002,S311,DTZ"

Site = dict[str, Any]


@functools.cache
def _sites() -> tuple[Site, ...]:
    return tuple(json.loads(JUDGED.read_text(encoding="utf-8"))["sites"])


def sites() -> list[Site]:
    return list(_sites())


@functools.cache
def findings(wide: bool) -> tuple[tuple[Finding, ...], ...]:
    """Every snippet's findings: defaults, or wide (every rule, SCK301 everywhere). Cached."""
    if wide:
        return tuple(
            tuple(lint_source(s["snippet"], s["file"], RULES, simulation="wide")) for s in _sites()
        )
    return tuple(tuple(lint_source(s["snippet"], s["file"], DEFAULT_RULES)) for s in _sites())


def found(site: Site, *, wide: bool = False) -> set[str]:
    """The codes simclock-lint reports on the site's line of its snippet."""
    index = next(i for i, known in enumerate(_sites()) if known is site)
    per_site = findings(wide)[index]
    return {f.code for f in per_site if f.line == site["snippet_line"]}


def ruff_found(workdir: Path, judged: list[Site]) -> list[set[str]]:
    """ruff's NPY002, S311 and DTZ codes on each site's line (DTZ005 counted as DTZ)."""
    ruff_bin = Path(sys.executable).parent / "ruff"
    for index, site in enumerate(judged):
        (workdir / f"site_{index:04d}.py").write_text(site["snippet"], encoding="utf-8")
    done = subprocess.run(
        [str(ruff_bin), "check", "--isolated", "--no-cache", "--exit-zero", "--select",
         RUFF_SELECT, "--output-format", "json", str(workdir)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    out: list[set[str]] = [set() for _ in judged]
    for item in json.loads(done.stdout):
        index = int(Path(item["filename"]).stem.removeprefix("site_"))
        if item["location"]["row"] == judged[index]["snippet_line"]:
            code = item["code"]
            out[index].add("DTZ" if code.startswith("DTZ") else code)
    return out


def score(judged: list[Site], per_site: list[set[str]]) -> tuple[dict[str, list[int]], int, int]:
    """Per code [findings, hazards among them]; hazards found; hazards."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    caught = 0
    for site, codes in zip(judged, per_site, strict=True):
        for code in codes:
            table[code][0] += 1
            table[code][1] += site["hazard"]
        caught += site["hazard"] and bool(codes)
    return dict(table), caught, sum(site["hazard"] for site in judged)


def _cell(row: list[int] | None) -> str:
    if row is None:
        return "0"
    total, real = row
    return f"{real}/{total} ({100 * real / total:.0f} %)"


def markdown(workdir: Path) -> str:
    judged = sites()
    ours, ours_caught, hazards = score(judged, [found(s) for s in judged])
    wide, wide_caught, _ = score(judged, [found(s, wide=True) for s in judged])
    theirs, ruff_caught, _ = score(judged, ruff_found(workdir, judged))
    rows = [
        "| rule | real hazards / findings, defaults | same, wide (SCK301 everywhere, SCK104 on) |",
        "|---|---|---|",
    ]
    for rule in RULES:
        rows.append(
            f"| {rule.code} | {_cell(ours.get(rule.code))} | {_cell(wide.get(rule.code))} |"
        )
    for code in ("NPY002", "S311", "DTZ"):
        rows.append(f"| ruff {code} | {_cell(theirs.get(code))} | |")
    rows.append(
        f"| **recall**, simclock-lint ({hazards} hazards) | {ours_caught}/{hazards} "
        f"({100 * ours_caught / hazards:.0f} %) | {wide_caught}/{hazards} "
        f"({100 * wide_caught / hazards:.0f} %) |"
    )
    rows.append(
        f"| **recall**, ruff {RUFF_SELECT} | {ruff_caught}/{hazards} "
        f"({100 * ruff_caught / hazards:.0f} %) | |"
    )
    return "\n".join(rows)


def test_C_RNG_6_judged_sample_is_self_contained() -> None:
    judged = sites()
    assert len(judged) >= 150
    assert sum(s["hazard"] for s in judged) >= 80
    for site, per_site in zip(judged, findings(True), strict=True):
        assert site["why"] and site["version"] and site["snippet"].count("\n") <= 70
        assert not {f.code for f in per_site} & {PARSE_ERROR, INTERNAL_ERROR}, site["file"]


def test_C_RNG_6_defaults_are_precise_and_miss_little_on_judged_real_code() -> None:
    judged = sites()
    table, caught, hazards = score(judged, [found(s) for s in judged])
    for code, (total, real) in table.items():
        assert real / total >= 0.95, (code, real, total)
    assert caught / hazards >= 0.97, (caught, hazards)
    # Every default rule that real RL code can trigger is exercised here.
    assert {"SCK101", "SCK102", "SCK103"} <= set(table)


def test_C_RNG_6_old_defaults_were_imprecise_on_the_same_sites() -> None:
    # Negative control: with SCK301 everywhere, the wall-clock rule is mostly noise.
    judged = sites()
    table, _, _ = score(judged, [found(s, wide=True) for s in judged])
    total, real = table["SCK301"]
    assert real / total < 0.5


def test_C_RNG_6_judged_table_in_docs_is_current(tmp_path: Path) -> None:
    if shutil.which("ruff", path=str(Path(sys.executable).parent)) is None:
        raise AssertionError("ruff is a dev dependency; install the dev extra")
    table = markdown(tmp_path)
    assert table in DOC.read_text(encoding="utf-8"), (
        "docs/lint.md is stale: regenerate with .venv/bin/python tests/lint/test_lint_judged.py\n"
        + table
    )


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        print(markdown(Path(scratch)))
