"""``check_factory``: is this a backend the suite can test at all? (SPEC §14, C-CONF-1).

Its own module because it needs both the harness (loading, wrapping) and the
declared horizon (``_reach``, which builds on the harness): neither of those
imports this one, so the package has no import cycle.
"""

from __future__ import annotations

from simclock import Bus, SimClock
from simclock_conformance.kit._args import check_str, exception_text, typed
from simclock_conformance.kit._harness import (
    BackendTypeError,
    BackendValueError,
    Factory,
    check_factory_arg,
)
from simclock_conformance.kit._reach import reach_of

__all__ = ["check_factory"]


def _is_clock(value: object) -> bool:
    try:
        return isinstance(value, SimClock)
    except Exception:  # a hostile __getattr__ on what the factory returned: not a clock
        return False


def check_factory(factory: Factory, spec: str = "the factory") -> None:
    """Call ``factory(0, Bus())`` once; raise :class:`BackendError` unless it gives a SimClock.

    ``BackendTypeError`` for a ``factory`` that is not callable or a ``spec``
    (its name in messages) that is not a ``str``; ``BackendValueError`` for a
    factory that raises or returns something that is not a clock, and the
    errors of :func:`simclock_conformance.kit._reach.reach_of` for a bad declared horizon.
    """
    spec = check_str(spec, "spec", BackendTypeError)
    check_factory_arg(factory)
    reach_of(factory)
    try:
        clock = factory(0, Bus())
    except (Exception, SystemExit) as exc:
        raise BackendValueError(
            f"{spec}(seed=0, bus=Bus()) raised {exception_text(exc)}; "
            "the factory must accept (seed: int, bus: simclock.Bus) and return a SimClock"
        ) from exc
    if not _is_clock(clock):
        raise BackendValueError(
            f"{spec}(seed=0, bus=Bus()) returned {typed(clock)}, which lacks "
            "the simclock.SimClock methods (now_ns, step_ns, advance, schedule, "
            "schedule_periodic, random_source)"
        )
