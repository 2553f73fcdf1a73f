"""``simclock records-demo``: the hand-checked SPEC §12 fixture printed as JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from simclock.cli._main import main

# Worked out by hand from SPEC §12, not copied from program output:
#
# schedule() hands out tokens 0, 1, 2, ... in call order, so
#   token 0: 0 us  S01 1000 | token 1: 10 us S02 1100 | token 2: 10 us S01 1200
#   token 3: 5 us  S03 1300 | token 4: 20 us S01 1400
# cancel(3) finds a live entry -> true. Cancellation is lazy, so token 3 stays
# in the heap: pending_count 4 (live), physical_heap_count 5 (all five).
# run_until(10) returns live entries with time <= 10 in (time, token) order:
#   (0, 0); (5, 3) is a tombstone and is discarded; (10, 1) S02 before (10, 2)
#   S01 because token 1 < token 2, although "S01" < "S02" by name; (20, 4) is
#   late and stays. now_us = 10; one entry left, live: counts 1 and 1.
# run_until(20) returns (20, 4); the heap is empty: counts 0 and 0; now_us = 20.
EXPECTED: dict[str, Any] = {
    "scheduled": [
        {"token": 0, "time_us": 0, "sensor_id": "S01", "millivolts": 1000},
        {"token": 1, "time_us": 10, "sensor_id": "S02", "millivolts": 1100},
        {"token": 2, "time_us": 10, "sensor_id": "S01", "millivolts": 1200},
        {"token": 3, "time_us": 5, "sensor_id": "S03", "millivolts": 1300},
        {"token": 4, "time_us": 20, "sensor_id": "S01", "millivolts": 1400},
    ],
    "cancel": {"token": 3, "result": True, "pending_count": 4, "physical_heap_count": 5},
    "runs": [
        {
            "stop_us": 10,
            "records": [
                {"time_us": 0, "token": 0, "sensor_id": "S01", "millivolts": 1000},
                {"time_us": 10, "token": 1, "sensor_id": "S02", "millivolts": 1100},
                {"time_us": 10, "token": 2, "sensor_id": "S01", "millivolts": 1200},
            ],
            "now_us": 10,
            "pending_count": 1,
            "physical_heap_count": 1,
        },
        {
            "stop_us": 20,
            "records": [{"time_us": 20, "token": 4, "sensor_id": "S01", "millivolts": 1400}],
            "now_us": 20,
            "pending_count": 0,
            "physical_heap_count": 0,
        },
    ],
}


def test_S12_records_demo_prints_the_hand_checked_fixture(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["records-demo"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    # Exact text: the same keys in the same order, indented by two spaces.
    assert out == json.dumps(EXPECTED, indent=2) + "\n"


def test_S12_records_demo_runs_as_console_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "simclock", "records-demo"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == EXPECTED


def test_S12_records_demo_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "records-demo" in capsys.readouterr().out
