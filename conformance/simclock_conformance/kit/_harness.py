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
    SimclockTypeError,
    SimclockValueError,
)
from simclock_conformance.kit._args import check_str, exception_text, quote, typed

__all__ = [
    "BackendError",
    "BackendTypeError",
    "BackendValueError",
    "Factory",
    "Rig",
    "check_factory_arg",
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
    """The backend cannot be tested at all: bad spec, import failure, factory raising.

    A refused argument is one of the two subclasses below, which are also the
    library's ``TypeError``/``ValueError`` (README "Bad input"); catching
    ``BackendError`` catches every usage error, as ``python -m simclock_conformance``
    does for its exit status 2 (C-CONF-1).
    """


class BackendTypeError(BackendError, SimclockTypeError):
    """An argument of a conformance entry has the wrong type (a spec that is not a str...)."""


class BackendValueError(BackendError, SimclockValueError):
    """An argument has the right type but names no usable backend or option.

    A malformed spec, a module that does not import, a factory that raises or
    returns no clock, an unknown clause id, a time limit out of range.
    """


_EXPECTED_SPEC = "backend spec must look like MODULE:FACTORY, e.g. 'mypkg.clocks:make_clock'"


def load_factory(spec: str) -> Factory:
    """Import ``MODULE:FACTORY`` (``FACTORY`` may be dotted, e.g. ``Clock.create``).

    ``BackendTypeError`` for a spec that is not a ``str``; ``BackendValueError``
    (with a message saying what to fix) for a malformed spec, a module that
    cannot be imported, a missing attribute or one that is not callable.
    """
    if not isinstance(spec, str):
        raise BackendTypeError(f"{_EXPECTED_SPEC}, got {typed(spec)}")
    if not _SPEC.fullmatch(spec):
        raise BackendValueError(f"{_EXPECTED_SPEC}, got {quote(spec)}")
    spec = check_str(spec, "spec")  # a plain str: the names below are plain too
    module_name, attr_path = spec.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:
        # SystemExit too: a module calling sys.exit() at import must not end the
        # caller with that module's status and no message.
        raise BackendValueError(
            f"cannot import module {quote(module_name)} of backend spec {quote(spec)}: "
            f"{exception_text(exc)}; check PYTHONPATH and the module name"
        ) from exc
    obj: Any = module
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # AttributeError, or whatever a module's __getattr__ raises
            raise BackendValueError(
                f"module {quote(module_name)} has no attribute {quote(attr_path)} (backend spec "
                f"{quote(spec)}); name a callable FACTORY(seed, bus) -> SimClock"
            ) from None
    if not callable(obj):
        raise BackendValueError(
            f"{quote(spec)} is a {type(obj).__name__}, not callable; "
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


def check_factory_arg(factory: object) -> None:
    if not callable(factory):
        raise BackendTypeError(
            f"factory must be callable as FACTORY(seed, bus) -> SimClock, got {typed(factory)}"
        )


def check_report_path(path: str, option: str) -> str:
    """Raise :class:`BackendError` unless a JSON report can be written at ``path``.

    Checked before the suite runs, so a typo costs no run and never turns into
    a traceback (or a "not conforming" exit) at the end. Returns ``path`` as a
    plain ``str``; ``BackendTypeError`` for a path that is not a ``str``,
    ``BackendValueError`` for the others.
    """
    path = check_str(path, option, BackendTypeError)  # a plain str: its repr cannot fail
    if not path or "\0" in path:
        # pathlib answers "no such file" for these; open() would refuse them after the run.
        raise BackendValueError(
            f"{option} {quote(path)} is not a file name; name a file such as report.json"
        )
    target = Path(path)
    try:
        is_dir = target.is_dir()
        parent = target.parent
        parent_is_dir = parent.is_dir()
        writable = parent_is_dir and (
            os.access(parent, os.W_OK) and (not target.exists() or os.access(target, os.W_OK))
        )
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte: the OS's refusals
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BackendValueError(
            f"{option} {quote(path)} cannot be used ({why}); name a writable file such as "
            "report.json"
        ) from None
    if is_dir:
        raise BackendValueError(
            f"{option} {path!r} is a directory; name a file such as report.json"
        )
    if not parent_is_dir:
        raise BackendValueError(
            f"{option} {path!r}: directory {str(parent)!r} does not exist; create it first"
        )
    if not writable:
        raise BackendValueError(f"{option} {path!r} is not writable; name a writable file")
    return path


def not_applicable(clock: object, method: str) -> str | None:
    """The skip reason when ``clock`` lacks the optional ``method``, else None.

    ``SimclockTypeError`` for a ``method`` that is not a ``str``,
    ``SimclockValueError`` for one that is not an identifier.
    """
    method = check_str(method, "method")
    if not method.isidentifier():
        raise SimclockValueError(f"method must be a method name, got {quote(method)}")
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
    """Make a clock through ``factory(seed, bus)`` and listen to its events.

    ``BackendTypeError`` for a ``factory`` that is not callable or a ``seed``
    that is not an ``int``, ``BackendValueError`` for a negative seed: checked
    before the factory runs. What the factory itself raises propagates.
    """
    check_factory_arg(factory)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BackendTypeError(f"seed must be an int >= 0, got {typed(seed)}")
    if seed < 0:
        raise BackendValueError(f"seed must be an int >= 0, got {quote(seed)}")
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

    ``python -m simclock_conformance simclock_conformance:heap_factory`` runs the suite on it.
    """
    from simclock import HeapSimClock

    return HeapSimClock(seed, bus=bus)
