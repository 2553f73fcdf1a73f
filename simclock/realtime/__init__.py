"""Real time: the host's monotonic clock, periodic threads and paced runs (SPEC §9-§10)."""

from simclock.realtime._jitter import JitterStats, LatenessHistogram
from simclock.realtime._monotonic import MonotonicClock
from simclock.realtime._pacing import (
    PacingControl,
    PacingMode,
    PacingReference,
    PacingReport,
    run_paced,
)
from simclock.realtime._realtime import PeriodicThreadHandle, schedule_periodic_thread

__all__ = [
    "JitterStats",
    "LatenessHistogram",
    "MonotonicClock",
    "PacingControl",
    "PacingMode",
    "PacingReference",
    "PacingReport",
    "PeriodicThreadHandle",
    "run_paced",
    "schedule_periodic_thread",
]

# Each public name reports its public namespace (simclock, simclock.lowlevel, ...).
from simclock.core._public import fixup_module_metadata

fixup_module_metadata("simclock.realtime", globals(), __all__)
