"""Loading a backend factory and wrapping its clock for the tests (SPEC §14).

Backend contract: ``FACTORY(seed: int, bus: simclock.Bus) -> SimClock``. The
backend publishes its events (``SCHEDULER_CALLBACK_FAILED``) on that bus. A
backend that leaves the bus unbound gets it bound to its clock here, so the
bus clauses (C-BUS-*) can be checked for any backend.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simclock import (
    EVENTS_TOPIC,
    Bus,
    Callback,
    Event,
    EventKind,
    Message,
    SimClock,
    SimclockError,
)

__all__ = [
    "BackendError",
    "Factory",
    "Rig",
    "check_factory",
    "check_report_path",
    "factory_spec",
    "heap_factory",
    "load_factory",
    "make_rig",
    "not_applicable",
]

Factory = Callable[[int, Bus], SimClock]
"""``FACTORY(seed, bus) -> SimClock``: how the suite makes every clock it tests."""

_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")

NOT_APPLICABLE = "not applicable"


class BackendError(SimclockError):
    """The backend cannot be tested at all: bad spec, import failure, factory raising."""


def load_factory(spec: str) -> Factory:
    """Import ``MODULE:FACTORY`` (``FACTORY`` may be dotted, e.g. ``Clock.create``).

    Raises :class:`BackendError` with a message saying what to fix.
    """
    if not isinstance(spec, str) or not _SPEC.fullmatch(spec):
        raise BackendError(
            f"backend spec must look like MODULE:FACTORY, e.g. 'mypkg.clocks:make_clock', "
            f"got {spec!r}"
        )
    module_name, attr_path = spec.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:
        # SystemExit too: a module calling sys.exit() at import must not end the
        # caller with that module's status and no message.
        raise BackendError(
            f"cannot import module {module_name!r} of backend spec {spec!r}: "
            f"{type(exc).__name__}: {exc}; check PYTHONPATH and the module name"
        ) from exc
    obj: Any = module
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise BackendError(
                f"module {module_name!r} has no attribute {attr_path!r} (backend spec {spec!r}); "
                "name a callable FACTORY(seed, bus) -> SimClock"
            ) from None
    if not callable(obj):
        raise BackendError(
            f"{spec!r} is a {type(obj).__name__}, not callable; "
            "name a callable FACTORY(seed, bus) -> SimClock"
        )
    factory: Factory = obj
    return factory


def factory_spec(factory: object) -> str | None:
    """The ``MODULE:FACTORY`` string that re-imports ``factory`` in another process, or None."""
    module = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    spec = f"{module}:{qualname}"
    try:
        found = load_factory(spec)
    except BackendError:
        return None
    return spec if found is factory else None


def check_factory(factory: Factory, spec: str = "the factory") -> None:
    """Call ``factory(0, Bus())`` once; raise :class:`BackendError` unless it gives a SimClock."""
    try:
        clock = factory(0, Bus())
    except (Exception, SystemExit) as exc:
        raise BackendError(
            f"{spec}(seed=0, bus=Bus()) raised {type(exc).__name__}: {exc}; "
            "the factory must accept (seed: int, bus: simclock.Bus) and return a SimClock"
        ) from exc
    if not isinstance(clock, SimClock):
        raise BackendError(
            f"{spec}(seed=0, bus=Bus()) returned {type(clock).__name__} {clock!r}, which lacks "
            "the simclock.SimClock methods (now_ns, step_ns, advance, schedule, "
            "schedule_periodic, random_source)"
        )


def check_report_path(path: str, option: str) -> None:
    """Raise :class:`BackendError` unless a JSON report can be written at ``path``.

    Checked before the suite runs, so a typo costs no run and never turns into
    a traceback (or a "not conforming" exit) at the end.
    """
    target = Path(path)
    if target.is_dir():
        raise BackendError(f"{option} {path!r} is a directory; name a file such as report.json")
    parent = target.parent
    if not parent.is_dir():
        raise BackendError(
            f"{option} {path!r}: directory {str(parent)!r} does not exist; create it first"
        )
    if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise BackendError(f"{option} {path!r} is not writable; name a writable file")


def not_applicable(clock: object, method: str) -> str | None:
    """The skip reason when ``clock`` lacks the optional ``method``, else None."""
    if callable(getattr(clock, method, None)):
        return None
    return f"{NOT_APPLICABLE}: backend {type(clock).__name__} has no {method}()"


@dataclass
class Rig:
    """A backend clock with its bus, every event published on it and a firing trace."""

    clock: SimClock
    bus: Bus
    events: list[Event] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    trace: list[tuple[str, int]] = field(default_factory=list)

    def rec(self, name: str) -> Callback:
        """A callback that appends ``(name, now_ns())`` to :attr:`trace`."""

        def record() -> None:
            self.trace.append((name, self.clock.now_ns()))

        record.__qualname__ = f"rec[{name}]"
        return record

    def failures(self) -> list[Event]:
        """Events of kind ``SCHEDULER_CALLBACK_FAILED`` published so far (C-ERR-1)."""
        return [e for e in self.events if e.kind == EventKind.SCHEDULER_CALLBACK_FAILED]


def make_rig(factory: Factory, seed: int = 0) -> Rig:
    """Make a clock through ``factory(seed, bus)`` and listen to its events."""
    bus = Bus()
    clock = factory(seed, bus)
    if bus.clock is None:
        bus.bind(clock)
    rig = Rig(clock, bus)

    def on_event(message: Message) -> None:
        rig.messages.append(message)
        if isinstance(message.payload, Event):
            rig.events.append(message.payload)

    bus.subscribe(EVENTS_TOPIC, on_event)
    return rig


def heap_factory(seed: int, bus: Bus) -> SimClock:
    """The reference backend's factory: ``simclock.HeapSimClock(seed, bus=bus)``.

    ``python -m conformance conformance:heap_factory`` runs the suite on it.
    """
    from simclock import HeapSimClock

    return HeapSimClock(seed, bus=bus)
