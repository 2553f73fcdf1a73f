"""The one place a callback failure becomes an event (C-ERR-1).

Every scheduler in simclock (and any third-party backend, through the public
``simclock.lowlevel.callback_failure_event`` / ``simclock.lowlevel.publish_callback_failure``)
reports a raising callback with these two functions, so the event's details
are the same everywhere and no exception object, however hostile, escapes.
"""

from __future__ import annotations

from collections.abc import Mapping

from simclock.core._bus import EVENTS_TOPIC, Bus, Event, EventKind
from simclock.core._errors import SimclockTypeError
from simclock.core._names import callback_name, exception_message, safe_repr, type_name
from simclock.core._timeint import check_time_ns

__all__ = ["callback_failure_event", "exception_message", "publish_callback_failure"]


def callback_failure_event(
    at_ns: int, cb: object, exc: BaseException, extra: Mapping[str, object] | None = None
) -> Event:
    """The ``Event(SCHEDULER_CALLBACK_FAILED)`` of C-ERR-1 for ``cb`` raising ``exc`` at ``at_ns``.

    Details are exactly ``callback`` ([`simclock.callback_name`][simclock.callback_name]),
    ``error_type`` (``type(exc).__qualname__``) and ``error_message``
    (`exception_message`), then ``extra`` (a ``Session`` adds the
    component id, a periodic thread its name). Never raises for any ``exc``.
    """
    at_ns = check_time_ns(at_ns, "at_ns")
    if not isinstance(exc, BaseException):
        raise SimclockTypeError(
            f"exc must be an exception, got {type(exc).__name__} {safe_repr(exc)}"
        )
    if extra is not None and not isinstance(extra, Mapping):
        raise SimclockTypeError(
            f"extra must be a mapping or None, got {type(extra).__name__} {safe_repr(extra)}"
        )
    details: dict[str, object] = {
        "callback": callback_name(cb),
        "error_type": type_name(exc),
        "error_message": exception_message(exc),
    }
    if extra:
        details.update(extra)
    return Event(EventKind.SCHEDULER_CALLBACK_FAILED, at_ns, details)


def publish_callback_failure(
    bus: Bus, at_ns: int, cb: object, exc: BaseException, extra: Mapping[str, object] | None = None
) -> None:
    """Publish `callback_failure_event` on ``bus`` at topic ``EVENTS_TOPIC`` (C-ERR-1).

    The event is stamped ``at_ns`` (the failing entry's time, which is the
    clock's ``now`` while it is reported).
    """
    if not isinstance(bus, Bus):
        raise SimclockTypeError(
            f"bus must be a simclock.Bus, got {type(bus).__name__} {safe_repr(bus)}"
        )
    bus.publish(EVENTS_TOPIC, callback_failure_event(at_ns, cb, exc, extra))
