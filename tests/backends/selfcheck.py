"""Run the conformance suite on many backends in one process and print a JSON summary.

``python -m backends.selfcheck NAME...`` (with ``tests`` on ``PYTHONPATH``)
where NAME is a key of :data:`CORRECT`, :data:`OWN` (the library's own
clocks), :data:`PEERS`, :data:`LIMITED` (backends declaring a horizon) or
:data:`backends.broken.BROKEN`. One process runs several suites one after the
other, which saves the interpreter and pytest start-up per backend.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import sys
from typing import Any

from simclock_conformance import run

from .broken import BROKEN
from .clocks import CLOCKS, MUJOCO_HORIZON
from .horizon import LIMITED as HORIZON_BACKENDS

__all__ = [
    "CORRECT",
    "HAVE_DRAKE",
    "LIMITED",
    "OWN",
    "PEERS",
    "PEER_BLOCKED",
    "main",
    "spec_of",
    "summarise",
]

CORRECT: dict[str, str] = {
    "heap": "simclock_conformance:heap_factory",
    "sorted_list": "backends.sorted_list:factory",
    "wheel": "backends.wheel:factory",
    "minimal": "backends.minimal:factory",
}
"""Correct backends by short name -> ``MODULE:FACTORY``."""

OWN: dict[str, str] = {**CLOCKS, "replay": "backends.replay_clock:factory"}
"""The library's own clocks (grids, a Session's clock, MuJoCo, replay) -> ``MODULE:FACTORY``.

Each is a row of the self-check and nowhere else in ``make test`` (one clause,
one home); ``mujoco_1ms`` declares a horizon, so its verdict is INCOMPLETE.
"""

LIMITED: dict[str, str] = {f"horizon_{n}": f"backends.horizon:{n}" for n in HORIZON_BACKENDS}
"""Backends that declare a horizon (``tests/backends/horizon.py``) -> ``MODULE:FACTORY``."""

PEERS: dict[str, str] = {
    "simpy": "simpy_adapter:factory",
    "simpy_stepped": "simpy_adapter:stepped_factory",
    "sched": "sched_adapter:factory",
}
"""Third-party schedulers through their adapters in ``examples/`` -> ``MODULE:FACTORY``."""

_UNTIL_BLOCKED = (
    "C-TIME-2", "C-TIME-3", "C-TIME-4", "C-ADV-3", "C-SCH-1", "C-TIE-1", "C-PER-1", "C-PER-2",
    "C-PER-3", "C-CAN-3", "C-RNG-2", "C-BUS-3", "C-X-STATS",
)  # fmt: skip
_RAISE_BLOCKED_DRAKE = ("C-TIME-2", "C-DET-1", "C-RNG-2", "C-RNG-6", "C-BUS-1", "C-X-STATS")

PEER_BLOCKED: dict[str, dict[str, str]] = {
    # env.run(until=t) leaves the entries at t for the next advance: C-ADV-1's defect,
    # seen as missing firings wherever a test has an entry at an advance's target.
    "simpy": dict.fromkeys(_UNTIL_BLOCKED, "C-ADV-1"),
    "simpy_stepped": {},
    "sched": {},
    # A handler's exception leaves Simulator.AdvanceTo (C-ERR-1) in every program
    # with a raising callback; the far ties first show float seconds' lost nanoseconds
    # (C-TIME-4); a periodic's next event at a shared instant (C-PER-2) comes first in
    # the splitting, cancelling and halting programs.
    "drake": {
        **dict.fromkeys(_RAISE_BLOCKED_DRAKE, "C-ERR-1"),
        **dict.fromkeys(["C-ADV-5", "C-CAN-2", "C-ERR-2"], "C-PER-2"),
        "C-TIE-1": "C-TIME-4",
    },
}
"""``peer -> {clause: blocking clause}``: the clauses of its adapter's ``WHY`` that are
reported as blocked (the others of ``WHY`` fail)."""

HAVE_DRAKE = importlib.util.find_spec("pydrake") is not None
"""Drake's wheels exist for x86-64 Linux and macOS only; elsewhere its row is left out."""
if HAVE_DRAKE:
    PEERS["drake"] = "drake_adapter:factory"


def spec_of(name: str) -> str:
    """``MODULE:FACTORY`` of a backend short name."""
    return (
        CORRECT.get(name)
        or OWN.get(name)
        or PEERS.get(name)
        or LIMITED.get(name)
        or f"backends.broken:{name}"
    )


def expected_of(name: str) -> str | None:
    """The clause a backend must fail, ``INCOMPLETE`` for a correct limited one, else None."""
    if name in BROKEN:
        return BROKEN[name][0]
    if name in LIMITED:
        return HORIZON_BACKENDS[name.removeprefix("horizon_")][0]
    return "INCOMPLETE" if name == "mujoco_1ms" else None


def summarise(name: str, code: int, report: dict[str, Any]) -> dict[str, Any]:
    """What the self-check asserts and the docs table shows about one run."""
    expected = expected_of(name)
    return {
        "name": name,
        "spec": spec_of(name),
        "exit_code": code,
        "expected": expected,
        "failed": report["failed"],
        "blocked": report["blocked"],
        "counts": report["counts"],
        "conforming": report["conforming"],
        "verdict": report["verdict"],
        "deterministic": report["deterministic"],
        "root_causes": [
            {"cause": c["cause"], "clauses": c["clauses"]} for c in report["root_causes"]
        ],
        "sm_failures": next(
            (
                len(t.get("failures", [])) or 1
                for row in report["clauses"]
                if row["id"] == "SM-ORACLE"
                for t in row["tests"]
                if t["outcome"] == "failed"
            ),
            0,
        ),
        "messages": {
            row["id"]: [t.get("message", "") for t in row["tests"] if t["outcome"] == "failed"]
            for row in report["clauses"]
            if row["status"] == "failed"
        },
        "not_applicable": [r["id"] for r in report["clauses"] if r["status"] == "not applicable"],
        "limited": [
            t["name"]
            for row in report["clauses"]
            for t in row["tests"]
            if t["outcome"] == "limited"
        ],
        "incomplete": report["incomplete"],
    }


def main(argv: list[str] | None = None) -> int:
    """Run every named backend (quietly) and print one JSON list on the last line.

    Failures are not shrunk (``shrink=False``): the verdict and the failed clauses,
    which are all the self-check compares, are the same, and a broken backend's run
    takes a tenth of the time (shrinking its state machine's program is the rest).
    Shrinking itself is checked by ``tests/test_conformance_cli.py`` and
    ``tests/test_conformance_verdicts.py``.
    """
    names = sys.argv[1:] if argv is None else argv
    out = []
    for name in names:
        # What earlier runs left is out of the garbage collector's way: pytest's
        # collections at the end of each run then scan this run's objects only.
        gc.freeze()
        code, report = run(spec_of(name), quiet=True, shrink=False)
        out.append(summarise(name, code, report))
    sys.stdout.write("\n" + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def run_parallel(names: list[str], workers: int = 2) -> list[dict[str, Any]]:
    """Run :func:`main` for ``names`` split over ``workers`` subprocesses; results in order."""
    import os
    import subprocess
    import tempfile
    from pathlib import Path

    tests_dir = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    examples = str(Path(tests_dir).parent / "examples")
    env["PYTHONPATH"] = os.pathsep.join(
        [tests_dir, examples, *filter(None, [env.get("PYTHONPATH")])]
    )
    chunks = [names[i::workers] for i in range(workers) if names[i::workers]]
    by_name: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="selfcheck-") as tmp:
        # Output goes to files, not pipes: a worker printing more than a pipe
        # holds would block while this process waits for another worker.
        logs = [Path(tmp) / f"worker{i}.out" for i in range(len(chunks))]
        procs = []
        for chunk, log in zip(chunks, logs, strict=True):
            with log.open("w") as sink, log.with_suffix(".err").open("w") as err:
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "backends.selfcheck", *chunk],
                        stdout=sink,
                        stderr=err,
                        text=True,
                        env=env,
                        cwd=tests_dir,
                    )
                )
        for proc, log in zip(procs, logs, strict=True):
            proc.wait(timeout=1800)
            out = log.read_text()
            if proc.returncode != 0:
                errors = log.with_suffix(".err").read_text()
                raise RuntimeError(f"selfcheck worker failed ({proc.returncode}): {errors[-3000:]}")
            for item in json.loads(out.strip().splitlines()[-1]):
                by_name[item["name"]] = item
    return [by_name[n] for n in names]


def all_names() -> list[str]:
    """Every backend of the self-check: correct, own clocks, peers, horizons, then broken ones."""
    return [*CORRECT, *OWN, *PEERS, *LIMITED, *BROKEN]


def render_table(results: list[dict[str, Any]]) -> str:
    """The Markdown table of ``docs/conformance.md`` (generated, never edited by hand)."""
    lines = [
        "| backend | defect | clause expected | verdict | clauses failed | clauses blocked |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        name = r["name"]
        if name in PEERS:
            continue
        defect = _defect(name)
        expected = r["expected"] or "none"
        if r["expected"] == "INCOMPLETE":
            ok = r["verdict"] == "INCOMPLETE" and not r["failed"] and r["incomplete"]
            verdict = (
                f"incomplete: {len(r['limited'])} tests limited by its declared horizon"
                if ok and len(r["limited"]) == len(r["incomplete"])
                else "**NOT AS EXPECTED**"
            )
        elif r["expected"] is None:
            ok = r["conforming"] and not r["failed"]
            na = ", ".join(r["not_applicable"])
            verdict = ("conforming" if ok else "**NOT CONFORMING**") + (
                f" ({na} not applicable)" if na else ""
            )
        else:
            caught = r["exit_code"] == 1 and r["expected"] in r["failed"]
            verdict = "rejected" if caught else "**MISSED**"
            if r["exit_code"] == 1 and r["expected"] in r["blocked"]:
                # Rejected, its clause reported blocked by the one whose program showed it.
                verdict = f"rejected ({r['expected']} blocked by {r['blocked'][r['expected']]})"
        failed = ", ".join(r["failed"]) or "-"
        lines.append(
            f"| `{r['spec']}` | {defect} | {expected} | {verdict} | {failed} | "
            f"{_blocked_cell(r['blocked'])} |"
        )
    return "\n".join(lines)


def _blocked_cell(blocked: dict[str, str]) -> str:
    """``N by C-TIE-1`` per blocking clause, or ``-``."""
    by: dict[str, int] = {}
    for blocker in blocked.values():
        by[blocker] = by.get(blocker, 0) + 1
    return ", ".join(f"{n} by {c}" for c, n in by.items()) or "-"


def _defect(name: str) -> str:
    if name in BROKEN:
        return BROKEN[name][1]
    if name in LIMITED:
        return HORIZON_BACKENDS[name.removeprefix("horizon_")][1]
    if name in OWN:
        return "none (the library's own clock)"
    return "none (correct backend)"


_WHAT = {
    "heap": "`simclock.HeapSimClock`: binary heap, lazy cancel with compaction",
    "sorted_list": "`tests/backends/sorted_list.py`: a list kept sorted with `bisect.insort`",
    "wheel": "`tests/backends/wheel.py`: hierarchical timer wheel, 1024 slots per level",
    "minimal": "the sorted list behind the six protocol methods only",
    "simpy": "SimPy `Environment`, `advance` = `env.run(until=...)` (`examples/simpy_adapter.py`)",
    "simpy_stepped": "SimPy `Environment`, `advance` = `env.step()` up to the target",
    "sched": "stdlib `sched.scheduler` through `examples/sched_adapter.py`",
    "drake": "Drake `Simulator`, periodic publish events (`examples/drake_adapter.py`)",
    "grid_1": "`simclock.GridClock` on a 1 ns grid",
    "grid_3": "`simclock.GridClock` on a 3 ns grid, in units of its step",
    "grid_1ms": "`simclock.GridClock` on a 1 ms grid, in units of its step",
    "session_1": "the clock of a running `simclock.Session` (1 ns grid, `/clock`, a controller)",
    "session_2ms": "the clock of a running `simclock.Session` on a 2 ms grid, in units of its step",
    "mujoco_1ms": (
        "`simclock.MujocoClock` (1 ms pendulum, one `mj_step` per unit), "
        f"declared horizon {MUJOCO_HORIZON} steps"
    ),
    "replay": "`simclock.ReplayClock(callbacks=True)` over a recording, seeded random source",
}


def peer_reasons(name: str) -> dict[str, str]:
    """``clause -> why`` the peer ``name`` does not keep it (its adapter's ``WHY``)."""
    import importlib.util
    from pathlib import Path

    module_name = PEERS[name].split(":", 1)[0]
    path = Path(__file__).resolve().parents[2] / "examples" / f"{module_name}.py"
    spec = importlib.util.spec_from_file_location(f"_peer_{module_name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    reasons: dict[str, str] = getattr(module, "WHY_STEPPED" if name == "simpy_stepped" else "WHY")
    return reasons


def render_peer_table(results: list[dict[str, Any]]) -> str:
    """The comparison table of ``docs/conformance.md``: which clauses each scheduler keeps, why."""
    lines = [
        "| backend | verdict | clauses not kept | why |",
        "|---|---|---|---|",
    ]
    for r in results:
        name = r["name"]
        if name not in CORRECT and name not in OWN and name not in PEERS:
            continue
        why = peer_reasons(name) if name in PEERS else {}
        na = [f"{c} (not applicable)" for c in r["not_applicable"]]
        limited = sorted({_clause_of(t) for t in r["limited"]}, key=_clause_order)
        lim = [f"{c} (limited by the horizon)" for c in limited]
        blocked = r["blocked"]
        not_kept = sorted([*r["failed"], *blocked], key=_clause_order)
        shown = [f"{c} (blocked by {blocked[c]})" if c in blocked else c for c in not_kept]
        failed = ", ".join([*shown, *na, *lim]) or "none"
        reasons = "; ".join(f"**{c}**: {why[c]}" for c in not_kept if c in why) or "-"
        lines.append(f"| {_WHAT[name]} | {r['verdict']} | {failed} | {reasons} |")
    return "\n".join(lines)


def _clause_of(test: str) -> str:
    from simclock_conformance import clause_of_test

    return clause_of_test(test) or test


def _clause_order(clause: str) -> int:
    from simclock_conformance import CLAUSES

    return list(CLAUSES).index(clause) if clause in CLAUSES else len(CLAUSES)
