"""The mutation campaign's own rules (``conformance/mutation``), without running a campaign.

How a report is read (killed or not), how a killed mutant is charged against the
clauses its code cites, where those citations come from, how survivors are
classified, that the lists of equivalent and undecided mutants name current code,
and that the second backend (``quantised.py``) fires where the reference does
while going through the core's rounding to its step.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from simclock import Bus, GridClock, HeapSimClock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "conformance" / "mutation"))

import campaign  # noqa: E402
import quantised  # noqa: E402
from campaign import Mutant, charge_of, cited_clauses, classify_survivor  # noqa: E402
from equivalent import EQUIVALENT, UNDECIDED  # noqa: E402

HEAP = "simclock/core/_heap.py"
RANDOM = "simclock/core/_random.py"


def _line_of(path: str, qualname: str) -> int:
    """The first line of the body of ``Class.method`` or ``function`` in ``path``."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    body: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in qualname.split("."):
        node = next(
            n for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == part
        )
        body = node.body
    assert isinstance(node, ast.FunctionDef)
    return node.body[-1].lineno


# -- charges -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failed", "cites", "charge"),
    [
        (["C-CAN-4"], ["C-CAN-4"], "exact"),
        (["C-CAN-4", "SM-ORACLE", "C-WIRE-7"], ["C-CAN-4"], "exact"),
        (["C-ADV-1"], ["C-ADV-1", "C-TIE-1"], "exact"),
        (["C-ADV-1", "C-X-RATE"], ["C-X-RATE"], "also"),
        (["C-TIE-1"], ["C-CAN-4"], "elsewhere"),
        (["SM-ORACLE"], ["C-CAN-4"], "aggregate"),
        (["SM-ORACLE", "C-TIE-1"], ["C-CAN-4"], "elsewhere"),
        (["SM-ORACLE"], ["SM-ORACLE"], "exact"),
        (["C-TIE-1"], [], "uncited"),
    ],
)
def test_charge_of_compares_failed_clauses_with_cited_ones(
    failed: list[str], cites: list[str], charge: str
) -> None:
    assert charge_of(failed, cites) == charge


def test_a_report_caught_the_mutant_only_by_a_failed_or_blocked_clause() -> None:
    conforming = {"verdict": "CONFORMING", "failed": [], "blocked": {}, "not_run": []}
    failing = {"verdict": "NOT CONFORMING", "failed": ["C-TIE-1"], "blocked": {}, "not_run": []}
    blocked = {"verdict": "NOT CONFORMING", "failed": [], "blocked": {"C-X": "C-Y"}, "not_run": []}
    partial = {"verdict": "PARTIAL", "failed": [], "blocked": {}, "not_run": ["SM-ORACLE"]}
    assert not campaign._caught(conforming, full=True)
    assert campaign._caught(failing, full=True)
    assert campaign._caught(blocked, full=False)
    # The second backend runs chosen clauses: PARTIAL by construction, not a kill.
    assert not campaign._caught(partial, full=False)
    assert campaign._caught(partial, full=True)


# -- citations -----------------------------------------------------------------------


def test_a_function_cites_its_own_clauses_not_its_class() -> None:
    line = _line_of(HEAP, "LazyHeap.tombstoned")
    assert cited_clauses(HEAP, line) == ["C-CAN-4"]
    line = _line_of(HEAP, "LazyHeap.peek")
    assert cited_clauses(HEAP, line) == ["C-CAN-2", "C-CAN-4", "C-X-PEEK"]


def test_a_function_without_citations_takes_its_class() -> None:
    line = _line_of(HEAP, "LazyHeap.live")
    assert cited_clauses(HEAP, line) == ["C-CAN-4"]


def test_a_function_no_clause_decides_cites_nothing() -> None:
    for function in ("check_bounds", "check_real", "check_sigma", "check_size"):
        assert cited_clauses(RANDOM, _line_of(RANDOM, function)) == [], function


# -- survivors -----------------------------------------------------------------------


def test_survivors_are_classified_by_the_lists() -> None:
    mutants = campaign.enumerate_mutants()
    by_key = {m.key: m for m in mutants}
    equivalent = next(k for k in EQUIVALENT if k in by_key)
    assert classify_survivor(by_key[equivalent]) == "equivalent"
    site = next(k for k in UNDECIDED if k in by_key)
    assert classify_survivor(by_key[site]) == "undecided"
    in_function = next(
        m
        for m in mutants
        if m.path == HEAP and campaign.function_at(m.path, m.line) == "_check_heap"
    )
    assert classify_survivor(in_function) == "undecided"
    decided = next(
        m
        for m in mutants
        if m.path == HEAP and campaign.function_at(m.path, m.line) == "LazyHeap.tombstoned"
    )
    assert decided.key not in EQUIVALENT
    assert classify_survivor(decided) == "survived"


def test_equivalent_and_undecided_lists_name_current_code() -> None:
    assert campaign.stale_entries(campaign.enumerate_mutants()) == []
    moved = Mutant(HEAP, "core/NumberReplacer", 0, 1, "pure")
    assert campaign.stale_entries([moved]) != []


def test_every_listed_mutant_has_a_reason() -> None:
    for key, reason in {**EQUIVALENT, **UNDECIDED}.items():
        assert len(reason) > 40, key


# -- the second backend --------------------------------------------------------------


def _fired(clock: Any, schedule: Callable[[Callable[[], None]], object], until: int) -> list[int]:
    """The times ``now_ns()`` read in the callback ``schedule`` registers, up to ``until``."""
    times: list[int] = []
    schedule(lambda: times.append(clock.now_ns()))
    clock.advance(until)
    return times


def _schedule_rate(clock: Any, rate: Fraction, phase: int, cb: Callable[[], None]) -> object:
    return clock.schedule_rate(rate, cb, phase)


def test_the_quantised_backend_fires_where_the_reference_does() -> None:
    rate = Fraction(30000, 1001)
    for phase in (0, 5, 7):
        ref = HeapSimClock(0)
        unit = quantised.quantised_factory(0, Bus())
        want = _fired(ref, partial(_schedule_rate, ref, rate, phase), 10**9)
        got = _fired(unit, partial(_schedule_rate, unit, rate, phase), 10**9)
        assert got == want and len(want) == 30
    ref = HeapSimClock(0)
    unit = quantised.quantised_factory(0, Bus())
    ref.advance(3)
    unit.advance(3)
    want = _fired(ref, lambda cb: ref.schedule_periodic(10, cb, 7), 60)
    got = _fired(unit, lambda cb: unit.schedule_periodic(10, cb, 7), 60)
    assert got == want == [7, 17, 27, 37, 47, 57]


def test_the_quantised_backend_asks_the_grid_for_off_grid_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Off the 3 ns grid under policy next_boundary: GridClock gives the core a quantum
    # of 3 (simclock/sim/_grid.py), so the core's rounding is what puts them back.
    unit = quantised.quantised_factory(0, Bus())
    assert isinstance(unit.grid, GridClock)
    calls: list[tuple[str, tuple[object, ...], dict[str, object]]] = []
    for method in ("schedule_rate", "schedule_periodic"):
        original = getattr(unit.grid, method)

        def spy(*args: object, _m: str = method, _o: object = original, **kw: object) -> object:
            calls.append((_m, args[:1] + args[2:], kw))
            return _o(*args, **kw)  # type: ignore[operator]

        monkeypatch.setattr(unit.grid, method, spy)
    unit.advance(1)
    unit.schedule_rate(Fraction(30), lambda: None, 2)
    unit.schedule_periodic(10, lambda: None, 7)
    unit.schedule_periodic(10, lambda: None, 1)
    assert calls == [
        ("schedule_rate", (Fraction(10), 6), {"policy": "next_boundary"}),
        ("schedule_periodic", (30, 20), {"policy": "next_boundary"}),
        ("schedule_periodic", (30, 3), {}),
    ]


def test_a_module_constant_is_named_by_the_name_it_binds() -> None:
    lines = (ROOT / RANDOM).read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.startswith("_INT64_MIN ="))
    assert campaign.function_at(RANDOM, line) == "_INT64_MIN"
    assert "_INT64_MIN" in campaign.functions_of(RANDOM)
    assert campaign.function_at(RANDOM, 1) == ""


def test_C_X_BITS_the_wire_step_fails_a_changed_stream_derivation_and_passes_the_real_one(
    tmp_path: Path,
) -> None:
    # The spawn-key words read from other offsets of the label's hash: every in-process
    # test draws its expectations from the same code; C-X-BITS through serve does not.
    lines = (ROOT / RANDOM).read_text(encoding="utf-8").splitlines()
    line = next(k for k, text in enumerate(lines, 1) if "for i in range(0, 16, 4))" in text)
    assert campaign.function_at(RANDOM, line) == "derive_spawn_key"
    wanted = lines[line - 1].strip().replace("range(0, 16", "range( 1, 16")
    suite = ROOT / "conformance"
    statuses: dict[str, tuple[list[str], str]] = {}
    # The campaign's own mutants of that line; the one reading the words from offset 1.
    on_line = [
        m
        for m in campaign.enumerate_mutants(("pure",))
        if (m.path, m.line, m.operator) == (RANDOM, line, "core/NumberReplacer")
    ]
    for name, mutant in [*(("mutated", m) for m in on_line), ("real", None)]:
        work = tmp_path / (name if mutant is None else f"m{mutant.occurrence}")
        work.mkdir()
        if mutant is None:  # an occurrence past the file's numbers: the code as it is
            campaign._shadow(Mutant(RANDOM, "core/NumberReplacer", 10**6, line, "pure"), work)
        elif campaign._shadow(mutant, work) != wanted:
            continue
        report = campaign._suite_json(
            work, suite, "wire.json", campaign.WIRE_BITS, campaign.WIRE_DRIVER
        )
        assert report is not None
        statuses[name] = (report["failed"], report["verdict"])
    assert statuses == {
        "mutated": (["C-X-BITS"], "NOT CONFORMING"),
        "real": ([], "PARTIAL"),
    }
    assert cited_clauses(RANDOM, line) == ["C-RNG-2", "C-X-BITS"]
