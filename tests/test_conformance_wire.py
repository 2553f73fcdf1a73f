"""The wire profile (SPEC §18): engine, driver runner, serve, driver failures, golden vectors.

Fast checks run in ``make test``; the full comparison of every self-check
backend in process and through the protocol is marked ``wire_full``
(``pytest -m wire_full tests/test_conformance_wire.py``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from backends.broken import BROKEN
from backends.wire_faults import MODES

from simclock_conformance.clauses._programs import CASES
from simclock_conformance.entry._vectors import VECTORS_DIR, generate, load
from simclock_conformance.entry._wire_run import WIRE_CLAUSES, LocalDriver, run_driver
from simclock_conformance.kit._harness import heap_factory, load_factory
from simclock_conformance.protocol import _engine
from simclock_conformance.protocol._backends import OracleBackend, PythonBackend, reference_raw
from simclock_conformance.protocol._driver import MAX_REPLY_BYTES, Driver, DriverError
from simclock_conformance.protocol._engine import MAX_FIRED, Engine
from simclock_conformance.protocol._wire_core import Session

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


def _local(spec: str, deadline_s: float = 10.0, **kwargs: Any) -> Any:
    factory = load_factory(spec)
    return run_driver([spec], make_driver=lambda: LocalDriver(factory, spec, deadline_s), **kwargs)


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
    report = _local(f"backends.broken:{name}", vectors=False, shrink=False)
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
    # Both C-TIE-1 programs break ties the same way: one root cause, the shorter one shown.
    assert "  first differing reply: fired order differs at equal now_ns\n" in proc.stdout
    assert "  for example, C-TIE-1: tie-1/push-order\n" in proc.stdout
    assert "first difference: fired[1]:" in proc.stdout
    assert '{"op":"create","clock":"c","seed":"0"}' in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_SM_ORACLE_a_wire_failure_is_shrunk_and_no_shrink_shows_the_first_one() -> None:
    # The other broken-backend runs of the tests pass --no-shrink (their verdicts are what
    # they check): here both ways, through serve, on a clock keeping times as float64.
    spec = "backends.broken:float64_times"
    args = ("--driver", "--no-vectors", "--clause", "SM-ORACLE")
    shrunk = _run(*args, "--", *SERVE, spec)
    first = _run(*args, "--no-shrink", "--", *SERVE, spec)
    for proc in (shrunk, first):
        assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert "SM-ORACLE  failed" in proc.stdout
        assert proc.stderr == ""

    def program(text: str, label: str) -> list[str]:
        lines = text.split(f"  {label}\n", 1)[1].splitlines()
        return [line.strip() for line in lines if line.startswith("    {")]

    minimal = program(shrunk.stdout, "minimal failing program (Hypothesis):")
    assert [re.sub(r'"clock":"sm\d+"', '"clock":"C"', line) for line in minimal] == [
        '{"op":"create","clock":"C","seed":"0"}',
        '{"op":"schedule","clock":"C","entry":"e0","at_ns":"18446744073709551615","on_fire":[]}',
    ]
    assert "first failing program" not in shrunk.stdout
    unshrunk = program(first.stdout, "first failing program (not minimised):")
    assert len(unshrunk) > len(minimal)
    assert "minimal failing program" not in first.stdout


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
    command = [sys.executable, FAULTS, mode]
    report = run_driver(command, clauses=["C-ADV-1", "C-ADV-2"], deadline_s=2.0, vectors=False)
    assert report.status("C-ADV-1") == "failed", report.table()
    # The driver was started again: the next clause ran on a fresh process.
    assert report.status("C-ADV-2") == "passed", report.table()
    assert report.verdict == "NOT CONFORMING"
    failed = next(t for t in report.tests["C-ADV-1"] if t.outcome == "failed")
    assert re.search(_EVIDENCE[mode], failed.message), failed.message
    assert f"| fault driver: tripping {mode}" in failed.message  # the tail of its stderr


class _Stalls:
    """A driver object that never answers ``advance`` by 10 and counts what it is sent."""

    received: ClassVar[list[str]] = []

    def request(self, obj: dict[str, Any]) -> dict[str, Any]:
        line = json.dumps(obj, separators=(",", ":"))
        _Stalls.received.append(line)
        if obj.get("dt_ns") == "10":
            raise DriverError(f"the driver gave no reply within 0.1 s to the request {line}", ["x"])
        return {"ok": True, "protocol": "1"}

    def kill(self) -> None:
        pass

    close = kill


def test_C_WIRE_5_a_request_that_got_no_reply_is_not_sent_again_after_the_same_requests() -> None:
    _Stalls.received = []
    session = Session(["stalls"], 0.1, make_driver=_Stalls)
    create = {"op": "create", "clock": "c", "seed": "0"}
    stuck = {"op": "advance", "clock": "c", "dt_ns": "10"}
    for test in range(3):
        session.mark()
        session.send(create)
        if test == 2:  # other requests before it: sent, and no reply again
            session.send({"op": "advance", "clock": "c", "dt_ns": "1"})
        with pytest.raises(DriverError) as caught:
            session.send(stuck)
        session.failed()
        want = (
            r"the driver gave no reply within 0\.1 s to the request "
            r'\{"op":"advance","clock":"c","dt_ns":"10"\}'
        )
        if test == 1:
            want += (
                r" \(not sent again: an earlier test of this run sent the same requests and got "
                r"no reply to this one\)"
            )
        assert re.fullmatch(want, caught.value.evidence), caught.value.evidence
        assert caught.value.stderr == ["x"]
    sent = [json.loads(line).get("dt_ns") for line in _Stalls.received if '"hello"' not in line]
    # The second test's advance by 10 never reached the driver; the third's did.
    assert sent == [None, "10", None, None, "1", "10"]


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
            f"{name} is stale: regenerate with python -m simclock_conformance.entry._vectors"
        )
    ids = [json.loads(line)["id"] for text in files.values() for line in text.splitlines()]
    assert len(ids) == len(set(ids))
    # Every clause program is a vector: the oracle and HeapSimClock agree on all of them.
    assert {c.id for c in CASES} <= set(ids)


def test_C_WIRE_7_the_pages_quote_the_vector_count_of_a_full_featured_clock() -> None:
    # The pages show a kit's heap clock replaying every vector (their commands are run by
    # the kits' tests, which cannot see the quoted line): its count is the vectors' count.
    pages = [
        ROOT / "docs" / "kits.md",
        *sorted((ROOT / "conformance" / "drivers").glob("*/README.md")),
    ]
    quoted = {
        str(page.relative_to(ROOT)): int(count)
        for page in pages
        for count in re.findall(r"golden vectors: (\d+) passed, 0 failed \(0 expected\), 0 not "
                                r"applicable \(features peek, rate, stats, start_ns, bits\)",
                                page.read_text(encoding="utf-8"))
    }  # fmt: skip
    assert len(quoted) >= 4, quoted
    assert quoted == dict.fromkeys(quoted, len(load()))


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
    from simclock_conformance.entry._vectors import _agreed, _as_case

    lines = [
        json.loads(line)
        for path in sorted((VECTORS_DIR / "regressions").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert lines, "the regression folder holds the minimal programs of failing runs"
    for line in lines:
        case, _ = _as_case(line)
        assert _agreed(case) == {k: v for k, v in line.items() if k != "stages"}, line["id"]


_HELLO = r'\{"op":"hello","protocol":"1"\}'


def test_C_WIRE_5_a_reply_longer_than_the_limit_fails_quoting_its_start() -> None:
    size = MAX_REPLY_BYTES + 5
    script = f"import sys; sys.stdin.readline(); print('x' * {size}, flush=True); sys.stdin.read()"
    driver = Driver([sys.executable, "-c", script])
    with pytest.raises(DriverError) as caught:
        driver.request({"op": "hello", "protocol": "1"})
    driver.kill()
    assert re.fullmatch(
        rf"the driver's reply to the request {_HELLO} of {size} bytes exceeds the 1048576-byte "
        rf"limit of a reply line; it starts 'x{{300}}\.\.\.\(truncated\)'",
        caught.value.evidence,
    ), caught.value.evidence


def test_C_WIRE_5_a_reply_line_that_never_ends_fails_at_the_deadline() -> None:
    script = (
        "import sys; sys.stdin.readline()\n"
        "while True: sys.stdout.write('y' * 65536); sys.stdout.flush()"
    )
    driver = Driver([sys.executable, "-c", script], deadline_s=2.0)
    with pytest.raises(DriverError) as caught:
        driver.request({"op": "hello", "protocol": "1"})
    driver.kill()
    assert re.fullmatch(
        rf"the driver's reply to the request {_HELLO} exceeds the 1048576-byte limit of a reply "
        rf"line \(more than \d+ bytes, not ended\); it starts 'y{{300}}\.\.\.\(truncated\)'; "
        r"no end of line within 2 s",
        caught.value.evidence,
    ), caught.value.evidence


def test_C_WIRE_5_stderr_lines_are_kept_short() -> None:
    script = "import sys; print('e' * 100000, file=sys.stderr); print('[1]', flush=True)"
    driver = Driver([sys.executable, "-c", script])
    with pytest.raises(DriverError, match=r"not one JSON object: '\[1\]'"):
        driver.request({"op": "hello", "protocol": "1"})
    driver.kill()
    assert driver.stderr_tail() == ["e" * 500 + "...(truncated)"]


def test_C_WIRE_5_an_advance_that_never_ends_is_stopped_at_the_firing_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # float_seconds_grid at 2**63 ns: adding 1 ns in float seconds changes nothing, so the
    # periodic fires at one time forever; the engine stops the advance at MAX_FIRED firings.
    assert MAX_FIRED == MAX_REPLY_BYTES // 27
    monkeypatch.setattr(_engine, "MAX_FIRED", 50)
    engine = Engine(PythonBackend(load_factory("backends.broken:float_seconds_grid"), "fsg"))
    engine.handle({"op": "create", "clock": "c", "seed": "0"})
    far = str(2**63)
    periodic = {"op": "schedule_periodic", "clock": "c", "entry": "p", "period_ns": "1"}
    assert engine.handle({**periodic, "phase_ns": far, "on_fire": []})["ok"] is True
    reply = engine.handle({"op": "advance", "clock": "c", "dt_ns": str(2**63 + 10)})
    assert reply == {
        "ok": False,
        "error": "internal",
        "message": "the advance fired more than 50 callbacks, more than one reply can carry; "
        "it was stopped (a periodic stuck at one time fires forever)",
        "now_ns": far,
        "next_event_ns": far,
        "stored": "1",
    }


def test_C_WIRE_3_stored_without_a_size_method_counts_the_live_entries() -> None:
    # The protocol-only backend has no heap_size(): stored is what it must hold at least.
    engine = Engine(PythonBackend(load_factory("backends.minimal:factory"), "minimal"))
    engine.handle({"op": "create", "clock": "c", "seed": "0"})
    spawn = [{"do": "schedule", "delay_ns": "100"}]
    for entry, at, on_fire in (("a", "5", spawn), ("b", "6", []), ("c", "50", [])):
        engine.handle(
            {"op": "schedule", "clock": "c", "entry": entry, "at_ns": at, "on_fire": on_fire}
        )
    periodic = {"op": "schedule_periodic", "clock": "c", "entry": "p", "period_ns": "4"}
    assert engine.handle({**periodic, "phase_ns": "0", "on_fire": []})["stored"] == "4"
    assert engine.handle({"op": "cancel", "clock": "c", "entry": "c"})["stored"] == "3"
    # a and b fired once (gone), a's child a.0 is pending, p stays.
    assert engine.handle({"op": "advance", "clock": "c", "dt_ns": "10"})["stored"] == "2"
    assert engine.handle({"op": "cancel", "clock": "c", "entry": "p"})["stored"] == "1"


def test_C_WIRE_5_local_driver_has_the_same_deadline_as_a_process() -> None:
    report = _local("backends.hang:in_stdlib", clauses=["C-ADV-1"], deadline_s=1.0, vectors=False)
    assert report.status("C-ADV-1") == "failed", report.table()
    failed = next(t for t in report.tests["C-ADV-1"] if t.outcome == "failed")
    assert re.search(
        r"driver failure: the driver gave no reply within 1 s to the request "
        r'\{"op":"advance","clock":"c","dt_ns":"[0-9]+"\}',
        failed.message,
    ), failed.message


def test_C_RNG_3_serve_hands_a_malformed_label_to_the_backend() -> None:
    # The backend refuses it (ValueError, as the oracle does), or, if it accepts it, the
    # values it draws are its reply: the engine never refuses in the backend's place.
    request = {"op": "draw", "clock": "c", "labels": ["a//b"], "n": "2"}
    create = {"op": "create", "clock": "c", "seed": "0"}
    good = LocalDriver(heap_factory, "heap")
    good.request(create)
    reply = good.request(request)
    assert (reply["ok"], reply["error"]) == (False, "ValueError")
    replies = []
    for _ in range(2):  # two fresh drivers: the values are the backend's own, seeded
        loose = LocalDriver(load_factory("backends.broken:labels_unchecked"), "loose")
        loose.request(create)
        replies.append(loose.request(request))
    assert replies[0]["ok"] is True and len(replies[0]["values"]) == 2, replies[0]
    assert replies[1] == replies[0]


def test_C_WIRE_3_require_fails_what_a_missing_feature_would_leave_not_applicable() -> None:
    # The minimal backend offers no peek: C-X-PEEK is not applicable, unless required.
    minimal = [*SERVE, "backends.minimal:factory"]
    args = ("--driver", "--no-vectors", "--clause", "C-X-PEEK")
    plain = _run(*args, "--", *minimal)
    assert plain.returncode == 3, plain.stdout[-3000:]  # PARTIAL: one clause asked for
    assert "C-X-PEEK   not applicable" in plain.stdout
    required = _run(*args, "--require", "peek", "--", *minimal)
    assert required.returncode == 1, required.stdout[-3000:]
    assert "C-X-PEEK   failed" in required.stdout
    why = "the driver does not offer feature peek, which --require names (its hello offers stats)"
    assert f"  C-X-PEEK: case x-peek/earliest-live: {why}\n" in required.stdout
    vectors = _run("vectors", "--require", "peek", "--driver", "--", *minimal)
    assert vectors.returncode == 1
    lines = vectors.stdout.splitlines()
    assert lines[0] == (
        f"golden vectors: {len(load()) - 37} passed, 2 failed (0 expected), 35 not applicable "
        "(features stats)"
    )
    assert lines[1:] == [f"FAILED x-peek/earliest-live: {why}", f"FAILED x-peek/exact-far: {why}"]
    unknown = _run("vectors", "--require", "teleport", "--driver", "--", *minimal)
    assert unknown.returncode == 2
    assert unknown.stderr.splitlines()[-1] == (
        "python -m simclock_conformance vectors: error: argument --require: invalid choice: "
        "'teleport' (choose from 'peek', 'rate', 'stats', 'start_ns', 'bits')"
    )
