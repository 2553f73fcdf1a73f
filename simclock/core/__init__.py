"""The clock core: time-ints, errors, the bus, random streams and the reference scheduler.

Lowest layer of simclock: it imports nothing else from the package. Every
other clock (grid, session, replay, MuJoCo) is built on ``HeapSimClock``.
``COMPILED`` says whether the scheduling core runs as mypyc-compiled code or
as pure Python (C-NATIVE-1, `simclock.core._native`).
"""

# First: decides which build of the core modules the imports below load.
from simclock.core import _native

_native.install()

# ruff: noqa: E402 (the imports below must follow the finder)

# Loaded now with the rest of the build, so COMPILED covers them (the session and the
# recorder import them).
from simclock.core import _kernels, _mcap_records, _phases  # noqa: F401
from simclock.core._bus import EVENTS_TOPIC, Bus, Event, EventKind, Message, Subscriber
from simclock.core._child import SimclockChildError, run_in_child
from simclock.core._contract import CONTRACT_VERSION
from simclock.core._errors import (
    SimclockError,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)
from simclock.core._failure import callback_failure_event, publish_callback_failure
from simclock.core._heapclock import HeapSimClock, TimedSource
from simclock.core._names import callback_name, describe_exception
from simclock.core._protocols import (
    Callback,
    Handle,
    PeriodicStats,
    RandomSource,
    SimClock,
    SystemClock,
)
from simclock.core._random import DrawObserver, SeededRandomSource
from simclock.core._timeint import check_time_ns, seconds_to_ns

COMPILED: bool = _native.compiled()
"""True when the scheduling core (``HeapSimClock`` and its heap) is the mypyc-compiled build."""

__all__ = [
    "COMPILED",
    "CONTRACT_VERSION",
    "EVENTS_TOPIC",
    "Bus",
    "Callback",
    "DrawObserver",
    "Event",
    "EventKind",
    "Handle",
    "HeapSimClock",
    "Message",
    "PeriodicStats",
    "RandomSource",
    "SeededRandomSource",
    "SimClock",
    "SimclockChildError",
    "SimclockError",
    "SimclockRuntimeError",
    "SimclockTypeError",
    "SimclockValueError",
    "Subscriber",
    "SystemClock",
    "TimedSource",
    "callback_failure_event",
    "callback_name",
    "check_time_ns",
    "describe_exception",
    "publish_callback_failure",
    "run_in_child",
    "seconds_to_ns",
]

# Each public name reports its public namespace (simclock, simclock.lowlevel, ...).
from simclock.core._public import fixup_module_metadata

fixup_module_metadata("simclock.core", globals(), __all__)
