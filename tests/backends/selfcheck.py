"""Run the conformance suite on many backends in one process and print a JSON summary.

``python -m backends.selfcheck NAME...`` (with ``tests`` on ``PYTHONPATH``)
where NAME is ``sorted_list``, ``minimal``, ``heap`` or a key of
:data:`backends.broken.BROKEN`. One process runs several suites one after the
other, which saves the interpreter and pytest start-up per backend.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from conformance import run

from .broken import BROKEN

__all__ = ["CORRECT", "main", "spec_of", "summarise"]

CORRECT: dict[str, str] = {
    "heap": "conformance:heap_factory",
    "sorted_list": "backends.sorted_list:factory",
    "minimal": "backends.minimal:factory",
}
"""Correct backends by short name -> ``MODULE:FACTORY``."""


def spec_of(name: str) -> str:
    """``MODULE:FACTORY`` of a backend short name."""
    return CORRECT.get(name) or f"backends.broken:{name}"


def summarise(name: str, code: int, report: dict[str, Any]) -> dict[str, Any]:
    """What the self-check asserts and the docs table shows about one run."""
    expected = BROKEN[name][0] if name in BROKEN else None
    return {
        "name": name,
        "spec": spec_of(name),
        "exit_code": code,
        "expected": expected,
        "failed": report["failed"],
        "counts": report["counts"],
        "conforming": report["conforming"],
        "messages": {
            row["id"]: [t.get("message", "") for t in row["tests"] if t["outcome"] == "failed"]
            for row in report["clauses"]
            if row["status"] == "failed"
        },
        "not_applicable": [r["id"] for r in report["clauses"] if r["status"] == "not applicable"],
    }


def main(argv: list[str] | None = None) -> int:
    """Run every named backend (quietly) and print one JSON list on the last line."""
    names = sys.argv[1:] if argv is None else argv
    out = []
    for name in names:
        code, report = run(spec_of(name), quiet=True)
        out.append(summarise(name, code, report))
    sys.stdout.write("\n" + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def run_parallel(names: list[str], workers: int = 2) -> list[dict[str, Any]]:
    """Run :func:`main` for ``names`` split over ``workers`` subprocesses; results in order."""
    import os
    import subprocess
    from pathlib import Path

    tests_dir = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([tests_dir, *filter(None, [env.get("PYTHONPATH")])])
    chunks = [names[i::workers] for i in range(workers)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "backends.selfcheck", *chunk],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tests_dir,
        )
        for chunk in chunks
        if chunk
    ]
    by_name: dict[str, dict[str, Any]] = {}
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"selfcheck worker failed ({proc.returncode}): {err[-3000:]}")
        for item in json.loads(out.strip().splitlines()[-1]):
            by_name[item["name"]] = item
    return [by_name[n] for n in names]


def all_names() -> list[str]:
    """Every backend of the self-check: the correct ones, then the broken ones."""
    return [*CORRECT, *BROKEN]


def render_table(results: list[dict[str, Any]]) -> str:
    """The Markdown table of ``docs/conformance.md`` (generated, never edited by hand)."""
    lines = [
        "| backend | defect | clause expected | verdict | clauses failed |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        name = r["name"]
        defect = BROKEN[name][1] if name in BROKEN else "none (correct backend)"
        expected = r["expected"] or "none"
        if r["expected"] is None:
            ok = r["conforming"] and not r["failed"]
            na = ", ".join(r["not_applicable"])
            verdict = ("conforming" if ok else "**NOT CONFORMING**") + (
                f" ({na} not applicable)" if na else ""
            )
        else:
            caught = r["exit_code"] == 1 and r["expected"] in r["failed"]
            verdict = "rejected" if caught else "**MISSED**"
        failed = ", ".join(r["failed"]) or "-"
        lines.append(f"| `{r['spec']}` | {defect} | {expected} | {verdict} | {failed} |")
    return "\n".join(lines)
