"""simclock: a deterministic integer-nanosecond clock for robotics simulation.

The public API is re-exported here from the sub-packages, one per job:

- ``simclock.core``: time-ints, errors, the bus, random streams, the one
  scheduling core (``HeapSimClock``) that every other clock is built on;
- ``simclock.recording``: MCAP recording, fingerprints and replay;
- ``simclock.sim``: the physics grid, devices, sessions, MuJoCo, scenarios;
- ``simclock.realtime``: the host clock, periodic threads, paced runs;
- ``simclock.records``: the sampling-record scheduler of SPEC §12;
- ``simclock.sweeps``: seed sweeps on Dask (SPEC §16);
- ``simclock.cli``: the ``simclock`` command line.

Modules starting with ``_`` are private. The contract is ``SPEC.md``; clause
ids (``C-TIE-1``, ...) are cited in the docstrings of the code that
implements them.
"""

from simclock.core import (
    CONTRACT_VERSION,
    EVENTS_TOPIC,
    Bus,
    Callback,
    DrawObserver,
    Event,
    EventKind,
    Handle,
    HeapSimClock,
    Message,
    PeriodicStats,
    RandomSource,
    SeededRandomSource,
    SimClock,
    SimclockError,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
    Subscriber,
    SystemClock,
    callback_failure_event,
    callback_name,
    check_time_ns,
    publish_callback_failure,
    seconds_to_ns,
)
from simclock.realtime import (
    JitterStats,
    LatenessHistogram,
    MonotonicClock,
    PacingControl,
    PacingMode,
    PacingReport,
    PeriodicThreadHandle,
    run_paced,
    schedule_periodic_thread,
)
from simclock.recording import (
    Fingerprinter,
    RawPayload,
    Recorder,
    RecordingError,
    RecordingInfo,
    RecordingReader,
    ReplayClock,
    ReplayRandomSource,
    trace_fingerprint,
)
from simclock.sim import (
    ControllerConfig,
    ControllerSpec,
    ControllerStep,
    DeviceConfig,
    DeviceRead,
    GridClock,
    MujocoClock,
    PhysicsConfig,
    Policy,
    RunResult,
    Sample,
    Scenario,
    ScenarioError,
    SensorSpec,
    Session,
    StepHook,
    build_session,
    component_stream,
    episode_seed,
    load_scenario,
    run_scenario,
)
from simclock.sweeps import SweepAuditError, sweep

__version__ = "0.1.0"

__all__ = [
    "CONTRACT_VERSION",
    "EVENTS_TOPIC",
    "Bus",
    "Callback",
    "ControllerConfig",
    "ControllerSpec",
    "ControllerStep",
    "DeviceConfig",
    "DeviceRead",
    "DrawObserver",
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
    "PhysicsConfig",
    "Policy",
    "RandomSource",
    "RawPayload",
    "Recorder",
    "RecordingError",
    "RecordingInfo",
    "RecordingReader",
    "ReplayClock",
    "ReplayRandomSource",
    "RunResult",
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
    "StepHook",
    "Subscriber",
    "SweepAuditError",
    "SystemClock",
    "__version__",
    "build_session",
    "callback_failure_event",
    "callback_name",
    "check_time_ns",
    "component_stream",
    "episode_seed",
    "load_scenario",
    "publish_callback_failure",
    "run_paced",
    "run_scenario",
    "schedule_periodic_thread",
    "seconds_to_ns",
    "sweep",
    "trace_fingerprint",
]
