"""Where each public name lives: the export tables of simclock's public namespaces.

simclock has four public namespaces, in tiers (trio's ``trio`` /
``trio.lowlevel`` split is the model):

- ``simclock``: the user API (clocks, random streams, the bus, recording and
  replay, the physics grid, sessions and scenarios, real time, sweeps);
- ``simclock.lowlevel``: helpers for authors of clock backends (the C-ERR-1
  event, time-argument checks, ``Handle``, ``TimedSource``);
- ``simclock.records``: the sampling-record scheduler of SPEC §12;
- ``simclock.sweeps``: the sweep table's tools (read, summarise, plot, write).

The sub-packages ``simclock.core``, ``.recording``, ``.realtime``, ``.sim`` are
layers of the implementation: each re-exports what it gives the layers above,
and every one of those names is public in exactly one namespace above, whose
name it reports as ``__module__`` (so reprs, tracebacks, pickles and docs show
``simclock.Scenario``, not the private module it is written in).

This module imports nothing from simclock: every layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

ROOT = "simclock"
LOWLEVEL = "simclock.lowlevel"
RECORDS = "simclock.records"
SWEEPS = "simclock.sweeps"

# Invariant: a name appears in one table only; the implementing package of each
# name is the key of its group (the root loads it from there on first use).
# These lists repeat the sub-packages' __all__ on purpose: the lazy root must know
# every name and its package without importing the package (that is what it saves).
# tests/test_public_api.py fails if the two drift (every layer name public exactly
# once, every root name resolved through this table and reporting its module).
_ROOT_NAMES: dict[str, tuple[str, ...]] = {
    "simclock.core": (
        "COMPILED",
        "CONTRACT_VERSION",
        "EVENTS_TOPIC",
        "Bus",
        "Callback",
        "DrawObserver",
        "Event",
        "EventKind",
        "HeapSimClock",
        "Message",
        "PeriodicStats",
        "RandomSource",
        "SeededRandomSource",
        "SimClock",
        "SimclockError",
        "SimclockRuntimeError",
        "SimclockTypeError",
        "SimclockValueError",
        "Subscriber",
        "SystemClock",
        "callback_name",
        "seconds_to_ns",
    ),
    "simclock.recording": (
        "BagError",
        "Fingerprinter",
        "RawPayload",
        "Recorder",
        "RecordingError",
        "RecordingInfo",
        "RecordingReader",
        "RecoveryReport",
        "ReplayClock",
        "ReplayRandomSource",
        "export_ros2",
        "open_recording",
        "recover",
        "trace_fingerprint",
    ),
    "simclock.realtime": (
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
    ),
    "simclock.sim": (
        "ControllerConfig",
        "ControllerKind",
        "KindParams",
        "KindRun",
        "SensorKind",
        "ControllerSpec",
        "ControllerStep",
        "DeviceConfig",
        "DeviceRead",
        "GridClock",
        "MujocoClock",
        "PhysicsConfig",
        "Policy",
        "RunResult",
        "Sample",
        "Scenario",
        "ScenarioError",
        "SensorSpec",
        "Session",
        "StepHook",
        "build_session",
        "component_stream",
        "episode_seed",
        "load_scenario",
        "run_scenario",
    ),
    "simclock.sweeps": ("SweepAuditError", "sweep"),
}

LOWLEVEL_NAMES: tuple[str, ...] = (
    "Handle",
    "SimclockChildError",
    "TimedSource",
    "callback_failure_event",
    "check_time_ns",
    "describe_exception",
    "publish_callback_failure",
    "run_in_child",
)

ROOT_NAMES: dict[str, str] = {
    name: package for package, names in _ROOT_NAMES.items() for name in names
}
"""Every name of ``simclock.__all__`` (but ``__version__``) -> the package that implements it."""


def public_module(name: str, namespace: str) -> str:
    """The public namespace of ``name`` as exported by ``namespace`` (the root wins)."""
    if name in ROOT_NAMES:
        return ROOT
    if name in LOWLEVEL_NAMES:
        return LOWLEVEL
    return namespace


def fixup_module_metadata(
    namespace: str, values: Mapping[str, object], names: Iterable[str]
) -> None:
    """Make each public class and function of ``names`` report its public module.

    Only objects written in simclock (``__module__`` starting ``simclock.``)
    are touched; aliases of foreign types (``Callback``) and constants are left
    as they are. Idempotent: every namespace that re-exports a name may call it.
    """
    for name in names:
        value = values[name]
        module = getattr(value, "__module__", None)
        if not isinstance(module, str) or not module.startswith("simclock."):
            continue
        if not isinstance(value, type) and not callable(value):
            continue
        try:
            value.__module__ = public_module(name, namespace)
        except (AttributeError, TypeError):  # a builtin-like object: leave it
            continue
