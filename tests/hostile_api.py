# mypy: disable-error-code="arg-type"
# Table rows build arguments generically; the types are checked at run time.
"""The public API as a table, and hostile values to drive it with (issue 14).

Every public name of ``simclock``, ``simclock.records``, ``oracles`` and
``conformance`` is in exactly one place here:

- :data:`CASES`: a callable (constructor, method or function), with how to
  build a fresh context (the instance and its collaborators), which valid
  arguments to call it with, and a snapshot of what a caller can observe;
- :data:`NOT_CALLED`: constants, type aliases, protocols, exception classes and
  result records the library builds itself, each with the reason it is not
  driven and a property the test checks instead;
- :data:`METHODS_NOT_DRIVEN`: public methods with no parameter to drive
  (``now_ns``, ``close``...), named so that a new method cannot slip through.

``tests/test_public_api_hostile.py`` checks that this table is exhaustive
against ``__all__`` and the classes' public methods, then replaces each
parameter in turn by each hostile value.
"""

from __future__ import annotations

import atexit
import dataclasses
import inspect
import itertools
import math
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

import simclock
import simclock.lowlevel
import simclock.records
import simclock_conformance
import simclock_oracles
from simclock import (
    Bus,
    ControllerSpec,
    Event,
    EventKind,
    Fingerprinter,
    GridClock,
    HeapSimClock,
    LatenessHistogram,
    Message,
    MonotonicClock,
    PacingControl,
    Recorder,
    RecordingReader,
    ReplayClock,
    SeededRandomSource,
    SensorSpec,
    Session,
)
from simclock.records import SamplingEvents

REPO = Path(__file__).resolve().parents[1]
PENDULUM_XML = REPO / "examples" / "pendulum.xml"


# -- hostile values -------------------------------------------------------------------


class HostileError(ArithmeticError):
    """Raised by the hostile dunders below.

    Neither a ``TypeError`` nor a ``ValueError``: if it leaks out of a call, the
    library called a method of a value it had not checked yet.
    """


class BadIndex:
    """An object whose ``__index__``/``__int__``/``__float__`` raise."""

    def __index__(self) -> int:
        raise HostileError("__index__")

    def __int__(self) -> int:
        raise HostileError("__int__")

    def __float__(self) -> float:
        raise HostileError("__float__")


class BadEq:
    """``==`` raises (and so does ``hash``, as for any class defining only ``__eq__``)."""

    def __eq__(self, other: object) -> bool:
        raise HostileError("__eq__")

    def __hash__(self) -> int:
        raise HostileError("__hash__")


class BadHash:
    """``hash()`` raises."""

    def __hash__(self) -> int:
        raise HostileError("__hash__")


class BadStr:
    """``str()`` raises."""

    def __str__(self) -> str:
        raise HostileError("__str__")


class BadRepr:
    """``repr()`` raises: an error message quoting it must not fail."""

    def __repr__(self) -> str:
        raise HostileError("__repr__")


class BadIter:
    """``iter()`` raises."""

    def __iter__(self) -> Any:
        raise HostileError("__iter__")


class HostileStr(str):
    """A valid-looking ``str`` (a topic, a label, an id) whose ``__hash__``/``__eq__`` raise."""

    def __hash__(self) -> int:
        raise HostileError("__hash__")

    def __eq__(self, other: object) -> bool:
        raise HostileError("__eq__")

    def __ne__(self, other: object) -> bool:
        raise HostileError("__ne__")


HOSTILE: tuple[tuple[str, object], ...] = (
    ("True", True),
    ("False", False),
    ("nan", math.nan),
    ("inf", math.inf),
    ("-inf", -math.inf),
    ("10**400", 10**400),
    ("-10**400", -(10**400)),
    ("2**64", 2**64),
    ("-1", -1),
    ("0", 0),
    ("0.5", 0.5),
    ("np.int64(-1)", np.int64(-1)),
    ("np.uint64(2**64-1)", np.uint64(2**64 - 1)),
    ("np.float64(nan)", np.float64("nan")),
    ("np.bool_(True)", np.bool_(True)),
    ("np.array([1, 2])", np.array([1, 2])),
    ("np.array(3)", np.array(3)),
    ("Decimal('NaN')", Decimal("NaN")),
    ("Decimal('sNaN')", Decimal("sNaN")),
    ("Decimal('1e999999')", Decimal("1e999999")),
    ("Fraction(1, 3)", Fraction(1, 3)),
    ("'x'", "x"),
    ("''", ""),
    ("'/a'*50000", "/a" * 50_000),
    ("b'x'", b"x"),
    ("None", None),
    ("[]", []),
    ("{}", {}),
    ("object()", object()),
    ("1j", 1j),
    ("BadIndex()", BadIndex()),
    ("BadEq()", BadEq()),
    ("BadHash()", BadHash()),
    ("BadStr()", BadStr()),
    ("BadRepr()", BadRepr()),
    ("BadIter()", BadIter()),
    ("HostileStr('/x')", HostileStr("/x")),
)
"""``(label, value)``: bool, NaN, infinities, huge ints, numpy scalars and arrays,
Decimal, Fraction, str, bytes, None, containers and objects whose dunders raise."""


def is_huge_int(value: object) -> bool:
    """A valid but enormous time-int: accepted, and then it may mean an endless run."""
    return bool(
        isinstance(value, int | np.integer) and not isinstance(value, bool) and value > 2**40
    )


# -- snapshots ------------------------------------------------------------------------


def rng_state(source: Any) -> object:
    """The full state of a random stream: equal before and after means no draw happened."""
    return source.numpy_rng().bit_generator.state


def clock_state(clock: Any) -> tuple[object, ...]:
    """What a caller can observe of a SimClock: time, pending entries, bus, random stream."""
    return (
        clock.now_ns(),
        clock.pending_count(),
        clock.next_event_ns(),
        clock.bus.next_sequence,
        rng_state(clock.random_source()),
    )


def bus_state(bus: Bus) -> tuple[object, ...]:
    """The bus's next sequence, its clock and every message a catch-all subscriber saw."""
    seen = getattr(bus, "_hostile_seen", None)
    return (bus.next_sequence, bus.clock, None if seen is None else list(seen))


def watched_bus(clock: Any = None) -> Bus:
    """A bus with a catch-all subscriber recording ``(topic, stamp, sequence)``."""
    bus = Bus(clock) if clock is not None else Bus()
    seen: list[tuple[str, int, int]] = []
    bus.subscribe(None, lambda m: seen.append((m.topic, m.stamp_ns, m.sequence)))
    bus._hostile_seen = seen  # type: ignore[attr-defined]
    return bus


def file_state(path: Path) -> bytes | None:
    """The bytes of ``path`` (``None`` if absent): a refused call writes nothing."""
    return path.read_bytes() if path.exists() else None


def dir_state(directory: Path) -> tuple[tuple[str, bytes], ...]:
    """Every file of ``directory`` with its bytes."""
    return tuple((p.name, p.read_bytes()) for p in sorted(directory.iterdir()) if p.is_file())


def tree_state(directory: Path) -> tuple[tuple[str, bytes | None], ...]:
    """Every file and folder under ``directory``, with the files' bytes."""
    return tuple(
        (str(p.relative_to(directory)), p.read_bytes() if p.is_file() else None)
        for p in sorted(directory.rglob("*"))
    )


# -- fixtures shared by the cases (made once, read-only) ------------------------------

_TMP = Path(tempfile.mkdtemp(prefix="simclock-hostile-"))
# Removed when the process ends: each test process that imports this module makes one.
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
_counter = itertools.count()
_lock = threading.Lock()


def fresh_path(suffix: str = ".mcap") -> Path:
    """A new path in this module's temporary directory (not created)."""
    with _lock:
        return _TMP / f"f{next(_counter)}{suffix}"


def recording() -> Path:
    """A small simclock recording: several topics, a failing callback, persisted draws."""
    path = _TMP / "recording.mcap"
    if path.exists():
        return path
    bus = Bus()
    recorder = Recorder(path, bus, seed=3, record_draws=True)
    clock = HeapSimClock(3, bus=bus, draw_observer=recorder.draw_observer)
    noise = clock.random_source().child("imu/noise")
    clock.schedule_periodic(10, lambda: clock.bus.publish("/imu", {"z": noise.normal(0.0, 1.0)}))
    clock.schedule(25, lambda: 1 / 0)
    clock.advance(100)
    recorder.close()
    return path


def scenario_recording() -> Path:
    """A recording of :func:`scenario_file` (device samples, chunked, zstd)."""
    path = _TMP / "scenario.mcap"
    if not path.exists():
        simclock.run_scenario(simclock.load_scenario(scenario_file()), out=path)
    return path


def scenario_file() -> Path:
    """A valid pure-grid scenario file with one sensor and one tick controller."""
    path = _TMP / "scenario.toml"
    if not path.exists():
        path.write_text(
            'name = "hostile"\nseed = 1\nmode = "deterministic_ci"\nduration = "10 ms"\n'
            '[physics]\nstep = "1 ms"\n'
            '[devices.imu0]\nperiod = "2 ms"\nlatency = "1 ms"\n'
            '[controllers.tick]\nkind = "tick"\nperiod = "2 ms"\n',
            encoding="utf-8",
        )
    return path


_MODELS: dict[str, Any] = {}


def mujoco_model() -> Any:
    """The pendulum MjModel, loaded once."""
    if "pendulum" not in _MODELS:
        import mujoco

        _MODELS["pendulum"] = mujoco.MjModel.from_xml_path(str(PENDULUM_XML))
    return _MODELS["pendulum"]


def noop(*_args: object) -> None:
    """A callback that does nothing."""


class ListSource:
    """A :class:`simclock.core.TimedSource` of fixed times; ``fired`` lists what ran."""

    def __init__(self, *times: int) -> None:
        self.times = list(times)
        self.fired: list[int] = []

    def next_ns(self) -> int | None:
        return self.times[0] if self.times else None

    def fire(self, at_ns: int) -> None:
        self.fired.append(at_ns)
        self.times.pop(0)


class _ClusterReachedError(Exception):
    """Raised by the stand-in for the sweep's Dask cluster: every check has passed."""


def sweep_until_cluster(*args: Any, **kwargs: Any) -> object:
    """``simclock.sweep`` up to the point where it would start (or reach) a Dask cluster.

    Every argument is checked before the cluster (C-SWEEP-2, "every argument
    is checked before anything runs"), so the hostile sweep needs no cluster:
    an accepted call returns ``"cluster"``. A real cluster per accepted value
    would cost seconds each; tests/test_sweep*.py run real ones.
    """
    import simclock.sweeps._sweep as sweep_module

    def no_cluster(_scheduler: object, _workers: object) -> Any:
        raise _ClusterReachedError

    real = sweep_module._client
    sweep_module._client = no_cluster  # type: ignore[assignment]
    try:
        return simclock.sweep(*args, **kwargs)
    except _ClusterReachedError:
        return "cluster"
    finally:
        sweep_module._client = real


# inspect.signature() follows __wrapped__: the sweep's own parameters are driven.
sweep_until_cluster.__wrapped__ = simclock.sweep  # type: ignore[attr-defined]


class FakeSource:
    """A monotonic source for MonotonicClock that returns a fixed, settable time."""

    def __init__(self, now: int = 1_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


# -- the table --------------------------------------------------------------------------

Ctx = SimpleNamespace


@dataclass(frozen=True)
class Case:
    """One public callable: how to reach it, valid arguments, what to snapshot.

    ``target(ctx)`` returns the callable; ``valid(ctx)`` the valid arguments
    by parameter name; ``snapshot(ctx)`` the observable state that a refused
    call must leave unchanged. ``skip`` names parameters not driven, with the
    reason; ``accepts_huge`` names parameters where a huge valid int means an
    endless (but valid) run, so those values are not tried. ``runtime`` is
    True where a ``RuntimeError`` is the documented refusal. ``builtin`` is
    True where the builtin ``TypeError``/``ValueError`` is the contract
    (``oracles`` imports no simclock), else the ``Simclock*Error`` subclass
    is required.
    """

    owner: str
    member: str
    setup: Callable[[], Ctx]
    target: Callable[[Ctx], Callable[..., Any]]
    valid: Callable[[Ctx], dict[str, Any]]
    snapshot: Callable[[Ctx], object]
    skip: Mapping[str, str] = field(default_factory=dict)
    accepts_huge: tuple[str, ...] = ()
    runtime: bool = False
    builtin: bool = False
    cleanup: Callable[[Ctx, object], None] | None = None
    valid_call: bool = True

    @property
    def name(self) -> str:
        return f"{self.owner}.{self.member}" if self.member else self.owner


def parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    """``fn``'s parameters that a case drives or skips (``*args``/``**kwargs`` left out)."""
    return [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def bind(
    case: Case, params: list[inspect.Parameter], args: Mapping[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """``(positional, keywords)`` of a call: ``args`` over the skipped parameters' defaults."""
    full = {p.name: p.default for p in params if p.name in case.skip and p.default is not p.empty}
    full.update(args)
    positional = [full[p.name] for p in params if p.kind is p.POSITIONAL_ONLY]
    keywords = {p.name: full[p.name] for p in params if p.kind is not p.POSITIONAL_ONLY}
    return positional, keywords


def _nothing(_ctx: Ctx) -> object:
    return None


def in_function(thread: threading.Thread, name: str) -> bool:
    """True while ``thread``'s stack has a frame of a function called ``name``."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_name == name:
            return True
        frame = frame.f_back
    return False


def _settled(handle: Any) -> bool:
    """The worker waits for its next deadline: blocked in its sleep, or spinning after a firing."""
    thread = handle.thread
    if in_function(thread, "_default_sleep") and in_function(thread, "wait"):
        return True
    return handle.stats().fired >= 1 and in_function(thread, "_wait_until")


def _worker_survives(ctx: Ctx, handle: Any) -> None:
    """An accepted periodic thread is still alive once it waits for its next deadline.

    Issue 14 item 3: no argument the API accepts may kill a worker (a 10**400
    period once died in its sleep with ``OverflowError``). The worker is watched
    until it blocks in its sleep (the conversion that failed is done by then) or
    spins after a firing. The clock (a fixed fake source) and the sleep (the
    default) never fail here, so a worker that ended was ended by the argument,
    even if it reported why. The sweep's alarm bounds the wait.
    """
    thread = handle.thread
    try:
        while thread.is_alive() and not _settled(handle):
            time.sleep(0.001)  # noqa: SCK301 - host-side polling of a real thread
        if not thread.is_alive():
            reported = [m for m in ctx.obj.bus._hostile_seen if m[0] == simclock.EVENTS_TOPIC]
            raise AssertionError(f"worker {thread.name!r} ended; events: {reported}")
    finally:
        handle.cancel()


def _close_result(_ctx: Ctx, result: object) -> None:
    close = getattr(result, "close", None)
    if callable(close):
        close()


# Contexts --------------------------------------------------------------------------


def heap_ctx() -> Ctx:
    clock = HeapSimClock(7, bus=watched_bus())
    clock.schedule(10, noop)
    clock.schedule_periodic(4, noop)
    clock.advance(1)
    return Ctx(obj=clock)


def heap_source_ctx() -> Ctx:
    ctx = heap_ctx()
    ctx.source = ListSource(5, 9)
    return ctx


def heap_source_state(ctx: Ctx) -> object:
    return (clock_state(ctx.obj), list(ctx.source.times), list(ctx.source.fired))


def grid_ctx() -> Ctx:
    clock = GridClock(7, 2, bus=watched_bus(), default_policy="next_boundary")
    clock.schedule(10, noop)
    clock.advance(2)
    return Ctx(obj=clock)


def mujoco_ctx() -> Ctx:
    clock = simclock.MujocoClock(mujoco_model(), 7, bus=watched_bus())
    return Ctx(obj=clock)


def mujoco_state(ctx: Ctx) -> object:
    clock = ctx.obj
    return (*clock_state(clock), clock.data.qpos.tobytes(), clock.data.time)


def bus_ctx() -> Ctx:
    return Ctx(obj=watched_bus(HeapSimClock(0)))


def bound_bus_state(ctx: Ctx) -> object:
    return (*bus_state(ctx.obj), ctx.obj.clock.pending_count())


def random_ctx() -> Ctx:
    seen: list[object] = []
    return Ctx(obj=SeededRandomSource(5, "a/b", observer=lambda *a: seen.append(a)), seen=seen)


def random_state(ctx: Ctx) -> object:
    return (rng_state(ctx.obj), list(ctx.seen))


def session_ctx() -> Ctx:
    clock = GridClock(1, 1_000_000, bus=watched_bus())
    session = Session(clock)
    session.add_sensor(SensorSpec("imu0", 2_000_000, latency_ns=1_000_000), lambda n: [0.0])
    session.advance(3_000_000)
    return Ctx(obj=session)


def session_state(ctx: Ctx) -> object:
    s = ctx.obj
    return (
        clock_state(s.clock),
        s.episode,
        s.episode_seed,
        s.episode_start_ns,
        len(s.samples),
        dict(s.latest()),
        s.stats("sensors/imu0"),
    )


def unstarted_session_ctx() -> Ctx:
    clock = GridClock(1, 1_000_000, bus=watched_bus())
    return Ctx(obj=Session(clock))


def unstarted_session_state(ctx: Ctx) -> object:
    s = ctx.obj
    return (clock_state(s.clock), s.episode, len(s._sensors), len(s._controllers))


def histogram_ctx() -> Ctx:
    hist = LatenessHistogram()
    for v in (1, 50, 500, 70_000):
        hist.add(v)
    return Ctx(obj=hist)


def histogram_state(ctx: Ctx) -> object:
    h = ctx.obj
    return (h.count, h.total_ns, h.max_ns, h.buckets())


def monotonic_ctx() -> Ctx:
    source = FakeSource()
    return Ctx(obj=MonotonicClock(2, source=source, bus=watched_bus()), source=source)


def monotonic_state(ctx: Ctx) -> object:
    return (ctx.obj.now_ns(), rng_state(ctx.obj.random_source()), bus_state(ctx.obj.bus))


def pacing_ctx() -> Ctx:
    return Ctx(obj=PacingControl(2))


def pacing_state(ctx: Ctx) -> object:
    return (ctx.obj.rtf, ctx.obj.paused, ctx.obj._snapshot())


def fingerprinter_ctx() -> Ctx:
    fp = Fingerprinter()
    fp(Message("/a", 1, 0, {"x": 1}))
    return Ctx(obj=fp)


def fingerprinter_state(ctx: Ctx) -> object:
    return (ctx.obj.count, ctx.obj.hexdigest())


def recorder_ctx() -> Ctx:
    path = fresh_path()
    clock = HeapSimClock(0)
    recorder = Recorder(path, clock.bus, seed=0)
    clock.bus.publish("/a", {"v": 1})
    return Ctx(obj=recorder, path=path, clock=clock)


def recorder_state(ctx: Ctx) -> object:
    return (ctx.obj.message_count, ctx.obj.closed, file_state(ctx.path))


def reader_ctx() -> Ctx:
    return Ctx(obj=RecordingReader(recording()))


def reader_state(ctx: Ctx) -> object:
    return (ctx.obj.info, list(ctx.obj.messages()))


def replay_ctx() -> Ctx:
    clock = ReplayClock(recording(), bus=watched_bus())
    clock.advance(5)
    return Ctx(obj=clock)


def replay_state(ctx: Ctx) -> object:
    c = ctx.obj
    return (c.now_ns(), c.next_event_ns(), bus_state(c.bus))


def replay_random_ctx() -> Ctx:
    clock = ReplayClock(recording(), bus=watched_bus())
    return Ctx(obj=clock.random_source().child("imu/noise"), clock=clock)


def replay_random_state(ctx: Ctx) -> object:
    """Time, draws taken per label and labels found damaged: what a later draw depends on.

    The log's read-ahead (an open cursor, a draw read but not matched) is a cache,
    not state: a refused draw may fill it, and the next draw of the label still gets
    the recorded one (``test_a_refused_replay_draw_consumes_nothing`` proves it).
    """
    log = ctx.clock.random_source()._log
    return (ctx.clock.now_ns(), dict(log._taken), sorted(log._failed))


def sampling_ctx() -> Ctx:
    events = SamplingEvents()
    events.schedule(5, "S1", 10)
    events.schedule(9, "S2", -10)
    events.cancel(1)
    events.run_until(1)
    return Ctx(obj=events)


def sampling_state(ctx: Ctx) -> object:
    e = ctx.obj
    return (e.now_us, e.pending_count, e.physical_heap_count, e._next_token, sorted(e._heap))


def sampling_ref_ctx() -> Ctx:
    ref = simclock_oracles.SamplingReference()
    ref.schedule(5, "S1", 10)
    ref.schedule(9, "S2", -10)
    ref.cancel(1)
    ref.run_until(1)
    return Ctx(obj=ref)


def sampling_ref_state(ctx: Ctx) -> object:
    r = ctx.obj
    return (r.now_us, r.pending_count, r.physical_heap_count, list(r._entries))


def reference_ctx() -> Ctx:
    clock = simclock_oracles.ReferenceClock()
    clock.schedule(10, noop)
    clock.schedule_periodic(4, noop)
    clock.advance(1)
    return Ctx(obj=clock)


def reference_state(ctx: Ctx) -> object:
    c = ctx.obj
    return (c.now_ns(), c.pending_count(), c.next_event_ns(), list(c.failures))


def plain_ctx() -> Ctx:
    return Ctx(obj=None, bus=watched_bus(HeapSimClock(0)))


def plain_state(ctx: Ctx) -> object:
    return bus_state(ctx.bus)


def dir_ctx() -> Ctx:
    directory = Path(tempfile.mkdtemp(dir=_TMP))
    return Ctx(obj=None, dir=directory, bus=watched_bus())


def dir_ctx_state(ctx: Ctx) -> object:
    return (dir_state(ctx.dir), bus_state(ctx.bus))


def clauses_ctx() -> Ctx:
    return Ctx(obj=None)


HOSTILE_CLAUSE = ("C-X-HOSTILE", "§14", "a clause the hostile-input test registers and removes")


def forget_hostile_clause(_ctx: Ctx, _result: object) -> None:
    """An accepted register_clauses call added the test's row: remove it again."""
    simclock_conformance.CLAUSES.pop(HOSTILE_CLAUSE[0], None)


def sweep_ctx() -> Ctx:
    return Ctx(obj=None, dir=Path(tempfile.mkdtemp(dir=_TMP)))


def sweep_state(ctx: Ctx) -> object:
    return tree_state(ctx.dir)


def clauses_state(_ctx: Ctx) -> object:
    return dict(simclock_conformance.CLAUSES)


# Cases -------------------------------------------------------------------------------


def timesync_ctx() -> Ctx:
    f = simclock.TimesyncFilter()
    f.add_sample(1_000_000, 5_000_000_000, 3_000_000)
    return Ctx(obj=f)


def timesync_state(ctx: Ctx) -> object:
    return (ctx.obj.state(0), ctx.obj.model, ctx.obj.resets)


def _m(
    owner: str,
    member: str,
    setup: Callable[[], Ctx],
    snapshot: Callable[[Ctx], object],
    valid: Callable[[Ctx], dict[str, Any]],
    **opts: Any,
) -> Case:
    """A public method ``owner.member`` of the instance ``ctx.obj``."""
    return Case(owner, member, setup, lambda c: getattr(c.obj, member), valid, snapshot, **opts)


def _f(
    owner: str,
    fn: Callable[..., Any],
    setup: Callable[[], Ctx],
    snapshot: Callable[[Ctx], object],
    valid: Callable[[Ctx], dict[str, Any]],
    **opts: Any,
) -> Case:
    """A public function or constructor ``fn``."""
    return Case(owner, "", setup, lambda _c: fn, valid, snapshot, **opts)


def _clock_methods(
    owner: str, setup: Callable[[], Ctx], snap: Callable[[Ctx], object]
) -> list[Case]:
    """schedule/schedule_periodic/schedule_rate/advance of a SimClock.

    A grid clock's ``schedule*`` also take ``policy`` and ``name``.
    """
    grid = {"policy": "next_boundary", "name": "x"} if owner in _GRIDS else {}
    cases = [
        _m(owner, "schedule", setup, snap, lambda c: {"at_ns": 12, "cb": noop, **grid}),
        _m(
            owner,
            "schedule_periodic",
            setup,
            snap,
            lambda c: {"period_ns": 6, "cb": noop, "phase_ns": 4, **grid},
        ),
        _m(
            owner,
            "advance",
            setup,
            snap,
            lambda c: {"dt_ns": 6},
            # A huge dt is valid: with a periodic pending it is an endless (valid) run.
            accepts_huge=("dt_ns",),
        ),
    ]
    if owner != "ReplayClock":
        cases.append(
            _m(
                owner,
                "schedule_rate",
                setup,
                snap,
                lambda c: {"rate_hz": 250_000_000, "cb": noop, "phase_ns": 4, **grid},
            )
        )
    return cases


_GRIDS = ("GridClock", "MujocoClock")


def _grid_opts(owner: str) -> list[Case]:
    """GridClock/MujocoClock extras: policy and name on schedule*, quantise."""
    setup = grid_ctx if owner == "GridClock" else mujoco_ctx
    snap = (lambda c: clock_state(c.obj)) if owner == "GridClock" else mujoco_state
    return [
        _m(owner, "quantise", setup, snap, lambda c: {"t_ns": 3}),
        _m(
            owner,
            "attach_source",
            setup,
            lambda c: (snap(c), c.obj._source is None),
            lambda c: {"source": ListSource(8, 12)},
        ),
    ]


def _sensor_spec(**kw: Any) -> SensorSpec:
    args = {"device_id": "imu0", "period_ns": 4, "phase_ns": 0, "latency_ns": 2}
    args.update(kw)
    return SensorSpec(**args)


def _heap_valid(c: Ctx) -> dict[str, Any]:
    return {
        "seed": 1,
        "start_ns": 0,
        "step_ns": 1,
        "bus": None,
        "compact_threshold": 64,
        "draw_observer": None,
    }


def _cases() -> list[Case]:
    heap_snap = lambda c: clock_state(c.obj)  # noqa: E731
    grid_snap = heap_snap
    cases: list[Case] = []
    # -- core -------------------------------------------------------------------------
    cases += [
        _f("HeapSimClock", HeapSimClock, plain_ctx, plain_state, _heap_valid),
        *_clock_methods("HeapSimClock", heap_ctx, heap_snap),
        # The core's library API (used by GridClock, Session, ReplayClock): public
        # methods of a public class, so they refuse bad input like the protocol's.
        _m(
            "HeapSimClock",
            "schedule_repeating",
            heap_ctx,
            heap_snap,
            lambda c: {"cb": noop, "phase": 4, "period": 6, "rate": None, "quantum": 3},
        ),
        _m(
            "HeapSimClock",
            "run_until",
            heap_source_ctx,
            heap_source_state,
            lambda c: {"target_ns": 12, "source": c.source},
            accepts_huge=("target_ns",),  # valid: fires a periodic forever
        ),
        _m("HeapSimClock", "skip_to", heap_ctx, heap_snap, lambda c: {"t_ns": 12}),
        _f(
            "GridClock",
            GridClock,
            plain_ctx,
            plain_state,
            lambda c: {
                "seed": 1,
                "step_ns": 2,
                "start_ns": 0,
                "bus": None,
                "default_policy": "strict",
                "on_step": None,
                "compact_threshold": 64,
            },
        ),
        *_clock_methods("GridClock", grid_ctx, grid_snap),
        *_grid_opts("GridClock"),
        _f("Bus", Bus, plain_ctx, plain_state, lambda c: {"clock": HeapSimClock(0)}),
        _m("Bus", "bind", bus_ctx, bound_bus_state, lambda c: {"clock": c.obj.clock}),
        _m(
            "Bus",
            "publish",
            bus_ctx,
            bound_bus_state,
            lambda c: {"topic": "/t", "payload": 1, "stamp_ns": 3},
        ),
        _m(
            "Bus",
            "subscribe",
            bus_ctx,
            bound_bus_state,
            lambda c: {"topic": "/t", "callback": noop},
        ),
        _m(
            "Bus",
            "publisher",
            bus_ctx,
            bound_bus_state,
            lambda c: {"topic": "/t"},
        ),
        _m(
            "Bus",
            "sender",
            bus_ctx,
            bound_bus_state,
            lambda c: {"topic": "/t"},
        ),
        _m(
            "Bus",
            "deliver",
            bus_ctx,
            bound_bus_state,
            lambda c: {"message": Message("/t", 0, 0, 1)},
        ),
        _f(
            "Event",
            Event,
            plain_ctx,
            plain_state,
            lambda c: {"kind": EventKind.PACING_LAG, "at_ns": 3, "details": {}},
        ),
        _f(
            "Event.from_json",
            Event.from_json,
            plain_ctx,
            plain_state,
            lambda c: {"data": {"kind": "PACING_LAG", "at_ns": 3, "details": {}}},
        ),
        _f(
            "Message",
            Message,
            plain_ctx,
            plain_state,
            lambda c: {
                "topic": "/t",
                "stamp_ns": 1,
                "sequence": 0,
                "payload": None,
                "encoded": b"null",
            },
            skip={"payload": "any object is a payload; the bus and the recorder judge it"},
        ),
        _f(
            "Handle",
            simclock.lowlevel.Handle,
            plain_ctx,
            plain_state,
            lambda c: {"cancel": noop, "stats": simclock.PeriodicStats},
        ),
        _f(
            "SeededRandomSource",
            SeededRandomSource,
            plain_ctx,
            plain_state,
            lambda c: {"seed": 1, "label": "/a", "observer": None},
        ),
        _m("SeededRandomSource", "child", random_ctx, random_state, lambda c: {"label": "c/d"}),
        _m(
            "SeededRandomSource",
            "uniform",
            random_ctx,
            random_state,
            lambda c: {"a": 0.0, "b": 1.0},
        ),
        _m(
            "SeededRandomSource",
            "normal",
            random_ctx,
            random_state,
            lambda c: {"mu": 0.0, "sigma": 1.0, "size": 3},
        ),
        _m(
            "SeededRandomSource",
            "integers",
            random_ctx,
            random_state,
            lambda c: {"low": 0, "high": 10, "size": 3},
        ),
        _f(
            "callback_failure_event",
            simclock.lowlevel.callback_failure_event,
            plain_ctx,
            plain_state,
            lambda c: {"at_ns": 1, "cb": noop, "exc": ValueError("x"), "extra": None},
            skip={"cb": "any object: it is only named (callback_name never raises)"},
        ),
        _f(
            "publish_callback_failure",
            simclock.lowlevel.publish_callback_failure,
            plain_ctx,
            plain_state,
            lambda c: {"bus": c.bus, "at_ns": 1, "cb": noop, "exc": ValueError("x"), "extra": None},
            skip={"cb": "any object: it is only named (callback_name never raises)"},
        ),
        _f(
            "callback_name",
            simclock.callback_name,
            plain_ctx,
            plain_state,
            lambda c: {"cb": noop},
        ),
        _f(
            "describe_exception",
            simclock.lowlevel.describe_exception,
            plain_ctx,
            plain_state,
            lambda c: {"exc": ValueError("x"), "limit": 40},
            skip={"exc": "any exception: describing one never raises (C-ERR-1)"},
        ),
        _f(
            "run_in_child",
            simclock.lowlevel.run_in_child,
            plain_ctx,
            plain_state,
            lambda c: {
                "module": "simclock.core",
                "args": [],
                "hash_seed": 0,
                "what": "x",
                "stdin": b"",
                "timeout_s": 60.0,
                "cwd": None,
            },
            accepts_huge=("timeout_s",),  # valid: a long timeout
        ),
        _f(
            "check_time_ns",
            simclock.lowlevel.check_time_ns,
            plain_ctx,
            plain_state,
            lambda c: {"value": 1, "name": "x"},
            skip={"name": "the caller's own label for its argument, used only in the message"},
        ),
        _f(
            "seconds_to_ns",
            simclock.seconds_to_ns,
            plain_ctx,
            plain_state,
            lambda c: {"seconds": "0.002", "name": "x"},
            skip={"name": "the caller's own label for its argument, used only in the message"},
        ),
        _f(
            "EventKind",
            simclock.EventKind,
            plain_ctx,
            plain_state,
            lambda c: {"value": "PACING_LAG"},
        ),
    ]
    # -- realtime --------------------------------------------------------------------------
    cases += [
        _f(
            "MonotonicClock",
            MonotonicClock,
            plain_ctx,
            plain_state,
            lambda c: {"seed": 1, "source": FakeSource(), "bus": None},
        ),
        _f(
            "TimesyncFilter",
            simclock.TimesyncFilter,
            plain_ctx,
            plain_state,
            lambda c: {
                "max_rtt_ns": 50_000_000,
                "max_deviation_ns": 100_000_000,
                "reset_after": 3,
                "window": 512,
                "window_ns": 60_000_000_000,
                "converge_samples": 30,
                "skew_sigma_ppb": 100_000,
                "max_skew_ppb": 1_000_000,
                "quality_floor_ns": 500_000,
                "slew_ppb": 5_000_000,
            },
        ),
        _m(
            "TimesyncFilter",
            "add_sample",
            timesync_ctx,
            timesync_state,
            lambda c: {
                "send_ns": 10_000_000,
                "peer_ns": 5_009_000_000,
                "recv_ns": 12_000_000,
                "at_ns": None,
            },
        ),
        *(
            _m("TimesyncFilter", method, timesync_ctx, timesync_state, lambda c: {"host_ns": 7})
            for method in ("peer_ns", "timeline_ns", "state")
        ),
        _f(
            "TimesyncVerdict",
            simclock.TimesyncVerdict,
            plain_ctx,
            plain_state,
            lambda c: {"value": "RESET"},
        ),
        _f(
            "MavlinkTimeSource",
            simclock.MavlinkTimeSource,
            plain_ctx,
            plain_state,
            # Port 9 (discard) on loopback: nothing answers, so even a valid call ends in
            # the documented RuntimeError after wait_ns; hostile values are refused first.
            lambda c: {
                "connection": "udpout:127.0.0.1:9",
                "baud": 115200,
                "source_system": 1,
                "source_component": 191,
                "target_system": 0,
                "target_component": 0,
                "interval_ns": 1_000_000,
                "initial_interval_ns": 1_000_000,
                "wait_ns": 1_000_000,
                "silence_ns": 1_000_000_000,
                "answer": "timeline",
                "heartbeat_ns": None,
                "bus": None,
                "filter": None,
            },
            runtime=True,
            valid_call=False,  # a valid call needs an autopilot (tests/test_mavlink_time.py)
        ),
        _f(
            "PhcTimeSource",
            simclock.PhcTimeSource,
            plain_ctx,
            plain_state,
            lambda c: {"path": "/dev/null"},
            runtime=True,
            valid_call=False,  # a valid call needs a PTP clock (tests/test_phc.py)
        ),
        _f("LatenessHistogram", LatenessHistogram, plain_ctx, plain_state, lambda c: {}),
        _m("LatenessHistogram", "add", histogram_ctx, histogram_state, lambda c: {"value_ns": 3}),
        _m(
            "LatenessHistogram",
            "percentile_ns",
            histogram_ctx,
            histogram_state,
            lambda c: {"p": 50},
        ),
        _m(
            "LatenessHistogram",
            "bucket_bounds",
            histogram_ctx,
            histogram_state,
            lambda c: {"index": 130},
        ),
        _f("PacingControl", PacingControl, plain_ctx, plain_state, lambda c: {"rtf": 1}),
        _m("PacingControl", "set_rtf", pacing_ctx, pacing_state, lambda c: {"rtf": 3}),
        _f(
            "PacingMode",
            simclock.PacingMode,
            plain_ctx,
            plain_state,
            lambda c: {"value": "unbounded"},
        ),
        _f(
            "PeriodicThreadHandle",
            simclock.PeriodicThreadHandle,
            plain_ctx,
            plain_state,
            lambda c: {
                "cancel": noop,
                "stats": simclock.PeriodicStats,
                "jitter": noop,
                "thread": None,
            },
        ),
        _f(
            "schedule_periodic_thread",
            simclock.schedule_periodic_thread,
            monotonic_ctx,
            monotonic_state,
            lambda c: {
                "period_ns": 10**12,
                "cb": noop,
                "clock": c.obj,
                "phase_ns": 0,
                "name": "t",
                "bus": None,
                "spin_ns": 0,
                "sleep": None,
                "priority": None,
            },
            runtime=True,  # priority: SCHED_FIFO refused by the OS is the documented RuntimeError
            cleanup=_worker_survives,
        ),
        _f(
            "run_paced",
            simclock.run_paced,
            heap_ctx,
            heap_snap,
            lambda c: {
                "clock": c.obj,
                "until_ns": 20,
                "rtf": 1,
                "mode": "deterministic_ci",
                "step_ns": 5,
                "lag_threshold_ns": 1000,
                "on_frame": None,
                "control": None,
                "events": None,
                "source": None,
                "sleep": None,
                "reference": simclock.PacingReference(),
            },
            accepts_huge=("until_ns",),
        ),
        _f("PacingReference", simclock.PacingReference, plain_ctx, plain_state, lambda c: {}),
    ]
    # -- sim -----------------------------------------------------------------------------
    cases += [
        _f(
            "SensorSpec",
            SensorSpec,
            plain_ctx,
            plain_state,
            lambda c: {
                "device_id": "imu0",
                "period_ns": 4,
                "phase_ns": 0,
                "latency_ns": 2,
                "policy": "strict",
                "topic": "/s",
            },
        ),
        _f(
            "ControllerSpec",
            ControllerSpec,
            plain_ctx,
            plain_state,
            lambda c: {
                "controller_id": "pd",
                "period_ns": 4,
                "phase_ns": 0,
                "policy": "strict",
                "topic": "/c",
            },
        ),
        Case(
            "SensorSpec",
            "check_grid",
            plain_ctx,
            lambda c: _sensor_spec(policy="strict").check_grid,
            lambda c: {"step_ns": 2},
            plain_state,
        ),
        Case(
            "ControllerSpec",
            "check_grid",
            plain_ctx,
            lambda c: ControllerSpec("pd", 4).check_grid,
            lambda c: {"step_ns": 2},
            plain_state,
        ),
        _f(
            "Sample.from_json",
            simclock.Sample.from_json,
            plain_ctx,
            plain_state,
            lambda c: {
                "data": {
                    "device": "imu0",
                    "index": 0,
                    "episode": 0,
                    "episode_start_ns": 0,
                    "nominal_acquisition_ns": 1,
                    "acquisition_ns": 2,
                    "requested_delivery_ns": 3,
                    "delivery_ns": 4,
                    "values": [0.5],
                }
            },
        ),
        _f(
            "Policy",
            simclock.Policy,
            plain_ctx,
            plain_state,
            lambda c: {"value": "strict"},
        ),
        _f(
            "MujocoClock",
            simclock.MujocoClock,
            plain_ctx,
            plain_state,
            lambda c: {
                "model": mujoco_model(),
                "seed": 1,
                "data": None,
                "keyframe": None,
                "start_ns": 0,
                "bus": None,
                "default_policy": "strict",
            },
        ),
        *_clock_methods("MujocoClock", mujoco_ctx, mujoco_state),
        *_grid_opts("MujocoClock"),
        _m("MujocoClock", "sensor_slice", mujoco_ctx, mujoco_state, lambda c: {"name": "angle"}),
        _m("MujocoClock", "actuator", mujoco_ctx, mujoco_state, lambda c: {"name": "motor"}),
        _m("MujocoClock", "read_sensor", mujoco_ctx, mujoco_state, lambda c: {"name": "angle"}),
        _f(
            "Session",
            Session,
            plain_ctx,
            plain_state,
            lambda c: {
                "clock": GridClock(1, 1_000_000),
                "seed": None,
                "clock_period_ns": None,
                "clock_topic": "/clock",
                "on_reset": None,
                "draw_observer": None,
            },
        ),
        _m(
            "Session",
            "add_sensor",
            unstarted_session_ctx,
            unstarted_session_state,
            lambda c: {"spec": SensorSpec("imu1", 2_000_000), "read": lambda n: [0.0]},
        ),
        _m(
            "Session",
            "add_controller",
            unstarted_session_ctx,
            unstarted_session_state,
            lambda c: {"spec": ControllerSpec("pd", 2_000_000), "step": lambda latest: None},
        ),
        _m(
            "Session",
            "advance",
            session_ctx,
            session_state,
            lambda c: {"dt_ns": 1_000_000},
            accepts_huge=("dt_ns",),
        ),
        _m(
            "Session",
            "run_until",
            session_ctx,
            session_state,
            lambda c: {"session_ns": 5_000_000},
            accepts_huge=("session_ns",),
        ),
        _m("Session", "start", session_ctx, session_state, lambda c: {"seed": None}, runtime=True),
        _m("Session", "reset_episode", session_ctx, session_state, lambda c: {"seed": 3}),
        _m(
            "Session",
            "noise_stream",
            session_ctx,
            session_state,
            lambda c: {"component_id": "sensors/imu0", "stream": "noise"},
        ),
        _m(
            "Session",
            "stats",
            session_ctx,
            session_state,
            lambda c: {"component_id": "sensors/imu0"},
        ),
        _f(
            "component_stream",
            simclock.component_stream,
            plain_ctx,
            plain_state,
            lambda c: {
                "seed": 1,
                "component_id": "sensors/imu0",
                "stream": "noise",
                "observer": None,
            },
        ),
        _f(
            "episode_seed",
            simclock.episode_seed,
            plain_ctx,
            plain_state,
            lambda c: {"session_seed": 1, "episode": 2},
        ),
        _f(
            "load_scenario",
            simclock.load_scenario,
            plain_ctx,
            plain_state,
            lambda c: {"path": scenario_file()},
        ),
        _f(
            "build_session",
            simclock.build_session,
            plain_ctx,
            plain_state,
            lambda c: {
                "scenario": simclock.load_scenario(scenario_file()),
                "seed": None,
                "bus": None,
                "draw_observer": None,
            },
        ),
        _f(
            "run_scenario",
            simclock.run_scenario,
            dir_ctx,
            dir_ctx_state,
            lambda c: {
                "scenario": simclock.load_scenario(scenario_file()),
                "seed": None,
                "mode": None,
                "out": None,
                "progress": None,
                "chunk_ns": 1_000_000,
                "source": None,
                "sleep": None,
                "subscriber": None,
            },
            skip={"out": "a path: refusals and partial files are tests/test_scenario.py's"},
        ),
    ]
    # -- sweeps ------------------------------------------------------------------------
    cases += [
        Case(
            "sweep",
            "",
            sweep_ctx,
            lambda _c: sweep_until_cluster,
            lambda c: {
                "scenario": simclock.load_scenario(scenario_file()),
                "seeds": "0:2",
                "out": c.dir / "sweep",
                "workers": None,
                "scheduler": None,
                "record": "none",
                "audit": 0,
                "runner": None,
                "progress": None,
            },
            sweep_state,
            skip={
                "out": "a path: the OS's refusals (OSError, as open()) are tests/test_sweep*.py's; "
                "the type check is test_sweep_quotes_refused_values_safely's"
            },
        ),
    ]
    # -- recording -------------------------------------------------------------------------
    cases += [
        _f("Fingerprinter", Fingerprinter, plain_ctx, plain_state, lambda c: {}),
        _m(
            "Fingerprinter",
            "__call__",
            fingerprinter_ctx,
            fingerprinter_state,
            lambda c: {"message": Message("/b", 2, 1, [1, 2])},
        ),
        _f(
            "trace_fingerprint",
            simclock.trace_fingerprint,
            plain_ctx,
            plain_state,
            lambda c: {"messages": [Message("/b", 2, 1, [1, 2])]},
        ),
        _f(
            "RawPayload",
            simclock.RawPayload,
            plain_ctx,
            plain_state,
            lambda c: {"encoding": "cdr", "schema": "", "data": b"\x00"},
        ),
        _f(
            "Recorder",
            Recorder,
            dir_ctx,
            dir_ctx_state,
            lambda c: {
                "path": c.dir / "r.mcap",
                "bus": c.bus,
                "seed": 0,
                "metadata": None,
                "record_draws": False,
                "clock_period_ns": None,
                "start_ns": None,
                "chunk_size": 1024,
                "compression": "zstd",
            },
            cleanup=_close_result,
        ),
        _m(
            "Recorder",
            "record",
            recorder_ctx,
            recorder_state,
            lambda c: {"message": Message("/a", 0, 5, 1)},
            runtime=True,  # out of total order: documented RuntimeError
        ),
        _m(
            "Recorder",
            "clock_tick",
            recorder_ctx,
            recorder_state,
            lambda c: {"session_ns": 3},
            runtime=True,
        ),
        _f(
            "RecordingReader",
            RecordingReader,
            plain_ctx,
            plain_state,
            lambda c: {"path": recording(), "topics": None},
            cleanup=_close_result,
        ),
        _f(
            "open_recording",
            simclock.open_recording,
            plain_ctx,
            plain_state,
            lambda c: {"path": recording(), "topics": None},
            cleanup=_close_result,
        ),
        _f(
            "recover",
            simclock.recover,
            dir_ctx,
            dir_ctx_state,
            lambda c: {"path": recording(), "output": c.dir / "recovered.mcap"},
        ),
        _f(
            "export_ros2",
            simclock.export_ros2,
            dir_ctx,
            lambda c: (tree_state(c.dir), bus_state(c.bus)),
            lambda c: {"recording": recording(), "directory": c.dir / "bag"},
        ),
        _m("RecordingReader", "messages", reader_ctx, reader_state, lambda c: {"start_ns": 0}),
        _m("RecordingReader", "draws", reader_ctx, reader_state, lambda c: {"label": "/imu/noise"}),
        _m(
            "RecordingReader",
            "check_open",
            reader_ctx,
            reader_state,
            lambda c: {"what": "read"},
            runtime=True,
        ),
        _f(
            "ReplayClock",
            ReplayClock,
            plain_ctx,
            plain_state,
            lambda c: {"path": recording(), "callbacks": False, "topics": None, "bus": None},
            cleanup=_close_result,
        ),
        *_clock_methods("ReplayClock", replay_ctx, replay_state),
        _m("ReplayClock", "seek", replay_ctx, replay_state, lambda c: {"t_ns": 40}),
        _m(
            "ReplayRandomSource",
            "child",
            replay_random_ctx,
            replay_random_state,
            lambda c: {"label": "x"},
        ),
        _m(
            "ReplayRandomSource",
            "normal",
            replay_random_ctx,
            replay_random_state,
            lambda c: {"mu": 0.0, "sigma": 1.0, "size": None},
            runtime=True,  # a draw the recording does not hold: documented RuntimeError
        ),
    ]
    # -- records (SPEC §12: builtin-compatible ValueError with the bare word) ---------------
    cases += [
        _f("SamplingEvents", SamplingEvents, plain_ctx, plain_state, lambda c: {}),
        _m(
            "SamplingEvents",
            "schedule",
            sampling_ctx,
            sampling_state,
            lambda c: {"at_us": 7, "sensor_id": "S3", "millivolts": 5},
        ),
        _m("SamplingEvents", "cancel", sampling_ctx, sampling_state, lambda c: {"token": 0}),
        _m(
            "SamplingEvents",
            "run_until",
            sampling_ctx,
            sampling_state,
            lambda c: {"stop_us": 6},
            accepts_huge=(),
        ),
    ]
    # -- oracles (import no simclock: builtin TypeError/ValueError) -------------------------
    cases += [
        _f(
            "ReferenceClock",
            simclock_oracles.ReferenceClock,
            plain_ctx,
            plain_state,
            lambda c: {"start_ns": 0},
            builtin=True,
        ),
        _m(
            "ReferenceClock",
            "schedule",
            reference_ctx,
            reference_state,
            lambda c: {"at_ns": 12, "cb": noop},
            builtin=True,
        ),
        _m(
            "ReferenceClock",
            "schedule_periodic",
            reference_ctx,
            reference_state,
            lambda c: {"period_ns": 6, "cb": noop, "phase_ns": 4},
            builtin=True,
        ),
        _m(
            "ReferenceClock",
            "schedule_rate",
            reference_ctx,
            reference_state,
            lambda c: {"rate_hz": 250_000_000, "cb": noop, "phase_ns": 4},
            builtin=True,
        ),
        _m(
            "ReferenceClock",
            "advance",
            reference_ctx,
            reference_state,
            lambda c: {"dt_ns": 6},
            builtin=True,
            runtime=True,
            accepts_huge=("dt_ns",),  # valid: steps through every period
        ),
        _f(
            "SamplingReference",
            simclock_oracles.SamplingReference,
            plain_ctx,
            plain_state,
            lambda c: {},
            builtin=True,
        ),
        _m(
            "SamplingReference",
            "schedule",
            sampling_ref_ctx,
            sampling_ref_state,
            lambda c: {"at_us": 7, "sensor_id": "S3", "millivolts": 5},
            builtin=True,
        ),
        _m(
            "SamplingReference",
            "cancel",
            sampling_ref_ctx,
            sampling_ref_state,
            lambda c: {"token": 0},
            builtin=True,
        ),
        _m(
            "SamplingReference",
            "run_until",
            sampling_ref_ctx,
            sampling_ref_state,
            lambda c: {"stop_us": 6},
            builtin=True,
        ),
        _f(
            "sampling_batch",
            simclock_oracles.sampling_batch,
            plain_ctx,
            plain_state,
            lambda c: {"entries": [(1, 0, "S1", 3)], "cancelled": [], "stop_us": 5},
            builtin=True,
        ),
    ]
    # -- conformance's public helpers ------------------------------------------------------
    cases += [
        _f(
            "check_factory",
            simclock_conformance.check_factory,
            plain_ctx,
            plain_state,
            lambda c: {"factory": simclock_conformance.heap_factory, "spec": "x:y"},
        ),
        _f(
            "clause_of_test",
            simclock_conformance.clause_of_test,
            plain_ctx,
            plain_state,
            lambda c: {"test_name": "test_C_TIE_1_x"},
        ),
        _f(
            "heap_factory",
            simclock_conformance.heap_factory,
            plain_ctx,
            plain_state,
            lambda c: {"seed": 1, "bus": Bus()},
        ),
        _f(
            "hypothesis_settings",
            simclock_conformance.hypothesis_settings,
            plain_ctx,
            plain_state,
            lambda c: {"profile": "ci", "stateful": False},
        ),
        _f(
            "load_factory",
            simclock_conformance.load_factory,
            plain_ctx,
            plain_state,
            lambda c: {"spec": "simclock_conformance:heap_factory"},
        ),
        _f(
            "make_rig",
            simclock_conformance.make_rig,
            plain_ctx,
            plain_state,
            lambda c: {"factory": simclock_conformance.heap_factory, "seed": 0},
        ),
        _f(
            "not_applicable",
            simclock_conformance.not_applicable,
            plain_ctx,
            plain_state,
            lambda c: {"clock": HeapSimClock(0), "method": "schedule_rate"},
        ),
        _f(
            "register_clauses",
            simclock_conformance.register_clauses,
            clauses_ctx,
            clauses_state,
            lambda c: {"clauses": [HOSTILE_CLAUSE], "optional": None},
            cleanup=forget_hostile_clause,
        ),
        _f(
            "run",
            simclock_conformance.run,
            plain_ctx,
            plain_state,
            # Every option is checked before the spec is loaded, and this spec names no
            # module: an accepted option value is refused there (BackendValueError), so no
            # hostile value starts a suite run (minutes), and a file it would write shows.
            lambda c: {
                "spec": "no_such_module_x:factory",
                "profile": "ci",
                "json_path": None,
                "clauses": (),
                "exitfirst": False,
                "quiet": False,
                "timeout": None,
                "shrink": True,
                "hang_budget": None,
            },
            valid_call=False,  # a valid spec is a full suite run (minutes)
        ),
    ]
    return cases


def _use_clock(_ctx: Ctx, clock: Any) -> None:
    """An accepted clock must work: schedule, advance, publish and draw."""
    clock.schedule(clock.now_ns() + clock.step_ns(), noop)
    clock.advance(2 * clock.step_ns())
    clock.bus.publish("/followup", 1)
    clock.random_source().child("f").normal(0.0, 1.0)


def _advance_obj(ctx: Ctx, _result: object) -> None:
    """After an accepted schedule*, the clock still advances (nothing fails later)."""
    ctx.obj.advance(60)


def _publish_on(ctx: Ctx, _result: object) -> None:
    """After an accepted subscribe/bind, a publish still works."""
    ctx.obj.publish("/t", 2)


def _fingerprint_message(_ctx: Ctx, message: Any) -> None:
    fp = Fingerprinter()
    fp(message)
    fp.hexdigest()


def _fingerprint_payload(ctx: Ctx, payload: Any) -> None:
    _fingerprint_message(ctx, Message("/p", 0, 0, payload))


def _use_handle(_ctx: Ctx, handle: Any) -> None:
    handle.cancel()
    handle.stats()


def _use_source(_ctx: Ctx, source: Any) -> None:
    source.uniform(0.0, 1.0)
    source.child("x").normal(0.0, 1.0, size=2)


def _use_session(_ctx: Ctx, session: Any) -> None:
    session.advance(3 * session.clock.step_ns())


def _use_spec(_ctx: Ctx, spec: Any) -> None:
    spec.check_grid(1)
    session = Session(GridClock(0, 1))
    if isinstance(spec, SensorSpec):
        session.add_sensor(spec, lambda noise: [0.0])
    else:
        session.add_controller(spec, lambda latest: {"u": 1})
    session.advance(10)  # bounded: a 10**400 ns period is valid, its second firing is not due


def _use_histogram(ctx: Ctx, _result: object) -> None:
    ctx.obj.percentile_ns(99)
    ctx.obj.buckets()


def _use_monotonic(_ctx: Ctx, clock: Any) -> None:
    clock.now_ns()
    clock.random_source().normal(0.0, 1.0)


FOLLOW_UPS: dict[str, Callable[[Ctx, Any], None]] = {
    # After an accepted call, use what it made or changed: "accepted, then failing later"
    # (Bus(clock=5) failing at the first publish) is a defect the sweep reports.
    "HeapSimClock": _use_clock,
    "GridClock": _use_clock,
    **{
        f"{owner}.{method}": _advance_obj
        for owner in ("HeapSimClock", "GridClock", "MujocoClock", "ReplayClock")
        for method in ("schedule", "schedule_periodic", "schedule_rate")
        if (owner, method) != ("ReplayClock", "schedule_rate")  # a replay has no rates
    },
    "HeapSimClock.schedule_repeating": _advance_obj,
    "GridClock.attach_source": _advance_obj,
    "MujocoClock.attach_source": _advance_obj,
    "Bus": lambda _c, bus: bus.publish("/f", 1, stamp_ns=bus.clock.now_ns() if bus.clock else 0),
    "Bus.bind": _publish_on,
    "Bus.subscribe": _publish_on,
    "Bus.publisher": lambda _c, publish: publish({"a": 1}, b'{"a":1}'),
    "Bus.sender": lambda _c, send: send(b'{"a":1}', None, lambda: {"a": 1}),
    "Event": _fingerprint_payload,
    "Event.from_json": _fingerprint_payload,
    "Message": _fingerprint_message,
    "RawPayload": _fingerprint_payload,
    "Handle": _use_handle,
    "PeriodicThreadHandle": _use_handle,
    "SeededRandomSource": _use_source,
    "SeededRandomSource.child": _use_source,
    "component_stream": _use_source,
    "MonotonicClock": _use_monotonic,
    "LatenessHistogram.add": _use_histogram,
    "SensorSpec": _use_spec,
    "ControllerSpec": _use_spec,
    "Session": _use_session,
    "Session.add_sensor": lambda c, _r: c.obj.advance(3_000_000),
    "Session.add_controller": lambda c, _r: c.obj.advance(3_000_000),
    "Session.reset_episode": lambda c, _r: c.obj.advance(3_000_000),
    "Session.noise_stream": _use_source,
    "build_session": _use_session,
    "Sample.from_json": lambda _c, sample: _fingerprint_payload(_c, sample.to_json()),
}


def _with_follow_up(case: Case) -> Case:
    follow = FOLLOW_UPS.get(case.name)
    if follow is None:
        return case
    assert case.cleanup is None, case.name
    return dataclasses.replace(case, cleanup=follow)


CASES: tuple[Case, ...] = tuple(_with_follow_up(c) for c in _cases())

NOT_CALLED: dict[str, str] = {
    # constants
    "simclock.COMPILED": "constant bool (which build of the core loaded, C-NATIVE-1)",
    "simclock.CONTRACT_VERSION": "constant str",
    "simclock.EVENTS_TOPIC": "constant str",
    "simclock.TIMESYNC_TOPIC": "constant str",
    "simclock.__version__": "constant str",
    "simclock.records.MILLIVOLTS_MAX": "constant int",
    "simclock.records.MILLIVOLTS_MIN": "constant int",
    "simclock.records.SENSOR_ID_PATTERN": "constant str",
    "simclock_conformance.CLAUSES": "constant mapping (changed only by register_clauses, driven)",
    # type aliases and protocols: nothing runs when they are "called"
    "simclock.Callback": "type alias",
    "simclock.ControllerStep": "type alias",
    "simclock.DeviceRead": "type alias",
    "simclock.DrawObserver": "type alias",
    "simclock.StepHook": "type alias",
    "simclock.Subscriber": "type alias",
    "simclock.records.SamplingRecord": "TypedDict (a plain dict at run time)",
    "simclock_conformance.Factory": "type alias",
    "simclock.RandomSource": "Protocol",
    "simclock.SimClock": "Protocol",
    "simclock.SystemClock": "Protocol",
    "simclock.lowlevel.TimedSource": "Protocol",
    # exception classes: constructing one must never refuse
    "simclock.SimclockError": "exception class",
    "simclock.SimclockRuntimeError": "exception class",
    "simclock.SimclockTypeError": "exception class",
    "simclock.SimclockValueError": "exception class",
    "simclock.ScenarioError": "exception class",
    "simclock.RecordingError": "exception class",
    "simclock.BagError": "exception class",
    "simclock.lowlevel.SimclockChildError": "exception class",
    "simclock_conformance.BackendError": "exception class",
    "simclock_conformance.BackendTypeError": "exception class",
    "simclock_conformance.BackendValueError": "exception class",
    "simclock.SweepAuditError": "exception class",
    # result records the library builds and returns; frozen, so never changed later
    "simclock.PeriodicStats": "frozen result record",
    "simclock.JitterStats": "frozen result record",
    "simclock.TimesyncState": "frozen result record (TimesyncFilter.state is driven)",
    "simclock.PacingReport": "frozen result record",
    "simclock.RecordingInfo": "frozen result record",
    "simclock.RecoveryReport": "frozen result record",
    "simclock.RunResult": "frozen result record",
    "simclock.Scenario": "frozen result record (load_scenario validates, driven)",
    "simclock.PhysicsConfig": "frozen result record (load_scenario validates, driven)",
    "simclock.DeviceConfig": "frozen result record (load_scenario validates, driven)",
    "simclock.ControllerConfig": "frozen result record (load_scenario validates, driven)",
    "simclock.Sample": "frozen value record (Sample.from_json is driven)",
    # component kinds: base classes whose methods a kind of your own writes, and the
    # records load_scenario and build_session hand to them (tests/test_kinds.py drives
    # kinds through load_scenario, whose refusals are each one ScenarioError line)
    "simclock.ControllerKind": "base class for kinds of your own (methods are the user's)",
    "simclock.SensorKind": "base class for kinds of your own (methods are the user's)",
    "simclock.KindParams": "frozen record load_scenario builds for a kind's load()",
    "simclock.KindRun": "frozen record build_session builds for a kind's session",
    "simclock_oracles.FailureRecord": "frozen result record",
    "simclock_conformance.Clause": "frozen result record (register_clauses is driven)",
    "simclock_conformance.Outcome": "result record of a conformance run",
    "simclock_conformance.BackendReport": "result record of a conformance run",
    "simclock_conformance.Rig": "result record (make_rig is driven)",
    # a pytest test class: its methods are the suite itself
    "simclock_conformance.ClockConformance": "pytest suite class (tests/test_conformance_*.py)",
    # a Hypothesis state machine: its rules are driven by Hypothesis, never by hand
    "simclock_conformance.OracleMachine": "state machine class (tests/test_state_machine.py)",
    # reached through an instance, never built by users (its log is private)
    "simclock.ReplayRandomSource": "made by ReplayClock.random_source(); methods driven",
}

METHODS_NOT_DRIVEN: dict[str, str] = {
    name: "no parameter"
    for name in (
        "Bus.flush",
        "Event.to_json",
        "RecoveryReport.summary",
        "RecoveryReport.to_json",
        "Fingerprinter.hexdigest",
        "GridClock.next_event_ns",
        "GridClock.now_ns",
        "GridClock.pending_count",
        "GridClock.random_source",
        "GridClock.step_ns",
        "HeapSimClock.heap_size",
        "HeapSimClock.next_event_ns",
        "HeapSimClock.now_ns",
        "HeapSimClock.pending_count",
        "HeapSimClock.random_source",
        "HeapSimClock.step_ns",
        "LatenessHistogram.buckets",
        "LatenessHistogram.max_index",
        "MonotonicClock.now_ns",
        "MonotonicClock.random_source",
        "MujocoClock.forward",
        "MujocoClock.next_event_ns",
        "MujocoClock.now_ns",
        "MujocoClock.pending_count",
        "MujocoClock.random_source",
        "MujocoClock.reset_physics",
        "MujocoClock.step_ns",
        "PacingControl.pause",
        "PacingControl.resume",
        "RawPayload.to_json",
        "Recorder.close",
        "Recorder.fingerprint",
        "RecordingReader.close",
        "ReplayClock.close",
        "ReplayClock.end_ns",
        "ReplayClock.next_event_ns",
        "ReplayClock.now_ns",
        "ReplayClock.random_source",
        "ReplayClock.step_ns",
        "ReplayRandomSource.numpy_rng",
        "ReplayRandomSource.uniform",  # the recording holds normal draws only: normal is driven
        "ReplayRandomSource.integers",  # as uniform
        "Sample.to_json",
        "SeededRandomSource.numpy_rng",
        "Session.episode_time_ns",
        "Session.latest",
        "Session.session_time_ns",
        "ReferenceClock.now_ns",
        "ReferenceClock.step_ns",
        "ReferenceClock.pending_count",
        "ReferenceClock.next_event_ns",
        "TimesyncState.to_json",
        "MavlinkTimeSource.now_ns",
        "MavlinkTimeSource.peer_now_ns",
        "MavlinkTimeSource.state",
        "MavlinkTimeSource.close",
        "PhcTimeSource.now_ns",
        "PhcTimeSource.close",
        "MavlinkTimeSource.__call__",  # now_ns, as a MonotonicClock source
        "PhcTimeSource.__call__",  # now_ns, as a MonotonicClock source
    )
}
METHODS_NOT_DRIVEN.update(
    {
        # Instances need a live autopilot or a PTP device; ``seed`` goes straight to
        # MonotonicClock, whose seed is driven above (tests/test_mavlink_time.py and
        # tests/test_phc.py call both).
        "MavlinkTimeSource.clock": "needs a live peer; seed checked by MonotonicClock (driven)",
        "PhcTimeSource.clock": "needs a PTP device; seed checked by MonotonicClock (driven)",
        # Visible as a method only in the pure build (the compiled class's methods are
        # builtins): GridClock.advance's boundary loop, whose arguments are the caller's,
        # checked once by GridClock.advance (driven above) and not again per call.
        "HeapSimClock.run_steps": "library API; its arguments are GridClock.advance's (driven)",
    }
)

MODULES: dict[str, Any] = {
    "simclock": simclock,
    "simclock.records": simclock.records,
    "simclock.lowlevel": simclock.lowlevel,
    "simclock_oracles": simclock_oracles,
    "simclock_conformance": simclock_conformance,
}


def public_names() -> list[str]:
    """``module.name`` for every name in the four packages' ``__all__``."""
    return [f"{mod}.{name}" for mod, module in MODULES.items() for name in module.__all__]


KNOWN_OPEN: dict[str, str] = {
    # Rows with a defect found by this sweep and not fixed yet, each run as
    # xfail(strict=True): a fix turns the test red until its row is removed here.
    # Empty since issue 14's second branch fixed the last 16 (enums, recording,
    # conformance's helpers).
}
