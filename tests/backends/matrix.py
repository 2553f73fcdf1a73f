"""The clause table (``docs/clauses.md``) and the conformance matrix of the docs site.

Run from the repository root::

    PYTHONPATH=tests .venv/bin/python -m backends.matrix            # both
    PYTHONPATH=tests .venv/bin/python -m backends.matrix --clauses  # the clause table only

It runs the suite on every backend of :data:`PYTHON_BACKENDS` (in process) and
:data:`DRIVERS` (through the wire profile), writes each report, trimmed to what the
page shows, to ``docs/reports/NAME.json``, and renders ``docs/conformance-matrix.html``
from those files with ``python -m simclock_conformance report``'s renderer.
``tests/test_conformance_matrix.py`` checks that the committed page is the rendering of
the committed reports and that ``docs/clauses.md`` is :func:`clause_table`'s text.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simclock_conformance import ClockConformance
from simclock_conformance.clauses._clauses import (
    CLAUSES,
    ORACLE_CLAUSE,
    WIRE_ONLY,
    clause_of_test,
    prerequisites,
)
from simclock_conformance.entry._wire_run import WIRE_CLAUSES
from simclock_conformance.report._html import render_matrix

__all__ = [
    "CLAUSES_DOC",
    "DRIVERS",
    "MATRIX",
    "PYTHON_BACKENDS",
    "REPORTS",
    "clause_table",
    "in_process_only",
    "main",
    "render_committed",
    "spec_clause_texts",
    "trim",
]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CLAUSES_DOC = DOCS / "clauses.md"
MATRIX = DOCS / "conformance-matrix.html"
REPORTS = DOCS / "reports"
CLAUSE_URL = "clauses.html#{id}"
"""Where the matrix links a clause id: the clause table, beside it in the built site."""
SPEC_CLAUSES = ROOT / "conformance" / "simclock_conformance" / "report" / "spec_clauses.json"
"""Each clause's text from the contract, embedded in a matrix page (package data)."""

PYTHON_BACKENDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "heap": ("simclock_conformance:heap_factory", "simclock HeapSimClock", ()),
    "sorted_list": ("backends.sorted_list:factory", "sorted list (tests)", ()),
    "wheel": ("backends.wheel:factory", "timer wheel (tests)", ()),
    "simpy": ("simpy_adapter:factory", "SimPy run(until)", ()),
    "sched": ("sched_adapter:factory", "stdlib sched", ()),
    "drake": ("drake_adapter:factory", "Drake Simulator", ()),
    "trio": ("trio_adapter:factory", "trio MockClock", ()),
    # A loop that spins without moving time (C-TIME-4) costs the whole time limit.
    "asyncio": ("asyncio_adapter:factory", "asyncio on looptime", ("--timeout", "5")),
}
"""Backends run in process: short name -> (``MODULE:FACTORY``, column title, options)."""


def _cpp() -> list[str]:
    from wire_drivers import cpp_driver

    return cpp_driver()


def _rust() -> list[str]:
    from kit_rust import rust_binaries

    return [rust_binaries().heap_clock]


def _tokio() -> list[str]:
    from kit_rust import rust_binaries

    return [rust_binaries().tokio_driver]


def _go(name: str) -> Callable[[], list[str]]:
    def command() -> list[str]:
        from kit_go import go_build

        return go_build(name)

    return command


def _java(name: str) -> Callable[[], list[str]]:
    def command() -> list[str]:
        import kit_java

        made: list[str] = getattr(kit_java, f"{name}_driver")()
        return made

    return command


def _js() -> list[str]:
    from wire_drivers import JS_DIR, _node

    return [_node(), str(JS_DIR / "examples" / "heap_clock.mjs")]


def _jest() -> list[str]:
    from wire_drivers import jest_driver

    return jest_driver()


def _sinon() -> list[str]:
    from wire_drivers import sinon_driver

    return sinon_driver()


def _node_test() -> list[str]:
    from wire_drivers import node_test_driver

    return node_test_driver()


DRIVERS: dict[str, tuple[Callable[[], list[str]], str, dict[str, Any]]] = {
    "cpp": (_cpp, "C++ kit: heap clock", {}),
    "rust": (_rust, "Rust kit: heap clock", {}),
    "go": (_go("heapclock"), "Go kit: heap clock", {}),
    "java": (_java("heap"), "Java kit: heap clock", {}),
    "js": (_js, "JavaScript kit: heap clock", {}),
    # tokio's millisecond timers turn the vectors' far advances into replies of megabytes.
    "tokio": (_tokio, "tokio paused time (Rust)", {"vectors": False}),
    "clockwork": (_go("clockwork"), "clockwork FakeClock (Go)", {}),
    "k8s": (_go("k8sclock"), "k8s FakeClock (Go)", {}),
    "reactor": (_java("reactor"), "Reactor VirtualTimeScheduler (Java)", {}),
    "jest": (_jest, "Jest fake timers (JS)", {}),
    "sinon": (_sinon, "@sinonjs/fake-timers (JS)", {}),
    "node_test": (_node_test, "node:test mock timers (JS)", {}),
}
"""Backends run through a driver: short name -> (its command line, column title, options)."""


def _slug(heading: str) -> str:
    """A heading's anchor as the site's table of contents makes it (``mkdocs --strict`` checks)."""
    text = re.sub(r"[^\w\s-]", "", heading.encode("ascii", "ignore").decode()).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _sections() -> dict[str, str]:
    """``§N`` -> the anchor of SPEC's section heading in the docs site."""
    out = {}
    for line in (DOCS / "SPEC.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^## (\d+)\. ", line)
        if match:
            out[f"§{match.group(1)}"] = _slug(line[3:])
    return out


def clause_table() -> str:
    """The text of ``docs/clauses.md``: every clause the suite reports, one heading each."""
    sections = _sections()
    lines = [
        "# Clauses",
        "",
        "Every clause the conformance suite reports on, with the section of",
        "[the contract](SPEC.md) that states it. *Mandatory* clauses must pass for a",
        'CONFORMING verdict; an *optional* one (`C-X-*`) may be "not applicable" to a',
        "backend that lacks the feature. *Where* says how a backend is checked on it: in",
        "process (a Python backend), through a driver (the wire profile, any language), or",
        "both. The [conformance matrix](conformance-matrix.html) links each of its rows here.",
        "",
        "*Relies on* lists the clauses whose rules a clause's programs pass through on",
        "the way to what they check. The report charges each difference to the clause",
        "whose rule decided that part of the expected reply, not by these lists: a clause",
        "whose programs failed only through differences charged elsewhere (often one it",
        "relies on) is shown as `blocked by` that clause.",
        "",
        "This page is generated from the suite's clause registry",
        "(`PYTHONPATH=tests python -m backends.matrix --clauses`).",
    ]
    for clause in CLAUSES.values():
        if clause.id in WIRE_ONLY:
            where = "through a driver only"
        elif clause.id in WIRE_CLAUSES or clause.id == ORACLE_CLAUSE:
            where = "in process and through a driver"
        else:
            where = "in process only"
        anchor = sections.get(clause.section)
        section = f"[{clause.section}](SPEC.md#{anchor})" if anchor else clause.section
        kind = "optional" if clause.optional else "mandatory"
        lines += [
            "",
            f"## {clause.id} {{#{clause.id}}}",
            "",
            f"{clause.summary}. {section}; {kind}; {where}.",
        ]
        relies = prerequisites(clause.id)
        if relies:
            lines += ["", "Relies on: " + ", ".join(f"[{c}](#{c})" for c in relies) + "."]
        only = [(name, why) for name, c, why in in_process_only() if c == clause.id]
        if only:
            lines += ["", "Tests run in process only, and why:", ""]
            lines += [f"- `{name}`: {why.replace('``', '`')}" for name, why in only]
    return "\n".join(lines) + "\n"


def in_process_only(suite: type = ClockConformance) -> list[tuple[str, str, str]]:
    """``(test, clause, why)`` of every test of ``suite`` that is not a clause program, by clause.

    Every clause the protocol carries is checked by its programs, in process and through
    a driver alike; a hand-written test is kept only for what the protocol cannot carry,
    and its docstring says what in a paragraph starting "In process only:".
    """
    found = []
    for name in dir(suite):
        if not name.startswith("test_") or "_program" in name or name.startswith("test_SM_"):
            continue
        doc = inspect.getdoc(getattr(suite, name)) or ""
        paragraphs = [" ".join(p.split()) for p in doc.split("\n\n")]
        why = next((p for p in paragraphs if p.startswith(_ONLY)), "")
        found.append((name, clause_of_test(name) or "", why.removeprefix(_ONLY).strip()))
    order = list(CLAUSES)
    return sorted(found, key=lambda t: (order.index(t[1]) if t[1] in order else len(order), t[0]))


_ONLY = "In process only:"


def trim(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with what the page shows: no passed test's details, long texts cut.

    Trimming a trimmed report changes nothing.
    """

    def cut(value: object) -> str:
        # Paths relative to the repository: the committed page names no machine's folders.
        text = str(value).replace(f"{ROOT}/", "").replace(f"{Path.home()}/", "~/")
        return text if len(text) <= 3000 else text[:3000] + " ...(cut)"

    rows = []
    for row in report["clauses"]:
        tests = []
        for test in row.get("tests", []):
            if test.get("outcome") == "passed":
                continue
            kept: dict[str, Any] = {
                k: cut(test[k]) for k in ("name", "outcome", "message", "program") if test.get(k)
            }
            if test.get("failures"):
                kept["failures"] = [
                    {k: cut(v) for k, v in f.items() if k in ("message", "program")}
                    for f in test["failures"][:3]
                ]
            tests.append(kept)
        rows.append(
            {k: row[k] for k in ("id", "summary", "optional", "status", "blocked_by") if k in row}
            | {"tests": tests}
        )
    return {
        "backend": report["backend"],
        "profile": report.get("profile", "ci"),
        "verdict": report["verdict"],
        "failed": report.get("failed", []),
        "blocked": report.get("blocked", {}),
        "clauses": rows,
    }


def _order() -> list[str]:
    return [*PYTHON_BACKENDS, *DRIVERS]


def render_committed() -> str:
    """The matrix page rendered from the committed reports, in the page's column order."""
    reports = [
        json.loads((REPORTS / f"{name}.json").read_text(encoding="utf-8")) for name in _order()
    ]
    return render_matrix(reports, clause_url=CLAUSE_URL)


def _run_python(name: str) -> dict[str, Any]:
    spec, title, options = PYTHON_BACKENDS[name]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "tests"), str(ROOT / "examples"), *filter(None, [env.get("PYTHONPATH")])]
    )
    out = REPORTS / f"{name}.json"
    subprocess.run(
        [sys.executable, "-m", "simclock_conformance", spec, "--json", str(out), "-q", *options],
        env=env,
        cwd=ROOT / "tests",
        capture_output=True,
        check=False,
        timeout=1800,
    )
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    report["backend"] = title
    return report


def _run_driver(name: str) -> dict[str, Any]:
    from simclock_conformance.entry._wire_run import run_driver

    command, title, options = DRIVERS[name]
    report = run_driver(command(), deadline_s=5.0, **options).to_json()
    report["backend"] = title
    return report


_CLAUSE_BULLET = re.compile(r"^- ((?:C|SM)-[A-Z]+(?:-[A-Z0-9]+)?) (.*)$")


def spec_clause_texts() -> str:
    """The text of ``spec_clauses.json``: ``{id: text}`` of every clause bullet of SPEC.md.

    A clause is a bullet ``- C-ID text``; its text runs on over the indented
    lines below it, joined with single spaces.
    """
    texts: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (DOCS / "SPEC.md").read_text(encoding="utf-8").splitlines():
        match = _CLAUSE_BULLET.match(line)
        if match:
            current = texts.setdefault(match.group(1), [])
            current.append(match.group(2).strip())
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line.strip())
        else:
            current = None
    data = {clause: " ".join(parts) for clause, parts in texts.items()}
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write ``docs/clauses.md`` and the clause texts; unless ``--clauses``, run the backends."""
    args = sys.argv[1:] if argv is None else argv
    CLAUSES_DOC.write_text(clause_table(), encoding="utf-8")
    SPEC_CLAUSES.write_text(spec_clause_texts(), encoding="utf-8")
    if "--clauses" in args:
        return 0
    REPORTS.mkdir(exist_ok=True)
    only = [a for a in args if not a.startswith("-")] or _order()
    for name in only:
        report = _run_python(name) if name in PYTHON_BACKENDS else _run_driver(name)
        (REPORTS / f"{name}.json").write_text(
            json.dumps(trim(report), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        print(f"{name}: {report['verdict']}")
    MATRIX.write_text(render_committed(), encoding="utf-8")
    print(f"wrote {MATRIX.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
