"""The recorder's own MCAP records: whole files identical to ``mcap.writer.Writer``'s (C-MCAP-1).

`simclock.core._mcap_records.McapWriter` packs the message, chunk and message
index records itself. These tests feed it and the official Writer the same
calls (random ones, and the very calls a recorded run makes) and compare the
files byte for byte; the official reader reads them back.
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcap.reader import make_reader
from mcap.writer import CompressionType, Writer

import simclock
from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._mcap_records import McapWriter, draw_value_json, same_json
from simclock.recording import _recorder
from simclock.recording._fingerprint import canonical_json
from simclock.recording._format import DrawRecords, draw_record, encode_draw_value

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

_OFFICIAL = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4, "": CompressionType.NONE}

Call = tuple[str, tuple[Any, ...]]


def _official(calls: list[Call], chunk_size: int, compression: str) -> bytes:
    out = io.BytesIO()
    writer: Any = Writer(
        out, chunk_size=chunk_size, compression=_OFFICIAL[compression], enable_data_crcs=True
    )
    for name, args in calls:
        getattr(writer, name)(*args)
    return out.getvalue()


def _ours(calls: list[Call], chunk_size: int, compression: str) -> bytes:
    out = io.BytesIO()
    writer = McapWriter(out, chunk_size, compression, True)
    for name, args in calls:
        getattr(writer, name)(*args)
    return out.getvalue()


_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)


@st.composite
def _runs(draw: st.DrawFn) -> list[Call]:
    """A writer's life: start, schemas and channels, metadata and messages in any order, finish."""
    calls: list[Call] = [("start", (draw(_text), draw(_text)))]
    schemas = 0
    channels = 0
    t = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(0, 60))):
        what = draw(st.sampled_from(["schema", "channel", "metadata", *["message"] * 8]))
        if what == "schema":
            schemas += 1
            calls.append(
                ("register_schema", (draw(_text), draw(_text), draw(st.binary(max_size=40))))
            )
        elif what == "channel":
            channels += 1
            meta = draw(st.dictionaries(_text, _text, max_size=3))
            calls.append(
                (
                    "register_channel",
                    (draw(_text), draw(_text), draw(st.integers(0, schemas)), meta),
                )
            )
        elif what == "metadata":
            calls.append(
                ("add_metadata", (draw(_text), draw(st.dictionaries(_text, _text, max_size=3))))
            )
        elif channels:
            # Log times may go back: the writer keeps the minimum, as the official one does.
            t = max(0, t + draw(st.integers(-5, 2_000_000)))
            data = draw(st.binary(max_size=300))
            calls.append(
                (
                    "add_message",
                    (
                        draw(st.integers(1, channels)),
                        t,
                        data,
                        draw(st.integers(0, 2**63)),
                        draw(st.integers(0, 2**32 - 1)),
                    ),
                )
            )
    calls.append(("finish", ()))
    return calls


@settings(max_examples=60, deadline=None)
@given(
    calls=_runs(),
    chunk_size=st.sampled_from([1, 64, 700, 4096, 1024 * 1024]),
    compression=st.sampled_from(["zstd", "lz4", ""]),
)
def test_C_MCAP_1_random_writes_are_byte_identical_to_the_official_writer(
    calls: list[Call], chunk_size: int, compression: str
) -> None:
    ours = _ours(calls, chunk_size, compression)
    assert ours == _official(calls, chunk_size, compression)
    # The official reader reads every message back, in order, with every field.
    messages = [args for name, args in calls if name == "add_message"]
    back = [
        (c.id, m.log_time, m.data, m.publish_time, m.sequence)
        for _, c, m in make_reader(io.BytesIO(ours)).iter_messages(log_time_order=False)
    ]
    assert back == [tuple(m) for m in messages]


def _pure_module() -> ModuleType:
    """The module's source loaded as pure Python (its classes take any writer: `_Logged`)."""
    source = Path(_recorder.__file__).parent.parent / "core" / "_mcap_records.py"
    spec = importlib.util.spec_from_file_location("_pure_mcap_records", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _log_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Call, int, str]]:
    """The Recorder's calls into its writer, from now on (the pure build's classes)."""
    log: list[tuple[Call, int, str]] = []
    pure = _pure_module()
    monkeypatch.setattr(_recorder, "McapWriter", lambda *a: _Logged(pure, log, *a))
    monkeypatch.setattr(_recorder, "TraceRecords", pure.TraceRecords)
    monkeypatch.setattr(_recorder, "TopicSink", pure.TopicSink)
    return log


class _Logged:
    """A McapWriter that logs every call: the calls a Recorder makes, to replay elsewhere."""

    def __init__(
        self,
        pure: ModuleType,
        log: list[tuple[Call, int, str]],
        stream: Any,
        size: int,
        comp: str,
        crcs: bool,
    ) -> None:
        assert crcs is True
        self._inner = pure.McapWriter(stream, size, comp, crcs)
        self._log = log
        self._size, self._comp = size, comp

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs:  # start(profile=, library=)
                args = (*args, *kwargs.values())
            self._log.append(((name, args), self._size, self._comp))
            return method(*args)

        return call


@pytest.mark.parametrize("compression", ["zstd", "lz4", "none"])
def test_C_MCAP_1_a_recorders_file_is_the_official_writers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: str
) -> None:
    """Bus messages, events, draws, /clock ticks and metadata over many small chunks."""

    def record(out: Path) -> None:
        bus = simclock.Bus()
        with simclock.Recorder(
            out, bus, seed=7, record_draws=True, chunk_size=700, compression=compression,
            clock_period_ns=3, metadata={"k": "v"},
        ) as rec:  # fmt: skip
            clock = simclock.HeapSimClock(7, bus=bus, draw_observer=rec.draw_observer)
            noise = clock.random_source().child("noise")

            def boom() -> None:
                raise ValueError("bad")

            clock.schedule_periodic(4, lambda: bus.publish("/a", {"t": clock.now_ns()}))
            clock.schedule_periodic(5, lambda: bus.publish("/b", [noise.normal(0.0, 1.0)]))
            clock.schedule(8, boom)
            clock.advance(200)

    record(tmp_path / "compiled.mcap")  # the build under test (compiled or not)
    log = _log_calls(monkeypatch)
    out = tmp_path / "run.mcap"
    record(out)
    assert out.read_bytes() == (tmp_path / "compiled.mcap").read_bytes()
    assert [size for _, size, _ in log] == [700] * len(log)
    assert {comp for _, _, comp in log} == {{"none": ""}.get(compression, compression)}
    calls = [call for call, _, _ in log]
    assert sum(name == "add_message" for name, _ in calls) > 150
    assert out.read_bytes() == _official(calls, 700, log[0][2])


def test_C_MCAP_1_a_recorded_pendulum_run_is_the_official_writers_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_scenario(out=...)``: the calls it makes, replayed into the Writer, give its file."""
    pytest.importorskip("mujoco", reason="the pendulum needs MuJoCo (simclock[mujoco])")
    scenario = simclock.load_scenario(EXAMPLES / "pendulum.toml")
    compiled = simclock.run_scenario(scenario, out=tmp_path / "compiled.mcap")
    log = _log_calls(monkeypatch)
    out = tmp_path / "run.mcap"
    result = simclock.run_scenario(scenario, out=out)
    assert out.read_bytes() == (tmp_path / "compiled.mcap").read_bytes()
    assert compiled.fingerprint == result.fingerprint
    calls = [call for call, _, _ in log]
    assert sum(name == "add_message" for name, _ in calls) == 15_361
    assert out.read_bytes() == _official(calls, *log[0][1:])
    assert result.fingerprint == simclock.run_scenario(scenario).fingerprint


_scalars = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 1, True, 0.02]),
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
)
_args = st.tuples(_scalars, _scalars, st.one_of(st.none(), st.integers(0, 4)))


@st.composite
def _values(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["scalar", "float64", "float32", "int64", "2d"]))
    if kind == "scalar":
        return draw(_scalars)
    n = draw(st.integers(0, 4))
    floats = draw(st.lists(st.floats(width=32), min_size=n, max_size=n))
    if kind == "2d":
        return np.array(floats * 2, dtype=np.float64).reshape(2, n)
    return np.array(floats if kind != "int64" else list(range(n)), dtype=kind)


@settings(max_examples=200, deadline=None)
@given(
    draws=st.lists(
        st.tuples(
            st.sampled_from(["/a", "/b"]), st.sampled_from(["normal", "uniform"]), _args, _values()
        ),
        max_size=12,
    )
)
def test_C_REP_3_draw_records_from_templates_are_the_generic_encoders_bytes(
    draws: list[tuple[str, str, tuple[Any, ...], Any]],
) -> None:
    """Templates per (label, method, arguments): the same bytes, or the same refusal."""
    records = DrawRecords(limit=3)
    for index, (label, method, args, value) in enumerate(draws):
        for _ in range(2):  # the second time from the template, if one was made
            try:
                want: bytes | type[Exception] = draw_record(method, args, index, value)
            except (SimclockTypeError, SimclockValueError) as exc:
                want = type(exc)
            if isinstance(want, bytes):
                assert records.encode(label, method, args, index, value) == want
            else:
                with pytest.raises(want):
                    records.encode(label, method, args, index, value)


def test_C_REP_3_draw_templates_never_mix_arguments_with_equal_values() -> None:
    records = DrawRecords()
    value = np.array([0.5, -1.25])
    for args in [(0.0, 1.0, 2), (-0.0, 1.0, 2), (0, 1, 2), (False, True, 2), (0.0, 1.0, 2)]:
        for index in range(2):
            assert records.encode("/n", "normal", args, index, value) == draw_record(
                "normal", args, index, value
            )
    assert records.encode("/n", "normal", (0.0, 1.0, 2), 7, value) == (
        b'{"args":[0.0,1.0,2],"index":7,"method":"normal",'
        b'"value":{"data":[0.5,-1.25],"dtype":"float64","shape":[2]}}'
    )


@settings(max_examples=200, deadline=None)
@given(a=_args, b=_args, value=_values())
def test_C_REP_3_the_compiled_draw_path_matches_the_templates_checks(
    a: tuple[Any, ...], b: tuple[Any, ...], value: Any
) -> None:
    """The draws' argument match and value text: what the generic encoder writes.

    `TraceRecords.draw` and `DrawRecords` use them. Arguments said to be the
    same have the same JSON text (or both have none); a value's text is the
    generic encoder's (``None``: the generic encoder writes it).
    """

    def text(args: tuple[Any, ...]) -> str:
        try:
            return canonical_json(encode_draw_value(list(args)))
        except ValueError:
            return "no JSON text"

    if same_json(a, b):
        assert text(a) == text(b)
    assert same_json(a, a)
    fast = draw_value_json(value, np.ndarray, np.dtype(np.float64))
    if fast is not None:
        assert (
            draw_record("normal", (), 0, value)
            == b'{"args":[],"index":0,"method":"normal","value":%s}' % fast
        )


def test_C_REP_3_recorded_draws_take_the_compiled_path_after_the_first(tmp_path: Path) -> None:
    """Draws written by TraceRecords.draw read back as the generic encoder writes them."""
    path = tmp_path / "draws.mcap"
    bus = simclock.Bus()
    with simclock.Recorder(path, bus, seed=4, record_draws=True) as rec:
        clock = simclock.HeapSimClock(4, bus=bus, draw_observer=rec.draw_observer)
        noise = clock.random_source().child("imu")
        values = []
        for _ in range(3):
            values.append(noise.normal(0.0, 2.0, size=2))
            values.append(noise.normal(-0.0, 2.0, size=2))  # another template: -0.0
            values.append(noise.uniform(0.0, 1.0))
            clock.advance(5)
    with path.open("rb") as f:
        records = [
            m.data for _, c, m in make_reader(f).iter_messages() if c.topic == "/simclock/draws/imu"
        ]
    args = [((0.0, 2.0, 2), "normal"), ((-0.0, 2.0, 2), "normal"), ((0.0, 1.0), "uniform")] * 3
    assert records == [
        draw_record(method, a, index, value)
        for index, ((a, method), value) in enumerate(zip(args, values, strict=True))
    ]
