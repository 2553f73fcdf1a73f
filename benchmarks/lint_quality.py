"""simclock-lint's precision and recall on real code, against ruff (SPEC §13, issue 15).

Not a test: it needs the real code bases installed, which a test must not
download. Two steps:

``collect``
    Lints the given installed packages three ways: simclock-lint with its
    defaults, simclock-lint "wide" (every rule, SCK301 everywhere: the old
    defaults, to find the sites the defaults now leave out) and ruff's nearest
    rules (``NPY002``, ``S311``, ``DTZ``), plus a text search for the misses the
    issue names (``np.random`` bound to a name, ``strftime``, ``default_timer``).
    The union of their sites is the candidate set; a seeded, stratified sample
    of it (at most ``--per-stratum`` per package and source) is written with a
    short snippet of each site (the file's imports and the enclosing definition,
    at most 30 lines), for a person to judge.

``score``
    Reads the judged sample (``tests/lint/judged/sites.json``: each site with a
    verdict ``hazard`` true/false and why), lints the same sites again on the
    installed packages (``--site-packages``), and prints per-rule precision
    and the recall, for simclock-lint and for ruff's rules on the same sites.
    ``tests/lint/test_lint_judged.py`` does the same on the stored snippets,
    without the packages.

Run (the packages in a scratch environment outside the repository)::

    python -m venv /tmp/rl && /tmp/rl/bin/pip install --no-deps gymnasium==1.4.0 \\
        pettingzoo==1.27.0 gym==0.26.2 dm-control==1.0.50 stable-baselines3==2.9.2 \\
        sb3-contrib==2.9.2 mesa==3.3.1 habitat-lab==0.3.320260507 highway-env==1.12.1 \\
        minigrid==3.2.0 pybullet==3.2.7
    # mujoco 4.0.0: copy the package the project's mujoco extra installed into .venv
    .venv/bin/python benchmarks/lint_quality.py collect \\
        --site-packages /tmp/rl/lib/python3.11/site-packages --out /tmp/candidates.json
    .venv/bin/python benchmarks/lint_quality.py score \\
        --site-packages /tmp/rl/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import json
import random
import re
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

from simclock_lint import DEFAULT_RULES, RULES, lint_source

ROOT = Path(__file__).resolve().parents[1]
JUDGED = ROOT / "tests" / "lint" / "judged" / "sites.json"
RUFF_SELECT = "NPY002,S311,DTZ"
# Top-level package -> distribution on the package index.
PACKAGES = {
    "dm_control": "dm-control",
    "gym": "gym",
    "gymnasium": "gymnasium",
    "habitat": "habitat-lab",
    "highway_env": "highway-env",
    "mesa": "mesa",
    "minigrid": "minigrid",
    "pettingzoo": "pettingzoo",
    "pybullet_envs": "pybullet",
    "pybullet_examples": "pybullet",
    "pybullet_robots": "pybullet",
    "pybullet_utils": "pybullet",
    "sb3_contrib": "sb3-contrib",
    "stable_baselines3": "stable-baselines3",
    "mujoco": "mujoco",
}
# The issue's named misses, found by text (the candidates must not depend on the linter alone).
_TEXT_MISSES = re.compile(
    r"(?:=|\bor|\belse|\()\s*(?:np|numpy)\.random\s*(?:$|[,)\s#])|\bstrftime\(|default_timer"
)
MAX_LINES = 30


def _version(site: Path, top: str) -> str:
    dist = PACKAGES[top]
    for found in importlib.metadata.distributions(path=[str(site)]):
        if found.metadata["Name"].lower().replace("_", "-") == dist:
            return found.version
    return importlib.metadata.version(dist)


def _files(site: Path, tops: list[str]) -> list[Path]:
    return sorted(p for top in tops for p in (site / top).rglob("*.py") if p.is_file())


def _ruff(paths: list[Path]) -> dict[tuple[str, int], set[str]]:
    ruff = Path(sys.executable).parent / "ruff"
    done = subprocess.run(
        [str(ruff), "check", "--isolated", "--no-cache", "--exit-zero", "--select", RUFF_SELECT,
         "--output-format", "json", *map(str, paths)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: dict[tuple[str, int], set[str]] = defaultdict(set)
    for item in json.loads(done.stdout):
        found[(item["filename"], item["location"]["row"])].add(item["code"])
    return found


_TRACKED_IMPORT = re.compile(r"\b(?:random|numpy|time|datetime|timeit|simclock)\b")
_DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def snippet(source: str, line: int) -> tuple[str, int]:
    """The file's imports of tracked modules plus a short excerpt around ``line``.

    The excerpt is the outermost definition holding ``line`` that fits in
    ``MAX_LINES`` lines, else the outermost statement that fits, else the
    innermost statement. Returns the text and the line of the site in it.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    header: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and node.end_lineno is not None:
            text = " ".join(part.strip() for part in lines[node.lineno - 1 : node.end_lineno])
            if _TRACKED_IMPORT.search(text) and text not in header and "(" not in text:
                header.append(text)
            elif _TRACKED_IMPORT.search(text) and text not in header:
                header.append(text.replace("( ", "(").replace(" )", ")"))
    holding = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
        and node.end_lineno is not None
        and node.lineno <= line <= node.end_lineno
    ]
    holding.sort(key=lambda n: n.lineno - (n.end_lineno or n.lineno))  # outermost first
    fits = [n for n in holding if (n.end_lineno or n.lineno) - n.lineno < MAX_LINES]
    definitions = [n for n in fits if isinstance(n, _DEFINITION)]
    best = definitions[0] if definitions else fits[0] if fits else holding[-1]
    start = best.lineno
    if isinstance(best, _DEFINITION):
        start = min([start, *(d.lineno for d in best.decorator_list)])
    end = best.end_lineno or best.lineno
    stub = ""
    if end - start >= MAX_LINES and isinstance(best, _DEFINITION) and line < best.body[0].lineno:
        end, stub = best.body[0].lineno - 1, "\n    ..."  # the site is in the signature
    elif end - start >= MAX_LINES:  # an innermost statement longer than the limit: cut around it
        start, end = max(start, line - MAX_LINES // 2), min(end, line + MAX_LINES // 2)
    body = textwrap.dedent("\n".join(lines[start - 1 : end])) + stub
    offset = 0
    if not isinstance(best, _DEFINITION):
        body = "async def _site():\n" + textwrap.indent(body, "    ")
        offset = 1
    text = "\n".join(header) + "\n\n" + body + "\n"
    return text, len(header) + 1 + offset + (line - start) + 1


def collect(site: Path, extra: list[Path], out: Path, per_stratum: int, seed: int) -> None:
    tops = [t for t in PACKAGES if (site / t).is_dir()]
    files = _files(site, tops) + [p for d in extra for p in sorted(d.rglob("*.py"))]
    wide = [*RULES]
    candidates: dict[tuple[str, int], dict[str, object]] = {}

    def add(path: Path, line: int, source_kind: str, code: str) -> None:
        entry = candidates.setdefault(
            (str(path), line), {"path": str(path), "line": line, "sources": set()}
        )
        sources = entry["sources"]
        assert isinstance(sources, set)
        sources.add(f"{source_kind}:{code}")

    for path in files:
        raw = path.read_bytes()
        for finding in lint_source(raw, str(path), DEFAULT_RULES):
            add(path, finding.line, "default", finding.code)
        for finding in lint_source(raw, str(path), wide, simulation="wide"):
            add(path, finding.line, "wide", finding.code)
        for number, text in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
            if _TEXT_MISSES.search(text) and not text.lstrip().startswith("#"):
                add(path, number, "text", "miss")
    for (name, line), codes in _ruff(files).items():
        for code in codes:
            add(Path(name), line, "ruff", code)
    strata: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for entry in candidates.values():
        path = Path(str(entry["path"]))
        top = path.relative_to(site).parts[0] if path.is_relative_to(site) else path.parts[-2]
        sources = sorted(entry["sources"])  # type: ignore[call-overload]
        entry["sources"] = sources
        entry["package"] = top
        kind = sorted({s.split(":")[1] for s in sources if not s.startswith("ruff")} or {"ruff"})
        strata[(PACKAGES.get(top, top), ",".join(kind))].append(entry)
    rng = random.Random(seed)
    sample = []
    for key in sorted(strata):
        group = sorted(strata[key], key=lambda e: (str(e["path"]), int(str(e["line"]))))
        sample.extend(rng.sample(group, min(per_stratum, len(group))))
    for entry in sample:
        path = Path(str(entry["path"]))
        text, line = snippet(
            path.read_text(encoding="utf-8", errors="replace"), int(str(entry["line"]))
        )
        top = str(entry["package"])
        entry["distribution"] = PACKAGES.get(top, top)
        entry["version"] = _version(site, top) if top in PACKAGES else "?"
        entry["file"] = (
            path.relative_to(site).as_posix() if path.is_relative_to(site) else path.name
        )
        entry["snippet"] = text
        entry["snippet_line"] = line
        entry["site"] = (
            path.read_text(encoding="utf-8", errors="replace")
            .splitlines()[int(str(entry["line"])) - 1]
            .strip()
        )
        del entry["path"]
    out.write_text(json.dumps(sample, indent=1) + "\n", encoding="utf-8")
    print(
        f"{len(candidates)} candidate sites in {len(files)} files; {len(sample)} sampled -> {out}"
    )


def score_live(site: Path) -> None:
    judged = json.loads(JUDGED.read_text(encoding="utf-8"))["sites"]
    files = sorted({site / s["file"] for s in judged})
    ruff = _ruff(files)
    ours: dict[tuple[str, int], set[str]] = defaultdict(set)
    for path in files:
        for finding in lint_source(path.read_bytes(), str(path)):
            ours[(str(path), finding.line)].add(finding.code)
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    hazards = caught = ruff_caught = 0
    for s in judged:
        key = (str(site / s["file"]), s["line"])
        for code in ours.get(key, ()):
            rows[code][0] += 1
            rows[code][1] += bool(s["hazard"])
        for code in ruff.get(key, ()):
            rows["ruff " + code.rstrip("0123456789") if code.startswith("DTZ") else "ruff " + code][
                0
            ] += 1
            rows["ruff " + code.rstrip("0123456789") if code.startswith("DTZ") else "ruff " + code][
                1
            ] += bool(s["hazard"])
        if s["hazard"]:
            hazards += 1
            caught += bool(ours.get(key))
            ruff_caught += bool(ruff.get(key))
    print("| rule | findings | real hazards | precision |\n|---|---|---|---|")
    for code in sorted(rows):
        total, real = rows[code]
        print(f"| {code} | {total} | {real} | {100 * real / total:.0f} % |")
    print(f"\nrecall: simclock-lint {caught}/{hazards}, ruff {ruff_caught}/{hazards}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    one = sub.add_parser("collect")
    one.add_argument("--site-packages", type=Path, required=True)
    one.add_argument("--extra", type=Path, action="append", default=[])
    one.add_argument("--out", type=Path, required=True)
    one.add_argument("--per-stratum", type=int, default=6)
    one.add_argument("--seed", type=int, default=15)
    two = sub.add_parser("score")
    two.add_argument("--site-packages", type=Path, required=True)
    args = parser.parse_args()
    if args.command is None:
        # `make bench` runs every benchmark without arguments; this one needs packages.
        print(
            "lint_quality: needs installed packages (collect/score --site-packages DIR, see "
            "--help); the figure on the stored judged sample: "
            ".venv/bin/python tests/lint/test_lint_judged.py"
        )
    elif args.command == "collect":
        collect(args.site_packages, args.extra, args.out, args.per_stratum, args.seed)
    else:
        score_live(args.site_packages)


if __name__ == "__main__":
    main()
