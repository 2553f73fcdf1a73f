"""The wire profile (SPEC §18): engine, driver runner, serve, driver failures, golden vectors.

Fast checks run in ``make test``; the full comparison of every self-check
backend in process and through the protocol is marked ``wire_full``
(``pytest -m wire_full tests/test_conformance_wire.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from backends.broken import BROKEN
from backends.wire_faults import MODES

from simclock_conformance._driver import Driver, DriverError
from simclock_conformance._engine import Engine, OracleBackend, reference_raw
from simclock_conformance._harness import heap_factory, load_factory
from simclock_conformance._programs import CASES
from simclock_conformance._vectors import VECTORS_DIR, generate
from simclock_conformance._wire_run import WIRE_CLAUSES, LocalDriver, run_driver

ROOT = Path(__file__).resolve().parents[1]
SERVE = [sys.executable, "-m", "simclock_conformance", "serve"]
FAULTS = str(ROOT / "tests" / "backends" / "wire_faults.py")


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    # The driver (serve) imports the self-check backends from tests/.
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "simclock_conformance", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def _local(spec: str, **kwargs: Any) -> Any:
    factory = load_factory(spec)
    return run_driver([spec], make_driver=lambda: LocalDriver(factory, spec), **kwargs)


def test_C_WIRE_3_engine_replies_field_for_field() -> None:
    engine = Engine(OracleBackend())
    assert engine.handle({"op": "hello", "protocol": "1"}) == {
        "ok": True,
        "protocol": "1",
        "backend": "simclock_oracles.ReferenceClock",
        "features": ["peek", "rate", "stats", "start_ns", "bits"],
    }
    assert engine.handle({"op": "hello", "protocol": "2"})["error"] == "unsupported"
    assert engine.handle({"op": "create", "clock": "c", "seed": "0"}) == {
        "ok": True,
        "now_ns": "0",
        "next_event_ns": None,
        "stored": "0",
    }
    assert engine.handle({"op": "create", "clock": "c", "seed": "0"})["error"] == "bad_request"
    on_fire = [{"do": "schedule", "delay_ns": "0"}, {"do": "advance", "dt_ns": "1"}]
    request = {"op": "schedule", "clock": "c", "entry": "a", "at_ns": "5", "on_fire": on_fire}
    assert engine.handle(request)["ok"] is True
    assert engine.handle(request)["error"] == "bad_request"  # an entry id is never reused
    halt = {"op": "schedule", "clock": "c", "entry": "h", "at_ns": "7", "on_fire": [{"do": "halt"}]}
    engine.handle(halt)
    fail = [{"do": "raise", "message": "boom"}, {"do": "schedule", "delay_ns": "0"}]
    engine.handle({"op": "schedule", "clock": "c", "entry": "f", "at_ns": "6", "on_fire": fail})
    assert engine.handle({"op": "advance", "clock": "c", "dt_ns": "10"}) == {
        "ok": False,
        "error": "halted",
        "entry": "h",
        "at_ns": "7",
        "fired": [
            {"entry": "a", "now_ns": "5", "nested": "RuntimeError"},
            {"entry": "a.0", "now_ns": "5"},
            {"entry": "f", "now_ns": "6"},
            {"entry": "h", "now_ns": "7"},
        ],
        "failures": [{"entry": "f", "at_ns": "6", "message": "boom"}],
        "now_ns": "7",
        "next_event_ns": None,
        "stored": "0",
    }
    for bad in (5, "1.5", "1e6", "-3", " 5", ""):
        reply = engine.handle({"op": "advance", "clock": "c", "dt_ns": bad})
        assert (reply["ok"], reply["error"], reply["now_ns"]) == (False, "TypeError", "7"), bad
    nested_bad = [{"do": "schedule", "delay_ns": 1}]
    reply = engine.handle(
        {"op": "schedule", "clock": "c", "entry": "n", "at_ns": "9", "on_fire": nested_bad}
    )
    assert (reply["ok"], reply["error"], reply["next_event_ns"]) == (False, "TypeError", None)
    assert engine.handle({"op": "frobnicate", "clock": "c"})["error"] == "bad_request"
    assert engine.handle({"op": "observe", "clock": "nope"})["error"] == "bad_request"
    assert engine.handle({"op": "drop", "clock": "c"}) == {
        "ok": True,
        "now_ns": "7",
        "next_event_ns": None,
        "stored": "0",
    }


def test_C_X_BITS_draw_is_simclocks_stream_bit_for_bit() -> None:
    engine = Engine(LocalDriver(heap_factory, "heap").engine.backend)
    engine.handle({"op": "create", "clock": "c", "seed": "11"})
    first = engine.handle({"op": "draw", "clock": "c", "labels": ["a", "b"], "n": "2"})
    more = engine.handle({"op": "draw", "clock": "c", "labels": ["/a/b"], "n": "1"})
    assert first["values"] + more["values"] == [str(v) for v in reference_raw(11, "/a/b", 3)]
    bad = engine.handle({"op": "draw", "clock": "c", "labels": ["a b"], "n": "1"})
    assert (bad["ok"], bad["error"]) == (False, "ValueError")


def test_C_WIRE_6_heap_through_the_engine_is_conforming_wire_profile_1() -> None:
    report = _local("simclock_conformance:heap_factory")
    assert report.verdict == "CONFORMING (wire profile 1)", report.table()
    assert report.clause_ids() == list(WIRE_CLAUSES)
    assert report.counts()["passed"] == len(WIRE_CLAUSES)


@pytest.mark.parametrize(
    "name", ["lifo_ties", "float64_times", "nested_advance_allowed", "floats_accepted"]
)
def test_C_WIRE_8_broken_backends_fail_their_clause_through_the_protocol(name: str) -> None:
    report = _local(f"backends.broken:{name}", vectors=False)
    clause = BROKEN[name][0]
    assert report.verdict == "NOT CONFORMING"
    assert clause in report.failed(), report.table()
    failed = [t for t in report.tests[clause] if t.outcome == "failed"]
    # Expected and observed, side by side, and the program as protocol lines.
    assert all(t.message.startswith(clause) for t in failed)
    if clause != "SM-ORACLE":
        assert any(
            "expected reply:" in t.message and "observed reply:" in t.message for t in failed
        )
        assert all(json.loads(line) for t in failed for line in t.program.splitlines())


def test_C_WIRE_8_serve_is_a_driver_conforming_wire_profile_1(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    proc = _run("--driver", "--json", str(out), "--", *SERVE, "simclock_conformance:heap_factory")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["verdict"] == "CONFORMING (wire profile 1)"
    assert [row["id"] for row in data["clauses"]] == list(WIRE_CLAUSES)
    assert "CONFORMING (wire profile 1)" in proc.stdout
    assert proc.stderr == ""


def test_C_WIRE_8_serve_of_a_broken_backend_names_the_clause_and_the_program() -> None:
    proc = _run(
        "--driver", "--no-vectors", "--clause", "C-TIE-1", "--", *SERVE, "backends.broken:lifo_ties"
    )
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "C-TIE-1    failed" in proc.stdout
    assert "FAILED C-TIE-1: tie-1/push-order" in proc.stdout
    assert "first difference: fired[1]:" in proc.stdout
    assert '{"op":"create","clock":"c","seed":"0"}' in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


_EVIDENCE = {
    "exit": r"the driver exited with status 3 while answering the request "
    r'\{"op":"advance","clock":"c","dt_ns":"10"\}',
    "crash": r"the driver was killed by signal 6 while answering the request",
    "close_stdout": r"the driver closed its stdout while answering the request .* but did not exit",
    "not_json": r"answered the request \{\"op\":\"advance\",\"clock\":\"c\",\"dt_ns\":\"10\"\} "
    r"with a line that is not one JSON object: 'advance done!'",
    # Read before the next request or as its reply, depending on timing: quoted either way.
    "noise": r"(a reply to nothing or stdout noise\)|with a line that is not one JSON object): "
    r"'debug: fired 5 entries'",
    # The second copy shifts the replies by one: found at the end of the case at the latest.
    "extra_reply": r"the driver wrote a line no request asked for \(a reply to nothing or stdout "
    r"noise\): '\{\"ok\":true,",
    "hang": r"the driver gave no reply within 2 s to the request "
    r'\{"op":"advance","clock":"c","dt_ns":"10"\}',
}


@pytest.mark.parametrize("mode", MODES)
def test_C_WIRE_5_a_misbehaving_driver_fails_its_clause_and_the_run_goes_on(mode: str) -> None:
    import re

    command = [sys.executable, FAULTS, mode]
    report = run_driver(command, clauses=["C-ADV-1", "C-ADV-2"], deadline_s=2.0, vectors=False)
    assert report.status("C-ADV-1") == "failed", report.table()
    # The driver was started again: the next clause ran on a fresh process.
    assert report.status("C-ADV-2") == "passed", report.table()
    assert report.verdict == "NOT CONFORMING"
    failed = next(t for t in report.tests["C-ADV-1"] if t.outcome == "failed")
    assert re.search(_EVIDENCE[mode], failed.message), failed.message
    assert f"| fault driver: tripping {mode}" in failed.message  # the tail of its stderr


def test_C_WIRE_5_a_driver_that_cannot_start_ends_with_a_report() -> None:
    report = run_driver(["/nonexistent/driver"], vectors=False)
    assert report.verdict == "NOT CONFORMING"
    assert report.failed() == list(WIRE_CLAUSES)
    message = report.tests["C-TIME-1"][0].message
    assert message.startswith("C-TIME-1: driver failure: could not start '/nonexistent/driver'")


def test_C_WIRE_1_driver_client_quotes_evidence() -> None:
    driver = Driver(
        [sys.executable, "-c", "import sys; print('hi', file=sys.stderr); print('[1]')"]
    )
    with pytest.raises(DriverError, match=r"with a line that is not one JSON object: '\[1\]'"):
        driver.request({"op": "hello", "protocol": "1"})
    driver.kill()


def test_C_WIRE_7_vectors_regenerate_identically() -> None:
    files = generate()
    assert sorted(files) == ["clauses.jsonl", "far_time.jsonl", "machine.jsonl", "streams.jsonl"]
    for name, text in files.items():
        assert (VECTORS_DIR / name).read_text(encoding="utf-8") == text, (
            f"{name} is stale: regenerate with python -m simclock_conformance._vectors"
        )
    ids = [json.loads(line)["id"] for text in files.values() for line in text.splitlines()]
    assert len(ids) == len(set(ids))
    # Every clause program is a vector: the oracle and HeapSimClock agree on all of them.
    assert {c.id for c in CASES} <= set(ids)


def test_C_WIRE_7_vectors_replay_with_expected_failures(tmp_path: Path) -> None:
    xfail = tmp_path / "xfail.txt"
    xfail.write_text("# known\ntie-1/push-order\n")
    proc = _run(
        "vectors",
        "--expected-failures",
        str(xfail),
        "--driver",
        "--",
        *SERVE,
        "simclock_conformance:heap_factory",
    )
    # HeapSimClock passes every vector: the listed one is reported as passing.
    assert proc.returncode == 1, proc.stdout
    assert "PASSED but listed as an expected failure: tie-1/push-order" in proc.stdout
    proc = _run("vectors", "--driver", "--", *SERVE, "backends.broken:lifo_ties")
    assert proc.returncode == 1
    assert "FAILED tie-1/push-order" in proc.stdout


@pytest.mark.wire_full
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_C_WIRE_8_every_broken_backend_through_the_protocol(name: str) -> None:
    report = _local(f"backends.broken:{name}", vectors=False)
    clause = BROKEN[name][0]
    if clause in WIRE_CLAUSES:
        assert clause in report.failed(), report.table()


def test_C_WIRE_7_regressions_still_hold_where_oracle_and_heap_agree() -> None:
    from simclock_conformance._vectors import _agreed, _as_case

    lines = [
        json.loads(line)
        for path in sorted((VECTORS_DIR / "regressions").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert lines, "the regression folder holds the minimal programs of failing runs"
    for line in lines:
        case, _ = _as_case(line)
        assert _agreed(case) == {k: v for k, v in line.items() if k != "stages"}, line["id"]
