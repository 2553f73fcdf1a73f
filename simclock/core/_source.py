"""The `TimedSource` protocol: work that runs in time order with the core's entries.

Kept out of the compiled modules (C-NATIVE-1): a ``Protocol`` is a typing
construct, and its checker is called once per ``run_until``, never per entry.
"""

from __future__ import annotations

from typing import Protocol

from simclock.core._errors import SimclockTypeError
from simclock.core._names import safe_repr

__all__ = ["TimedSource", "check_timed_source"]


class TimedSource(Protocol):
    """Something that is not a heap entry but must run in time order with them.

    Used with `HeapSimClock.run_until`: a replay's recorded messages, a
    session's per-boundary phases. ``next_ns()`` is the time of its next item
    (``>= now``) or ``None``; ``fire(at_ns)`` runs everything it has due at
    ``at_ns`` (the clock's ``now`` is ``at_ns`` meanwhile) and must move
    ``next_ns()`` past ``at_ns``. Only ``fire`` may move ``next_ns()``: the
    clock asks it at the start of a run and after each ``fire``, and keeps
    the answer in between (while entries and physics steps run).
    """

    def next_ns(self) -> int | None:
        """Time of the next item, or ``None`` when there is none."""
        ...

    def fire(self, at_ns: int) -> None:
        """Run the items due at ``at_ns``."""
        ...


def check_timed_source(source: object, name: str = "source") -> None:
    """Raise ``TypeError`` unless ``source`` has callable ``next_ns`` and ``fire``.

    Checked where a `TimedSource` is handed over (``run_until``,
    ``attach_source``), so a wrong object is refused at once and not found
    broken later, half-way through an ``advance``.
    """
    try:
        usable = callable(getattr(source, "next_ns", None)) and callable(
            getattr(source, "fire", None)
        )
    except Exception:
        # A __getattr__ that raises is as unusable as a missing method.
        usable = False
    if not usable:
        raise SimclockTypeError(
            f"{name} must be a TimedSource (with next_ns() and fire(at_ns) methods), got "
            f"{type(source).__name__} {safe_repr(source)}"
        )
