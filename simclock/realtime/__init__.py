"""Real time: the host's monotonic clock, periodic threads and paced runs (SPEC §9-§10)."""

from simclock.realtime._pacing import (
    PacingControl,
    PacingMode,
    PacingReference,
    PacingReport,
    run_paced,
)
from simclock.realtime._realtime import (
    JitterStats,
    LatenessHistogram,
    MonotonicClock,
    PeriodicThreadHandle,
    schedule_periodic_thread,
)

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
