"""One behaviour, five kits: the careless clock's transcript, byte for byte (SPEC §18, C-WIRE-3..5).

``conformance/transcripts/careless.requests.jsonl`` is sent to the scripted careless
clock of each driver kit (``examples/careless*``: C++, Rust, Go, Java, JavaScript) and to
the Python reference (``conformance/transcripts/careless.py`` through ``serve``); each
must answer exactly the lines of ``careless.replies.jsonl``. The clock breaks the
contract on purpose so that every rule of "What a kit reports" in ``docs/kits.md`` is
reached: a child schedule refused with ``ValueError`` and with another kind, an accepted
and a refused nested advance, an adapter's own error kind (``Deadlock``) from a nested
and a top-level advance, callback errors isolated, let out of ``advance`` and let out of
``schedule``, a halt, callbacks run on another thread and inside ``schedule``, key order
and JSON escapes. Each language skips with one reason where its toolchain is missing;
the builds are the kit tests' own (one cache, keyed by the sources).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from kit_go import go_build
from kit_java import careless_driver as java_careless
from kit_rust import rust_binaries
from wire_drivers import JS_DIR, cpp_driver

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "conformance" / "transcripts"
REQUESTS = TRANSCRIPTS / "careless.requests.jsonl"
REPLIES = TRANSCRIPTS / "careless.replies.jsonl"
_TIMEOUT_S = 120


def _python() -> list[str]:
    return [sys.executable, "-m", "simclock_conformance", "serve", "careless:clock"]


def _node() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH (the JavaScript driver kit needs Node.js >= 20)")
    return [node, str(JS_DIR / "examples" / "careless.mjs")]


DRIVERS: dict[str, Callable[[], list[str]]] = {
    "python": _python,
    "cpp": lambda: cpp_driver(example="careless_clock"),
    "rust": lambda: [rust_binaries().careless],
    "go": lambda: go_build("careless"),
    "java": java_careless,
    "js": _node,
}


def _replies(command: list[str]) -> bytes:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TRANSCRIPTS), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(
        command,
        input=REQUESTS.read_bytes(),
        capture_output=True,
        env=env,
        timeout=_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, (
        f"{command} exited {done.returncode}: {done.stderr.decode(errors='replace')[-2000:]}"
    )
    return done.stdout


@pytest.mark.parametrize("language", sorted(DRIVERS))
def test_C_WIRE_3_C_WIRE_4_C_WIRE_5_every_kit_answers_the_careless_transcript_byte_for_byte(
    language: str,
) -> None:
    got = _replies(DRIVERS[language]())
    want = REPLIES.read_bytes()
    if got != want:
        pairs = zip(got.splitlines(), want.splitlines(), strict=False)
        line, (mine, theirs) = next(
            ((k, p) for k, p in enumerate(pairs, 1) if p[0] != p[1]), (0, (b"", b""))
        )
        request = REQUESTS.read_text().splitlines()[line - 1] if line else ""
        pytest.fail(
            f"{language}: the replies differ from careless.replies.jsonl at line {line} "
            f"(request {request})\n  got:  {mine.decode(errors='replace')}\n"
            f"  want: {theirs.decode(errors='replace')}"
            + ("" if line else f"\n  got {len(got)} bytes, want {len(want)}"),
            pytrace=False,
        )


def test_the_careless_transcript_reaches_every_reporting_rule() -> None:
    """The reference replies hold each thing a kit must report, so the comparison covers it."""
    replies = [json.loads(line) for line in REPLIES.read_text().splitlines()]
    records = [rec for r in replies for rec in r.get("fired", [])]
    errors = [(r.get("error"), r.get("message", "")) for r in replies if r.get("ok") is False]
    assert {
        "entry": "a",
        "now_ns": "10",
        "refused": "ValueError",
        "nested": "RuntimeError",
    } in records
    assert any(rec.get("nested") == "internal" for rec in records)  # the adapter's Deadlock
    assert ("internal", "Deadlock: advance of 666 ns would deadlock") in errors
    assert ("RuntimeError", 'RuntimeError: sensor "imu0" lost') in errors  # let out of advance
    assert any(e == "TypeError" for e, _ in errors)
    assert any(r.get("error") == "halted" and "message" not in r for r in replies)
    failures = [f["message"] for r in replies for f in r.get("failures", [])]
    assert "at_ns 4242 is unlucky" in failures  # a child refused with TypeError fails the callback
    assert 'sensor "imu0" lost' not in failures  # an error let out of advance is no failure
    # The callbacks run inside schedule are in that schedule's reply (j's error is its error).
    for reply in replies:
        if any(rec.get("entry") in ("i", "j") for rec in reply.get("fired", [])):
            assert "step_ns" not in reply and reply.get("failures") == [], reply
    assert [r.get("fired") for r in replies if r.get("error") == "RuntimeError"][-1] == [
        {"entry": "j", "now_ns": "160"}
    ]
