"""Mutation testing of the scheduling core and the reference clock with the conformance suite.

``python conformance/mutation/campaign.py [--sample N] [--seed S] [--jobs J] [--out FILE]``
(``make mutation``). Mutants are cosmic-ray's: its operators, its enumeration
of mutation sites and its code rewriting. Each mutant is run as one whole
conformance report (``python -m simclock_conformance
simclock_conformance:heap_factory --json``), which cosmic-ray's own runner
cannot give (it keeps a pass/fail per mutant, and the report is what says
*which* clause caught it), so this small driver runs them:

- the mutated module is written into a copy of ``simclock/`` (and of
  ``simclock_oracles/``) in a temporary directory put first on ``PYTHONPATH``;
  the working tree is never changed;
- the modules of :data:`TARGETS` are run in two builds: ``pure`` (as the
  interpreter runs them) and ``compiled-paths`` (``_heap.py`` keeps its
  mypyc-only ``LazyHeap`` instead of binding the ``heapq`` one, so the code
  only the compiled build runs is run, as Python, and mutated);
- each mutant is run against two backends: ``heap_factory`` (1 ns step) and
  ``quantised:quantised_factory`` (``conformance/mutation/quantised.py``: a
  ``GridClock`` on a 3 ns grid whose repeating entries go through the core's
  rounding up to the step, which a 1 ns step never runs); the second is run on
  every clause the first reported except SM-ORACLE (which its adapter cannot
  follow exactly: a rate whose phase is before ``now``);
- a mutant neither report catches is run once more through the wire, C-X-BITS on
  ``serve`` with ``--require bits`` (:data:`WIRE_BITS`): in process the expected
  draws come from the mutated code itself;
- a mutant is *killed* when any report fails or blocks a clause (or a run
  times out), *survived* otherwise; a survivor listed in
  ``conformance/mutation/equivalent.py`` is *equivalent* (each with its reason);
- for a killed mutant, the clauses the mutated code cites (ids in the docstring
  and comments of the innermost function or class around the line) are compared
  with the clauses the report that killed it charged (the ``heap_factory`` one
  when both did): ``exact`` (every charged clause is cited,
  SM-ORACLE and C-WIRE-7 aside, which aggregate), ``also`` (a cited one among
  others), ``elsewhere`` (none cited), ``aggregate`` (only SM-ORACLE or the
  golden vectors failed: they charge no rule) or ``uncited`` (the code cites none).

Prints a summary and writes every mutant's result as JSON lines to ``--out``.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import functools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "conformance" / "mutation"))

from equivalent import EQUIVALENT, UNDECIDED  # noqa: E402

TARGETS = (
    "simclock/core/_heap.py",
    "simclock/core/_heapclock.py",
    "simclock/core/_entry.py",
    "simclock/core/_random.py",
    "oracles/simclock_oracles/_reference.py",
)
"""The pure-Python scheduling core and the reference clock (what the suite must pin down)."""

BUILDS = ("pure", "compiled-paths")
AGGREGATE = {"SM-ORACLE", "C-WIRE-7"}
"""Clauses that compare whole runs: charged for every scheduling defect, never "elsewhere"."""
_CLAUSE = re.compile(r"\b(?:C-[A-Z]+-[A-Z0-9]+|SM-ORACLE)\b")
_COMPILED_SWITCH = "if not COMPILED:\n"
_NO_CLAUSE = "no clause decides"
"""Written in a function's docstring: none of SPEC's clauses decides its behaviour."""
TIMEOUT_S = 600
SECOND_FACTORY = "quantised:quantised_factory"
"""The backend with a step of 3 ns every mutant is run against too (``quantised.py``)."""
SECOND_SKIPS = frozenset({"SM-ORACLE"})
"""Clauses the second backend is not run on (see the module docstring)."""


@dataclass(frozen=True)
class Mutant:
    """One cosmic-ray mutation of one target, in one build."""

    path: str
    operator: str
    occurrence: int
    line: int
    build: str

    @property
    def key(self) -> str:
        """``path:line:operator:occurrence``: the key of :data:`EQUIVALENT`."""
        return f"{self.path}:{self.line}:{self.operator}:{self.occurrence}"


@dataclass
class Result:
    """What the conformance report said about one mutant."""

    mutant: Mutant
    status: str  # killed, survived, equivalent, undecided, timeout, unchanged
    failed: list[str] = field(default_factory=list)
    blocked: dict[str, str] = field(default_factory=dict)
    failed_quantised: list[str] = field(default_factory=list)
    blocked_quantised: dict[str, str] = field(default_factory=dict)
    killed_by: str = ""  # heap, quantised, both, wire, crash, timeout
    cites: list[str] = field(default_factory=list)
    charge: str = ""  # exact, also, elsewhere, uncited
    mutated_line: str = ""
    seconds: float = 0.0


COMPILED_ONLY = frozenset({"_sift_up", "_sift_leafward", "_heapify", "LazyHeap"})
"""``_heap.py``'s code that only the compiled build runs (the pure one binds ``_TupleHeap``)."""
PURE_ONLY = frozenset({"_TupleHeap"})
"""``_heap.py``'s code that only the pure build runs."""


def enumerate_mutants(builds: tuple[str, ...] = BUILDS) -> list[Mutant]:
    """Every cosmic-ray mutation site of :data:`TARGETS` that a build runs, per build.

    Left out, as equivalent by construction: sites inside annotations (every target
    has ``from __future__ import annotations``: they are never evaluated) and, in
    ``_heap.py``, code the build does not run (:data:`COMPILED_ONLY` in ``pure``,
    :data:`PURE_ONLY` in ``compiled-paths``). The ``compiled-paths`` build adds only
    the sites of ``_heap.py``: the other modules are the same in both.
    """
    from cosmic_ray.commands.init import _all_work_items  # the tool's own enumeration

    out: list[Mutant] = []
    for target in TARGETS:
        tree = ast.parse((ROOT / target).read_text(encoding="utf-8"))
        annotations = _annotation_spans(tree)
        for item in _all_work_items([ROOT / target], {}):
            (spec,) = item.mutations
            line, col = spec.start_pos
            if any(start <= (line, col) < end for start, end in annotations):
                continue
            top = _top_level_name(tree, line)
            for build in builds:
                if build == "compiled-paths" and not target.endswith("_heap.py"):
                    continue
                if target.endswith("_heap.py"):
                    dead = COMPILED_ONLY if build == "pure" else PURE_ONLY
                    if top in dead:
                        continue
                out.append(Mutant(target, spec.operator_name, spec.occurrence, line, build))
    return out


def _annotation_spans(tree: ast.Module) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """``((line, col), (end_line, end_col))`` of every annotation in ``tree``."""
    nodes: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            nodes += [a.annotation for a in every if a is not None and a.annotation is not None]
            if node.returns is not None:
                nodes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            nodes.append(node.annotation)
    return [
        ((n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 0)) for n in nodes
    ]


def _top_level_name(tree: ast.Module, line: int) -> str:
    """The module-level function or class around ``line`` ("" outside any)."""
    for node in tree.body:
        inside = node.lineno <= line <= (getattr(node, "end_lineno", None) or node.lineno)
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and inside:
            return node.name
    return ""


@functools.cache
def _tree(path: str) -> ast.Module:
    """The parsed source of ``path`` (the campaign never edits it)."""
    return ast.parse((ROOT / path).read_text(encoding="utf-8"))


def functions_of(path: str) -> set[str]:
    """Every ``function`` and ``Class.method`` defined in ``path`` (nested functions aside)."""
    out: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, prefix + node.name + ".")

    tree = _tree(path)
    visit(tree.body, "")
    out.update(name for node in tree.body for name in _assigned(node))
    return out


def _assigned(node: ast.stmt) -> list[str]:
    """Names a module-level assignment binds (``X = ...``, ``X: T = ...``)."""
    targets = node.targets if isinstance(node, ast.Assign) else []
    if isinstance(node, ast.AnnAssign):
        targets = [node.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def function_at(path: str, line: int) -> str:
    """``Class.method`` or ``function`` around ``line`` of ``path``.

    At module level: the name a module-level assignment there binds (a constant),
    else "".
    """
    tree = _tree(path)
    best = ""
    for node in tree.body:
        names = _assigned(node)
        if names and node.lineno <= line <= (node.end_lineno or node.lineno):
            return names[0]

    def visit(body: list[ast.stmt], prefix: str) -> None:
        nonlocal best
        for node in body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                best = prefix + node.name
                if isinstance(node, ast.ClassDef):
                    visit(node.body, best + ".")

    visit(tree.body, "")
    return best


def cited_clauses(path: str, line: int) -> list[str]:
    """Clause ids cited by the innermost function (else class, else module) around ``line``.

    A function whose docstring says "no clause decides" and cites none cites
    nothing (its class's or module's ids are not its own).
    """
    source = (ROOT / path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    best: ast.AST | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and (
                best is None or node.lineno >= getattr(best, "lineno", 0)
            ):
                best = node
    if isinstance(best, ast.FunctionDef | ast.AsyncFunctionDef):
        doc = ast.get_docstring(best) or ""
        if _NO_CLAUSE in " ".join(doc.lower().split()) and not _CLAUSE.search(doc):
            return []  # the function says so: its mutants are "uncited", not its module's
    for scope in _scopes(tree, best):
        start = scope.lineno if hasattr(scope, "lineno") else 1
        end = getattr(scope, "end_lineno", None) or len(lines)
        # Comments just above a definition belong to it.
        while start > 1 and lines[start - 2].lstrip().startswith("#"):
            start -= 1
        text = "\n".join(lines[start - 1 : end])
        if isinstance(scope, ast.ClassDef | ast.Module):
            text = ast.get_docstring(scope) or ""
        found = sorted(set(_CLAUSE.findall(text)))
        if found:
            return found
    return []


def _scopes(tree: ast.Module, node: ast.AST | None) -> list[ast.AST]:
    """``node``, then the class around it, then the module: where a citation may be."""
    chain: list[ast.AST] = []
    if node is not None:
        chain.append(node)
        for parent in ast.walk(tree):
            if isinstance(parent, ast.ClassDef) and node in parent.body:
                chain.append(parent)
    chain.append(tree)
    return chain


def _shadow(mutant: Mutant, workdir: Path, source_root: Path = ROOT) -> str | None:
    """Copy the packages of ``source_root`` into ``workdir`` with the mutant applied.

    Returns the mutated line (or None when the operator left the source as it was).
    """
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    shutil.copytree(source_root / "simclock", workdir / "simclock", ignore=_no_native)
    shutil.copytree(
        source_root / "oracles" / "simclock_oracles",
        workdir / "simclock_oracles",
        ignore=_no_native,
    )
    rel = mutant.path.removeprefix("oracles/")
    target = workdir / rel
    source = target.read_text(encoding="utf-8")
    if mutant.build == "compiled-paths":
        heap = workdir / "simclock" / "core" / "_heap.py"
        heap.write_text(
            heap.read_text(encoding="utf-8").replace(_COMPILED_SWITCH, "if False:\n"),
            encoding="utf-8",
        )
        if target == heap:
            source = heap.read_text(encoding="utf-8")
    mutated = mutate_code(source, get_operator(mutant.operator)(), mutant.occurrence)
    if mutated is None or mutated == source:
        return None
    target.write_text(mutated, encoding="utf-8")
    new = mutated.splitlines()
    return new[mutant.line - 1].strip() if mutant.line - 1 < len(new) else ""


def _no_native(_dir: str, names: list[str]) -> list[str]:
    """The compiled modules are left out: the shadow copy runs as Python."""
    return [n for n in names if n.endswith((".so", ".pyd")) or n == "__pycache__"]


def _report(
    work: Path, suite: Path, factory: str, name: str, clauses: list[str]
) -> dict[str, Any] | None:
    """One conformance report of ``factory`` in a fresh interpreter (None: it wrote none).

    Raises :class:`subprocess.TimeoutExpired` past :data:`TIMEOUT_S`.
    """
    command = [factory, "-q", "--no-shrink"]
    for clause in clauses:
        command += ["--clause", clause]
    return _suite_json(work, suite, name, command)


WIRE_BITS = ["--driver", "--no-vectors", "--clause", "C-X-BITS", "--require", "bits"]
WIRE_DRIVER = ["serve", "simclock_conformance:heap_factory"]
"""The wire run of a survivor of both in-process reports: C-X-BITS through ``serve``.

In process the expected draws come from the code under test; C-X-BITS holds them to the
reference derivation, and ``--require bits`` fails a ``serve`` that stops claiming it
(the feature is probed, so a broken derivation would otherwise be not applicable)."""


def _suite_json(
    work: Path, suite: Path, name: str, args: list[str], driver: list[str] | None = None
) -> dict[str, Any] | None:
    """``python -m simclock_conformance ARGS --json NAME`` on the mutant's copy: its report.

    With ``driver``, the run is through the wire: ``-- python -m simclock_conformance
    DRIVER`` follows, run on the same copy.
    """
    report = work / name
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [
            str(work),
            str(suite),
            str(suite / "mutation"),
            str(ROOT / "tests"),
            str(ROOT / "lint"),
            str(ROOT),
        ]
    )
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["SIMCLOCK_PURE"] = "1"  # the copy has no compiled modules; never look for them
    python = [sys.executable, "-m", "simclock_conformance"]
    command = [*python, *args, "--json", str(report), *(["--", *python, *driver] if driver else [])]
    subprocess.run(
        command,
        check=False,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    if not report.exists():
        return None
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return data


def _caught(data: dict[str, Any], *, full: bool) -> bool:
    """Whether a report caught the mutant: a clause failed or blocked.

    A whole run (``full``) also needs a verdict other than CONFORMING, and counts
    clauses not run; a run of chosen clauses is PARTIAL by construction.
    """
    if not full:
        return bool(data["failed"] or data["blocked"])
    caught = data["failed"] or data["blocked"] or data["not_run"]
    return data["verdict"] != "CONFORMING" and bool(caught)


def run_one(mutant: Mutant, suite: Path = ROOT / "conformance", source_root: Path = ROOT) -> Result:
    """Run the conformance suite (imported from ``suite``) on both backends with ``mutant``.

    ``heap_factory`` first, on every clause; then :data:`SECOND_FACTORY` on the
    clauses that report ran, :data:`SECOND_SKIPS` aside.
    """
    started = time.monotonic()
    cites = cited_clauses(mutant.path, mutant.line)
    with tempfile.TemporaryDirectory(prefix="simclock-mutant-") as tmp:
        work = Path(tmp)
        line = _shadow(mutant, work, source_root)
        if line is None:
            return Result(mutant, "unchanged", cites=cites)
        result = Result(mutant, "killed", cites=cites, mutated_line=line)
        try:
            heap = _report(work, suite, "simclock_conformance:heap_factory", "heap.json", [])
            if heap is None:
                # The suite could not even start (an import-time crash): killed, no clause.
                result.seconds = time.monotonic() - started
                result.charge = result.killed_by = "crash"
                return result
            ran = [c["id"] for c in heap["clauses"] if c["id"] not in SECOND_SKIPS]
            quantised = _report(work, suite, SECOND_FACTORY, "quantised.json", ran)
            wire = None
            if not _caught(heap, full=True) and quantised and not _caught(quantised, full=False):
                wire = _suite_json(work, suite, "wire.json", WIRE_BITS, WIRE_DRIVER)
        except subprocess.TimeoutExpired:
            result.status = result.killed_by = "timeout"
            result.seconds = time.monotonic() - started
            return result
    result.seconds = time.monotonic() - started
    result.failed = list(heap["failed"])
    result.blocked = dict(heap["blocked"])
    if quantised is not None:
        result.failed_quantised = list(quantised["failed"])
        result.blocked_quantised = dict(quantised["blocked"])
    by_heap = _caught(heap, full=True)
    by_quantised = quantised is None or _caught(quantised, full=False)
    if not (by_heap or by_quantised):
        if wire is not None and wire["failed"]:
            result.failed = list(wire["failed"])
            result.killed_by = "wire"
            result.charge = charge_of(result.failed, cites)
            return result
        result.status = classify_survivor(mutant)
        return result
    result.killed_by = "both" if by_heap and by_quantised else "heap" if by_heap else "quantised"
    charged = result.failed if by_heap else result.failed_quantised
    result.charge = charge_of(charged, cites) if quantised is not None or by_heap else "crash"
    return result


def classify_survivor(mutant: Mutant) -> str:
    """``equivalent`` (listed), ``undecided`` (in code no clause decides) or ``survived``."""
    if mutant.key in EQUIVALENT:
        return "equivalent"
    if mutant.key in UNDECIDED:
        return "undecided"
    if f"{mutant.path}:{function_at(mutant.path, mutant.line)}" in UNDECIDED:
        return "undecided"
    return "survived"


def stale_entries(mutants: list[Mutant]) -> list[str]:
    """Keys of :data:`EQUIVALENT` and :data:`UNDECIDED` that name no current mutant or function."""
    keys = {m.key for m in mutants}
    functions = {f"{t}:{name}" for t in TARGETS for name in functions_of(t)}
    stale = [k for k in EQUIVALENT if k not in keys]
    stale += [k for k in UNDECIDED if k not in keys and k not in functions]
    return sorted(stale)


def charge_of(failed: list[str], cites: list[str]) -> str:
    """``exact``, ``also``, ``elsewhere`` or ``uncited`` (see the module docstring)."""
    if not cites:
        return "uncited"
    own = [c for c in failed if c not in AGGREGATE]
    if not own:
        # Only the state machine or the golden vectors: they charge no rule.
        return "exact" if set(failed) & set(cites) or not failed else "aggregate"
    if set(own) <= set(cites):
        return "exact"
    return "also" if set(own) & set(cites) else "elsewhere"


def summary(results: list[Result]) -> dict[str, Any]:
    """Counts: the score over non-equivalent mutants and the charges of the killed ones."""
    counts: dict[str, int] = {}
    charges: dict[str, int] = {}
    killed_by: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.status in ("killed", "timeout"):
            charges[r.charge or "timeout"] = charges.get(r.charge or "timeout", 0) + 1
            by = r.killed_by or r.status
            killed_by[by] = killed_by.get(by, 0) + 1
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    live = killed + counts.get("survived", 0)
    cited = sum(n for c, n in charges.items() if c in ("exact", "also", "elsewhere", "aggregate"))
    return {
        "mutants": len(results),
        "counts": counts,
        "score": f"{killed}/{live}" + (f" ({100 * killed / live:.1f} %)" if live else ""),
        "charges": charges,
        "killed_by": killed_by,
        "charge_percent": {
            c: round(100 * n / sum(charges.values()), 1) for c, n in sorted(charges.items())
        },
        "charged_to_cited_clause": (
            f"{charges.get('exact', 0)}/{cited} exactly, {charges.get('also', 0)}/{cited} among "
            f"others, {charges.get('elsewhere', 0)}/{cited} elsewhere, "
            f"{charges.get('aggregate', 0)}/{cited} only by the state machine or vectors"
        ),
    }


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def summarise_files(paths: list[Path]) -> dict[str, Any]:
    """:func:`summary` of the results in ``paths``, by the rules in force now.

    A mutant no longer enumerated (an annotation, code its build does not run) is
    left out; a survivor is classified again (:func:`classify_survivor`); a later
    file's result for a mutant replaces an earlier one's.
    """
    current = {(m.path, m.operator, m.occurrence, m.build): m for m in enumerate_mutants()}
    latest: dict[tuple[str, str, int, str], Result] = {}
    for path in paths:
        for row in _read(path):
            m = row["mutant"]
            key = (m["path"], m["operator"], m["occurrence"], m["build"])
            mutant = current.get(key)
            if mutant is None:
                continue
            result = Result(
                mutant,
                row["status"],
                failed=row["failed"],
                blocked=row["blocked"],
                failed_quantised=row.get("failed_quantised", []),
                blocked_quantised=row.get("blocked_quantised", {}),
                killed_by=row.get("killed_by", ""),
                cites=cited_clauses(mutant.path, mutant.line),
                charge=row["charge"],
                mutated_line=row["mutated_line"],
                seconds=row["seconds"],
            )
            if result.status in ("survived", "equivalent", "undecided"):
                result.status = classify_survivor(mutant)
            elif result.status == "killed" and result.charge not in ("crash", ""):
                # The citations as the code has them now (a docstring made precise).
                charged = (
                    result.failed_quantised if result.killed_by == "quantised" else result.failed
                )
                result.charge = charge_of(charged, result.cites)
            latest[key] = result
    results = list(latest.values())
    out = summary(results)
    out["survivors"] = [
        f"{r.mutant.key} [{r.mutant.build}] :: {r.mutated_line}"
        for r in results
        if r.status == "survived"
    ]
    out["undecided"] = [
        f"{r.mutant.key} [{r.mutant.build}] :: {r.mutated_line}"
        for r in results
        if r.status == "undecided"
    ]
    times = [r.seconds for r in results if r.seconds]
    if times:
        out["seconds_per_mutant_median"] = round(sorted(times)[len(times) // 2], 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=0, help="run N mutants drawn at random")
    parser.add_argument("--seed", type=int, default=43, help="seed of the sample")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once")
    parser.add_argument("--out", default="mutation-results.jsonl", help="JSON lines written")
    parser.add_argument("--only", help="run only mutants whose key starts with this")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument(
        "--survivors-of", metavar="RESULTS", help="run again the survivors of a results file"
    )
    parser.add_argument(
        "--summarise",
        nargs="+",
        metavar="RESULTS",
        help="summarise results files (a later result of a mutant replaces an earlier one)",
    )
    args = parser.parse_args(argv)
    if args.summarise:
        print(json.dumps(summarise_files([Path(f) for f in args.summarise]), indent=1))
        return 0
    mutants = enumerate_mutants()
    if args.survivors_of:
        again = {
            (
                r["mutant"]["path"],
                r["mutant"]["operator"],
                r["mutant"]["occurrence"],
                r["mutant"]["build"],
            )
            for r in _read(Path(args.survivors_of))
            if r["status"] == "survived"
        }
        mutants = [m for m in mutants if (m.path, m.operator, m.occurrence, m.build) in again]
    if args.only:
        mutants = [m for m in mutants if f"{m.key}:{m.build}".startswith(args.only)]
    if args.sample and args.sample < len(mutants):
        # In the sample's own (random) order: a campaign stopped early is still a sample.
        mutants = random.Random(args.seed).sample(mutants, args.sample)
    stale = stale_entries(enumerate_mutants())
    if stale:
        print(f"equivalent.py lists mutants that no longer exist: {stale}", file=sys.stderr)
    if args.list:
        for m in mutants:
            print(m.key, m.build)
        return 0
    started = time.monotonic()
    results: list[Result] = []
    snapshot = tempfile.TemporaryDirectory(prefix="simclock-mutation-suite-")
    # The suite, the second backend and the mutated packages as they are now:
    # edits made while the campaign runs do not mix in.
    snap = Path(snapshot.name)
    shutil.copytree(
        ROOT / "conformance" / "simclock_conformance",
        snap / "simclock_conformance",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (snap / "mutation").mkdir()
    shutil.copy2(ROOT / "conformance" / "mutation" / "quantised.py", snap / "mutation")
    shutil.copytree(ROOT / "simclock", snap / "lib" / "simclock", ignore=_no_native)
    shutil.copytree(
        ROOT / "oracles" / "simclock_oracles",
        snap / "lib" / "oracles" / "simclock_oracles",
        ignore=_no_native,
    )
    with (
        Path(args.out).open("w", encoding="utf-8") as out,
        concurrent.futures.ThreadPoolExecutor(args.jobs) as pool,
    ):
        run = functools.partial(run_one, suite=snap, source_root=snap / "lib")
        for result in pool.map(run, mutants):
            results.append(result)
            out.write(json.dumps(asdict(result)) + "\n")
            out.flush()
            print(
                f"{result.status:10s} {result.mutant.key} [{result.mutant.build}] "
                f"{result.killed_by} {result.charge} {','.join(result.failed)} "
                f"| {','.join(result.failed_quantised)} :: {result.mutated_line[:70]}",
                flush=True,
            )
    total = time.monotonic() - started
    print(json.dumps({**summary(results), "wall_seconds": round(total, 1)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
