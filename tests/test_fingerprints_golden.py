"""Golden traces of the scenario runner: fingerprints and recordings that must never change.

``tests/data/fingerprints_golden.json`` holds, for the pendulum example and the
scenarios of ``tests/data/scenarios/``, several seeds in every execution mode:
the run's fingerprint (C-X-FP), its counts, stats and metrics (the columns of a
sweep's table, C-SWEEP-1), and for recorded runs a digest of every MCAP message
record plus the fingerprint of its replay (C-REP-4). The same trace in every
mode is C-MODE-1; the same trace whatever the chunk size is C-ADV-5.

Regenerate only for an intended change of the trace (never to make this pass):
``SIMCLOCK_WRITE_GOLDEN=1 python -m pytest tests/test_fingerprints_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mujoco")

from mcap.reader import make_reader

from simclock.recording._clock import ReplayClock
from simclock.recording._fingerprint import Fingerprinter
from simclock.sim._scenario import run_scenario
from simclock.sim._scenario_file import MODES, load_scenario

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "fingerprints_golden.json"
SCENARIOS = {
    "pendulum": ROOT / "examples" / "pendulum.toml",
    "pendulum_episodes": ROOT / "tests" / "data" / "scenarios" / "pendulum_episodes.toml",
    "pendulum_latency": ROOT / "tests" / "data" / "scenarios" / "pendulum_latency.toml",
    "grid_devices": ROOT / "tests" / "data" / "scenarios" / "grid_devices.toml",
}
# (scenario, seed, mode, chunk_ns, recorded): the full 10 s pendulum in two modes, the
# short scenarios for three seeds in all five modes, two chunk sizes, recorded and not.
CASES: list[tuple[str, int, str, int, bool]] = [
    ("pendulum", 7, "deterministic_ci", 100_000_000, False),
    ("pendulum", 7, "unbounded", 100_000_000, True),
    ("pendulum", 12, "deterministic_ci", 100_000_000, False),
]
for _name in ("pendulum_episodes", "pendulum_latency", "grid_devices"):
    for _seed in (0, 1, 987_654_321):
        for _mode in MODES:
            CASES.append((_name, _seed, _mode, 100_000_000, False))
        CASES.append((_name, _seed, "deterministic_ci", 100_000_000, True))
    CASES.append((_name, 1, "unbounded", 7_000_000, False))
    CASES.append((_name, 1, "realtime_paced", 3_000_000, True))


def _case_id(case: tuple[str, int, str, int, bool]) -> str:
    name, seed, mode, chunk, recorded = case
    return f"{name}-{seed}-{mode}-{chunk}{'-recorded' if recorded else ''}"


class _FakeWall:
    """A wall clock that moves 1 ms per reading and never sleeps: paced modes run at once."""

    def __init__(self) -> None:
        self.now = 0

    def source(self) -> int:
        self.now += 1_000_000
        return self.now

    def sleep(self, duration_ns: int) -> None:
        self.now += duration_ns


def _mcap_records(path: Path) -> Iterator[bytes]:
    """Every message record of the file, in file order: topic, times, sequence, data."""
    with path.open("rb") as stream:
        for _schema, channel, message in make_reader(stream).iter_messages(log_time_order=False):
            yield (
                b"%s %d %d %d "
                % (
                    channel.topic.encode(),
                    message.log_time,
                    message.publish_time,
                    message.sequence,
                )
                + message.data
                + b"\n"
            )


def _replay_fingerprint(path: Path) -> tuple[str, int]:
    with ReplayClock(path) as clock:
        fp = Fingerprinter()
        clock.bus.subscribe(None, fp)
        end = clock.info.end_ns
        clock.advance(end - clock.now_ns())
        return fp.hexdigest(), fp.count


def _observe(case: tuple[str, int, str, int, bool], tmp_path: Path) -> dict[str, Any]:
    name, seed, mode, chunk, recorded = case
    scenario = load_scenario(SCENARIOS[name])
    wall = _FakeWall()
    out = tmp_path / "run.mcap" if recorded else None
    result = run_scenario(
        scenario, seed=seed, mode=mode, chunk_ns=chunk, out=out, source=wall.source,
        sleep=wall.sleep,
    )  # fmt: skip
    got: dict[str, Any] = {
        "fingerprint": result.fingerprint,
        "messages": result.messages,
        "end_ns": result.end_ns,
        "samples": dict(result.samples),
        "stats": {k: [v.fired, v.failed, v.skipped, v.overrun] for k, v in result.stats.items()},
        "dropped_in_flight": result.dropped_in_flight,
        # repr: the exact float, as the sweep table stores it.
        "metrics": {k: repr(v) for k, v in result.metrics.items()},
    }
    if out is not None:
        digest = hashlib.sha256()
        count = 0
        for record in _mcap_records(out):
            digest.update(record)
            count += 1
        got["mcap_records"] = count
        got["mcap_records_sha256"] = digest.hexdigest()
        got["replay_fingerprint"], got["replay_messages"] = _replay_fingerprint(out)
    return got


def _load_golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_C_X_FP_C_MODE_1_scenario_fingerprints_unchanged(
    case: tuple[str, int, str, int, bool], tmp_path: Path
) -> None:
    got = _observe(case, tmp_path)
    key = _case_id(case)
    if os.environ.get("SIMCLOCK_WRITE_GOLDEN") == "1":
        golden = _load_golden() if GOLDEN.exists() else {}
        golden[key] = got
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    expected = _load_golden()[key]
    assert got == expected
    if "replay_fingerprint" in got:
        # C-REP-4: the replay of the recording is the run's trace.
        assert got["replay_fingerprint"] == got["fingerprint"]
        assert got["replay_messages"] == got["messages"]


def test_C_MODE_1_every_mode_has_one_trace() -> None:
    """The golden file itself: per (scenario, seed) one fingerprint whatever the mode or chunk."""
    golden = _load_golden()
    assert sorted(golden) == sorted(_case_id(c) for c in CASES)
    seen: dict[tuple[str, int], set[str]] = {}
    for case in CASES:
        seen.setdefault((case[0], case[1]), set()).add(golden[_case_id(case)]["fingerprint"])
    assert all(len(prints) == 1 for prints in seen.values()), seen
    # Different seeds give different traces: the noise streams are seeded (C-SEED-1).
    for name in ("pendulum_episodes", "pendulum_latency", "grid_devices"):
        assert len({next(iter(seen[(name, s)])) for s in (0, 1, 987_654_321)}) == 3
