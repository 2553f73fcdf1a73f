"""The backend author's kit (issue 13 item 5): the README's minimal backend is CONFORMING.

The "writing a backend" section of ``conformance/README.md`` holds a complete
backend built from the public helpers (``check_time_ns``, ``Handle``,
``PeriodicStats``, ``SeededRandomSource``, ``callback_name``,
``publish_callback_failure``). This test extracts that code block, writes it
as ``mybackend.py`` and runs ``python -m simclock_conformance mybackend:make_clock``
from an empty directory, as a new user would: it must be CONFORMING, and the
directory must stay empty (C-CONF-5).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import simclock
import simclock.lowlevel
from simclock import Bus, EventKind

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "conformance" / "README.md"
START = "<!-- kit-example:start -->\n```python\n"
END = "```\n<!-- kit-example:end -->"


def kit_example() -> str:
    """The code block between the kit-example markers of the README."""
    text = README.read_text(encoding="utf-8")
    assert START in text and END in text, "conformance/README.md: kit-example markers missing"
    return text.split(START, 1)[1].split(END, 1)[0]


def test_C_CONF_5_readme_minimal_backend_is_conforming_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    src, work, out = tmp_path / "src", tmp_path / "work", tmp_path / "out"
    for d in (src, work, out):
        d.mkdir()
    (src / "mybackend.py").write_text(kit_example(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)
    proc = subprocess.run(
        [sys.executable, "-m", "simclock_conformance", "mybackend:make_clock", "--json",
         str(out / "report.json")],
        capture_output=True, text=True, env=env, cwd=work, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert (report["verdict"], report["failed"], report["incomplete"]) == ("CONFORMING", [], [])
    assert [r["id"] for r in report["clauses"] if r["status"] == "not applicable"] == ["C-X-RATE"]
    assert report["counts"]["not run"] == 0
    assert "36 passed, 0 failed, 0 incomplete, 1 not applicable, 0 not run: CONFORMING" in (
        proc.stdout
    )
    assert sorted(p.name for p in work.iterdir()) == []


class _Hostile(Exception):  # noqa: N818  (its name is what the event reports)
    def __str__(self) -> str:
        raise KeyError("no text")


def _cb() -> None:
    """A callback."""


@pytest.mark.parametrize(
    ("exc", "error_type", "message"),
    [
        (ValueError("bad"), "ValueError", "bad"),
        (_Hostile(), "_Hostile", "<str() of _Hostile raised>"),
    ],
)
def test_C_ERR_1_kit_failure_event_is_the_exact_event(
    exc: BaseException, error_type: str, message: str
) -> None:
    event = simclock.lowlevel.callback_failure_event(7, _cb, exc)
    assert (event.kind, event.at_ns) == (EventKind.SCHEDULER_CALLBACK_FAILED, 7)
    assert dict(event.details) == {
        "callback": "_cb",
        "error_type": error_type,
        "error_message": message,
    }
    bus = Bus()
    simclock.HeapSimClock(0, bus=bus).advance(7)  # the event is stamped with the clock's now
    seen: list[tuple[int, object]] = []
    bus.subscribe(simclock.EVENTS_TOPIC, lambda m: seen.append((m.stamp_ns, m.payload)))
    simclock.lowlevel.publish_callback_failure(bus, 7, _cb, exc)
    assert seen == [(7, event)]
