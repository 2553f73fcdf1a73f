"""simclock: a deterministic integer-nanosecond clock for robotics simulation.

``import simclock`` loads only the clock core (time-ints, errors, the bus,
random streams, ``HeapSimClock``); every other name is loaded on first use
(PEP 562), so recording, MuJoCo, real time and sweeps cost nothing until a
program touches them. The public API is in tiers:

- ``simclock``: the user API, every name below;
- ``simclock.lowlevel``: helpers for authors of clock backends;
- ``simclock.records``: the sampling-record scheduler of SPEC §12;
- ``simclock.sweeps``: the sweep table's tools.

The sub-packages (``simclock.core``, ``.recording``, ``.realtime``, ``.sim``,
``.sweeps``, ``.cli``) are the implementation's layers; modules starting with
``_`` are private. Every public name reports its public module
(``simclock.Scenario.__module__ == "simclock"``). The contract is ``SPEC.md``;
clause ids (``C-TIE-1``, ...) are cited in the docstrings of the code that
implements them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from simclock._version import __version__
from simclock.core import (
    COMPILED,
    CONTRACT_VERSION,
    EVENTS_TOPIC,
    Bus,
    Callback,
    DrawObserver,
    Event,
    EventKind,
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
    callback_name,
    seconds_to_ns,
)
from simclock.core._public import LOWLEVEL_NAMES, ROOT, ROOT_NAMES, fixup_module_metadata

if TYPE_CHECKING:
    from simclock.realtime import (
        TIMESYNC_TOPIC as TIMESYNC_TOPIC,
    )
    from simclock.realtime import (
        JitterStats as JitterStats,
    )
    from simclock.realtime import (
        LatenessHistogram as LatenessHistogram,
    )
    from simclock.realtime import (
        MavlinkTimeSource as MavlinkTimeSource,
    )
    from simclock.realtime import (
        MonotonicClock as MonotonicClock,
    )
    from simclock.realtime import (
        PacingControl as PacingControl,
    )
    from simclock.realtime import (
        PacingMode as PacingMode,
    )
    from simclock.realtime import (
        PacingReference as PacingReference,
    )
    from simclock.realtime import (
        PacingReport as PacingReport,
    )
    from simclock.realtime import (
        PeriodicThreadHandle as PeriodicThreadHandle,
    )
    from simclock.realtime import (
        PhcTimeSource as PhcTimeSource,
    )
    from simclock.realtime import (
        TimesyncFilter as TimesyncFilter,
    )
    from simclock.realtime import (
        TimesyncState as TimesyncState,
    )
    from simclock.realtime import (
        TimesyncVerdict as TimesyncVerdict,
    )
    from simclock.realtime import (
        run_paced as run_paced,
    )
    from simclock.realtime import (
        schedule_periodic_thread as schedule_periodic_thread,
    )
    from simclock.recording import (
        BagError as BagError,
    )
    from simclock.recording import (
        Fingerprinter as Fingerprinter,
    )
    from simclock.recording import (
        RawPayload as RawPayload,
    )
    from simclock.recording import (
        Recorder as Recorder,
    )
    from simclock.recording import (
        RecordingError as RecordingError,
    )
    from simclock.recording import (
        RecordingInfo as RecordingInfo,
    )
    from simclock.recording import (
        RecordingReader as RecordingReader,
    )
    from simclock.recording import (
        RecoveryReport as RecoveryReport,
    )
    from simclock.recording import (
        ReplayClock as ReplayClock,
    )
    from simclock.recording import (
        ReplayRandomSource as ReplayRandomSource,
    )
    from simclock.recording import (
        export_ros2 as export_ros2,
    )
    from simclock.recording import (
        open_recording as open_recording,
    )
    from simclock.recording import (
        recover as recover,
    )
    from simclock.recording import (
        trace_fingerprint as trace_fingerprint,
    )
    from simclock.sim import (
        ControllerConfig as ControllerConfig,
    )
    from simclock.sim import (
        ControllerKind as ControllerKind,
    )
    from simclock.sim import (
        ControllerSpec as ControllerSpec,
    )
    from simclock.sim import (
        ControllerStep as ControllerStep,
    )
    from simclock.sim import (
        DeviceConfig as DeviceConfig,
    )
    from simclock.sim import (
        DeviceRead as DeviceRead,
    )
    from simclock.sim import (
        GridClock as GridClock,
    )
    from simclock.sim import (
        KindParams as KindParams,
    )
    from simclock.sim import (
        KindRun as KindRun,
    )
    from simclock.sim import (
        MujocoClock as MujocoClock,
    )
    from simclock.sim import (
        PhysicsConfig as PhysicsConfig,
    )
    from simclock.sim import (
        Policy as Policy,
    )
    from simclock.sim import (
        RunResult as RunResult,
    )
    from simclock.sim import (
        Sample as Sample,
    )
    from simclock.sim import (
        Scenario as Scenario,
    )
    from simclock.sim import (
        ScenarioError as ScenarioError,
    )
    from simclock.sim import (
        SensorKind as SensorKind,
    )
    from simclock.sim import (
        SensorSpec as SensorSpec,
    )
    from simclock.sim import (
        Session as Session,
    )
    from simclock.sim import (
        StepHook as StepHook,
    )
    from simclock.sim import (
        build_session as build_session,
    )
    from simclock.sim import (
        component_stream as component_stream,
    )
    from simclock.sim import (
        episode_seed as episode_seed,
    )
    from simclock.sim import (
        load_scenario as load_scenario,
    )
    from simclock.sim import (
        run_scenario as run_scenario,
    )
    from simclock.sweeps import (
        SweepAuditError as SweepAuditError,
    )
    from simclock.sweeps import (
        sweep as sweep,
    )

__all__ = [
    "COMPILED",
    "CONTRACT_VERSION",
    "EVENTS_TOPIC",
    "TIMESYNC_TOPIC",
    "BagError",
    "Bus",
    "Callback",
    "ControllerConfig",
    "ControllerKind",
    "ControllerSpec",
    "ControllerStep",
    "DeviceConfig",
    "DeviceRead",
    "DrawObserver",
    "Event",
    "EventKind",
    "Fingerprinter",
    "GridClock",
    "HeapSimClock",
    "JitterStats",
    "KindParams",
    "KindRun",
    "LatenessHistogram",
    "MavlinkTimeSource",
    "Message",
    "MonotonicClock",
    "MujocoClock",
    "PacingControl",
    "PacingMode",
    "PacingReference",
    "PacingReport",
    "PeriodicStats",
    "PeriodicThreadHandle",
    "PhcTimeSource",
    "PhysicsConfig",
    "Policy",
    "RandomSource",
    "RawPayload",
    "Recorder",
    "RecordingError",
    "RecordingInfo",
    "RecordingReader",
    "RecoveryReport",
    "ReplayClock",
    "ReplayRandomSource",
    "RunResult",
    "Sample",
    "Scenario",
    "ScenarioError",
    "SeededRandomSource",
    "SensorKind",
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
    "TimesyncFilter",
    "TimesyncState",
    "TimesyncVerdict",
    "__version__",
    "build_session",
    "callback_name",
    "component_stream",
    "episode_seed",
    "export_ros2",
    "load_scenario",
    "open_recording",
    "recover",
    "run_paced",
    "run_scenario",
    "schedule_periodic_thread",
    "seconds_to_ns",
    "sweep",
    "trace_fingerprint",
]

fixup_module_metadata(ROOT, globals(), [name for name in __all__ if name in globals()])


def __getattr__(name: str) -> Any:
    """Load a lazily exported name from its package on first use (PEP 562)."""
    package = ROOT_NAMES.get(name)
    if package is not None:
        value = getattr(importlib.import_module(package), name)
        globals()[name] = value  # later look-ups are plain attribute reads
        return value
    if name in LOWLEVEL_NAMES:
        raise AttributeError(
            f"module 'simclock' has no attribute {name!r}: it is a helper for backend "
            f"authors, in simclock.lowlevel (from simclock.lowlevel import {name})"
        )
    raise AttributeError(f"module 'simclock' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
