"""Pieces of the conformance suite: clause registry, report, factory loading (SPEC §14)."""

from __future__ import annotations

import re

import pytest
from backends.sorted_list import SortedListClock

from simclock import Bus, EventKind, HeapSimClock
from simclock_conformance import (
    CLAUSES,
    BackendError,
    BackendReport,
    BackendTypeError,
    BackendValueError,
    Outcome,
    check_factory,
    clause_of_test,
    heap_factory,
    load_factory,
    make_rig,
    register_clauses,
    run,
)
from simclock_conformance.clauses._clauses import WIRE_ONLY
from simclock_conformance.entry._plugin import suite_paths
from simclock_conformance.kit._harness import factory_spec
from simclock_conformance.kit._reach import Every, Push, Reach, reach_of
from simclock_conformance.report._rootkey import falsifying_program


def test_every_clause_of_spec_sections_1_to_3_and_x_peek_rate_stats_is_registered() -> None:
    section_1 = [
        "C-TIME-1", "C-TIME-2", "C-TIME-3", "C-TIME-4", "C-ADV-1", "C-ADV-2", "C-ADV-3", "C-ADV-4",
        "C-ADV-5", "C-SCH-1", "C-SCH-2", "C-TIE-1", "C-PER-1", "C-PER-2", "C-PER-3",
        "C-CAN-1", "C-CAN-2", "C-CAN-3", "C-CAN-4", "C-ERR-1", "C-ERR-2", "C-DET-1",
        "C-STEP-1",
    ]  # fmt: skip
    section_2 = [f"C-RNG-{i}" for i in range(1, 7)]
    section_3 = [f"C-BUS-{i}" for i in range(1, 5)]
    extensions = ["C-X-PEEK", "C-X-RATE", "C-X-STATS"]
    expected = [*section_1, *section_2, *section_3, *extensions, "SM-ORACLE"]
    assert list(CLAUSES)[: len(expected)] == expected


def test_every_registered_clause_has_a_test_in_the_suite() -> None:
    from simclock_conformance import ClockConformance

    names = [n for n in dir(ClockConformance) if n.startswith("test_")]
    covered = {clause_of_test(n) for n in names}
    builtin = [c for c in CLAUSES if not c.startswith("C-REP-") and c not in WIRE_ONLY]
    assert [c for c in builtin if c not in covered] == []
    assert None not in covered
    # The wire-only clauses have their programs in the wire profile instead (SPEC §18).
    from simclock_conformance.clauses._programs import CASES
    from simclock_conformance.entry._wire_run import WIRE_CLAUSES

    programs = {clause for case in CASES for clause in case.clauses}
    assert [c for c in WIRE_ONLY if c not in programs and c != "C-WIRE-7"] == []
    assert set(WIRE_ONLY) <= set(WIRE_CLAUSES)


def test_C_WIRE_8_every_wire_clause_program_also_runs_in_process() -> None:
    from simclock_conformance import ClockConformance
    from simclock_conformance.clauses._programs import CASES
    from simclock_conformance.entry._wire_run import WIRE_CLAUSES
    from simclock_conformance.suite._suite_programs import PROGRAM_CLAUSES

    # Every clause a driver is checked on by programs, but the wire-only ones, has
    # a program test in the in-process suite, one parameter per program.
    programs = [c for c in WIRE_CLAUSES if any(c in k.clauses for k in CASES)]
    assert [c for c in programs if c not in WIRE_ONLY] == list(PROGRAM_CLAUSES)
    for clause in PROGRAM_CLAUSES:
        test = getattr(ClockConformance, f"test_{clause.replace('-', '_')}_program")
        (mark,) = test.pytestmark
        assert list(mark.args[1]) == [k.id for k in CASES if clause in k.clauses]


def test_clause_of_test_uses_the_whole_id() -> None:
    assert clause_of_test("test_C_TIE_1_fifo") == "C-TIE-1"
    assert clause_of_test("test_C_X_PEEK_none") == "C-X-PEEK"
    assert clause_of_test("test_SM_ORACLE_agrees") == "SM-ORACLE"
    assert clause_of_test("test_C_TIE_12_nothing") is None
    assert clause_of_test("test_helper") is None


def test_register_clauses_is_idempotent_and_refuses_conflicts() -> None:
    before = dict(CLAUSES)
    register_clauses([("C-TIE-1", "§1", CLAUSES["C-TIE-1"].summary)])
    assert before == CLAUSES
    with pytest.raises(
        ValueError,
        match=r"^clause 'C-TIE-1' is already registered as 'equal at_ns fire in push order "
        r"\(FIFO\)'; register each clause once$",
    ):
        register_clauses([("C-TIE-1", "§1", "something else")])
    with pytest.raises(
        ValueError, match=r"^clause id 'tie-1' is malformed; use the SPEC form, e\.g\. 'C-REP-1'$"
    ):
        register_clauses([("tie-1", "§1", "x")])
    # A refused call registers nothing, not even the valid rows before the bad one.
    with pytest.raises(ValueError, match=r"^clause id 'bad' is malformed; "):
        register_clauses([("C-ZZZ-1", "§9", "fine"), ("bad", "§9", "x")])
    with pytest.raises(ValueError, match=r"^clause 'C-ZZZ-2' is already registered as 'a'; "):
        register_clauses([("C-ZZZ-2", "§9", "a"), ("C-ZZZ-2", "§9", "b")])
    assert before == CLAUSES


def test_suite_modules_are_the_suite_files_of_the_package() -> None:
    names = [p.rsplit("/", 1)[-1] for p in suite_paths()]
    assert "_suite_clock.py" in names
    assert all(n.startswith("_suite_") and n.endswith(".py") for n in names)


def test_report_statuses_and_verdict() -> None:
    rep = BackendReport("x:y")
    assert rep.status("C-TIE-1") == "not run"
    assert (rep.conforming, rep.verdict) == (False, "PARTIAL")  # nothing ran
    for clause in CLAUSES:
        rep.add(clause, Outcome(f"test_{clause.replace('-', '_')}_a", "passed"))
    rep.add("C-X-RATE", Outcome("test_C_X_RATE_a", "not applicable", "not applicable: no"))
    assert (rep.conforming, rep.verdict) == (True, "CONFORMING")
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_b", "failed", "C-TIE-1: lifo"))
    # a later phase (teardown) does not hide a failure
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_b", "passed"))
    assert rep.status("C-TIE-1") == "failed"
    assert rep.status("C-X-RATE") == "not applicable"
    assert rep.failed() == ["C-TIE-1"]
    assert (rep.conforming, rep.verdict) == (False, "NOT CONFORMING")
    data = rep.to_json()
    assert (data["verdict"], data["conforming"]) == ("NOT CONFORMING", False)
    assert data["counts"]["failed"] == 1
    assert data["counts"]["not applicable"] == 1
    row = next(r for r in data["clauses"] if r["id"] == "C-TIE-1")
    assert row["tests"] == [
        {"name": "test_C_TIE_1_a", "outcome": "passed"},
        {"name": "test_C_TIE_1_b", "outcome": "failed", "message": "C-TIE-1: lifo"},
    ]
    table = rep.table()
    assert re.search(r"^C-TIE-1 +failed +equal at_ns fire in push order \(FIFO\)$", table, re.M)
    assert "FAILED C-TIE-1: test_C_TIE_1_b\n  C-TIE-1: lifo" in table
    assert "0 not run: NOT CONFORMING\n" in table


def test_C_CONF_3_one_root_cause_is_reported_once_with_its_clauses() -> None:
    rep = BackendReport("x:y")
    cause = "NameError raised in mybackend.py:42 (_report)"
    rep.add("C-ERR-1", Outcome("test_C_ERR_1_a", "failed", "C-ERR-1: NameError: x", root=cause))
    rep.add("C-PER-2", Outcome("test_C_PER_2_a", "failed", "C-PER-2: NameError: x", root=cause))
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_a", "failed", "C-TIE-1: lifo"))
    # Every failed test is in one group; a failure without an exception is keyed by its message.
    # Python-only tests raising in the failure path, no program to charge it: each its own.
    assert rep.root_causes() == [
        {"cause": cause, "clauses": ["C-PER-2", "C-ERR-1"], "charged": ["C-PER-2", "C-ERR-1"],
         "tests": ["test_C_PER_2_a", "test_C_ERR_1_a"]},
        {"cause": "C-TIE-1: lifo", "clauses": ["C-TIE-1"], "charged": ["C-TIE-1"],
         "tests": ["test_C_TIE_1_a"]},
    ]  # fmt: skip
    table = rep.table()
    assert table.count(cause) == 1
    assert table.count("NameError: x") == 1  # one representative failure, shown once
    assert (
        "ROOT CAUSE in 2 tests of C-PER-2, C-ERR-1:\n  "
        + cause
        + "\n  tests: test_C_PER_2_a, test_C_ERR_1_a\n"
        + "  for example, C-PER-2: test_C_PER_2_a\n    C-PER-2: NameError: x"
    ) in table
    assert "FAILED C-ERR-1" not in table
    assert table.endswith("\n\nFAILED C-TIE-1: test_C_TIE_1_a\n  C-TIE-1: lifo")


def test_C_CONF_3_every_distinct_state_machine_failure_is_shown_with_its_program() -> None:
    rep = BackendReport("x:y")
    failures = [
        {"message": "SM-ORACLE: traces differ", "program": "state = M()\nstate.teardown()"},
        {
            "message": "SM-ORACLE: now differs",
            "program": "state = M()\nstate.a()\nstate.teardown()",
        },
    ]
    rep.add(
        "SM-ORACLE",
        Outcome("test_SM_ORACLE_a", "failed", "SM-ORACLE: 2 distinct failures", failures=failures),
    )
    table = rep.table()
    assert "  distinct failure 2 of 2:\n    SM-ORACLE: now differs\n" in table
    assert table.count("minimal failing program (Hypothesis):") == 2
    test = rep.to_json()["clauses"][-1]["tests"][0]
    assert test["failures"] == failures


def test_C_CONF_2_watchdog_turns_a_hang_into_a_failure() -> None:
    from simclock_conformance.kit._watchdog import ConformanceTimeout, watchdog

    with (
        pytest.raises(
            ConformanceTimeout,
            match=r"^C-X-1: timed out after 0\.2 s of CPU time \(C-CONF-2 time limit per test\)",
        ),
        watchdog(0.2, "C-X-1"),
    ):
        while True:
            pass


def test_C_CONF_2_every_folder_of_the_package_is_suite_code_not_the_backend() -> None:
    """Where a hang or an exception is charged skips the suite's own frames, in every folder."""
    from pathlib import Path

    import simclock_conformance
    from simclock_conformance.kit._watchdog import is_suite_file

    package = Path(simclock_conformance.__file__).resolve().parent
    modules = sorted(package.rglob("*.py"))
    assert {p.parent.name for p in modules} >= {"kit", "suite", "protocol", "report", "entry"}
    assert [str(p) for p in modules if not is_suite_file(str(p))] == []
    assert not is_suite_file(str(package.parents[1] / "tests" / "backends" / "broken.py"))


def _suite_frame() -> object:
    """A frame whose every frame outwards is the suite's or the standard library's.

    A function compiled under the suite's folder, run as a thread's target: no
    test (backend) frame is on that thread's stack.
    """
    import sys
    import threading
    from pathlib import Path

    import simclock_conformance

    fake = str(Path(simclock_conformance.__file__).resolve().parent / "kit" / "_fake.py")
    namespace: dict[str, object] = {"sys": sys}
    exec(compile("def grab(out):\n    out.append(sys._getframe())\n", fake, "exec"), namespace)
    got: list[object] = []
    thread = threading.Thread(target=namespace["grab"], args=(got,))  # type: ignore[arg-type]
    thread.start()
    thread.join()
    return got[0]


def test_C_CONF_2_a_repeated_timeout_in_the_suite_names_where_the_first_found_the_backend() -> None:
    """The limit fires again every second: a repeat landing in the suite keeps the first place."""
    import sys

    from simclock_conformance.kit._watchdog import (
        ConformanceTimeout,
        in_backend,
        timeout_where,
    )

    here = sys._getframe()  # a test's frame: the backend's side (not the suite's)
    suite = _suite_frame()
    assert in_backend(here) and not in_backend(suite)  # type: ignore[arg-type]
    first = ConformanceTimeout("C-PER-3: timed out")
    first.where = timeout_where(here, [])
    name = "test_C_CONF_2_a_repeated_timeout_in_the_suite_names_where_the_first_found_the_backend"
    assert re.fullmatch(rf"\S*test_conformance_units\.py:\d+ in {name}", first.where)
    # A repeat in the suite's code: the first place, not the thread's standard library frame.
    assert timeout_where(suite, [first]) == first.where  # type: ignore[arg-type]
    # Without an earlier timeout: no backend frame to name (the suite's own are never named).
    assert timeout_where(suite, []) == ""  # type: ignore[arg-type]
    # A repeat that finds the backend again names its own place, not the first one's.
    elsewhere = ConformanceTimeout("C-PER-3: timed out")
    elsewhere.where = "backends/slow.py:25 in advance"
    again = timeout_where(here, [elsewhere])
    assert re.fullmatch(rf"\S*test_conformance_units\.py:\d+ in {name}", again)


def test_falsifying_program_is_cut_from_pytest_output() -> None:
    text = (
        "E   AssertionError: SM-ORACLE: traces differ\n"
        "E   Failing test case: <state machine>\n"
        "E   state = ClockVersusOracle()\n"
        "E   handles_0 = state.schedule(behaviour=('plain', 0), delay=0)\n"
        "E   state.advance(dt=0)\n"
        "E   state.teardown()\n"
        "E   Explanation:\n"
    )
    assert falsifying_program(text) == (
        "state = ClockVersusOracle()\n"
        "handles_0 = state.schedule(behaviour=('plain', 0), delay=0)\n"
        "state.advance(dt=0)\n"
        "state.teardown()"
    )
    assert falsifying_program("AssertionError: C-TIE-1") == ""


def test_load_factory_resolves_dotted_attributes() -> None:
    assert load_factory("simclock_conformance:heap_factory") is heap_factory
    method: object = load_factory("simclock:HeapSimClock.now_ns")
    assert method is HeapSimClock.now_ns


def test_load_factory_refusals_are_backend_errors() -> None:
    with pytest.raises(BackendError, match=r"^backend spec must look like MODULE:FACTORY"):
        load_factory("a:b:c")
    with pytest.raises(BackendError, match=r"^module 'simclock' has no attribute 'Nope'"):
        load_factory("simclock:Nope")


def test_factory_spec_only_for_importable_factories() -> None:
    assert factory_spec(heap_factory) == "simclock_conformance.kit._harness:heap_factory"
    assert factory_spec(lambda seed, bus: HeapSimClock(seed, bus=bus)) is None


def test_make_rig_binds_an_unbound_bus_and_collects_failure_events() -> None:
    class Unbound(HeapSimClock):
        def __init__(self, seed: int, bus: Bus) -> None:
            super().__init__(seed)
            self.bus = bus  # publishes on the suite's bus but never binds it

    rig = make_rig(Unbound, 3)
    assert rig.bus.clock is rig.clock

    def fail() -> None:
        raise ValueError("x")

    rig.clock.schedule(2, fail)
    rig.clock.advance(2)
    assert [(e.kind, e.at_ns) for e in rig.failures()] == [(EventKind.SCHEDULER_CALLBACK_FAILED, 2)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"profile": "fast"}, r"^profile must be one of ci, thorough, got 'fast'$"),
        (
            {"clauses": "C-TIE-1"},
            r"^clauses must be a list of clause ids, got the str 'C-TIE-1'$",
        ),
    ],
)
def test_run_refuses_a_bad_profile_or_clause_list_before_running(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(BackendError, match=message):
        run("simclock_conformance:heap_factory", **kwargs)  # type: ignore[arg-type]


def test_hypothesis_settings_refuse_an_unknown_profile() -> None:
    from simclock_conformance.suite._suite_clock import hypothesis_settings

    with pytest.raises(ValueError, match=r"^profile must be one of ci, thorough, got 'fats'$"):
        hypothesis_settings("fats")
    assert hypothesis_settings("thorough").max_examples > hypothesis_settings("ci").max_examples


def test_C_CONF_1_a_limited_test_makes_the_verdict_incomplete_and_is_named() -> None:
    rep = BackendReport("x:y")
    for clause in CLAUSES:
        rep.add(clause, Outcome(f"test_{clause.replace('-', '_')}_a", "passed"))
    assert rep.verdict == "CONFORMING"
    why = "limited: the far ties spans 9 ns, beyond the backend's declared horizon of 8 ns"
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_far", "limited", why))
    assert (rep.status("C-TIE-1"), rep.verdict) == ("incomplete", "INCOMPLETE")
    assert rep.conforming is False
    assert rep.incomplete_tests() == [f"test_C_TIE_1_far ({why})"]
    assert "INCOMPLETE: mandatory tests skipped, overridden or limited:\n" in rep.table()


def _sorted_list_at(seed: int, bus: Bus, start_ns: int = 0) -> SortedListClock:
    return SortedListClock(seed, bus, start_ns=start_ns)


def test_C_CONF_4_reach_of_reads_a_declared_horizon_and_refuses_a_bad_one() -> None:
    assert reach_of(heap_factory) == Reach(heap_factory, None, False, None)
    assert reach_of(_sorted_list_at).starts is True

    def short(seed: int, bus: Bus, start_ns: int = 0) -> SortedListClock:
        return SortedListClock(seed, bus, start_ns=start_ns)

    def no_start(seed: int, bus: Bus) -> SortedListClock:
        return SortedListClock(seed, bus)

    for horizon, error, shown in (
        (True, BackendTypeError, "bool True"),
        (2.0**20, BackendTypeError, "float 1048576.0"),
        ("65536", BackendTypeError, "str '65536'"),
        (2**16 - 1, BackendValueError, "65535"),
        (0, BackendValueError, "0"),
        (-(2**70), BackendValueError, repr(-(2**70))),
    ):
        short.horizon_ns = horizon  # type: ignore[attr-defined]
        for refuse in (reach_of, check_factory):
            with pytest.raises(
                error,
                match=rf"^the factory's horizon_ns must be an int >= 2\*\*16 \(65536\), got "
                rf"{re.escape(shown)}$",
            ):
                refuse(short)
    no_start.horizon_ns = 2**16  # type: ignore[attr-defined]
    for refuse in (reach_of, check_factory):
        with pytest.raises(
            BackendValueError,
            match=r"^the factory declares horizon_ns=65536 but takes no start_ns; a horizon needs "
            r"FACTORY\(seed, bus, start_ns=\.\.\.\) to reach far times$",
        ):
            refuse(no_start)


def test_C_CONF_4_a_horizon_of_2_64_minus_1_or_more_is_unlimited() -> None:
    def far(seed: int, bus: Bus, start_ns: int = 0) -> SortedListClock:
        return SortedListClock(seed, bus, start_ns=start_ns)

    def no_start(seed: int, bus: Bus) -> SortedListClock:
        return SortedListClock(seed, bus)

    far.horizon_ns = 2**64 - 2  # type: ignore[attr-defined]
    assert reach_of(far) == Reach(far, 2**64 - 2, True, None)
    for horizon in (2**64 - 1, 2**64, 2**200):
        far.horizon_ns = horizon  # type: ignore[attr-defined]
        assert reach_of(far) == Reach(far, None, True, None)
        # Unlimited needs no start_ns: nothing is started far.
        no_start.horizon_ns = horizon  # type: ignore[attr-defined]
        assert reach_of(no_start) == Reach(no_start, None, False, None)
        check_factory(no_start)


def test_C_CONF_4_far_programs_in_windows_fire_what_the_whole_program_fires() -> None:
    pushes: list[Push] = [("a", 2**63 + 1), ("b", 5), Every("p", 2**62 + 1, 2**53 + 1)]
    pushes += [("c", 2**63 + 1), ("d", 2**64 - 1), ("e", 70_001)]
    # Every firing of the periodic is a stop (run_far's condition); k = 4 is past 2**64 - 1.
    grid = [2**53 + 1 + k * (2**62 + 1) for k in range(5)]
    stops = sorted({5, 70_001, 2**63 + 1, 2**64 - 1, *grid[:4]})
    largest: list[int] = []  # the largest single advance of each clock made, in order

    class Measured(SortedListClock):
        def advance(self, dt_ns: int) -> None:
            largest[-1] = max(largest[-1], dt_ns)
            super().advance(dt_ns)

    def measured(seed: int, bus: Bus, start_ns: int = 0) -> SortedListClock:
        largest.append(0)
        return Measured(seed, bus, start_ns=start_ns)

    whole = Reach(measured).run_far(pushes, stops, "x")
    assert largest == [2**62 + 1]  # one clock from 0, its longest advance one period
    largest.clear()
    limits: list[str] = []
    windows = Reach(measured, 2**16, True, limits.append).run_far(pushes, stops, "x")
    # One clock per stop (every gap is wider than 2**16 // 64), each advancing 1 ns.
    assert largest == [1] * 8
    assert max(largest) <= 2**16
    assert windows == whole
    assert whole.trace == [
        ("b", 5),
        ("e", 70_001),
        ("p", grid[0]),
        ("p", grid[1]),
        ("a", 2**63 + 1),
        ("c", 2**63 + 1),
        ("p", grid[2]),
        ("p", grid[3]),
        ("d", 2**64 - 1),
    ]
    assert whole.nows == stops
    # The last peek is the periodic's next firing, past 2**64 - 1.
    assert whole.peeks == [
        70_001,
        grid[0],
        grid[1],
        2**63 + 1,
        grid[2],
        grid[3],
        2**64 - 1,
        grid[4],
    ]
    assert limits == [
        "limited: x spans 18446744073709551615 ns, beyond the backend's declared horizon of "
        "65536 ns; it ran within the horizon from far starts (advances longer than the horizon "
        "were not exercised, C-CONF-4)"
    ]


def test_C_CONF_4_a_start_instead_of_an_advance_is_checked() -> None:
    def lying(seed: int, bus: Bus, start_ns: int = 0) -> SortedListClock:
        return SortedListClock(seed, bus)  # ignores start_ns

    with pytest.raises(
        AssertionError,
        match=r"^C-TIME-1: factory\(seed, bus, start_ns=100000\) made a clock at now_ns\(\)=0$",
    ):
        Reach(lying, 2**16, True).rig_at(100_000)
    rig = Reach(_sorted_list_at).rig_at(100_000)  # unlimited: made at 0, advanced there
    assert rig.clock.now_ns() == 100_000


def test_C_ERR_2_report_names_what_escaped_and_each_member_of_a_group() -> None:
    from simclock_conformance.kit._suite_support import _refused

    class Halt(BaseException):
        pass

    with pytest.raises(pytest.fail.Exception) as info, _refused(Halt, "C-ERR-2", "advance(10)"):
        raise BaseExceptionGroup("halted", [ValueError("x"), KeyboardInterrupt()])
    assert str(info.value) == (
        "C-ERR-2: advance(10) raised BaseExceptionGroup of [ValueError: x, "
        "KeyboardInterrupt]; expected Halt"
    )
