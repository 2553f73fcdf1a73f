"""The clock core: time-ints, errors, the bus, random streams and the reference scheduler.

Lowest layer of simclock: it imports nothing else from the package. Every
other clock (grid, session, replay, MuJoCo) is built on ``HeapSimClock``.
"""

from simclock.core._bus import EVENTS_TOPIC, Bus, Event, EventKind, Message, Subscriber
from simclock.core._contract import CONTRACT_VERSION
from simclock.core._errors import (
    SimclockError,
    SimclockRuntimeError,
    SimclockTypeError,
    SimclockValueError,
)
from simclock.core._failure import callback_failure_event, publish_callback_failure
from simclock.core._heapclock import HeapSimClock, TimedSource
from simclock.core._names import callback_name
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

__all__ = [
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
    "publish_callback_failure",
    "seconds_to_ns",
]
