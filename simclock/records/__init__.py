"""Public home of the sampling-record scheduler of SPEC §12.

``from simclock.records import SamplingEvents``. The implementation lives in
``simclock.records._sampling``; see its docstring for the scope (no callbacks, no wall
clock, no deadline guarantee) and the exact ``ValueError`` messages.
"""

from simclock.records._sampling import (
    MILLIVOLTS_MAX,
    MILLIVOLTS_MIN,
    SENSOR_ID_PATTERN,
    SamplingEvents,
    SamplingRecord,
)

__all__ = [
    "MILLIVOLTS_MAX",
    "MILLIVOLTS_MIN",
    "SENSOR_ID_PATTERN",
    "SamplingEvents",
    "SamplingRecord",
]
