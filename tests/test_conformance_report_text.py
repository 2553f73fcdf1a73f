"""The report's root causes and text (C-CONF-3): each defect once, each failed test once.

Four backends of ``tests/backends/broken.py`` run through
``simclock_conformance.run(..., shrink=False)`` in subprocesses started together
(one module fixture); the rest are unit tests of the key and the messages.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis.errors import FlakyStrategyDefinition
from wire_drivers import cpp_driver

from simclock_conformance import ClockConformance, load_factory
from simclock_conformance.kit._reach import Reach
from simclock_conformance.kit._watchdog import RAISED, ConformanceTimeout
from simclock_conformance.report._explain import explain
from simclock_conformance.report._outcome import Outcome
from simclock_conformance.report._report import BackendReport
from simclock_conformance.report._rootkey import root_key

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
BACKENDS = ("lifo_ties", "floats_accepted", "peek_sees_cancelled", "failure_path_name_error")
FIRED_ORDER = "first differing reply: fired order differs at equal now_ns"

_SCRIPT = """
import json, sys
import simclock_conformance
code, report = simclock_conformance.run(sys.argv[1], shrink=False, quiet=True)
sys.stdout.flush()
print("\\n@@REPORT@@" + json.dumps({"code": code, "report": report}))
"""


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[str, int, dict[str, Any]]]:
    """``name -> (text report, exit code, JSON report)`` of each backend of BACKENDS."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", _SCRIPT, f"backends.broken:{name}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,  # file names in root causes are relative to it
        )
        for name in BACKENDS
    }
    out: dict[str, tuple[str, int, dict[str, Any]]] = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        text, marker, data = stdout.rpartition("\n@@REPORT@@")
        assert marker, stdout[-3000:] + stderr[-3000:]
        result = json.loads(data)
        out[name] = (text, result["code"], result["report"])
    return out


def _line_of(path: Path, text: str) -> int:
    (number,) = [i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return number


def _failed_tests(report: dict[str, Any]) -> list[str]:
    return [t["name"] for r in report["clauses"] for t in r["tests"] if t["outcome"] == "failed"]


def test_C_CONF_3_root_causes_of_broken_backends_are_one_key_per_defect(
    runs: dict[str, tuple[str, int, dict[str, Any]]],
) -> None:
    name_error = _line_of(TESTS / "backends" / "broken.py", "publish_failure(self.bus")
    expected = {
        "lifo_ties": [FIRED_ORDER],
        "floats_accepted": ["first differing reply: ok true where false expected"],
        "peek_sees_cancelled": ["first differing reply: next_event_ns differs"],
        # The in-process programs answer "internal" where the backend raised: the same root
        # as its Python tests; the determinism program stops on a halt it did not expect.
        "failure_path_name_error": [
            f"NameError raised in tests/backends/broken.py:{name_error} (_report)",
            "first differing reply: ok false where true expected with error halted",
        ],
    }
    # Only the defect's own clause (and the state machine) fail; the rest are blocked.
    failed = {
        "lifo_ties": ["C-TIE-1", "SM-ORACLE"],
        "floats_accepted": ["C-TIME-3"],
        "peek_sees_cancelled": ["C-X-PEEK", "SM-ORACLE"],
        # C-DET-1's program stops where the exception escapes: charged to C-ERR-1.
        "failure_path_name_error": ["C-ERR-1", "SM-ORACLE"],
    }  # fmt: skip
    for name, (_, code, report) in runs.items():
        assert (code, report["verdict"], report["failed"]) == (1, "NOT CONFORMING", failed[name])
        causes = report["root_causes"]
        assert [c["cause"] for c in causes] == expected[name], name
        grouped = [t for c in causes for t in c["tests"]]
        assert sorted(grouped) == sorted(_failed_tests(report)), name  # each test exactly once


def test_C_CONF_3_lifo_text_report_shows_one_root_cause_and_each_test_once(
    runs: dict[str, tuple[str, int, dict[str, Any]]],
) -> None:
    text, _, report = runs["lifo_ties"]
    lines = text.splitlines()
    assert len(lines) < 150, len(lines)
    (cause,) = report["root_causes"]
    at = lines.index(f"ROOT CAUSE in {len(cause['tests'])} tests of {', '.join(cause['clauses'])}:")
    assert lines[at + 1 : at + 3] == [f"  {FIRED_ORDER}", f"  tests: {', '.join(cause['tests'])}"]
    assert lines[at + 3].startswith("  for example, ")
    assert not [line for line in lines if line.startswith(("FAILED", "Traceback", "_____"))]
    for test in cause["tests"]:
        # Named in the tests line, and at most once more as the example.
        assert text.count(test + ",") + text.count(test + "\n") <= 2, test
    assert text.count("ROOT CAUSE") == 1


def test_C_CONF_3_a_fixed_program_is_shown_up_to_its_failing_request(
    runs: dict[str, tuple[str, int, dict[str, Any]]],
) -> None:
    text, _, report = runs["floats_accepted"]
    (row,) = [r for r in report["clauses"] if r["id"] == "C-TIME-3"]
    (test,) = [
        t for t in row["tests"] if t["name"] == "test_C_TIME_3_program[time-3/wire-numbers-refused]"
    ]
    assert test["message"].startswith(
        "C-TIME-3: case time-3/wire-numbers-refused, request 7 of 44: "
        '{"op":"advance","clock":"c","dt_ns":1.5}\n'
        "  first difference: ok: expected False, observed True\n"
        '  expected reply: {"ok":false,"error":"TypeError",'
    )
    assert test["program_kind"] == "fixed"
    program = test["program"].splitlines()
    assert (len(program), program[0], program[-1]) == (
        7,
        '{"op":"create","clock":"c","seed":"0"}',
        '{"op":"advance","clock":"c","dt_ns":1.5}',
    )
    # Both failures of C-TIME-3 accept a float: one root cause, the program test its example.
    (cause,) = report["root_causes"]
    assert cause["tests"] == [
        "test_C_TIME_3_non_time_ints_are_refused",
        "test_C_TIME_3_program[time-3/wire-numbers-refused]",
    ]
    shown = "".join(f"      {line}\n" for line in program)
    assert (
        "  for example, C-TIME-3: test_C_TIME_3_program[time-3/wire-numbers-refused]\n"
        f"    {test['message'].splitlines()[0]}\n"
    ) in text
    assert f"    program (fixed, up to the failing request):\n{shown}" in text
    assert "minimal failing program" not in text


def test_C_CONF_3_an_unshrunk_state_machine_program_says_so(
    runs: dict[str, tuple[str, int, dict[str, Any]]],
) -> None:
    text, _, report = runs["peek_sees_cancelled"]
    (row,) = [r for r in report["clauses"] if r["id"] == "SM-ORACLE"]
    (test,) = row["tests"]
    assert test["program_kind"] == "first"
    assert test["program"].startswith("state = ClockVersusOracle()\n")
    assert "(Hypothesis)" not in text
    # Its group's example is the shorter fixed program; shown alone, the label says so.
    rep = BackendReport("x:y")
    rep.add("SM-ORACLE", Outcome(test["name"], "failed", test["message"], program=test["program"],
                                 program_kind=test["program_kind"]))  # fmt: skip
    assert "  first failing program (not minimised):\n    state = ClockVersusOracle()\n" in (
        rep.table()
    )


@pytest.mark.parametrize(
    ("message", "key"),
    [
        (
            'C-TIE-1: case tie-1/x, request 9 of 10: {"op":"advance","clock":"c","dt_ns":"5"}\n'
            "  first difference: fired[1]: expected {'entry': 'z', 'now_ns': '5'}, "
            "observed {'entry': 'a', 'now_ns': '5'}",
            FIRED_ORDER,
        ),
        (
            "C-ADV-1: firings of advance(10): expected [('a', 5), ('c', 5)], observed "
            "[('c', 5), ('a', 5)]; first difference at item 0: expected ('a', 5), "
            "observed ('c', 5)",
            FIRED_ORDER,
        ),
        (
            "SM-ORACLE: firing traces differ; first difference at index 0: backend ('5', 1057), "
            "oracle ('0', 1057)",
            FIRED_ORDER,
        ),
        (
            "C-ERR-1: failure events (at_ns, callback, error_type): expected [(1, 'f', 'E')], "
            "observed [(1, 'g', 'E')]; first difference at item 0: expected (1, 'f', 'E'), "
            "observed (1, 'g', 'E')",
            FIRED_ORDER,
        ),
        (
            "C-ADV-2: case x, request 3 of 4: {}\n  first difference: fired[0]: expected "
            "{'entry': 'a', 'now_ns': '2'}, observed {'entry': 'a', 'now_ns': '4'}",
            "first differing reply: fired now_ns differs",
        ),
        (
            "C-CAN-2: firings: expected [('a', 1)], observed [('a', 1), ('b', 2)]; first "
            "difference at item 1: expected nothing, observed ('b', 2)",
            "first differing reply: fired: an entry too many",
        ),
        (
            "C-ERR-1: case x, request 3 of 4: {}\n  first difference: ok: expected True, "
            'observed False\n  expected reply: {"ok":true}\n'
            '  observed reply: {"ok":false,"error":"internal","message":"NameError: x"}',
            "first differing reply: ok false where true expected with error internal",
        ),
        (
            "C-TIME-2: case x, request 2 of 3: {}\n  first difference: now_ns: expected '3', "
            "observed '2'",
            "first differing reply: now_ns differs",
        ),
        (
            # A count of firings short of the grid's: an expected entry is missing.
            "C-PER-3: 20000 firings, expected 20001; program: a clock at 0 ns",
            "first differing reply: fired: an expected entry is missing",
        ),
    ],
)
def test_C_CONF_3_root_key_names_the_kind_of_difference_not_its_values(
    message: str, key: str
) -> None:
    assert root_key(message) == key


def test_C_CONF_3_exception_root_wins_and_groups_name_each_test_once() -> None:
    rep = BackendReport("x:y")
    order = "C-TIE-1: firings: expected [('a', 1), ('b', 1)], observed [('b', 1), ('a', 1)]; "
    diff = "first difference at item 0: expected ('a', 1), observed ('b', 1)"
    rep.add("C-TIE-1", Outcome("test_C_TIE_1_a", "failed", order + diff))
    rep.add("C-ADV-1", Outcome("test_C_ADV_1_a", "failed", "C-ADV-1: " + diff))
    rep.add("C-ERR-1", Outcome("test_C_ERR_1_a", "failed", "C-ERR-1: " + diff, root="E raised"))
    assert rep.root_causes() == [
        {"cause": FIRED_ORDER, "clauses": ["C-ADV-1", "C-TIE-1"], "charged": ["C-TIE-1"],
         "tests": ["test_C_ADV_1_a", "test_C_TIE_1_a"]},
        {"cause": "E raised", "clauses": ["C-ERR-1"], "charged": ["C-ERR-1"],
         "tests": ["test_C_ERR_1_a"]},
    ]  # fmt: skip
    table = rep.table()
    assert table.count("first difference at item 0") == 2  # the example, and C-ERR-1's own
    assert "  for example, C-ADV-1: test_C_ADV_1_a\n    C-ADV-1: " + diff in table
    assert table.endswith("FAILED C-ERR-1: test_C_ERR_1_a\n  C-ERR-1: " + diff)


def test_C_CONF_2_a_hang_while_hypothesis_builds_a_program_is_named_as_a_hang() -> None:
    RAISED.clear()
    RAISED.append(
        ConformanceTimeout(
            "SM-ORACLE: timed out after 1 s of CPU time (C-CONF-2 time limit per test); "
            "the backend was running mybackend.py:12 in advance"
        )
    )
    try:
        flaky = FlakyStrategyDefinition("Inconsistent data generation! ... external state?")
        extra = explain(flaky, "SM-ORACLE")
    finally:
        RAISED.clear()
    assert extra["message"] == (
        "SM-ORACLE: the backend hung while the state machine was building a program; timed "
        "out after 1 s of CPU time (C-CONF-2 time limit per test); the backend was running "
        "mybackend.py:12 in advance"
    )
    assert extra["timeout"] is True
    assert "external state" not in str(extra)


def test_C_CONF_3_C_PER_3_message_names_the_schedule_and_the_advances() -> None:
    reach = Reach(load_factory("backends.broken:float_seconds_grid"))
    with pytest.raises(AssertionError) as info:
        ClockConformance().test_C_PER_3_no_drift_over_many_firings(reach)
    assert str(info.value).split("\nassert ", 1)[0] == (
        "C-PER-3: 20000 firings, expected 20001; program: a clock at 0 ns; "
        "schedule_periodic(333333333, cb, 1000000000000007); advance(1000000000000007); "
        "advance(1666666665000) 4 times"
    )


def test_C_CONF_3_the_report_example_of_backends_md_matches_a_lifo_run(
    runs: dict[str, tuple[str, int, dict[str, Any]]],
) -> None:
    page = (ROOT / "docs" / "backends.md").read_text(encoding="utf-8")
    start = page.index("```text\nC-ADV-1 ") + len("```text\n")
    example = page[start : page.index("```", start)]
    # "..." alone is any lines; inside a line, any text (as in the docs' console examples).
    pattern = "".join(
        r"(?:.*\n)*?" if line == "..." else re.escape(line).replace(r"\.\.\.", ".*") + r"\n"
        for line in example.splitlines()
    )
    text = runs["lifo_ties"][0]
    assert re.search(pattern, text + "\n"), text


def test_C_CONF_3_lifo_driver_report_shows_one_root_cause(tmp_path: Path) -> None:
    command = cpp_driver("BROKEN_LIFO_TIES")  # skips where g++ or cmake is missing
    out = tmp_path / "report.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "--driver", "--json", str(out), "--",
         *command],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert "C-TIE-1" in report["failed"]
    (cause,) = report["root_causes"]
    assert cause["cause"] == FIRED_ORDER
    assert sorted(cause["tests"]) == sorted(_failed_tests(report))
    lines = proc.stdout.splitlines()
    assert len(lines) < 150, len(lines)
    assert proc.stdout.count("ROOT CAUSE") == 1
    assert "    program (fixed, up to the failing request):\n" in proc.stdout
    assert not [line for line in lines if line.startswith("FAILED")]
