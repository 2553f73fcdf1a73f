"""simclock: a deterministic integer-nanosecond clock for robotics simulation.

The public API is re-exported here; modules starting with ``_`` are private.
The contract is ``SPEC.md``; clause ids (``C-TIE-1``, ...) are cited in the
docstrings of the code that implements them.
"""

from simclock._bus import EVENTS_TOPIC, Bus, Event, EventKind, Message, Subscriber
from simclock._devices import ControllerSpec, Sample, SensorSpec
from simclock._errors import (
    SimclockError,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)
from simclock._fingerprint import Fingerprinter, RawPayload, trace_fingerprint
from simclock._grid import GridClock, Policy
from simclock._heapclock import HeapSimClock, callback_name
from simclock._mujoco import MujocoClock
from simclock._pacing import PacingControl, PacingMode, PacingReport, run_paced
from simclock._protocols import (
    Callback,
    Handle,
    PeriodicStats,
    RandomSource,
    SimClock,
    SystemClock,
)
from simclock._random import SeededRandomSource
from simclock._realtime import (
    JitterStats,
    LatenessHistogram,
    MonotonicClock,
    PeriodicThreadHandle,
    schedule_periodic_thread,
)
from simclock._recorder import Recorder
from simclock._replay import (
    RecordingError,
    RecordingInfo,
    RecordingReader,
    ReplayClock,
    ReplayRandomSource,
)
from simclock._scenario import (
    Scenario,
    ScenarioError,
    build_session,
    load_scenario,
    run_scenario,
)
from simclock._session import Session, component_stream, episode_seed
from simclock._timeint import check_time_ns, seconds_to_ns

CONTRACT_VERSION = "1.0"
"""Version of SPEC.md this implementation follows; stored in recordings (C-MCAP-2)."""

__version__ = "0.1.0"

__all__ = [
    "CONTRACT_VERSION",
    "EVENTS_TOPIC",
    "Bus",
    "Callback",
    "ControllerSpec",
    "Event",
    "EventKind",
    "Fingerprinter",
    "GridClock",
    "Handle",
    "HeapSimClock",
    "JitterStats",
    "LatenessHistogram",
    "Message",
    "MonotonicClock",
    "MujocoClock",
    "PacingControl",
    "PacingMode",
    "PacingReport",
    "PeriodicStats",
    "PeriodicThreadHandle",
    "Policy",
    "RandomSource",
    "RawPayload",
    "Recorder",
    "RecordingError",
    "RecordingInfo",
    "RecordingReader",
    "ReplayClock",
    "ReplayRandomSource",
    "Sample",
    "Scenario",
    "ScenarioError",
    "SeededRandomSource",
    "SensorSpec",
    "Session",
    "SimClock",
    "SimclockError",
    "SimclockRuntimeError",
    "SimclockTypeError",
    "SimclockValueError",
    "Subscriber",
    "SystemClock",
    "__version__",
    "build_session",
    "callback_name",
    "check_time_ns",
    "component_stream",
    "episode_seed",
    "load_scenario",
    "run_paced",
    "run_scenario",
    "schedule_periodic_thread",
    "seconds_to_ns",
    "trace_fingerprint",
]
