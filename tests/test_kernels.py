"""The compiled per-firing kernels give what the plain Python formulas give, bit for bit.

`simclock.core._kernels` replaces a session's step hook, sensor reads and
``pd`` step (closures before) and a run's per-chunk folds of its delivered
samples (list comprehensions before); the fingerprints of every scenario rest on
their values (C-X-FP, tests/test_fingerprints_golden.py). These tests pin
the edge cases the golden runs do not reach: NaN, signed zeros and
infinities through the clamp, and the noisy read against numpy's float64
addition. ``make test-pure`` runs them on the pure build too.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import simclock
from simclock.core._kernels import (
    Forward,
    PdStep,
    SliceReader,
    StepHook,
    abs_errors,
    acquired_after,
    episode_times,
    lateness,
    split_by_device,
    squared_errors,
    values_at,
)
from simclock.core._random import SeededRandomSource
from simclock.core._sample import Sample

U_JSON = b'{"u":%r}'


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


class Values:
    def __init__(self, *values: float) -> None:
        self.values = values


def reference_pd(
    latest: dict[str, Any], kp: float, kd: float, target: float, lo: float, hi: float
) -> float:
    angle, rate = latest.get("a"), latest.get("r")
    u = 0.0
    if angle is not None and rate is not None:
        u = kp * (target - angle.values[0]) - kd * rate.values[1]
        u = min(max(u, lo), hi)
    return u


floats = st.floats(allow_nan=True, allow_infinity=True)


@given(floats, floats, floats, floats, floats, floats, floats)
def test_C_NATIVE_1_pd_step_is_the_formula_with_min_max_clamp(
    kp: float, kd: float, target: float, angle: float, rate: float, lo: float, hi: float
) -> None:
    ctrl = np.zeros(2)
    step = PdStep(ctrl, 1, kp, kd, target, "a", 0, "r", 1, True, lo, hi, U_JSON)
    latest = {"a": Values(angle), "r": Values(0.0, rate)}
    command, encoded = step(latest)
    expected = reference_pd(latest, kp, kd, target, lo, hi)
    assert bits(command["u"]) == bits(expected)
    assert bits(float(ctrl[1])) == bits(expected)
    assert encoded == (b'{"u":%r}' % (expected,) if math.isfinite(expected) else None)


def test_C_NATIVE_1_pd_step_signed_zeros_and_nan_keep_min_max_s_choice() -> None:
    ctrl = np.zeros(1)
    latest = {"a": Values(0.0), "r": Values(0.0, 0.0)}
    # u = 1*(0-0) - 1*0 = 0.0; max(0.0, -0.0) keeps 0.0, min(0.0, 0.0) keeps it.
    assert bits(
        PdStep(ctrl, 0, 1.0, 1.0, 0.0, "a", 0, "r", 1, True, -0.0, 0.0, U_JSON)(latest)[0]["u"]
    ) == bits(0.0)
    # u = 1*(-0.0 - 0.0) - 0*0 = -0.0: max(-0.0, 0.0) keeps -0.0.
    latest_neg = {"a": Values(0.0), "r": Values(0.0, 0.0)}
    u = PdStep(ctrl, 0, 1.0, 0.0, -0.0, "a", 0, "r", 1, True, 0.0, 1.0, U_JSON)(latest_neg)[0]["u"]
    assert bits(u) == bits(min(max(-0.0, 0.0), 1.0)) == bits(-0.0)
    command, encoded = PdStep(ctrl, 0, math.nan, 0.0, 0.0, "a", 0, "r", 1, True, -1.0, 1.0, U_JSON)(
        latest
    )
    assert math.isnan(command["u"]) and encoded is None and math.isnan(ctrl[0])


def test_C_NATIVE_1_pd_step_commands_zero_before_both_samples_unlimited_unclamped() -> None:
    ctrl = np.full(1, 7.0)
    step = PdStep(ctrl, 0, 2.0, 0.0, 1.0, "a", 0, "r", 1, False, -math.inf, math.inf, U_JSON)
    assert step({"a": Values(0.0)}) == ({"u": 0.0}, b'{"u":0.0}')
    assert ctrl[0] == 0.0
    assert step({"a": Values(-1e300), "r": Values(0.0, 0.0)}) == ({"u": 2e300}, b'{"u":2e+300}')


class Clock:
    def __init__(self) -> None:
        self.now = 0
        self.forwards: list[int] = []

    def now_ns(self) -> int:
        return self.now

    def forward(self, model: Any, data: Any) -> None:
        assert (model, data) == ("model", "data")
        self.forwards.append(self.now)


def test_C_NATIVE_1_forward_runs_once_per_instant_and_a_reset_marks_it_done() -> None:
    clock = Clock()
    forward = Forward(clock.now_ns, clock.forward, "model", "data")
    assert forward.at == -1
    forward()
    forward()
    clock.now = 5
    forward()
    forward.at = 9  # what a physics reset at 9 does after its own mj_forward
    clock.now = 9
    forward()
    assert clock.forwards == [0, 5]


@given(
    st.lists(st.floats(allow_nan=False, width=64), min_size=4, max_size=4),
    st.integers(0, 2**32),
    st.sampled_from([0.0, 0.02, 1.5]),
    st.integers(1, 3),
)
def test_C_NATIVE_1_C_X_FP_slice_reader_is_numpy_slice_plus_draws(
    data: list[float], seed: int, std: float, dim: int
) -> None:
    sensordata = np.array(data)
    clock = Clock()
    reader = SliceReader(
        Forward(clock.now_ns, clock.forward, "model", "data"), sensordata.item, 1, dim, std
    )
    noise, twin = SeededRandomSource(seed), SeededRandomSource(seed)
    values = reader(noise)
    window = sensordata[1 : 1 + dim]
    expected = (window + twin.normal(0.0, std, size=dim)).tolist() if std > 0 else window.tolist()
    assert [bits(v) for v in values] == [bits(v) for v in expected]
    assert all(type(v) is float for v in values) and type(values) is tuple
    assert clock.forwards == [0]


def test_C_NATIVE_1_step_hook_steps_the_model_once_per_call() -> None:
    calls: list[tuple[Any, Any]] = []
    hook = StepHook(lambda m, d: calls.append((m, d)), "model", "data")
    hook(0)
    hook(1)
    assert calls == [("model", "data"), ("model", "data")]


def test_C_NATIVE_1_the_kernels_are_compiled_with_the_core() -> None:
    from simclock.core import _native

    assert "simclock.core._kernels" in _native.NATIVE_MODULES
    suffix = ".py" if not simclock.COMPILED else ".so"
    import simclock.core._kernels as kernels

    assert str(kernels.__file__).endswith(suffix)


def _sample(
    device: str, nominal: int, start: int, requested: int, delivery: int, values: tuple[float, ...]
) -> Sample:
    """A sample with the fields the folds read (the others fixed)."""
    return Sample(device, 0, 0, start, nominal, nominal, requested, delivery, values)


delivered = st.builds(
    _sample,
    st.sampled_from(["a", "b", "c"]),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**64 - 1),
    st.tuples(floats, floats),
)


@given(st.lists(delivered, max_size=30), st.integers(-(2**64), 2**64), floats)
def test_C_SWEEP_1_the_folds_are_their_list_comprehensions(
    samples: list[Sample], after: int, target: float
) -> None:
    buckets: dict[str, list[Sample]] = {"a": [], "c": []}
    split_by_device(samples, buckets)
    assert buckets == {d: [s for s in samples if s.device == d] for d in "ac"}
    times = episode_times(samples)
    assert times == [s.nominal_acquisition_ns - s.episode_start_ns for s in samples]
    chosen = acquired_after(samples, times, after)
    assert chosen == [s for s in samples if s.nominal_acquisition_ns - s.episode_start_ns >= after]
    assert lateness(samples) == [s.delivery_ns - s.requested_delivery_ns for s in samples]
    read = values_at(samples, 1)
    assert [bits(v) for v in read] == [bits(float(s.values[1])) for s in samples]
    assert [bits(v) for v in abs_errors(read, target)] == [bits(abs(v - target)) for v in read]
    squares = [bits(e * e) for e in [v - target for v in read]]
    assert [bits(v) for v in squared_errors(read, target)] == squares
