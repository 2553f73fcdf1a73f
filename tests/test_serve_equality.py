"""C-WIRE-8: in process and through ``serve``, every self-check backend gets the same verdict.

Each backend of the self-check (``backends.selfcheck.all_names()``) is run twice,
by the two commands a user types:

- in process: ``python -m simclock_conformance MODULE:FACTORY --json A``;
- through the wire: ``python -m simclock_conformance --driver --no-vectors --json B --
  python -m simclock_conformance serve MODULE:FACTORY``;

and the status of every clause (passed, failed, not applicable, incomplete,
not run) must be the same in both reports.

The mapping of clauses, stated once (:data:`SHARED`): a clause is compared when
both reports have it, that is every clause of the wire profile
(``WIRE_CLAUSES``, C-WIRE-6) but the wire-only ones (``WIRE_ONLY``: C-X-BITS,
C-WIRE-2, C-WIRE-7, which an in-process report leaves out). The
Python-only clauses (§3's C-BUS-*, C-SCH-2, C-RNG-5/6, the replay clauses
C-REP-*, ...) are not in the wire profile and are not compared. SM-ORACLE is
compared with SM-ORACLE: the in-process state machine and the wire one.

Two kinds of difference are allowed, each checked to be exactly what it is:

- a backend that declares a horizon (C-CONF-4: ``mujoco_1ms`` and
  ``backends.horizon``) is ``incomplete`` in process on the clauses whose
  far-time tests the horizon reduced; the wire profile has no horizon (SPEC
  §18 declares none), so through ``serve`` those clauses run in full;
- :data:`KNOWN`: the differences that remain, backend by backend, each with its
  cause: what the protocol cannot carry (a numpy integer, a callback object
  shared by two entries, a root label, the memory of a backend with no size
  method). They are compared exactly: one that goes away (or a new one) fails
  the test until this table says so.

The clause programs run both ways (the in-process suite runs them through the
same engine, ``_suite_programs``), and the state machine is one machine of
protocol requests, so a defect shows on the same clauses both ways.

Fast by default: two rows run in ``make test`` (``minimal``: no size method,
no peek, no rate; ``grid_3``: the library's GridClock in units of its step).
Every row: ``pytest -m wire_full tests/test_serve_equality.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from backends.selfcheck import LIMITED, all_names, spec_of

from simclock_conformance import CLAUSES
from simclock_conformance.clauses._clauses import WIRE_ONLY
from simclock_conformance.entry._wire_run import WIRE_CLAUSES

ROOT = Path(__file__).resolve().parents[1]

SHARED = tuple(c for c in WIRE_CLAUSES if c not in WIRE_ONLY)
"""The clauses both reports give a verdict on: the wire profile minus its wire-only clauses."""

HORIZON = frozenset({"mujoco_1ms", *LIMITED})
"""Backends declaring a horizon (C-CONF-4): ``incomplete`` in process where it reduced a test."""

_F, _P = "failed", "passed"
KNOWN: dict[str, dict[str, tuple[str, str]]] = {
    # C-CAN-4: without heap_size() or pending_count(), serve reports the live entries as
    # `stored`; the tombstones are measured in process only, by memory (tracemalloc).
    "simpy": {"C-CAN-4": (_F, _P)},
    "simpy_stepped": {"C-CAN-4": (_F, _P)},
    "never_compacts": {"C-CAN-4": (_F, _P)},
    # C-CAN-3: one callback object shared by two entries; a wire callback is data, one
    # per entry (the Python-only part of C-CAN-3).
    "cancel_by_callback": {"C-CAN-3": (_F, _P)},
    # C-TIME-1, C-TIME-3: a numpy integer from now_ns() is a string of digits on the wire
    # (their Python-only parts).
    "numpy_now_leaks": {"C-TIME-1": (_F, _P), "C-TIME-3": (_F, _P)},
    # C-RNG-1: the root stream's label ("/") is an attribute the protocol has no request
    # for; the streams themselves are right.
    "empty_root_label": {"C-RNG-1": (_F, _P)},
    # C-TIME-4, C-ADV-3: in process their Python-only tests schedule at now too, and the
    # report charges that refusal to the test's clause; on the wire only programs run,
    # and their refusals are charged to C-SCH-1 (the report's present charging).
    "now_refused": {"C-TIME-4": (_F, "blocked"), "C-ADV-3": (_F, "blocked")},
    # SM-ORACLE: the wire state machine's programs reach an instant past 2**52 ns with
    # an entry whose time float seconds round; the 40 in-process programs do not.
    "float_seconds_now": {"SM-ORACLE": (_P, _F)},
}  # fmt: skip
"""``backend -> {clause: (in-process status, serve status)}`` of the known differences.

Each is something the protocol cannot carry (SPEC §18: callbacks are data, numbers
are strings, a driver reports its own entry count); every other clause of every
backend agrees.
"""

FAST = ("minimal", "grid_3")
"""The rows of the default run; the others are marked ``wire_full``."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # Both commands import the self-check backends (tests/) and the peer adapters (examples/).
    paths = [str(ROOT / "tests"), str(ROOT / "examples"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def _statuses(path: Path) -> dict[str, str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {row["id"]: row["status"] for row in data["clauses"]}


def verdicts(name: str, tmp: Path) -> tuple[dict[str, str], dict[str, str]]:
    """``(in-process statuses, through-serve statuses)`` of backend ``name``, both at once."""
    spec = spec_of(name)
    python = [sys.executable, "-m", "simclock_conformance"]
    inproc, wire = tmp / "in_process.json", tmp / "serve.json"
    commands = [
        [*python, spec, "-q", "--json", str(inproc)],
        [*python, "--driver", "--no-vectors", "--json", str(wire), "--", *python, "serve", spec],
    ]
    procs = [
        subprocess.Popen(
            cmd,
            cwd=tmp,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for cmd in commands
    ]
    outputs = [proc.communicate(timeout=1800)[0] for proc in procs]
    for proc, out, report in zip(procs, outputs, (inproc, wire), strict=True):
        # Exit codes 0, 1, 3, 4 are verdicts; 2 (usage) or a crash leaves no report.
        assert proc.returncode in (0, 1, 3, 4) and report.exists(), out[-3000:]
    # The wire runner never shows a Python traceback (C-WIRE-5); pytest's in-process
    # failure reports may.
    assert "Traceback" not in outputs[1], outputs[1][-3000:]
    return _statuses(inproc), _statuses(wire)


def disagreements(inproc: dict[str, str], wire: dict[str, str]) -> dict[str, tuple[str, str]]:
    """``clause -> (in-process status, serve status)`` for every shared clause that differs."""
    return {c: (inproc[c], wire[c]) for c in SHARED if inproc[c] != wire[c]}


def test_C_WIRE_8_the_mapping_of_clauses_is_explicit() -> None:
    # Every compared clause is a registered in-process clause; none is wire-only.
    assert [c for c in SHARED if c not in CLAUSES or c in WIRE_ONLY] == []
    assert set(WIRE_CLAUSES) - set(SHARED) == set(WIRE_ONLY)
    # The Python-only clauses are outside the wire profile (C-WIRE-6).
    assert {"C-SCH-2", "C-RNG-5", "C-RNG-6", "C-BUS-1"} & set(WIRE_CLAUSES) == set()
    assert set(FAST) <= set(all_names())


def _check(name: str, tmp: Path) -> None:
    inproc, wire = verdicts(name, tmp)
    assert [c for c in SHARED if c not in inproc or c not in wire] == []
    differ = disagreements(inproc, wire)
    if name in HORIZON:
        # Only where the horizon made the in-process verdict incomplete (see the docstring).
        differ = {c: v for c, v in differ.items() if v[0] != "incomplete"}
    assert differ == KNOWN.get(name, {}), f"{name}: in process vs serve: {differ}"


@pytest.mark.parametrize("name", FAST)
def test_C_WIRE_8_same_verdict_in_process_and_through_serve(name: str, tmp_path: Path) -> None:
    _check(name, tmp_path)


@pytest.mark.wire_full
@pytest.mark.parametrize("name", [n for n in all_names() if n not in FAST])
def test_C_WIRE_8_same_verdict_in_process_and_through_serve_every_backend(
    name: str, tmp_path: Path
) -> None:
    _check(name, tmp_path)
