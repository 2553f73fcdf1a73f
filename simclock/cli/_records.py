"""``simclock records-demo``: the hand-checked fixture of SPEC §12, printed as JSON.

Five samples at 0, 10, 10, 5 and 20 µs for sensors S01, S02, S01, S03, S01
with 1000, 1100, 1200, 1300 and 1400 mV (tokens 0 to 4); token 3 is cancelled;
then ``run_until(10)`` and ``run_until(20)``. The output shows each run's
records and the counters after it, so the tie at 10 µs (token 1 before token
2, whatever the sensor names) and the discarded tombstone can be read off.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from simclock.cli._common import add_command
from simclock.records._sampling import SamplingEvents

__all__ = ["FIXTURE", "fixture_report", "handler", "register"]

FIXTURE: tuple[tuple[int, str, int], ...] = (
    (0, "S01", 1000),
    (10, "S02", 1100),
    (10, "S01", 1200),
    (5, "S03", 1300),
    (20, "S01", 1400),
)
"""``(at_us, sensor_id, millivolts)`` in insertion order: tokens 0 to 4."""
CANCELLED_TOKEN = 3
STOPS_US = (10, 20)


def fixture_report() -> dict[str, Any]:
    """Run the fixture on a fresh `SamplingEvents` and describe every step."""
    events = SamplingEvents()
    scheduled = []
    for at_us, sensor_id, millivolts in FIXTURE:
        token = events.schedule(at_us, sensor_id, millivolts)
        scheduled.append(
            {"token": token, "time_us": at_us, "sensor_id": sensor_id, "millivolts": millivolts}
        )
    cancelled = events.cancel(CANCELLED_TOKEN)
    report: dict[str, Any] = {
        "scheduled": scheduled,
        "cancel": {
            "token": CANCELLED_TOKEN,
            "result": cancelled,
            "pending_count": events.pending_count,
            "physical_heap_count": events.physical_heap_count,
        },
        "runs": [],
    }
    for stop in STOPS_US:
        records = events.run_until(stop)
        report["runs"].append(
            {
                "stop_us": stop,
                "records": records,
                "now_us": events.now_us,
                "pending_count": events.pending_count,
                "physical_heap_count": events.physical_heap_count,
            }
        )
    return report


def handler(args: argparse.Namespace) -> int:
    """Print the fixture report as indented JSON; returns 0."""
    del args  # the demo takes no options
    print(json.dumps(fixture_report(), indent=2))
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``records-demo`` sub-command."""
    add_command(
        subparsers,
        "records-demo",
        handler,
        help="print the SPEC §12 sampling-record fixture as JSON",
        description=(
            "Schedule five samples on simclock.records.SamplingEvents, cancel token 3, "
            "run until 10 us and 20 us, and print every step as JSON."
        ),
    )
