"""Real time: the host's and a vehicle's clocks, periodic threads, paced runs (SPEC §4, §9-§10)."""

from simclock.realtime._jitter import JitterStats, LatenessHistogram
from simclock.realtime._mavlink import TIMESYNC_TOPIC, MavlinkTimeSource
from simclock.realtime._monotonic import MonotonicClock
from simclock.realtime._pacing import (
    PacingControl,
    PacingMode,
    PacingReference,
    PacingReport,
    run_paced,
)
from simclock.realtime._phc import PhcTimeSource
from simclock.realtime._realtime import PeriodicThreadHandle, schedule_periodic_thread
from simclock.realtime._timesync_filter import TimesyncFilter, TimesyncState, TimesyncVerdict

__all__ = [
    "TIMESYNC_TOPIC",
    "JitterStats",
    "LatenessHistogram",
    "MavlinkTimeSource",
    "MonotonicClock",
    "PacingControl",
    "PacingMode",
    "PacingReference",
    "PacingReport",
    "PeriodicThreadHandle",
    "PhcTimeSource",
    "TimesyncFilter",
    "TimesyncState",
    "TimesyncVerdict",
    "run_paced",
    "schedule_periodic_thread",
]

# Each public name reports its public namespace (simclock, simclock.lowlevel, ...).
from simclock.core._public import fixup_module_metadata

fixup_module_metadata("simclock.realtime", globals(), __all__)
