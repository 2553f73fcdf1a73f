"""C-CONF-1: the verdict is CONFORMING only for a full run where every mandatory test passed.

The CLI and plugin cases (PARTIAL for ``--clause`` and ``-k``) are in
``test_conformance_cli.py``; here are the subclass cases: a subclass that
overrides, removes or skips a mandatory test is INCOMPLETE and the report
names the tests; a salted-hash backend handed over as a lambda is NOT
CONFORMING, because the cross-process tests ship the lambda to a subprocess
instead of skipping (they never say "passed" without running).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from backends import messages

from simclock import Bus
from simclock_conformance import (
    BackendReport,
    ClockConformance,
    Outcome,
    Rig,
    load_factory,
    make_rig,
)
from simclock_conformance.kit._reach import Reach, advance_to
from simclock_conformance.kit._suite_support import trace_difference

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One report per subclass of ``backends/subclass_cases.py``."""
    out = tmp_path_factory.mktemp("verdicts") / "report.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT), str(ROOT / "conformance")]),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-c", os.devnull, "-p", "no:looptime_plugin", "--rootdir", str(TESTS),
         str(TESTS / "backends" / "subclass_cases.py"), "--simclock-json", str(out),
         "-k", "C_TIE_1 or C_SCH_2 or C_DET_1 or C_RNG_2"],
        capture_output=True, text=True, env=env, cwd=TESTS, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-2000:]
    data = json.loads(out.read_text())
    return {r["backend"].rsplit("::", 1)[-1]: r for r in data}


def test_C_CONF_1_overridden_and_removed_tests_make_the_verdict_incomplete(
    reports: dict[str, dict[str, Any]],
) -> None:
    r = reports["TestOverridesMandatoryTests"]
    assert (r["verdict"], r["conforming"], r["failed"]) == ("INCOMPLETE", False, [])
    assert r["incomplete"] == [
        "test_C_SCH_2_schedule_returns_frozen_handle (overridden: TestOverridesMandatoryTests "
        "overrides ClockConformance.test_C_SCH_2_schedule_returns_frozen_handle)",
        "test_C_TIE_1_equal_times_fire_in_push_order (overridden: TestOverridesMandatoryTests "
        "overrides ClockConformance.test_C_TIE_1_equal_times_fire_in_push_order)",
    ]
    statuses = {row["id"]: row["status"] for row in r["clauses"]}
    assert statuses["C-TIE-1"] == statuses["C-SCH-2"] == "incomplete"


def test_C_CONF_1_a_mandatory_clause_cannot_be_not_applicable(
    reports: dict[str, dict[str, Any]],
) -> None:
    r = reports["TestSkipsMandatoryTest"]
    assert (r["verdict"], r["failed"]) == ("INCOMPLETE", [])
    why = "(not applicable: no subprocesses on our target)"
    assert r["incomplete"] == [
        f"test_C_DET_1_same_run_across_processes_and_hash_seeds {why}",
        f"test_C_RNG_2_children_stable_across_processes {why}",
    ]
    statuses = {row["id"]: row["status"] for row in r["clauses"]}
    assert statuses["C-DET-1"] == statuses["C-RNG-2"] == "incomplete"


def test_C_CONF_1_salted_hash_lambda_is_rejected_by_the_cross_process_tests(
    reports: dict[str, dict[str, Any]],
) -> None:
    r = reports["TestSaltedHashLambda"]
    assert r["verdict"] == "NOT CONFORMING"
    assert r["failed"] == ["C-DET-1", "C-RNG-2"]
    rng2 = next(row for row in r["clauses"] if row["id"] == "C-RNG-2")
    messages = [t["message"] for t in rng2["tests"] if t["outcome"] == "failed"]
    # This process hashes with its own seed: the numbers vary, the message's shape does not.
    number = r"-?\d+\.\d+(?:e-?\d+)?"
    numbers = rf"\[{number}(?:, {number})*\]"
    assert len(messages) == 1
    assert re.fullmatch(
        r"C-RNG-2: child streams of a subprocess with PYTHONHASHSEED=4242 against this "
        rf"process: \['\w+'\]: expected {numbers}, observed {numbers}; first difference at "
        rf"item \d+: expected {number}, observed {number}; derive them from a stable hash of "
        r"the label path, not hash\(\)",
        messages[0],
    ), messages[0]


def test_C_CONF_1_a_correct_lambda_factory_runs_the_cross_process_tests(
    reports: dict[str, dict[str, Any]],
) -> None:
    r = reports["TestCorrectLambda"]
    # Only -k's clauses ran: PARTIAL, with the cross-process tests passed, not skipped.
    assert (r["verdict"], r["failed"], r["incomplete"]) == ("PARTIAL", [], [])
    det = next(row for row in r["clauses"] if row["id"] == "C-DET-1")
    assert [(t["name"], t["outcome"]) for t in det["tests"]] == [
        ("test_C_DET_1_same_run_across_processes_and_hash_seeds", "passed"),
        ("test_C_DET_1_program[det-1/same-seed-same-run]", "passed"),
    ]


def test_C_CONF_1_verdict_order_and_clause_statuses() -> None:
    rep = BackendReport("x:y")
    rep.expect("C-TIE-1", "test_C_TIE_1_a")
    rep.expect("C-TIE-1", "test_C_TIE_1_b")
    assert (rep.status("C-TIE-1"), rep.verdict) == ("not run", "PARTIAL")
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_a", "passed"))
    assert rep.status("C-TIE-1") == "not run"  # one of its two tests did not run
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_b", "passed"))
    assert rep.status("C-TIE-1") == "passed"
    rep.add("C-X-RATE", Outcome("test_C_X_RATE_a", "not applicable", "not applicable: no"))
    assert rep.status("C-X-RATE") == "not applicable"
    rep.add("C-STEP-1", Outcome("test_C_STEP_1_a", "not applicable", "not applicable: no"))
    assert (rep.status("C-STEP-1"), rep.verdict) == ("incomplete", "INCOMPLETE")
    rep.add("C-TIE-1", Outcome("test_C_TIE_2_c", "failed", "C-TIE-1: lifo", root="E in f:1"))
    assert (rep.status("C-TIE-1"), rep.verdict, rep.conforming) == (
        "failed",
        "NOT CONFORMING",
        False,
    )


# -- C-CONF-3: every failure message says what was expected and what was observed ----------


def _message(test: Callable[[], None]) -> str:
    """The failure message of one suite test run directly on a broken backend."""
    with pytest.raises((AssertionError, pytest.fail.Exception)) as info:
        test()
    # As in the reports: without the "assert ..." explanation pytest's rewriting appends.
    return str(info.value).split("\nassert ", 1)[0]


def _rig(name: str) -> Rig:
    """A fresh clock of ``backends.broken:<name>``."""
    return make_rig(load_factory(f"backends.broken:{name}"), 0)


SUITE = ClockConformance()


def test_C_TIME_4_a_now_past_its_target_is_reported_before_any_arithmetic() -> None:
    # The next stop would make the suite's own advance(target - now) negative: refused first.
    reach = Reach(messages.now_rounds_up)
    assert _message(lambda: SUITE.test_C_TIME_4_exact_up_to_2_64_minus_1(reach)) == (
        "C-TIME-4: advance to 9007199254740993 ns left now_ns() at 9007199254740994 ns; "
        "expected 9007199254740993 ns"
    )
    assert _message(lambda: SUITE.test_C_TIE_1_far_ties_reached_by_long_advances(reach)) == (
        "C-TIME-4: advance to 9223372036854775809 ns left now_ns() at 9223372036854775810 ns; "
        "expected 9223372036854775809 ns"
    )


def test_C_TIME_2_a_now_already_past_the_next_stop_is_named_with_both_times() -> None:
    clock = messages.now_rounds_up(0, Bus())
    clock.advance(2**53 + 1)  # now_ns() says 2**53 + 2
    with pytest.raises(
        AssertionError,
        match=r"^C-TIME-2: now_ns\(\) is 9007199254740994 ns, past the next stop "
        r"9007199254740993 ns; expected at most 9007199254740993 ns \(an earlier advance left "
        r"now_ns\(\) beyond its target\?\)$",
    ):
        advance_to(clock, 2**53 + 1, "C-TIME-2")
    assert clock.now_ns() == 2**53 + 2  # nothing was advanced


def test_C_TIME_3_a_tie_defect_reads_as_one_with_both_traces() -> None:
    rig = _rig("lifo_ties")
    assert _message(lambda: SUITE.test_C_TIME_3_negative_refused_numpy_ints_accepted(rig)) == (
        "C-TIME-3: firings of entries made with numpy ints: expected [('p', 2), ('a', 4), "
        "('b', 4), ('p', 5)], observed [('p', 2), ('b', 4), ('a', 4), ('p', 5)]; first "
        "difference at item 1: expected ('a', 4), observed ('b', 4)"
    )


def test_C_TIME_3_an_accepted_float_says_what_was_expected() -> None:
    rig = _rig("floats_accepted")
    message = _message(lambda: SUITE.test_C_TIME_3_non_time_ints_are_refused(rig))
    assert message.startswith(
        "C-TIME-3: advance(1.0): expected TypeError, observed accepted; advance(0.5): expected "
        "TypeError, observed accepted; "
    )
    assert "; schedule at_ns(1.0): expected TypeError, observed SimclockValueError; " in message


def _program_message(name: str, clause: str, case: str) -> str:
    """The failure message of clause ``clause``'s program ``case`` on ``backends.broken:<name>``.

    What the report shows: the case, the failing request, the first difference and
    both replies (the protocol program itself is in the failure's note).
    """
    factory = load_factory(f"backends.broken:{name}")
    test = getattr(SUITE, f"test_{clause.replace('-', '_')}_program")
    return _message(lambda: test(factory, Reach(factory), case))


def test_C_CAN_1_a_wrong_firing_and_a_raising_cancel_both_show_both_replies() -> None:
    message = _program_message("lifo_ties", "C-CAN-1", "can-1/cancel-from-callbacks-and-between")
    assert message.splitlines()[:2] == [
        'C-CAN-1: case can-1/cancel-from-callbacks-and-between, request 12 of 18: {"op":"advance",'
        '"clock":"c","dt_ns":"10"}',
        "  first difference: fired[0]: expected {'entry': 'other', 'now_ns': '4'}, observed "
        "{'entry': 'victim', 'now_ns': '4'}",
    ]
    case = "can-1/cancel-from-callbacks-and-between"
    message = _program_message("second_cancel_raises", "C-CAN-1", case)
    assert message.splitlines() == [
        'C-CAN-1: case can-1/cancel-from-callbacks-and-between, request 4 of 18: {"op":"cancel",'
        '"clock":"c","entry":"early"}',
        "  first difference: ok: expected True, observed False",
        '  expected reply: {"ok":true,"now_ns":"0","next_event_ns":null,"stored":"0"}',
        '  observed reply: {"ok":false,"error":"ValueError","message":"SimclockValueError: '
        'handle already cancelled","now_ns":"0","next_event_ns":null,"stored":"0"}',
        "  charged to: C-CAN-1",
    ]


def test_C_ADV_4_a_nested_advance_shows_the_expected_refusal() -> None:
    message = _program_message("nested_advance_allowed", "C-ADV-4", "adv-4/nested-refused")
    assert message.splitlines()[:2] == [
        'C-ADV-4: case adv-4/nested-refused, request 5 of 6: {"op":"advance","clock":"c",'
        '"dt_ns":"4"}',
        "  first difference: fired[0]: expected {'entry': 'n', 'nested': 'RuntimeError', "
        "'now_ns': '2'}, observed {'entry': 'n', 'nested': 'accepted', 'now_ns': '2'}",
    ]


def test_C_ERR_1_a_stopped_advance_shows_the_first_missing_firing() -> None:
    rig = _rig("failure_stops_rest")
    assert _message(lambda: SUITE.test_C_ERR_1_failure_reported_on_bus_and_others_fire(rig)) == (
        "C-ERR-1: firings around the raising callbacks: expected [('periodic', 0), ('after', 3), "
        "('periodic', 4), ('later', 5), ('periodic', 8)], observed [('periodic', 0)]; first "
        "difference at item 1: expected ('after', 3), observed nothing"
    )
    rig = _rig("exceptions_escape")
    assert _message(lambda: SUITE.test_C_ERR_1_failure_reported_on_bus_and_others_fire(rig)) == (
        "C-ERR-1: advance(9) raised LookupError: lost from a callback; expected the failure "
        "reported as an event and advance to go on"
    )


def test_C_ADV_1_advance_zero_shows_what_was_due() -> None:
    message = _program_message("advance_zero_skips", "C-ADV-1", "adv-1/advance-zero")
    assert message.splitlines()[:2] == [
        'C-ADV-1: case adv-1/advance-zero, request 3 of 8: {"op":"advance","clock":"c",'
        '"dt_ns":"0"}',
        "  first difference: fired: expected 1 items, observed 0; first expected only: "
        "{'entry': 'z', 'now_ns': '0'}",
    ]


def test_C_CONF_3_a_refusal_that_did_not_happen_shows_the_expected_refusal() -> None:
    message = _program_message("past_accepted", "C-SCH-1", "sch-1/past-refused-now-allowed")
    assert message.splitlines()[:3] == [
        'C-SCH-1: case sch-1/past-refused-now-allowed, request 3 of 8: {"op":"schedule",'
        '"clock":"c","entry":"p9","at_ns":"9","on_fire":[]}',
        "  first difference: ok: expected False, observed True",
        '  expected reply: {"ok":false,"error":"ValueError","message":"SimclockValueError: '
        'at_ns must be >= now (10), got 9; schedule at now or later","now_ns":"10",'
        '"next_event_ns":null,"stored":"0"}',
    ]
    message = _program_message("step_zero", "C-STEP-1", "step-1/positive")
    assert message.splitlines()[:2] == [
        'C-STEP-1: case step-1/positive, request 2 of 5: {"op":"step_ns","clock":"c"}',
        "  first difference: step_ns: expected '1', observed '0'",
    ]


def test_C_CONF_3_the_first_difference_of_a_shorter_longer_or_long_trace() -> None:
    assert trace_difference([1, 2], [1]) == (
        "expected [1, 2], observed [1]; first difference at item 1: expected 2, observed nothing"
    )
    assert trace_difference([1], [1, 3]) == (
        "expected [1], observed [1, 3]; first difference at item 1: expected nothing, observed 3"
    )
    long = list(range(1000))
    text = trace_difference(long, [*long[:500], -1, *long[501:]])
    assert text.endswith("(1000 items); first difference at item 500: expected 500, observed -1")
    assert text.startswith("expected [0, 1, 2, ")
    assert len(text) < 1700


def test_C_CONF_3_the_message_is_the_same_in_the_text_and_json_reports(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT), str(ROOT / "conformance")]),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "backends.broken:lifo_ties",
         "--clause", "C-TIME-3", "--json", str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-2000:]
    expected = (
        "C-TIME-3: firings of entries made with numpy ints: expected [('p', 2), ('a', 4), "
        "('b', 4), ('p', 5)], observed [('p', 2), ('b', 4), ('a', 4), ('p', 5)]; first "
        "difference at item 1: expected ('a', 4), observed ('b', 4)"
    )
    report = json.loads(out.read_text())
    (row,) = [r for r in report["clauses"] if r["id"] == "C-TIME-3"]
    failed = [t for t in row["tests"] if t["outcome"] == "failed"]
    assert [t["name"] for t in failed] == [
        "test_C_TIME_3_negative_refused_numpy_ints_accepted",
        "test_C_TIME_3_program[time-3/wire-numbers-refused]",
    ]
    assert failed[0]["message"] == expected
    # The program test's message names the request and both replies, and its program is
    # the protocol lines to paste into a driver (the same text as a driver run shows).
    program = failed[1]["message"]
    assert program.startswith(
        "C-TIME-3: case time-3/wire-numbers-refused, request 43 of 44: "
        '{"op":"advance","clock":"c","dt_ns":"100"}\n  first difference: fired['
    ), program
    assert failed[1]["program"].splitlines()[0] == '{"op":"create","clock":"c","seed":"0"}'
    # Both failures have one root (ties broken newest first): the text shows the group
    # once, with one failure in full (the one with a program), as in the JSON.
    assert report["root_causes"] == [
        {
            "cause": "first differing reply: fired order differs at equal now_ns",
            "clauses": ["C-TIME-3"],
            "charged": ["C-TIE-1"],
            "tests": [t["name"] for t in failed],
        }
    ]
    shown = "".join(f"    {line}\n" for line in program.splitlines())
    assert f"  for example, C-TIME-3: {failed[1]['name']}\n{shown}" in proc.stdout
    assert "    program (fixed, up to the failing request):\n" in proc.stdout
    assert expected not in proc.stdout
