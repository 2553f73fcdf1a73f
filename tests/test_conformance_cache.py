"""The stored expected replies of the fixed programs (docs/conformance.md, "Speed").

A run keeps the reference engine's replies and their reasons between processes, keyed by
the sources that decide them and by each program's requests: a program whose requests
differ from the stored ones is computed again, never read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from simclock_conformance.clauses._programs import CASES
from simclock_conformance.protocol import _wire_core as core
from simclock_conformance.protocol._backends import OracleBackend
from simclock_conformance.protocol._engine import Engine

CASE = CASES[0]
_COMPUTE = (
    "from simclock_conformance.clauses._programs import CASES\n"
    "from simclock_conformance.protocol._wire_core import expected_reasons\n"
    "expected_reasons(CASES[0])\n"
)


def test_a_run_stores_the_replies_and_the_next_one_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = dict(os.environ, SIMCLOCK_CONFORMANCE_CACHE=str(tmp_path))
    subprocess.run([sys.executable, "-c", _COMPUTE], env=env, check=True, timeout=120)
    (stored,) = tmp_path.glob("expected-*.pickle")
    monkeypatch.setenv("SIMCLOCK_CONFORMANCE_CACHE", str(tmp_path))
    monkeypatch.setattr(core, "_DISK", core._Disk())
    monkeypatch.setattr(core, "_EXPECTED", {})
    monkeypatch.setattr(core, "_REASONS", {})
    assert core._cache_file() == stored
    core._stored(CASE)
    engine = Engine(OracleBackend())
    assert core._EXPECTED[CASE.id] == [engine.handle(r) for r in CASE.requests]
    assert CASE.id in core._REASONS


def test_a_program_with_other_requests_is_not_read_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIMCLOCK_CONFORMANCE_CACHE", str(tmp_path))
    monkeypatch.setattr(core, "_DISK", core._Disk())
    monkeypatch.setattr(core, "_EXPECTED", {})
    monkeypatch.setattr(core, "_REASONS", {})
    core._DISK.load()[CASE.id] = (core._requests_key(CASE), [{"forged": True}], None)
    changed = replace(CASE, steps=CASE.steps[:-1])
    assert core.expected_replies(changed) != [{"forged": True}]
    assert core._EXPECTED[CASE.id] == core.expected_replies(changed)


def test_the_store_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMCLOCK_CONFORMANCE_CACHE", "0")
    assert core._cache_file() is None
