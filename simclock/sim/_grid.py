"""A physics-grid clock: every firing lands on a boundary ``k*s`` (SPEC §7).

`GridClock` is a `SimClock` whose ``step_ns()`` is the
physics step ``s`` (C-GRID-1). It is built by composition on
`HeapSimClock`, which keeps the order, cancellation, error
reporting and events of SPEC §1; the grid clock only decides *when* an entry is
pushed. Every schedule carries a `Policy`:

* ``next_boundary`` (C-GRID-2): a nominal deadline ``d`` runs at the first
  boundary ``>= d``. The next nominal deadline comes from the original
  schedule, so 7 ms on a 2 ms grid runs at 8, 14, 22, 28 ms and never drifts.
* ``strict`` (C-GRID-3): a time, period or phase that is not a multiple of
  ``s`` is refused when the schedule is made, with an error naming the
  schedule. This is the default: nothing is moved unless asked for.

Order at a boundary: entries fire by ``(boundary, seq)``, where ``seq`` is the
push order (C-TIE-1). The *nominal* time does not take part: a 7 ms deadline
quantised to 8 ms and an 8 ms deadline fire in the order they were pushed. A
periodic pushes its next entry after its callback returns or raises, with a
fresh ``seq`` (C-PER-2), so at a shared boundary the schedule whose previous
firing came earlier fires first.

Physics: an optional ``on_step(k)`` hook advances an engine from boundary ``k-1``
to ``k``. It runs exactly once per boundary crossed, *before* anything fires at
boundary ``k``, so callbacks at ``k*s`` see the state after ``k`` steps and
``steps == now_ns() // s`` holds between calls.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

from simclock.core._bus import Bus
from simclock.core._enum import CheckedStrEnum
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._failure import publish_callback_failure
from simclock.core._heapclock import (
    HeapSimClock,
    TimedSource,
    check_rate_hz,
    check_timed_source,
)
from simclock.core._names import (
    callback_name,
    check_callable,
    check_str_enum,
    exact_str,
    safe_repr,
)
from simclock.core._protocols import Callback, Handle
from simclock.core._random import SeededRandomSource
from simclock.core._readonly import ReadOnly
from simclock.core._timeint import check_positive_ns, check_time_ns

__all__ = [
    "GridClock",
    "Policy",
    "StepHook",
    "check_policy",
    "check_schedule_on_grid",
    "format_ns",
    "quantise",
]

StepHook = Callable[[int], object]
"""``on_step(k)``: advance the physics from boundary ``k-1`` to boundary ``k``."""


class Policy(CheckedStrEnum):
    """How a schedule's nominal deadlines map onto the physics grid (C-GRID-2, C-GRID-3)."""

    NEXT_BOUNDARY = "next_boundary"
    STRICT = "strict"


def check_policy(policy: object, name: str = "policy") -> Policy:
    """Return ``policy`` as a `Policy`; a ``str`` must be one of its values."""
    expected = f"{name} must be 'next_boundary' or 'strict'"
    return check_str_enum(policy, Policy, expected, f"{expected}, got ")


_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"))


def format_ns(ns: int) -> str:
    """Human form of a duration: the largest unit showing it with at most 3 decimals.

    Display only; the value is always the int of ns. ``7_000_000`` -> ``7 ms``,
    ``1_500_000`` -> ``1.5 ms``, ``333`` -> ``333 ns``, ``0`` -> ``0 s``.
    """
    if ns == 0:
        return "0 s"
    for scale, unit in _UNITS:
        if abs(ns) >= scale and (ns * 1000) % scale == 0:
            text = format((Decimal(ns) / scale).normalize(), "f")
            return f"{text} {unit}"
    return f"{ns} ns"


def quantise(t_ns: int, step_ns: int) -> int:
    """The first boundary ``k*step_ns >= t_ns`` (C-GRID-2), in exact integers."""
    return -(-t_ns // step_ns) * step_ns


def check_schedule_on_grid(name: str, step_ns: int, policy: Policy, **times_ns: int) -> None:
    """Refuse, under ``strict``, any of ``times_ns`` that is off the grid (C-GRID-3).

    ``times_ns`` maps a field name (``period``, ``phase``, ``latency``, ``at``)
    to its value; the first one off the grid raises ``ValueError`` naming the
    schedule and the field. Under ``next_boundary`` nothing is refused.
    """
    if policy is not Policy.STRICT:
        return
    for field, value in times_ns.items():
        if value % step_ns:
            raise SimclockValueError(
                f"schedule {safe_repr(name)}: {field} {format_ns(value)} is not on the "
                f"{format_ns(step_ns)} grid (policy strict); use a multiple of "
                f"{step_ns} ns or policy 'next_boundary'"
            )


class GridClock:
    """A SimClock on a physics grid of step ``s`` ns (SPEC §7, C-GRID-1..3).

    ``GridClock(seed, step_ns, *, start_ns=0, bus=None, default_policy="strict",
    on_step=None, compact_threshold=64)``. ``start_ns`` must be a boundary.

    Every ``schedule*`` takes ``policy`` (default ``default_policy``) and an
    optional ``name`` used in errors (default: the callback's qualified name).
    Entries are pushed at their quantised time on an inner
    [`HeapSimClock`][simclock.HeapSimClock], the one scheduling core: an off-grid
    periodic or rate is a core entry with a quantum ``s``, re-armed by the
    core from its nominal grid. So C-TIE-1, C-ADV-1..5, C-CAN-1..4 and
    C-ERR-1..2 hold as there, with ``at_ns`` read as the quantised time; with
    ``s == 1`` the clock behaves exactly like ``HeapSimClock``. A
    [`Session`][simclock.Session] attaches its phases as the clock's one
    [`TimedSource`][simclock.lowlevel.TimedSource] (`attach_source`).

    Stats (C-X-STATS): ``fired``, ``failed``, ``skipped`` (always 0: a
    quantised firing is late, never dropped) and ``overrun`` (a firing whose
    boundary is at or after the schedule's next nominal deadline: with a period
    shorter than ``s``, several nominal deadlines share one boundary and each
    still fires there, in order).

    Complexity: as ``HeapSimClock`` (O(log n) per schedule and firing);
    ``advance`` with an ``on_step`` hook costs O(boundaries crossed) more.
    """

    def __init__(
        self,
        seed: int,
        step_ns: int,
        *,
        start_ns: int = 0,
        bus: Bus | None = None,
        default_policy: Policy | str = Policy.STRICT,
        on_step: StepHook | None = None,
        compact_threshold: int = 64,
    ) -> None:
        step = check_positive_ns(step_ns, "step_ns")
        start = check_time_ns(start_ns, "start_ns")
        if start % step:
            raise SimclockValueError(
                f"start_ns={start} is not on the {step} ns grid; start at a multiple of step_ns"
            )
        policy = check_policy(default_policy, "default_policy")
        if on_step is not None and not callable(on_step):
            raise SimclockTypeError(f"on_step must be callable or None, got {safe_repr(on_step)}")
        self._inner = HeapSimClock(
            seed, start_ns=start, step_ns=step, bus=bus, compact_threshold=compact_threshold
        )
        # The compiled core's bound method in place of the wrapper below: the same
        # value, without a Python frame on every read (the bus stamps each message).
        self.now_ns = self._inner.now_ns  # type: ignore[method-assign]
        self._s = step
        self._default_policy = policy
        self._on_step = on_step
        self._running = False
        self._source: TimedSource | None = None

    # -- reading ----------------------------------------------------------

    bus = ReadOnly[Bus]("_inner.bus", "The bus it reports on (the inner clock's).")

    default_policy = ReadOnly[Policy]("_default_policy", "The policy when schedule* names none.")

    @property
    def steps(self) -> int:
        """Boundaries crossed: now_ns() // step_ns()."""
        return self._inner.now_ns() // self._s

    running = ReadOnly[bool]("_running", "True inside advance (callbacks, on_step).")

    def now_ns(self) -> int:
        """Current simulation time in ns (C-TIME-1, C-TIME-2)."""
        return self._inner.now_ns()

    def step_ns(self) -> int:
        """The physics step ``s``; boundaries are ``k*s`` (C-GRID-1, C-STEP-1)."""
        return self._s

    def random_source(self) -> SeededRandomSource:
        """The root random stream, label ``/`` (C-RNG-1)."""
        return self._inner.random_source()

    def next_event_ns(self) -> int | None:
        """The boundary of the earliest live entry, or ``None`` (C-X-PEEK)."""
        return self._inner.next_event_ns()

    def pending_count(self) -> int:
        """Live entries waiting (a running periodic is counted once re-pushed)."""
        return self._inner.pending_count()

    def quantise(self, t_ns: int) -> int:
        """The first boundary at or after ``t_ns`` (C-GRID-2)."""
        return quantise(check_time_ns(t_ns, "t_ns"), self._s)

    # -- scheduling -------------------------------------------------------

    def _policy(self, policy: Policy | str | None) -> Policy:
        return self._default_policy if policy is None else check_policy(policy)

    def schedule(
        self,
        at_ns: int,
        cb: Callback,
        *,
        policy: Policy | str | None = None,
        name: str | None = None,
    ) -> Handle:
        """Fire ``cb`` once at the boundary of ``at_ns`` (C-SCH-1, C-GRID-2, C-GRID-3).

        ``at_ns >= now``; under ``strict`` it must be a boundary, under
        ``next_boundary`` it runs at the first boundary ``>= at_ns``. O(log n).
        """
        at = check_time_ns(at_ns, "at_ns")
        check_callable(cb)
        pol = self._policy(policy)
        now = self.now_ns()
        if at < now:
            raise SimclockValueError(
                f"at_ns={at} is in the past (now is {now} ns); schedule at or after now"
            )
        check_schedule_on_grid(_name(name, cb), self._s, pol, at=at)
        return self._inner.schedule(quantise(at, self._s), cb)

    def schedule_periodic(
        self,
        period_ns: int,
        cb: Callback,
        phase_ns: int = 0,
        *,
        policy: Policy | str | None = None,
        name: str | None = None,
    ) -> Handle:
        """Fire ``cb`` at the boundary of every nominal ``phase + k*period >= now``.

        Contract: C-PER-1..3 on the nominal grid, C-GRID-2 (each firing at the
        first boundary ``>= phase + k*period``; the next nominal deadline is
        ``phase + (k+1)*period``, never derived from the quantised one),
        C-GRID-3 (under ``strict`` an off-grid period or phase is refused
        naming the schedule), C-PER-2 (next entry pushed after the callback).
        """
        period = check_positive_ns(period_ns, "period_ns")
        phase = check_time_ns(phase_ns, "phase_ns")
        check_callable(cb)
        pol = self._policy(policy)
        check_schedule_on_grid(_name(name, cb), self._s, pol, period=period, phase=phase)
        # On the grid quantisation is the identity and no firing can overrun:
        # quantum 1 takes the core's plain periodic path.
        on_grid = period % self._s == 0 and phase % self._s == 0
        return self._inner.schedule_repeating(
            cb, phase, period=period, quantum=1 if on_grid else self._s
        )

    def schedule_rate(
        self,
        rate_hz: int | Fraction,
        cb: Callback,
        phase_ns: int = 0,
        *,
        policy: Policy | str | None = None,
        name: str | None = None,
    ) -> Handle:
        """Fire ``cb`` at the boundary of every ``phase + ceil(k * 10**9 / rate_hz)`` (C-X-RATE).

        Under ``strict`` every firing must be a boundary: ``s == 1``, or the
        rate's period a whole multiple of ``s`` (and the phase a boundary);
        otherwise like `schedule_periodic`.
        """
        rate = check_rate_hz(rate_hz)
        phase = check_time_ns(phase_ns, "phase_ns")
        check_callable(cb)
        pol = self._policy(policy)
        label = _name(name, cb)
        period = Fraction(1_000_000_000) / rate
        # Every firing ceil(k*P) is a boundary iff s == 1 or P is a whole multiple of s:
        # a fractional P makes consecutive gaps differ by 1 ns, which only s == 1 allows.
        off_grid = period.denominator != 1 or period.numerator % self._s
        if pol is Policy.STRICT and self._s != 1 and off_grid:
            raise SimclockValueError(
                f"schedule {safe_repr(label)}: rate {rate} Hz has period {float(period):g} ns, "
                "not a "
                f"multiple of the {format_ns(self._s)} grid (policy strict); use policy "
                "'next_boundary'"
            )
        check_schedule_on_grid(label, self._s, pol, phase=phase)
        identity = (self._s == 1 or not off_grid) and phase % self._s == 0
        return self._inner.schedule_repeating(
            cb, phase, rate=rate, quantum=1 if identity else self._s
        )

    def attach_source(self, source: TimedSource) -> None:
        """Library API: run ``source`` in time order with the entries (a ``Session``'s phases).

        At an instant shared with entries the source runs first, after the
        ``on_step`` hook of that boundary (see `advance`). One source per
        clock: a second is a ``RuntimeError`` and changes nothing. A ``source``
        without callable ``next_ns`` and ``fire`` is a ``TypeError`` here, not a
        failure at the next ``advance``.
        """
        check_timed_source(source)
        if self._source is not None:
            raise SimclockRuntimeError(
                "this GridClock already runs a Session; create one GridClock per Session"
            )
        self._source = source

    # -- running ----------------------------------------------------------

    def advance(self, dt_ns: int) -> None:
        """Move time by ``dt_ns``, stepping physics once per boundary crossed.

        Contract: as ``HeapSimClock.advance`` (C-ADV-1..5, C-ERR-2). With an
        ``on_step`` hook, for each boundary ``b = k*s`` in ``(now, now+dt]``:
        everything due before ``b`` fires, then ``on_step(k)`` runs once, then
        everything at ``b`` fires. While the hook runs, ``now_ns()`` is
        ``b - 1`` (everything before ``b`` has fired, nothing at ``b`` has) and
        ``steps`` is ``k - 1``. ``advance`` from inside a callback or the
        hook raises ``RuntimeError`` and changes nothing.

        A hook raising ``Exception`` is reported like a callback (C-ERR-1):
        ``Event(SCHEDULER_CALLBACK_FAILED)`` stamped ``b - 1`` with the extra
        detail ``step: k``; the step counts as taken (it never runs again for
        ``b``) and the entries at ``b`` still fire. A ``BaseException``
        propagates (C-ERR-2) with the step not taken: ``now`` is ``b - 1``,
        ``steps`` is ``k - 1`` and the next ``advance`` runs ``on_step(k)``.
        """
        dt = check_time_ns(dt_ns, "dt_ns")
        if self._running:
            raise SimclockRuntimeError(
                f"advance(dt_ns={dt}) called from inside a callback at now={self.now_ns()} ns; "
                "schedule the work with schedule() instead"
            )
        inner = self._inner
        hook = self._on_step
        source = self._source
        target = inner.now_ns() + dt
        self._running = True
        try:
            if hook is None:
                inner.run_until(target, source)
            else:
                # One call for every boundary (the loop is in the compiled core): the
                # run that ends just before boundary k+1 also fires everything at
                # boundary k (after hook k) and in between, in the same order as a call
                # ending at k followed by one ending at k+1 - 1 (C-ADV-5). steps is
                # now // s throughout, so it follows a BaseException's stop. The source
                # was checked once, by attach_source.
                inner.run_steps(target, self._s, hook, source, self._hook_failed)
        finally:
            self._running = False

    def _hook_failed(self, k: int, exc: Exception) -> None:
        """C-ERR-1 for the hook: reported once; the boundary is then passed, never re-run."""
        publish_callback_failure(self.bus, self._inner.now_ns(), self._on_step, exc, {"step": k})


def _name(name: str | None, cb: Callback) -> str:
    if name is None:
        return callback_name(cb)
    if not isinstance(name, str):
        raise SimclockTypeError(
            f"name must be a str or None, got {type(name).__name__} {safe_repr(name)}"
        )
    return exact_str(name)
