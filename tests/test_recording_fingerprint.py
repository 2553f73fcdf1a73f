"""C-X-FP: the run fingerprint, a stable hash of the ordered bus trace."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import simclock
from simclock import (
    EVENTS_TOPIC,
    Bus,
    Event,
    EventKind,
    Fingerprinter,
    HeapSimClock,
    Message,
    RawPayload,
    Recorder,
    ReplayClock,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
    trace_fingerprint,
)
from simclock.recording._fingerprint import canonical_json, trace_line


def _run(seed: int, *, extra: bool = False) -> str:
    clock = HeapSimClock(seed)
    fp = Fingerprinter()
    clock.bus.subscribe(None, fp)
    noise = clock.random_source().child("noise")

    def sense() -> None:
        clock.bus.publish("/imu", {"z": noise.normal(0.0, 1.0), "n": clock.now_ns()})

    def boom() -> None:
        raise RuntimeError("nope")

    clock.schedule_periodic(3, sense)
    clock.schedule_periodic(2, lambda: clock.bus.publish("/odom", [clock.now_ns()]))
    clock.schedule(6, boom)
    if extra:
        clock.schedule(7, lambda: clock.bus.publish("/extra", None))
    clock.advance(12)
    return fp.hexdigest()


def test_C_X_FP_hash_is_sha256_of_the_documented_lines() -> None:
    bus = Bus()
    fp = Fingerprinter()
    bus.subscribe(None, fp)
    bus.publish("/a", {"b": 1, "a": [1.5, None]}, stamp_ns=5)
    bus.publish(EVENTS_TOPIC, Event(EventKind.PACING_LAG, 5, {"lag_ns": 3}), stamp_ns=5)
    bus.publish("/r", RawPayload("cdr", "pkg/T", b"\x00\x01"), stamp_ns=9)
    expected = hashlib.sha256(
        b'5 0 /a json {"a":[1.5,null],"b":1}\n'
        b'5 1 /simclock/events event {"at_ns":5,"details":{"lag_ns":3},"kind":"PACING_LAG"}\n'
        b'9 2 /r raw {"data":"0001","encoding":"cdr","schema":"pkg/T"}\n'
    ).hexdigest()
    assert fp.hexdigest() == expected
    assert fp.count == 3


def test_C_X_FP_topics_outside_the_bus_alphabet_are_hashed_as_json_strings(
    tmp_path: Path,
) -> None:
    # Foreign recordings may have any topic: '/caméra' made Fingerprinter fail on the
    # ASCII encoding, so the message was skipped and the digest silently missed it.
    msgs = [
        Message("/caméra", 1, 0, {"x": 1}),
        Message("/a b", 2, 1, 1),
        Message("", 2, 2, None),
        Message("/ok", 3, 3, 2),
    ]
    expected = hashlib.sha256(
        b'1 0 "/cam\\u00e9ra" json {"x":1}\n2 1 "/a b" json 1\n2 2 "" json null\n3 3 /ok json 2\n'
    ).hexdigest()
    assert trace_fingerprint(msgs) == expected
    path = tmp_path / "odd.mcap"
    with Recorder(path, Bus(), seed=0) as rec:
        for m in msgs:
            rec.record(m)
    assert rec.fingerprint() == expected
    with ReplayClock(path) as clock:
        got: list[Message] = []
        clock.bus.subscribe(None, got.append)
        clock.advance(clock.end_ns())  # the stored fingerprint is checked at the end
    assert got == msgs


def test_C_X_FP_same_seed_same_fingerprint_and_any_change_differs() -> None:
    assert _run(1) == _run(1)
    assert _run(1) != _run(2)
    assert _run(1) != _run(1, extra=True)


def test_C_X_FP_stable_across_processes_and_hash_seeds() -> None:
    code = (
        "import sys; sys.path.insert(0, 'tests');"
        "from test_recording_fingerprint import _run; print(_run(3))"
    )
    outs = set()
    for hashseed in ("0", "123"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": hashseed, "PATH": ""},
        )
        outs.add(out.stdout.strip())
    assert outs == {_run(3)}


def test_C_X_FP_trace_fingerprint_equals_subscriber() -> None:
    msgs = [Message("/a", 0, 0, {"x": np.float64(0.25)}), Message("/b", 0, 1, np.arange(3))]
    fp = Fingerprinter()
    for m in msgs:
        fp(m)
    assert trace_fingerprint(msgs) == fp.hexdigest()
    assert trace_fingerprint([]) == hashlib.sha256(b"").hexdigest()


def test_C_X_FP_numpy_and_tuples_hash_as_their_json_form() -> None:
    a = trace_fingerprint([Message("/a", 1, 0, (np.int64(2), np.array([0.5, 1.0])))])
    b = trace_fingerprint([Message("/a", 1, 0, [2, [0.5, 1.0]])])
    assert a == b


def test_C_X_FP_canonical_json_is_a_fixed_point() -> None:
    import json

    value = {"z": [1e-300, -0.0, 2**70, "é\n"], "a": {"y": True, "x": None}}
    text = canonical_json(value)
    assert text == '{"a":{"x":null,"y":true},"z":[1e-300,-0.0,1180591620717411303424,"\\u00e9\\n"]}'
    assert canonical_json(json.loads(text)) == text
    assert trace_line(1, 2, "/t", "json", text).count(b"\n") == 1


def test_C_X_FP_unserialisable_payload_poisons_the_digest() -> None:
    bus = Bus()
    fp = Fingerprinter()
    bus.subscribe(None, fp)
    bus.publish("/a", object(), stamp_ns=0)
    # The bus reported the failure as an event (C-BUS-4), which was hashed.
    assert fp.count == 1
    with pytest.raises(
        SimclockRuntimeError,
        match=r"^the trace has no fingerprint: message sequence=0 on '/a' at 0 ns: payload is "
        r"not JSON-serialisable \(object <object object at 0x[0-9a-f]+>\); publish dicts, "
        r"lists, str, int, float, bool, None, numpy values or simclock.Event; make that "
        r"payload JSON-serialisable$",
    ):
        fp.hexdigest()


def test_C_X_FP_nan_is_refused() -> None:
    with pytest.raises(
        SimclockValueError,
        match=r"^payload has no canonical JSON form \(Out of range float values are not JSON "
        r"compliant(: nan)?\); replace NaN/Infinity with None or a string$",
    ):
        trace_fingerprint([Message("/a", 0, 0, float("nan"))])
    with pytest.raises(SimclockTypeError, match=r"^payload is not JSON-serialisable \(set"):
        trace_fingerprint([Message("/a", 0, 0, {1, 2})])


def test_fingerprint_api_is_exported() -> None:
    assert {"Fingerprinter", "RawPayload", "trace_fingerprint"} <= set(simclock.__all__)
