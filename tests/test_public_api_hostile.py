# mypy: disable-error-code="arg-type,union-attr,unused-ignore"
# The calls below pass wrong types on purpose: that is what they test.
"""Every public entry refuses bad input cleanly and changes nothing (issue 14, README "Bad input").

The public API is enumerated from ``__all__`` (``simclock``, ``simclock.records``,
``oracles``, ``conformance``) and from each public class's methods; the table in
``tests/hostile_api.py`` says how to call each one. Every parameter is replaced
in turn by every hostile value of :data:`hostile_api.HOSTILE`: the call must
either accept the value or refuse it with ``TypeError``/``ValueError`` (the
``Simclock*`` subclass for simclock itself; ``RuntimeError`` where documented),
and a refused call must leave the snapshot of observable state unchanged.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import itertools
import math
import re
import signal
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hostile_api import (
    CASES,
    FOLLOW_UPS,
    HOSTILE,
    HOSTILE_CLAUSE,
    KNOWN_OPEN,
    METHODS_NOT_DRIVEN,
    MODULES,
    NOT_CALLED,
    BadEq,
    BadHash,
    BadIter,
    BadRepr,
    Case,
    FakeSource,
    HostileStr,
    ListSource,
    bind,
    in_function,
    is_huge_int,
    parameters,
    public_names,
    recording,
    rng_state,
    scenario_file,
    scenario_recording,
)
from hypothesis import given
from hypothesis import strategies as st

import simclock
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
    RawPayload,
    Sample,
    SeededRandomSource,
    SensorSpec,
    SimclockError,
    SimclockTypeError,
    SimclockValueError,
    trace_fingerprint,
)
from simclock.lowlevel import Handle

# A hostile value that reaches numpy arithmetic before it is checked warns (an overflow);
# every value is checked at the edge first, so such a warning fails the test here.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

# -- the table is the public API ------------------------------------------------------


def _short(name: str) -> str:
    return name.rsplit(".", 1)[1]


def _covered_owners() -> set[str]:
    return {case.owner.split(".")[0] for case in CASES}


def test_every_public_name_is_in_the_table() -> None:
    """A new public name fails here until it has a row (or a reason not to be called)."""
    owners = _covered_owners()
    missing = [n for n in public_names() if n not in NOT_CALLED and _short(n) not in owners]
    assert missing == []
    stale = sorted(set(NOT_CALLED) - set(public_names()))
    assert stale == []
    shorts = {_short(n) for n in public_names()}
    assert sorted(owners - shorts) == []


def test_names_not_called_are_what_the_table_says() -> None:
    """Constants are constants, records are frozen dataclasses, errors are SimclockErrors."""
    for qualified, reason in NOT_CALLED.items():
        module, name = qualified.rsplit(".", 1)
        obj = getattr(MODULES[module], name)
        if reason.startswith("constant"):
            assert isinstance(obj, str | int | dict), qualified
        elif reason == "exception class":
            assert issubclass(obj, SimclockError), qualified
        elif reason.startswith("frozen result record"):
            assert dataclasses.is_dataclass(obj), qualified
            assert obj.__dataclass_params__.frozen, qualified  # type: ignore[attr-defined]
        elif reason.startswith("frozen value record"):
            # Frozen by its own __setattr__/__delattr__ (a compiled class's fields are set by
            # its __init__ directly); tests/test_devices.py checks what they raise.
            assert dataclasses.is_dataclass(obj), qualified
            assert {"__setattr__", "__delattr__"} <= set(vars(obj)), qualified
        elif reason == "Protocol":
            assert getattr(obj, "_is_protocol", False), qualified


def _library_classes() -> Iterator[tuple[str, type]]:
    for qualified in public_names():
        if qualified in NOT_CALLED and qualified != "simclock.ReplayRandomSource":
            continue
        module, name = qualified.rsplit(".", 1)
        obj = getattr(MODULES[module], name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException | str):
            yield name, obj


def _public_methods(cls: type) -> list[str]:
    names = []
    for name in dir(cls):
        if name.startswith("_") and name != "__call__":
            continue
        member = inspect.getattr_static(cls, name)
        if isinstance(member, property):
            continue
        func = getattr(member, "__func__", member)
        module = getattr(func, "__module__", "") or ""
        if callable(func) and module.split(".")[0] in MODULES:
            names.append(name)
    return names


def test_every_public_method_is_in_the_table() -> None:
    """A new public method fails here until it has a row (or is listed as taking nothing)."""
    rows = {(c.owner, c.member) for c in CASES}
    missing = [
        f"{owner}.{method}"
        for owner, cls in _library_classes()
        for method in _public_methods(cls)
        if (owner, method) not in rows
        and f"{owner}.{method}" not in METHODS_NOT_DRIVEN
        and (f"{owner}.{method}", "") not in rows
    ]
    assert missing == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_parameter_is_driven_and_the_valid_call_succeeds(case: Case) -> None:
    ctx = case.setup()
    fn = case.target(ctx)
    params = parameters(fn)
    valid = case.valid(ctx)
    assert sorted(p.name for p in params if p.name not in case.skip) == sorted(
        k for k in valid if k not in case.skip
    )
    assert set(case.skip) | set(valid) <= {p.name for p in params}
    if not case.valid_call:
        return
    # The valid call is valid: a refusal below is the hostile value's doing.
    positional, keywords = bind(case, params, valid)
    result = fn(*positional, **keywords)
    if case.cleanup is not None:
        case.cleanup(ctx, result)


# -- driving every parameter with every hostile value ----------------------------------


class _Hang(BaseException):
    pass


def _alarm(_signum: int, _frame: object) -> None:
    raise _Hang


def _drive(case: Case, param: str, label: str, value: object) -> str | None:
    """Call ``case`` with ``param=value``; return a description of a defect, or None."""
    ctx = case.setup()
    fn = case.target(ctx)
    positional, keywords = bind(case, parameters(fn), {**case.valid(ctx), param: value})
    before = case.snapshot(ctx)
    allowed: tuple[type[BaseException], ...] = (TypeError, ValueError)
    if case.runtime:
        allowed += (RuntimeError,)
    # A hang guard only (never a speed assertion): an endless call fails instead of blocking.
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        result = fn(*positional, **keywords)
        if case.cleanup is not None:
            try:
                case.cleanup(ctx, result)
            except Exception as exc:
                failed = type(exc).__name__
                return f"{param}={label}: accepted, then failed later: {failed}: {exc}"[:300]
    except allowed as exc:
        signal.alarm(0)
        if not case.builtin and not isinstance(exc, SimclockError):
            return f"{param}={label}: builtin {type(exc).__name__}: {exc}"[:300]
        after = case.snapshot(ctx)
        if after != before:
            return f"{param}={label}: refused ({type(exc).__name__}) but state changed"
        return None
    except _Hang:
        return f"{param}={label}: still running after 20 s"
    except Exception as exc:
        signal.alarm(0)
        return f"{param}={label}: {type(exc).__name__}: {exc}"[:300]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return None


def _driven(case: Case) -> list[str]:
    ctx = case.setup()
    fn = case.target(ctx)
    if case.cleanup is not None:
        # Contexts hold nothing to release; only results do (threads, open files).
        pass
    return [p.name for p in parameters(fn) if p.name not in case.skip]


def _values_for(case: Case, param: str) -> list[tuple[str, object]]:
    return [
        (label, value)
        for label, value in HOSTILE
        if not (param in case.accepts_huge and is_huge_int(value))
    ]


def _with_known_open(cases: tuple[Case, ...]) -> list[Any]:
    return [
        pytest.param(
            case,
            id=case.name,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_OPEN[case.name])]
            if case.name in KNOWN_OPEN
            else [],
        )
        for case in cases
    ]


def test_known_open_and_follow_up_rows_exist() -> None:
    names = {c.name for c in CASES}
    assert sorted(set(KNOWN_OPEN) - names) == []
    assert sorted(set(FOLLOW_UPS) - names) == []


@pytest.mark.parametrize("case", _with_known_open(CASES))
def test_hostile_values_are_refused_cleanly(
    case: Case, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A path-like hostile value (e.g. 'x') must not litter the repository.
    monkeypatch.chdir(tmp_path)
    defects = [
        defect
        for param in _driven(case)
        for label, value in _values_for(case, param)
        if (defect := _drive(case, param, label, value)) is not None
    ]
    assert defects == []


def _pairs() -> list[tuple[Case, str]]:
    return [
        (case, param) for case in CASES if case.name not in KNOWN_OPEN for param in _driven(case)
    ]


_PAIRS = _pairs()

# Hostile objects are drawn by index: Hypothesis itself compares and reprs drawn values.
_junk = st.one_of(
    st.integers(0, len(HOSTILE) - 1).map(lambda i: ("hostile", i)),
    st.integers(),
    st.floats(),
    st.text(max_size=50),
    st.binary(max_size=20),
    st.decimals(),
    st.fractions(),
    st.lists(st.integers(), max_size=3),
    st.tuples(st.integers(), st.integers()),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@given(pair=st.sampled_from(_PAIRS), value=_junk)
def test_generated_values_are_refused_cleanly(
    pair: tuple[Case, str], value: object, tmp_path_factory: pytest.TempPathFactory
) -> None:
    case, param = pair
    if isinstance(value, tuple) and value[:1] == ("hostile",):
        value = HOSTILE[value[1]][1]
    if param in case.accepts_huge and is_huge_int(value):
        return
    # A generated str may be taken as a path (Recorder writes it): not in the repository.
    with contextlib.chdir(tmp_path_factory.getbasetemp()):
        assert _drive(case, param, type(value).__name__, value) is None


def test_coverage_numbers() -> None:
    """The size of the sweep, printed for the report (``pytest -s``)."""
    names = public_names()
    driven = sum(len(_driven(c)) for c in CASES)
    print(
        f"\npublic names: {len(names)} ({len(names) - len(NOT_CALLED)} called, "
        f"{len(NOT_CALLED)} not called with reasons); rows: {len(CASES)}; "
        f"parameters driven: {driven}; hostile values: {len(HOSTILE)}; "
        f"calls: {sum(len(_values_for(c, p)) for c in CASES for p in _driven(c))}; "
        f"rows with open defects (xfail): {len(KNOWN_OPEN)}"
    )
    assert driven > 200


# -- console scripts ------------------------------------------------------------------


def _bad_files(tmp: Path) -> dict[str, Path]:
    short = tmp / "short.mcap"
    short.write_bytes(b"abc")
    data = bytearray(scenario_recording().read_bytes())
    damaged = tmp / "damaged.mcap"
    middle = len(data) // 2
    data[middle : middle + 32] = b"\xff" * 32
    damaged.write_bytes(bytes(data))
    deep = tmp / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    garbage = tmp / "garbage.toml"
    garbage.write_bytes(b"\xff\xfe\x00\x01" * 100)
    return {"short": short, "damaged": damaged, "deep": deep, "garbage": garbage, "dir": tmp}


def _simclock_argvs(tmp: Path) -> list[list[str]]:
    f = _bad_files(tmp)
    argvs: list[list[str]] = []
    for name in ("short", "damaged", "dir", "garbage"):
        path = str(f[name])
        argvs += [
            ["info", path],
            ["replay", path],
            ["diff", path, str(recording())],
            ["timeline", path, "-o", str(tmp / "t.png")],
        ]
    for name in ("deep", "garbage", "short", "dir"):
        argvs.append(["run", str(f[name])])
    argvs += [
        ["timeline", str(recording()), "-o", str(tmp / "x.unknownext")],
        ["timeline", str(recording()), "-o", str(tmp / "t.png"), "--span", "1e9999999 s"],
        ["replay", str(recording()), "--until", "-1"],
        ["replay", str(recording()), "--until", "9" * 5000],
        ["run", "/nonexistent/x.toml", "--seed", "-1"],
        ["records", "--bogus"],
        ["info", "x" * 5000],
        [],
        ["nonsense"],
    ]
    return argvs


def _run_main(main: Callable[[list[str]], int], argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2


def test_simclock_cli_refuses_bad_files_and_arguments_with_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from simclock.cli import main

    failures = []
    for argv in _simclock_argvs(tmp_path):
        code = _run_main(main, argv)
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        usage = any(line.startswith("usage:") for line in lines)
        if argv and argv[0] == "info" and argv[1].endswith("damaged.mcap") and code == 0:
            continue  # info reads only the summary; a damaged chunk is replay's to find
        if code != 2 or "Traceback" in err or not lines or (not usage and len(lines) != 1):
            failures.append((argv[:3], code, err[-300:]))
    assert failures == []


def test_lint_and_conformance_entry_points_refuse_bad_arguments_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from simclock_conformance.entry._run import main as conformance_main
    from simclock_lint._cli import main as lint_main

    cases: list[tuple[Callable[[list[str]], int], list[str]]] = [
        (lint_main, [str(tmp_path / "missing.py")]),
        (lint_main, ["--bogus"]),
        (lint_main, ["--jobs", "-1", "."]),
        (lint_main, ["--explain", "NOPE"]),
        (conformance_main, ["no_such_module_x:f"]),
        (conformance_main, ["os:path"]),
        (conformance_main, ["x" * 5000]),
        (conformance_main, []),
        (conformance_main, ["simclock_conformance:heap_factory", "--profile", "nope"]),
        (
            conformance_main,
            ["simclock_conformance:heap_factory", "--json", str(tmp_path / "no" / "x.json")],
        ),
    ]
    failures = []
    for main, argv in cases:
        code = _run_main(main, argv)
        err = capsys.readouterr().err
        if code != 2 or "Traceback" in err:
            failures.append((main.__module__, argv[:2], code, err[-300:]))
    assert failures == []


# -- the issue's examples, one test each, exact messages -------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: Bus().deliver("x"),  # type: ignore[arg-type]
        lambda: Fingerprinter()("x"),  # type: ignore[arg-type]
        lambda: trace_fingerprint(["x"]),  # type: ignore[list-item]
    ],
    ids=["Bus.deliver", "Fingerprinter", "trace_fingerprint"],
)
def test_a_non_message_is_a_type_error_not_an_attribute_error(call: Callable[[], object]) -> None:
    with pytest.raises(
        SimclockTypeError, match=r"^message must be a simclock\.Message, got str 'x'$"
    ):
        call()


def test_fingerprinter_refusing_a_non_message_changes_nothing() -> None:
    fp = Fingerprinter()
    fp(Message("/a", 1, 0, 1))
    before = (fp.count, fp.hexdigest())
    with pytest.raises(SimclockTypeError):
        fp(5)  # type: ignore[arg-type]
    assert (fp.count, fp.hexdigest()) == before


def test_event_from_json_of_a_numpy_int_is_a_type_error() -> None:
    with pytest.raises(
        SimclockTypeError,
        match=r"^data must be a mapping as made by Event\.to_json\(\), got int64 np\.int64\(3\)$",
    ):
        Event.from_json(np.int64(3))  # type: ignore[arg-type]


def test_sample_from_json_names_the_missing_key() -> None:
    with pytest.raises(
        SimclockValueError,
        match=r"^data has no 'device'; a sample needs the keys \['device', 'index', 'episode', "
        r"'episode_start_ns', 'nominal_acquisition_ns', 'acquisition_ns', "
        r"'requested_delivery_ns', 'delivery_ns', 'values'\]$",
    ):
        Sample.from_json({})


def test_sample_from_json_refuses_float_times() -> None:
    data = Sample("imu0", 0, 0, 0, 1, 2, 3, 4, (0.5,)).to_json()
    assert Sample.from_json(data) == Sample("imu0", 0, 0, 0, 1, 2, 3, 4, (0.5,))
    data["delivery_ns"] = 4.7
    with pytest.raises(
        SimclockTypeError,
        match=r"^delivery_ns must be an int of nanoseconds, got float 4\.7; "
        r"convert seconds explicitly, e\.g\. simclock\.seconds_to_ns\(\.\.\.\)$",
    ):
        Sample.from_json(data)


@pytest.mark.parametrize(
    ("step", "error", "message"),
    [
        (0, SimclockValueError, r"^step_ns must be > 0 ns, got 0$"),
        (
            2.0,
            SimclockTypeError,
            r"^step_ns must be an int of nanoseconds, got float 2\.0; convert seconds "
            r"explicitly, e\.g\. simclock\.seconds_to_ns\(\.\.\.\)$",
        ),
    ],
)
def test_check_grid_refuses_zero_and_floats(
    step: object, error: type[Exception], message: str
) -> None:
    for spec in (ControllerSpec("pd", 4), SensorSpec("imu0", 4, policy="strict")):
        with pytest.raises(error, match=message):
            spec.check_grid(step)  # type: ignore[arg-type]


def test_percentile_of_a_huge_int_is_a_value_error() -> None:
    hist = LatenessHistogram()
    hist.add(5)
    with pytest.raises(
        SimclockValueError, match=r"^p must be in \(0, 100\], got <int of 1329 bits>$"
    ):
        hist.percentile_ns(10**400)
    assert hist.percentile_ns(100) == 5


def test_bucket_bounds_of_a_huge_index_is_refused_before_any_big_number() -> None:
    top = LatenessHistogram.max_index()
    tracemalloc.start()
    try:
        with pytest.raises(
            SimclockValueError,
            match=rf"^index must be in \[0, {top}\], got 1180591620717411303424$",
        ):
            LatenessHistogram.bucket_bounds(2**70)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000  # bytes: the 2**(2**64)-bit bound of the old code was a MemoryError
    low, high = LatenessHistogram.bucket_bounds(top)
    assert high == 2**LatenessHistogram.MAX_VALUE_BITS - 1 and low < high


def test_sampling_batch_refuses_malformed_entries_with_builtin_errors() -> None:
    with pytest.raises(
        TypeError,
        match=r"^entries must be \(time_us, token, sensor_id, millivolts\) tuples, got str$",
    ):
        simclock_oracles.sampling_batch("abc", [], 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^stop_us must be an int, got str$"):
        simclock_oracles.sampling_batch([], [], "x")  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [lambda: Bus(clock=5), lambda: Bus().bind(5)], ids=["Bus", "bind"])  # type: ignore[arg-type]
def test_a_bus_refuses_a_clock_that_is_not_one_at_once(make: Callable[[], object]) -> None:
    with pytest.raises(
        SimclockTypeError,
        match=r"^clock must be a SimClock \(with now_ns\(\) and schedule\(\)\), got int 5$",
    ):
        make()


def test_a_refused_bind_leaves_the_bus_unbound() -> None:
    bus = Bus()
    with pytest.raises(SimclockTypeError):
        bus.bind(5)  # type: ignore[arg-type]
    assert bus.clock is None
    assert bus.publish("/a", 1, stamp_ns=3).sequence == 0


def test_observer_is_checked_before_any_draw() -> None:
    with pytest.raises(
        SimclockTypeError,
        match=r"^observer must be callable as observer\(label, method, args, value\) or None, "
        r"got int 5$",
    ):
        SeededRandomSource(1, observer=5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: Event(EventKind.PACING_LAG, 1.5),
            SimclockTypeError,
            r"^at_ns must be an int of nanoseconds, got float 1\.5; "
            r"convert seconds explicitly, e\.g\. simclock\.seconds_to_ns\(\.\.\.\)$",
        ),
        (
            lambda: Event(EventKind.PACING_LAG, 1, 5),
            SimclockTypeError,
            r"^details must be a mapping of str to JSON values, got int 5$",
        ),
        (
            lambda: Message("/a", -1, 0, None),
            SimclockValueError,
            r"^stamp_ns must be >= 0 ns, got -1$",
        ),
        (lambda: Message(5, 1, 0, None), SimclockTypeError, r"^topic must be a str, got int 5$"),
        (
            lambda: Message("/a", 1, True, None),
            SimclockTypeError,
            r"^sequence must be an int >= 0, got bool True$",
        ),
        (
            lambda: RawPayload("cdr", "", "text"),
            SimclockTypeError,
            r"^data must be bytes, got str 'text'$",
        ),
        (lambda: RawPayload(1, "", b""), SimclockTypeError, r"^encoding must be a str, got int 1$"),
        (lambda: Handle(cancel=5), SimclockTypeError, r"^cancel must be callable, got int 5$"),
    ],
    ids=[
        "Event.at_ns",
        "Event.details",
        "Message.stamp",
        "Message.topic",
        "Message.sequence",
        "RawPayload.data",
        "RawPayload.encoding",
        "Handle.cancel",
    ],
)
def test_value_types_validate_at_construction(
    make: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()


def test_value_types_normalise_numpy_and_str_subclasses() -> None:
    message = Message(HostileStr("/a"), np.int64(5), np.int64(2), None)  # type: ignore[arg-type]
    assert (type(message.topic), type(message.stamp_ns), type(message.sequence)) == (str, int, int)
    assert RawPayload("cdr", "", bytearray(b"ab")).data == b"ab"
    assert type(Event(EventKind.PACING_LAG, np.uint32(4)).at_ns) is int  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("draw", "error", "message"),
    [
        (
            lambda r: r.uniform(np.array([0.0, 1.0]), 2.0),
            SimclockTypeError,
            r"^a must be a real number \(int or float\), got ndarray array\(\[0\., 1\.\]\); "
            r"draw arrays with size=\.\.\.$",
        ),
        (
            lambda r: r.normal(0.0, [1.0, 2.0]),
            SimclockTypeError,
            r"^sigma must be a real number \(int or float\), got list \[1\.0, 2\.0\]; "
            r"draw arrays with size=\.\.\.$",
        ),
        (
            lambda r: r.normal(float("nan"), 1.0),
            SimclockValueError,
            r"^mu must be finite, got nan$",
        ),
        (
            lambda r: r.uniform(0.0, float("inf")),
            SimclockValueError,
            r"^b must be finite, got inf$",
        ),
        (
            lambda r: r.uniform(0, 10**400),
            SimclockValueError,
            r"^b must be finite, got <int of 1329 bits>$",
        ),
        (
            lambda r: r.normal(0.0, 1.0, size=10**12),
            SimclockValueError,
            r"^size must hold at most 134217728 elements, got 1000000000000; draw in smaller "
            r"batches$",
        ),
        (
            lambda r: r.integers(0, 10, size=(10**6, 10**6)),
            SimclockValueError,
            r"^size must hold at most 134217728 elements, got \(1000000, 1000000\); "
            r"draw in smaller batches$",
        ),
        (
            lambda r: r.integers(0, 2**64),
            SimclockValueError,
            r"^integers\(\) draws int64: need -2\*\*63 <= low < high <= 2\*\*63, got low=0, "
            r"high=18446744073709551616$",
        ),
        (
            lambda r: r.integers(0, 10, size=-1),
            SimclockValueError,
            r"^size must not be negative, got -1$",
        ),
    ],
    ids=[
        "uniform-array",
        "normal-list",
        "normal-nan",
        "uniform-inf",
        "uniform-10**400",
        "normal-size-10**12",
        "integers-size-10**12",
        "integers-2**64",
        "size-negative",
    ],
)
def test_refused_draws_draw_nothing(
    draw: Callable[[SeededRandomSource], object], error: type[Exception], message: str
) -> None:
    seen: list[object] = []
    source = SeededRandomSource(3, "x", observer=lambda *a: seen.append(a))
    twin = SeededRandomSource(3, "x")
    with pytest.raises(error, match=message):
        draw(source)
    assert rng_state(source) == rng_state(twin) and seen == []
    assert source.normal(0.0, 1.0) == twin.normal(0.0, 1.0)


def test_a_topic_whose_hash_raises_takes_one_sequence_and_is_delivered() -> None:
    clock = HeapSimClock(0)
    got: list[Message] = []
    clock.bus.subscribe("/x", got.append)
    message = clock.bus.publish(HostileStr("/x"), 1)
    assert (message.sequence, clock.bus.next_sequence, [m.sequence for m in got]) == (0, 1, [0])
    assert type(got[0].topic) is str


def test_seconds_to_ns_refuses_a_huge_exponent_without_computing_it() -> None:
    many_digits = Decimal("1." + "0" * 10**6)
    long_text = "1" * 1_000_001
    tracemalloc.start()
    try:
        with pytest.raises(SimclockValueError):
            simclock.seconds_to_ns("1e9999999")
        # Deterministic stand-in for "microseconds": 10**9999999 alone is 4 MB of digits.
        assert tracemalloc.get_traced_memory()[1] < 100_000
    finally:
        tracemalloc.stop()
    tracemalloc.start()
    try:
        with pytest.raises(
            SimclockValueError, match=r"^seconds must be below 1e31 s, got '1e9999999'$"
        ):
            simclock.seconds_to_ns("1e9999999")
        with pytest.raises(
            SimclockValueError,
            match=r"^seconds = '1e-9999999' s is not a whole number of nanoseconds \(it is below "
            r"1 ns\); refusing to round it$",
        ):
            simclock.seconds_to_ns("1e-9999999")
        with pytest.raises(
            SimclockValueError,
            match=r"^seconds has more than 60 significant digits, got Decimal\('1\.0+"
            r"\.\.\.\(truncated\); no time-int needs that many$",
        ):
            simclock.seconds_to_ns(many_digits)
        with pytest.raises(
            SimclockValueError,
            match=r"^seconds must be a decimal number of seconds of at most 200 characters, got a "
            r"str of 1000001$",
        ):
            simclock.seconds_to_ns(long_text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The 10**6-digit Decimal costs one str() of its digits: linear in its size, no more.
    assert peak < 4_000_000
    assert simclock.seconds_to_ns("0e-9999999") == 0
    assert simclock.seconds_to_ns("1e30") == 10**39
    assert simclock.seconds_to_ns(Decimal("18446744073.709551615")) == 2**64 - 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "12345678901234567890123456789 ns",
            "'12345678901234567890123456789 ns' is beyond 2**64 - 1 ns (about 584 years), the "
            "largest time-int",
        ),
        (
            "1000000000000000000000000000.4 ms",
            "'1000000000000000000000000000.4 ms' is beyond 2**64 - 1 ns (about 584 years), the "
            "largest time-int",
        ),
        (
            "0.0000000001 s",
            "'0.0000000001 s' is not a whole number of nanoseconds; refusing to round it",
        ),
        ("1" * 100 + " ns", None),
    ],
)
def test_C_GRID_4_scenario_durations_are_exact_or_refused(text: str, message: str | None) -> None:
    from simclock.sim._scenario_file import parse_duration

    with pytest.raises(simclock.ScenarioError) as info:
        parse_duration(text, "duration")
    if message is not None:
        assert str(info.value) == f"duration: {message}"
    else:
        assert str(info.value).startswith('duration: expected a duration such as "7 ms"')


def test_C_GRID_4_scenario_durations_are_exact_at_the_top_of_the_range() -> None:
    from simclock.sim._scenario_file import parse_duration

    assert parse_duration("18446744073709551615 ns") == 2**64 - 1
    assert parse_duration("18446744073.709551615 s") == 2**64 - 1
    assert parse_duration("1234567890123.456789 ms") == 1234567890123456789


def test_a_29_digit_duration_in_a_scenario_file_is_refused_not_rounded(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('duration = "12345678901234567890123456789 ns"\n[physics]\nstep = "1 ns"\n')
    with pytest.raises(
        simclock.ScenarioError,
        match=r"^duration: '12345678901234567890123456789 ns' is beyond 2\*\*64 - 1 ns",
    ):
        simclock.load_scenario(path)


def test_a_deeply_nested_scenario_file_is_a_scenario_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(
        simclock.ScenarioError,
        match=rf"^'{path}' is nested too deeply to be a scenario; flatten its tables$",
    ):
        simclock.load_scenario(path)


# -- threads: no argument the API accepts can kill a worker silently --------------------


@pytest.fixture
def thread_errors() -> Iterator[list[BaseException]]:
    """Exceptions that ended a thread (``threading.excepthook``) during the test."""
    errors: list[BaseException] = []
    previous = threading.excepthook
    threading.excepthook = lambda args: errors.append(args.exc_value)  # type: ignore[arg-type,misc]
    yield errors
    threading.excepthook = previous


@pytest.mark.parametrize(
    "kwargs", [{"period_ns": 10**400}, {"period_ns": 10**6, "phase_ns": 10**400}], ids=repr
)
def test_C_SYS_2_a_huge_period_or_phase_does_not_kill_the_worker(
    kwargs: dict[str, int], thread_errors: list[BaseException]
) -> None:
    clock = MonotonicClock(0, source=FakeSource(), bus=Bus())
    handle = simclock.schedule_periodic_thread(cb=lambda: None, clock=clock, spin_ns=0, **kwargs)  # type: ignore[arg-type]
    thread = handle.thread
    assert thread is not None
    # Wait (hang guard: 30 s) until the worker is in its sleep: that is where it used to die.
    deadline = time.monotonic() + 30  # noqa: SCK301 - host-side hang guard, not a measurement
    while not in_function(thread, "_default_sleep") and thread.is_alive():
        assert time.monotonic() < deadline  # noqa: SCK301
        time.sleep(0.001)  # noqa: SCK301 - host-side polling of a real thread
    assert thread.is_alive() and thread_errors == []
    handle.cancel()
    assert not thread.is_alive() and thread_errors == []
    # Period 10**400: the deadline at the start fired; phase 10**400: nothing yet.
    assert handle.stats() == simclock.PeriodicStats(fired=int("phase_ns" not in kwargs))


def test_C_SYS_2_a_failing_sleep_ends_the_worker_with_an_event(
    thread_errors: list[BaseException],
) -> None:
    source = FakeSource(0)
    bus = Bus()
    events: list[Event] = []
    bus.subscribe(simclock.EVENTS_TOPIC, lambda m: events.append(m.payload))

    def sleep(_duration_ns: int) -> None:
        raise OSError("no sleep for you")

    clock = MonotonicClock(0, source=source, bus=bus)
    handle = simclock.schedule_periodic_thread(100, lambda: None, clock, sleep=sleep, spin_ns=0)
    assert handle.thread is not None
    handle.thread.join(30)  # hang guard
    assert not handle.thread.is_alive() and thread_errors == []
    assert [(e.kind, e.at_ns, dict(e.details)) for e in events] == [
        (
            EventKind.SCHEDULER_CALLBACK_FAILED,
            100,
            {
                "callback": "_PeriodicThread._run",
                "error_type": "OSError",
                "error_message": "no sleep for you",
                "thread": handle.thread.name,
                "stopped": True,
            },
        )
    ]
    assert handle.stats() == simclock.PeriodicStats(fired=1, failed=1)


def test_C_SYS_2_a_source_turning_bad_ends_the_worker_with_an_event(
    thread_errors: list[BaseException],
) -> None:
    calls = iter([0, 0, 0.5])
    bus = Bus()
    events: list[Event] = []
    bus.subscribe(simclock.EVENTS_TOPIC, lambda m: events.append(m.payload))
    clock = MonotonicClock(0, source=lambda: next(calls, 0.5), bus=bus)  # type: ignore[arg-type,return-value]
    handle = simclock.schedule_periodic_thread(100, lambda: None, clock, sleep=lambda d: None)
    assert handle.thread is not None
    handle.thread.join(30)  # hang guard
    assert not handle.thread.is_alive() and thread_errors == []
    # The clock cannot stamp the report any more: it is stamped with the deadline.
    assert [(e.at_ns, e.details["error_type"], e.details["stopped"]) for e in events] == [
        (0, "SimclockTypeError", True)
    ]
    assert handle.jitter().unreported == 0 and handle.stats().failed == 1


# -- GridClock on_step: a raising hook is reported once and the step is taken ------------


def test_C_ERR_1_a_raising_on_step_is_reported_once_and_never_rerun() -> None:
    calls: list[int] = []

    def hook(k: int) -> None:
        calls.append(k)
        if k == 2:
            raise ValueError("physics diverged")

    fired: list[int] = []
    clock = GridClock(0, 10, on_step=hook)
    events: list[Event] = []
    clock.bus.subscribe(simclock.EVENTS_TOPIC, lambda m: events.append(m.payload))
    clock.schedule(20, lambda: fired.append(clock.now_ns()))
    clock.advance(25)
    clock.advance(10)
    assert calls == [1, 2, 3]
    assert fired == [20]
    assert (clock.now_ns(), clock.steps) == (35, 3)
    assert [(e.kind, e.at_ns, dict(e.details)) for e in events] == [
        (
            EventKind.SCHEDULER_CALLBACK_FAILED,
            19,
            {
                "callback": "test_C_ERR_1_a_raising_on_step_is_reported_once_and_never_rerun."
                "<locals>.hook",
                "error_type": "ValueError",
                "error_message": "physics diverged",
                "step": 2,
            },
        )
    ]


def test_C_ERR_2_an_interrupting_on_step_propagates_and_the_step_runs_again() -> None:
    calls: list[int] = []

    def hook(k: int) -> None:
        calls.append(k)
        if k == 2 and calls.count(2) == 1:
            raise KeyboardInterrupt

    clock = GridClock(0, 10, on_step=hook)
    with pytest.raises(KeyboardInterrupt):
        clock.advance(25)
    assert (clock.now_ns(), clock.steps, calls) == (19, 1, [1, 2])
    clock.advance(6)
    assert (clock.now_ns(), clock.steps, calls) == (25, 2, [1, 2, 2])


# -- CLI examples of the issue ----------------------------------------------------------


def test_cli_examples_of_the_issue_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from simclock.cli import main

    files = _bad_files(tmp_path)
    out = str(tmp_path / "t.png")
    expected = {
        ("timeline", "short"): rf"^simclock timeline: error: '{files['short']}' is not a readable "
        r"MCAP recording \(LengthError: a field of 8 bytes at offset 0 runs past the end of the "
        r"file \(3 bytes left\)\); record one with simclock run SCENARIO --out run\.mcap$",
        ("timeline", "damaged"): rf"^simclock timeline: error: '{files['damaged']}' is not a "
        r"(readable|simclock) MCAP recording \(.+\); record one with simclock run SCENARIO "
        r"--out run\.mcap$",
        ("run", "deep"): rf"^simclock run: error: '{files['deep']}' is nested too deeply to be a "
        r"scenario; flatten its tables$",
    }
    for (command, name), pattern in expected.items():
        argv = [command, str(files[name])] + (["-o", out] if command == "timeline" else [])
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1
        assert re.match(pattern, err.strip()), err
    unknown = tmp_path / "x.unknownext"
    assert main(["timeline", str(scenario_recording()), "-o", str(unknown)]) == 2
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(
        rf"simclock timeline: error: cannot write timeline '{re.escape(str(unknown))}': "
        r"unknown image format 'unknownext'; use one of ([a-z0-9]+, )+[a-z0-9]+, "
        r"e\.g\. timeline\.png",
        err,
    ), err
    assert not unknown.exists()


def test_coverage_of_hostile_values_includes_the_issue_list() -> None:
    labels = {label for label, _value in HOSTILE}
    kinds = {type(v) for _label, v in HOSTILE}
    assert {bool, float, int, str, bytes, Decimal, Fraction, type(None), np.ndarray} <= kinds
    assert {"BadIndex()", "BadEq()", "BadHash()", "BadStr()", "BadRepr()", "10**400"} <= labels
    assert BadHash in kinds


# -- entry points merged after issue 14: the core's library API, sweeps, pacing ----------


def _clock_view(clock: HeapSimClock) -> tuple[object, ...]:
    return (clock.now_ns(), clock.pending_count(), clock.next_event_ns(), clock.heap_size())


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {},
            SimclockValueError,
            r"^schedule_repeating needs period= \(ns, > 0\) or rate= \(Hz\), got period=0 and "
            r"rate=None$",
        ),
        (
            {"period": 6, "rate": 50},
            SimclockValueError,
            r"^pass period= or rate=, not both, got period=6 and rate=50$",
        ),
        (
            {"period": 6.0, "rate": 50},
            SimclockTypeError,
            r"^period must be an int of nanoseconds, got float 6\.0; convert seconds "
            r"explicitly, e\.g\. simclock\.seconds_to_ns\(\.\.\.\)$",
        ),
        (
            {"rate": 1.5},
            SimclockTypeError,
            r"^rate must be an int or fractions\.Fraction of Hz, got float 1\.5; "
            r"write Fraction\(30000, 1001\) for 29\.97 Hz$",
        ),
        ({"period": 6, "quantum": 0}, SimclockValueError, r"^quantum must be > 0 ns, got 0$"),
        ({"period": -6}, SimclockValueError, r"^period must be > 0 ns, got -6$"),
    ],
    ids=["neither", "both", "float-period-with-rate", "float-rate", "quantum-0", "period<0"],
)
def test_schedule_repeating_checks_its_arguments_and_changes_nothing(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    clock = HeapSimClock(0)
    clock.schedule(10, lambda: None)
    before = _clock_view(clock)
    with pytest.raises(error, match=message):
        clock.schedule_repeating(lambda: None, 4, **kwargs)
    assert _clock_view(clock) == before


def test_schedule_repeating_accepts_numpy_ints_and_fires_on_its_quantum() -> None:
    clock = HeapSimClock(0)
    fired: list[int] = []
    clock.schedule_repeating(
        lambda: fired.append(clock.now_ns()), np.int64(4), period=np.int64(6), quantum=np.int64(5)
    )
    clock.advance(30)
    # Nominal 4, 10, 16, 22, 28 moved up to the 5 ns grid.
    assert fired == [5, 10, 20, 25, 30]


class _NotASource:
    def next_ns(self) -> int:
        return 3

    fire = 5  # not callable


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (5, r"int 5"),
        (_NotASource(), r"_NotASource <.+>"),
        (
            BadRepr(),
            r"BadRepr <BadRepr object "
            r"with a failing __repr__>",
        ),
    ],
    ids=["int", "fire-not-callable", "BadRepr"],
)
def test_run_until_refuses_a_source_that_is_not_one_before_firing(
    source: object, shown: str
) -> None:
    clock = HeapSimClock(0)
    clock.schedule(3, lambda: None)
    before = _clock_view(clock)
    with pytest.raises(
        SimclockTypeError,
        match=rf"^source must be a TimedSource \(with next_ns\(\) and fire\(at_ns\) methods\), "
        rf"got {shown}$",
    ):
        clock.run_until(10, source)  # type: ignore[arg-type]
    assert _clock_view(clock) == before


def test_attach_source_refuses_a_non_source_at_once_and_stays_free() -> None:
    clock = GridClock(0, 2)
    with pytest.raises(
        SimclockTypeError,
        match=r"^source must be a TimedSource \(with next_ns\(\) and fire\(at_ns\) methods\), "
        r"got str 'x'$",
    ):
        clock.attach_source("x")  # type: ignore[arg-type]
    clock.advance(4)  # the refused source is not found broken here
    source = ListSource(6, 8)
    clock.attach_source(source)  # still free for the one source a clock takes
    clock.advance(4)
    assert (clock.now_ns(), source.fired, source.times) == (8, [6, 8], [])


def test_run_scenario_quotes_a_hostile_sleep_safely() -> None:
    with pytest.raises(
        SimclockTypeError,
        match=r"^sleep must be callable or None, got <BadRepr object with a failing __repr__>$",
    ):
        simclock.run_scenario(simclock.load_scenario(scenario_file()), sleep=BadRepr())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"progress": BadRepr()},
            SimclockTypeError,
            r"^progress must be callable as progress\(done, total\) or None, got <BadRepr object "
            r"with a failing __repr__>$",
        ),
        (
            {"out": BadRepr()},
            SimclockTypeError,
            r"^out must be a directory path or None, got <BadRepr object with a failing "
            r"__repr__>$",
        ),
        (
            {"record": HostileStr("/x")},
            SimclockValueError,
            r"^record must be one of \"none\", \"failing\", \"all\", got '/x'$",
        ),
        (
            {"seeds": "/a" * 50_000},
            SimclockValueError,
            r"^seeds must be \"A:B\" with integers 0 <= A < B \(B excluded\), got '(/a){59}/"
            r"\.\.\.\(truncated\)$",
        ),
        (
            {"seeds": BadRepr()},
            SimclockTypeError,
            r"^seeds must be \"A:B\" or a range, got BadRepr <BadRepr object with a failing "
            r"__repr__>$",
        ),
    ],
    ids=["progress", "out", "record-HostileStr", "seeds-long", "seeds-BadRepr"],
)
def test_sweep_quotes_refused_values_safely(
    kwargs: dict[str, Any], error: type[Exception], message: str, tmp_path: Path
) -> None:
    args: dict[str, Any] = {"seeds": "0:2", "out": tmp_path / "sweep", **kwargs}
    with pytest.raises(error, match=message):
        simclock.sweep(simclock.load_scenario(scenario_file()), **args)
    assert list(tmp_path.iterdir()) == []


def test_a_hostile_str_record_is_used_as_a_plain_str() -> None:
    from simclock.sweeps._sweep import _check_args

    record, scheduler = _check_args(
        None, None, HostileStr("tcp://h:1"), HostileStr("none"), 0, None
    )
    assert (type(record), record, type(scheduler), scheduler) == (str, "none", str, "tcp://h:1")


# -- the last KNOWN_OPEN rows: enum lookups, recording, conformance's helpers ------------

_EVENT_KINDS = (
    "'SCHEDULER_CALLBACK_FAILED', 'SUBSCRIBER_FAILED', 'PERIODIC_DEADLINE_MISSED', "
    "'PACING_LAG', 'EPISODE_RESET'"
)


@pytest.mark.parametrize(
    ("lookup", "error", "message"),
    [
        (
            lambda: EventKind(BadHash()),
            SimclockTypeError,
            rf"^EventKind value must be a str, one of {_EVENT_KINDS}, got BadHash "
            r"<hostile_api\.BadHash object at 0x[0-9a-f]+>$",
        ),
        (
            lambda: simclock.Policy(BadRepr()),
            SimclockTypeError,
            r"^Policy value must be a str, one of 'next_boundary', 'strict', got BadRepr "
            r"<BadRepr object with a failing __repr__>$",
        ),
        (
            lambda: simclock.Policy(HostileStr("/x")),
            SimclockValueError,
            r"^Policy value must be one of 'next_boundary', 'strict', got '/x'$",
        ),
        (
            lambda: simclock.PacingMode(10**400),
            SimclockTypeError,
            r"^PacingMode value must be a str, one of 'unbounded', 'realtime_paced', "
            r"'deterministic_ci', 'rendered', 'operator_training', got int <int of 1329 bits>$",
        ),
        (
            lambda: EventKind("/a" * 50_000),
            SimclockValueError,
            rf"^EventKind value must be one of {_EVENT_KINDS}, got "
            r"'(/a){59}/\.\.\.\(truncated\)$",
        ),
    ],
    ids=["EventKind-BadHash", "Policy-BadRepr", "Policy-HostileStr", "PacingMode-huge", "long"],
)
def test_enum_lookups_refuse_without_running_the_values_methods(
    lookup: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        lookup()


def test_enum_lookups_accept_members_and_str_subclasses_as_plain_values() -> None:
    assert simclock.Policy(simclock.Policy.STRICT) is simclock.Policy.STRICT
    assert simclock.Policy(HostileStr("strict")) is simclock.Policy.STRICT  # its __hash__ raises
    assert EventKind("PACING_LAG") is EventKind.PACING_LAG
    assert Event(HostileStr("PACING_LAG"), 1).kind is EventKind.PACING_LAG  # type: ignore[arg-type]
    # A member of another enum is a str but not a value of this one.
    with pytest.raises(
        SimclockValueError,
        match=r"^Policy value must be one of 'next_boundary', 'strict', got "
        r"<PacingMode\.UNBOUNDED: 'unbounded'>$",
    ):
        simclock.Policy(simclock.PacingMode.UNBOUNDED)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"bus": BadRepr()},
            SimclockTypeError,
            r"^bus must be a simclock\.Bus, got <BadRepr object with a failing __repr__>$",
        ),
        (
            {"start_ns": 10**400},
            SimclockValueError,
            r"^start_ns must be at most 2147483647999999999 ns \(the int32 seconds of the "
            r"/clock it records\), got <int of 1329 bits>$",
        ),
        (
            {"start_ns": 2147483648 * 10**9},
            SimclockValueError,
            r"^start_ns must be at most 2147483647999999999 ns \(the int32 seconds of the "
            r"/clock it records\), got 2147483648000000000$",
        ),
        (
            {"compression": HostileStr("/x")},
            SimclockValueError,
            r"^compression must be one of 'zstd', 'lz4', 'none', got '/x'$",
        ),
        (
            {"metadata": {"k": BadRepr()}},
            SimclockTypeError,
            r"^metadata must map str to str \(MCAP metadata is text\), got 'k': <BadRepr object "
            r"with a failing __repr__>; convert values with str\(\) or json\.dumps\(\)$",
        ),
        (
            {"chunk_size": BadRepr()},
            SimclockTypeError,
            r"^chunk_size must be an int of bytes, got BadRepr <BadRepr object with a failing "
            r"__repr__>$",
        ),
    ],
    ids=["bus", "start-10**400", "start-past-int32-s", "compression", "metadata", "chunk_size"],
)
def test_recorder_refuses_hostile_arguments_and_writes_nothing(
    kwargs: dict[str, Any], error: type[Exception], message: str, tmp_path: Path
) -> None:
    bus = Bus()
    args: dict[str, Any] = {"bus": bus, "seed": 0, **kwargs}
    with pytest.raises(error, match=message):
        simclock.Recorder(tmp_path / "r.mcap", **args)
    assert list(tmp_path.iterdir()) == []
    assert bus.publish("/a", 1, stamp_ns=0).sequence == 0  # nothing subscribed


class _PairsMapping(Mapping[str, str]):
    """A mapping over a list of pairs: holds HostileStr keys without hashing them."""

    def __init__(self, *pairs: tuple[str, str]) -> None:
        self._pairs = pairs

    def __getitem__(self, key: str) -> str:
        return next(v for k, v in self._pairs if str.__eq__(k, key))

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, _ in self._pairs])

    def __len__(self) -> int:
        return len(self._pairs)


def test_recorder_refuses_a_bus_clock_already_past_what_clock_can_carry(tmp_path: Path) -> None:
    from simclock.recording._format import MAX_CLOCK_NS

    clock = HeapSimClock(0, start_ns=MAX_CLOCK_NS + 1)
    with pytest.raises(
        SimclockValueError,
        match=r"^the bus clock's now_ns\(\) \(start_ns=None\) must be at most "
        r"2147483647999999999 ns \(the int32 seconds of the /clock it records\), got "
        r"2147483648000000000$",
    ):
        simclock.Recorder(tmp_path / "r.mcap", clock.bus, seed=0)
    assert list(tmp_path.iterdir()) == []
    assert clock.bus.publish("/a", 1).sequence == 0  # the refused Recorder subscribed nothing


def test_recorder_start_at_the_last_clock_time_records_and_closes(tmp_path: Path) -> None:
    from simclock.recording._format import MAX_CLOCK_NS

    path = tmp_path / "late.mcap"
    metadata = _PairsMapping((HostileStr("k"), HostileStr("v")))
    with simclock.Recorder(
        path, Bus(), seed=0, start_ns=MAX_CLOCK_NS, metadata=metadata
    ) as recorder:
        recorder.record(Message("/a", MAX_CLOCK_NS, 0, 1))
    info = simclock.RecordingReader(path).info
    assert (info.start_ns, info.end_ns, dict(info.user_metadata)) == (
        MAX_CLOCK_NS,
        MAX_CLOCK_NS,
        {"k": "v"},
    )


def test_recorder_record_quotes_a_hostile_message_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "r.mcap"
    clock = HeapSimClock(0)
    recorder = simclock.Recorder(path, clock.bus, seed=0)
    clock.bus.publish("/a", 1)
    before = (recorder.message_count, path.read_bytes())
    with pytest.raises(
        SimclockTypeError,
        match=r"^message must be a simclock\.Message, got BadRepr <BadRepr object with a "
        r"failing __repr__>$",
    ):
        recorder.record(BadRepr())  # type: ignore[arg-type]
    assert (recorder.message_count, path.read_bytes()) == before
    recorder.close()


_TOPICS = r"^topics must be an iterable of topic names or None, got "


@pytest.mark.parametrize("opener", [simclock.RecordingReader, simclock.ReplayClock])
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"path": BadRepr()},
            SimclockTypeError,
            r"^path must be a str or os\.PathLike, got <BadRepr object with a failing __repr__>$",
        ),
        (
            {"topics": BadIter()},
            SimclockTypeError,
            _TOPICS + r"BadIter <hostile_api\.BadIter object at 0x[0-9a-f]+>, which raised "
            r"HostileError when read$",
        ),
        (
            {"topics": np.array(3)},
            SimclockTypeError,
            _TOPICS + r"ndarray array\(3\), which raised TypeError when read$",
        ),
        (
            {"topics": BadRepr()},
            SimclockTypeError,
            _TOPICS + r"<BadRepr object with a failing __repr__>; write topics=\['/a'\] for one "
            r"topic$",
        ),
        (
            {"topics": itertools.count()},
            SimclockValueError,
            r"^topics must name at most 65536 topics \(an MCAP file has no more channels\), got "
            r"more from a count$",
        ),
        ({"topics": [5]}, SimclockTypeError, r"^topics must hold str, got 5$"),
    ],
    ids=["path", "topics-BadIter", "topics-0d-array", "topics-BadRepr", "topics-endless", "int"],
)
def test_readers_refuse_hostile_paths_and_topics(
    opener: Callable[..., Any], kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    args: dict[str, Any] = {"path": recording(), **kwargs}
    with pytest.raises(error, match=message):
        opener(**args)


def test_a_hostile_str_topic_filters_as_a_plain_str() -> None:
    with simclock.RecordingReader(recording(), topics=[HostileStr("/imu")]) as reader:
        assert {m.topic for m in reader.messages()} == {"/imu"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"callbacks": BadRepr()}, r"^callbacks must be a bool, got <BadRepr object "),
        ({"bus": BadRepr()}, r"^bus must be a simclock\.Bus or None, got <BadRepr object "),
    ],
    ids=["callbacks", "bus"],
)
def test_replay_clock_quotes_hostile_options_safely(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SimclockTypeError, match=message + r"with a failing __repr__>$"):
        simclock.ReplayClock(recording(), **kwargs)


def _replayed_draws(source: Any, n: int) -> list[float]:
    return [float(source.normal(0.0, 1.0)) for _ in range(n)]


def test_a_refused_replay_draw_consumes_nothing() -> None:
    with simclock.ReplayClock(recording()) as fresh:
        expected = _replayed_draws(fresh.random_source().child("imu/noise"), 5)
    with simclock.ReplayClock(recording()) as clock:
        noise = clock.random_source().child("imu/noise")
        with pytest.raises(
            simclock.SimclockRuntimeError,
            match=r"^draw 0 of label '/imu/noise': asked normal\[0\.5,1\.0,null\] but the "
            r"recording has normal\[0\.0,1\.0,null\]; replay must make the same draws as the "
            r"recorded run$",
        ):
            noise.normal(0.5, 1.0)
        with pytest.raises(SimclockValueError, match=r"^sigma must be finite, got nan$"):
            noise.normal(0.0, float("nan"))
        assert _replayed_draws(noise, 1) == expected[:1]
        with pytest.raises(simclock.SimclockRuntimeError, match=r"^draw 1 of label "):
            noise.normal(0.0, 2.0)
        assert _replayed_draws(noise, 4) == expected[1:]


# conformance's public helpers: a refusal is the library's TypeError/ValueError; the ones
# about the backend are also simclock_conformance.BackendError
# (python -m simclock_conformance: exit 2).


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: simclock_conformance.check_factory(5),
            simclock_conformance.BackendTypeError,
            r"^factory must be callable as FACTORY\(seed, bus\) -> SimClock, got int 5$",
        ),
        (
            lambda: simclock_conformance.check_factory(
                simclock_conformance.heap_factory, BadRepr()
            ),
            simclock_conformance.BackendTypeError,
            r"^spec must be a str, got BadRepr <BadRepr object with a failing __repr__>$",
        ),
        (
            lambda: simclock_conformance.check_factory(lambda seed, bus: 5, "x:y"),  # type: ignore[arg-type,return-value]
            simclock_conformance.BackendValueError,
            r"^x:y\(seed=0, bus=Bus\(\)\) returned int 5, which lacks the simclock\.SimClock "
            r"methods \(now_ns, step_ns, advance, schedule, schedule_periodic, random_source\)$",
        ),
        (
            lambda: simclock_conformance.load_factory(BadRepr()),
            simclock_conformance.BackendTypeError,
            r"^backend spec must look like MODULE:FACTORY, e\.g\. 'mypkg\.clocks:make_clock', "
            r"got BadRepr <BadRepr object with a failing __repr__>$",
        ),
        (
            lambda: simclock_conformance.load_factory("/a" * 50_000),
            simclock_conformance.BackendValueError,
            r"^backend spec must look like MODULE:FACTORY, e\.g\. 'mypkg\.clocks:make_clock', "
            r"got '(/a){59}/\.\.\.\(truncated\)$",
        ),
        (
            lambda: simclock_conformance.load_factory("no_such_module_x:factory"),
            simclock_conformance.BackendValueError,
            r"^cannot import module 'no_such_module_x' of backend spec 'no_such_module_x:factory': "
            r"ModuleNotFoundError: No module named 'no_such_module_x'; check PYTHONPATH and the "
            r"module name$",
        ),
        (
            lambda: simclock_conformance.run("simclock_conformance:heap_factory", timeout=True),
            simclock_conformance.BackendTypeError,
            r"^timeout must be a number of seconds \(int or float\) or None, got bool True$",
        ),
        (
            lambda: simclock_conformance.run("simclock_conformance:heap_factory", timeout=10**400),
            simclock_conformance.BackendValueError,
            r"^timeout must be at most 1000000 seconds \(0: no limit\), got <int of 1329 bits>$",
        ),
        (
            lambda: simclock_conformance.run("simclock_conformance:heap_factory", timeout=math.nan),
            simclock_conformance.BackendValueError,
            r"^timeout must be a number of seconds >= 0, got nan$",
        ),
        (
            lambda: simclock_conformance.run("simclock_conformance:heap_factory", profile=BadEq()),
            simclock_conformance.BackendTypeError,
            r"^profile must be one of ci, thorough, got BadEq <hostile_api\.BadEq object at "
            r"0x[0-9a-f]+>$",
        ),
        (
            lambda: simclock_conformance.run(
                "simclock_conformance:heap_factory", clauses=BadIter()
            ),
            simclock_conformance.BackendTypeError,
            r"^clauses must be a list of clause ids, got BadIter <hostile_api\.BadIter object at "
            r"0x[0-9a-f]+>, which raised HostileError when read$",
        ),
        (
            lambda: simclock_conformance.run(
                "simclock_conformance:heap_factory", clauses=[HostileStr("C-NOPE-1")]
            ),
            simclock_conformance.BackendValueError,
            r"^unknown clause ids \['C-NOPE-1'\]; known: C-TIME-1, ",
        ),
        (
            lambda: simclock_conformance.run(
                "simclock_conformance:heap_factory", quiet=np.bool_(True)
            ),
            simclock_conformance.BackendTypeError,
            r"^quiet must be True or False, got bool np\.True_$",
        ),
        (
            lambda: simclock_conformance.run("simclock_conformance:heap_factory", shrink="no"),
            simclock_conformance.BackendTypeError,
            r"^shrink must be True or False, got str 'no'$",
        ),
        (
            lambda: simclock_conformance.run("simclock_conformance:heap_factory", json_path=5),
            simclock_conformance.BackendTypeError,
            r"^json_path must be a file path \(str or os\.PathLike\) or None, got int 5$",
        ),
        (
            lambda: simclock_conformance.run(
                "simclock_conformance:heap_factory", json_path="/a" * 50_000
            ),
            simclock_conformance.BackendValueError,
            r"^--json '(/a){59}/\.\.\.\(truncated\) cannot be used \(File name too long\); "
            r"name a writable file such as report\.json$",
        ),
        (
            lambda: simclock_conformance.run(
                "simclock_conformance:heap_factory", json_path="r\0.json"
            ),
            simclock_conformance.BackendValueError,
            r"^--json 'r\\x00\.json' is not a file name; name a file such as report\.json$",
        ),
        (
            lambda: simclock_conformance.make_rig(5),
            simclock_conformance.BackendTypeError,
            r"^factory must be callable as FACTORY\(seed, bus\) -> SimClock, got int 5$",
        ),
        (
            lambda: simclock_conformance.make_rig(simclock_conformance.heap_factory, -1),
            simclock_conformance.BackendValueError,
            r"^seed must be an int >= 0, got -1$",
        ),
        (
            lambda: simclock_conformance.clause_of_test(5),
            SimclockTypeError,
            r"^test_name must be a str, got int 5$",
        ),
        (
            lambda: simclock_conformance.hypothesis_settings(BadRepr()),
            SimclockTypeError,
            r"^profile must be one of ci, thorough, got BadRepr <BadRepr object with a failing "
            r"__repr__>$",
        ),
        (
            lambda: simclock_conformance.hypothesis_settings("ci", stateful=np.array([1, 2])),
            SimclockTypeError,
            r"^stateful must be True or False, got ndarray array\(\[1, 2\]\)$",
        ),
        (
            lambda: simclock_conformance.not_applicable(HeapSimClock(0), 5),
            SimclockTypeError,
            r"^method must be a str, got int 5$",
        ),
        (
            lambda: simclock_conformance.not_applicable(HeapSimClock(0), "a b"),
            SimclockValueError,
            r"^method must be a method name, got 'a b'$",
        ),
    ],
    ids=[
        "check_factory-not-callable",
        "check_factory-spec",
        "check_factory-returns-int",
        "load_factory-BadRepr",
        "load_factory-long",
        "load_factory-no-module",
        "run-timeout-bool",
        "run-timeout-huge",
        "run-timeout-nan",
        "run-profile-BadEq",
        "run-clauses-BadIter",
        "run-clauses-unknown",
        "run-quiet-np-bool",
        "run-shrink-str",
        "run-json_path",
        "run-json_path-too-long",
        "run-json_path-NUL",
        "make_rig-factory",
        "make_rig-seed",
        "clause_of_test",
        "hypothesis_settings-profile",
        "hypothesis_settings-stateful",
        "not_applicable-int",
        "not_applicable-not-a-name",
    ],
)
def test_conformance_helpers_refuse_with_the_librarys_errors(
    call: Callable[[], object], error: type[Exception], message: str, tmp_path: Path
) -> None:
    before = dict(simclock_conformance.CLAUSES)
    with pytest.raises(error, match=message) as info:
        call()
    assert isinstance(info.value, TypeError | ValueError)
    if issubclass(error, simclock_conformance.BackendError):
        assert isinstance(info.value, SimclockTypeError | SimclockValueError)
    assert before == simclock_conformance.CLAUSES


def test_conformance_helpers_use_str_subclasses_as_plain_str() -> None:
    assert simclock_conformance.clause_of_test(HostileStr("test_C_TIE_1_fifo")) == "C-TIE-1"
    assert simclock_conformance.hypothesis_settings(HostileStr("ci")).max_examples == 30
    assert simclock_conformance.not_applicable(HeapSimClock(0), HostileStr("schedule_rate")) is None
    assert simclock_conformance.load_factory(HostileStr("simclock_conformance:heap_factory")) is (
        simclock_conformance.heap_factory
    )


@pytest.mark.parametrize(
    ("clauses", "optional", "error", "message"),
    [
        (
            5,
            None,
            SimclockTypeError,
            r"^clauses must be an iterable of \(id, section, summary\) rows, got int 5$",
        ),
        (
            BadIter(),
            None,
            SimclockTypeError,
            r"^clauses must be an iterable of \(id, section, summary\) rows, got BadIter "
            r"<hostile_api\.BadIter object at 0x[0-9a-f]+>, which raised HostileError when read$",
        ),
        (
            [HOSTILE_CLAUSE, ("C-X-B", "§1")],
            None,
            SimclockTypeError,
            r"^clauses must hold \(id, section, summary\) tuples of str, got tuple "
            r"\('C-X-B', '§1'\)$",
        ),
        (
            [HOSTILE_CLAUSE, ("C-X-B", "§1", 5)],
            None,
            SimclockTypeError,
            r"^clauses must hold \(id, section, summary\) tuples of str, got \('C-X-B', '§1', 5\)$",
        ),
        (
            [HOSTILE_CLAUSE],
            "yes",
            SimclockTypeError,
            r"^optional must be True, False or None, got str 'yes'$",
        ),
        (
            [HOSTILE_CLAUSE, (HostileStr("tie-1"), "§1", "x")],
            None,
            SimclockValueError,
            r"^clause id 'tie-1' is malformed; use the SPEC form, e\.g\. 'C-REP-1'$",
        ),
    ],
    ids=["int", "BadIter", "2-tuple", "non-str", "optional", "malformed-HostileStr"],
)
def test_register_clauses_refuses_before_registering_anything(
    clauses: object, optional: object, error: type[Exception], message: str
) -> None:
    before = dict(simclock_conformance.CLAUSES)
    with pytest.raises(error, match=message):
        simclock_conformance.register_clauses(clauses, optional=optional)  # type: ignore[arg-type]
    assert before == simclock_conformance.CLAUSES


def test_register_clauses_stores_str_subclasses_as_plain_str() -> None:
    row = (HostileStr("C-X-HOSTILE2"), HostileStr("§14"), HostileStr("a test row"))
    try:
        simclock_conformance.register_clauses([row])
        clause = simclock_conformance.CLAUSES["C-X-HOSTILE2"]
        assert [type(v) for v in (clause.id, clause.section, clause.summary)] == [str] * 3
        simclock_conformance.register_clauses([row])  # idempotent for the identical row
    finally:
        simclock_conformance.CLAUSES.pop("C-X-HOSTILE2", None)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--timeout", "1e300"],
            "timeout must be at most 1000000 seconds (0: no limit), got 1e+300",
        ),
        (["--timeout", "nan"], "timeout must be a number of seconds >= 0, got nan"),
        (["--clause", "C-NOPE-1"], "unknown clause ids ['C-NOPE-1']; known: C-TIME-1, "),
        (["--json", "/a" * 50_000], "--json '/a/a/a"),
    ],
    ids=["timeout-1e300", "timeout-nan", "unknown-clause", "json-too-long"],
)
def test_conformance_cli_refusals_stay_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from simclock_conformance.entry._run import EXIT_USAGE, main

    assert main(["simclock_conformance:heap_factory", *argv]) == EXIT_USAGE == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"python -m simclock_conformance: error: {message}") and err.count("\n") == 1
    )


# -- cost of refusing: bounded before any conversion, counted, never timed ---------------
#
# "No refusal takes more than a few milliseconds" is measured by benchmarks/refusals.py
# (wall time depends on the machine's load). Here the work is counted: a refusal of a
# larger value executes no more Python lines, and allocates at most a few copies of the
# value itself (a negation, a comparison with a Fraction: linear in what the caller
# passed), never anything sized by what the value denotes. So 10**40000 costs what 10**400
# costs plus O(its 17 KB); Decimal('1e999999999') (100 bytes) what Decimal('1e999999')
# costs; the 10**9999999 that "1e9999999" once became would be 4 MB.

_SCALED: tuple[tuple[str, object, object], ...] = (
    ("10**400 -> 10**40000", 10**400, 10**40_000),
    ("-10**400 -> -10**40000", -(10**400), -(10**40_000)),
    ("Decimal 1e999999 -> 1e999999999", Decimal("1e999999"), Decimal("1e999999999")),
    ("2**64 -> 2**6400", 2**64, 2**6400),
)


def _work(case: Case, param: str, value: object) -> tuple[int, int] | None:
    """``(Python lines executed, peak bytes allocated)`` of refusing ``value``; None if accepted."""
    ctx = case.setup()
    fn = case.target(ctx)
    positional, keywords = bind(case, parameters(fn), {**case.valid(ctx), param: value})
    lines = 0

    def local(_frame: object, event: str, _arg: object) -> Any:
        nonlocal lines
        lines += event == "line"
        return local

    def calls(_frame: object, _event: str, _arg: object) -> Any:
        return local

    tracemalloc.start()
    sys.settrace(calls)  # type: ignore[arg-type]
    try:
        result = fn(*positional, **keywords)
    except (TypeError, ValueError, RuntimeError):
        return lines, tracemalloc.get_traced_memory()[1]
    finally:
        sys.settrace(None)
        tracemalloc.stop()
    if case.cleanup is not None:
        case.cleanup(ctx, result)
    return None


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.name not in KNOWN_OPEN], ids=lambda c: c.name
)
def test_refusals_cost_the_same_whatever_the_magnitude_of_the_value(
    case: Case, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # an accepted call may write where it is told
    grows = []
    for param in _driven(case):
        for label, small, big in _SCALED:
            if param in case.accepts_huge and is_huge_int(small):
                continue
            first = _work(case, param, small)
            if first is None:
                continue  # accepted: its cost is the call's, not a refusal's
            again = _work(case, param, small)  # the first call may import or cache
            large = _work(case, param, big)
            assert again is not None
            if large is None:
                grows.append(f"{param}: {label}: the small value is refused, the large accepted")
                continue
            (lines, peak), (big_lines, big_peak) = min(first, again), large
            if big_lines > lines + 20 or big_peak > peak + 8 * sys.getsizeof(big) + 4096:
                grows.append(
                    f"{param}: {label}: {lines} -> {big_lines} lines, {peak} -> {big_peak} B"
                )
    assert grows == []
