"""Broken backends that model defects found in real schedulers, through ``serve`` (C-CONF-1, §18).

In process, every backend of ``backends.broken`` is checked by the self-check
(``test_conformance_selfcheck.py``) against :data:`~backends.broken.EXPECTED_FAILED`.
Here the defects found in real schedulers (:data:`~backends.broken.REAL_DEFECTS`) run
the way a backend in another language does: ``python -m simclock_conformance
--driver -- python -m simclock_conformance serve backends.broken:NAME``, golden
vectors included, and must fail exactly :data:`~backends.broken.EXPECTED_FAILED_SERVE`.
The two false passes (a clock keeping times modulo ``2**64``, ties ordered by
who scheduled them) run in ``make test``; the others are marked ``wire_full``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from backends.broken import (
    BLOCKED_OWN_CLAUSE,
    BROKEN,
    EXPECTED_FAILED,
    EXPECTED_FAILED_SERVE,
    REAL_DEFECTS,
)

from simclock_conformance import CLAUSES
from simclock_conformance.entry._wire_run import WIRE_CLAUSES

ROOT = Path(__file__).resolve().parents[1]
FAST = ("u64_counter_times", "ties_by_origin")


def _serve_report(name: str, tmp: Path) -> dict[str, object]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    python = [sys.executable, "-m", "simclock_conformance"]
    report = tmp / "serve.json"
    proc = subprocess.run(
        [
            *python,
            "--driver",
            "--no-shrink",
            "--json",
            str(report),
            "--",
            *python,
            "serve",
            f"backends.broken:{name}",
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
        env=env,
        cwd=tmp,
    )
    assert proc.returncode == 1 and report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout, proc.stdout[-3000:]
    data: dict[str, object] = json.loads(report.read_text(encoding="utf-8"))
    return data


def test_real_defects_are_broken_backends_with_both_expected_sets() -> None:
    assert set(REAL_DEFECTS) <= set(BROKEN)
    assert sorted(EXPECTED_FAILED_SERVE) == sorted(REAL_DEFECTS)
    for name in REAL_DEFECTS:
        own = BLOCKED_OWN_CLAUSE.get(name, BROKEN[name][0])
        assert own in EXPECTED_FAILED[name] and own in EXPECTED_FAILED_SERVE[name], name
        assert set(EXPECTED_FAILED[name]) <= set(CLAUSES), name
        # A wire report lists its clauses in the wire profile's order (C-WIRE-6).
        served = EXPECTED_FAILED_SERVE[name]
        assert list(served) == sorted(served, key=list(WIRE_CLAUSES).index), name


def test_the_docs_table_of_real_defects_is_rendered_from_the_expected_sets() -> None:
    from backends.table import DOC, REAL_END, REAL_START, render_real_defects

    text = DOC.read_text(encoding="utf-8")
    table = text.split(REAL_START, 1)[1].split(REAL_END, 1)[0].strip()
    assert table == render_real_defects(), (
        "docs/conformance.md is stale: run PYTHONPATH=tests:examples python -m backends.table"
    )


def _check(name: str, tmp: Path) -> None:
    data = _serve_report(name, tmp)
    assert data["verdict"] == "NOT CONFORMING"
    assert data["failed"] == list(EXPECTED_FAILED_SERVE[name]), data["failed"]
    blocked = data["blocked"]
    assert isinstance(blocked, dict) and set(blocked.values()) <= set(EXPECTED_FAILED_SERVE[name])


@pytest.mark.parametrize("name", FAST)
def test_C_CONF_1_a_named_false_pass_fails_its_clause_through_serve(
    name: str, tmp_path: Path
) -> None:
    _check(name, tmp_path)


@pytest.mark.wire_full
@pytest.mark.parametrize("name", [n for n in REAL_DEFECTS if n not in FAST])
def test_C_CONF_1_a_real_defect_fails_its_expected_set_through_serve(
    name: str, tmp_path: Path
) -> None:
    _check(name, tmp_path)
