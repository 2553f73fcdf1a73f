"""Metrics folded in as samples arrive (C-SWEEP-1): the same numbers as over the whole list.

The reference is the computation over the whole list of delivered samples
(``math.fsum`` of every value, ``max`` of every error), written out here; the
streaming :class:`MetricStream` must give it bit for bit whatever the split of
the stream, and ``run_scenario`` must keep no sample once a chunk is folded.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from simclock import Sample
from simclock.sim._metrics import ExactSum, MetricConfig, MetricStream, compute_metrics

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = [
    ROOT / "examples" / "pendulum.toml",
    ROOT / "tests" / "data" / "scenarios" / "pendulum_episodes.toml",
    ROOT / "tests" / "data" / "scenarios" / "pendulum_latency.toml",
    ROOT / "tests" / "data" / "scenarios" / "grid_devices.toml",
]


def _whole_list(config: MetricConfig, samples: Sequence[Sample]) -> float | int | None:
    """The metric over the whole list at once: the computation the stream must equal."""
    chosen = [
        s
        for s in samples
        if s.device == config.device
        and s.nominal_acquisition_ns - s.episode_start_ns >= config.after_ns
    ]
    if config.kind == "samples":
        return len(chosen)
    if not chosen:
        return None
    if config.kind == "max_lateness":
        return max(s.delivery_ns - s.requested_delivery_ns for s in chosen)
    read = [float(s.values[config.index]) for s in chosen]
    errors = [v - config.target for v in read]
    return {
        "final": lambda: read[-1],
        "mean": lambda: math.fsum(read) / len(read),
        "max_abs_error": lambda: max(abs(e) for e in errors),
        "rms_error": lambda: math.sqrt(math.fsum(e * e for e in errors) / len(errors)),
    }[config.kind]()


def _feed(configs: Sequence[MetricConfig], samples: list[Sample], size: int) -> MetricStream:
    stream = MetricStream(configs)
    for start in range(0, len(samples), size):
        stream.add(samples[start : start + size])
    return stream


def _bits(values: dict[str, float | int | None]) -> dict[str, object]:
    return {k: v.hex() if isinstance(v, float) else v for k, v in values.items()}


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_C_SWEEP_1_streamed_metrics_equal_the_whole_list_on_the_golden_scenarios(
    path: Path,
) -> None:
    pytest.importorskip("mujoco")
    from simclock.sim._scenario import build_session, run_scenario
    from simclock.sim._scenario_file import load_scenario

    scenario = load_scenario(path)
    # Every kind on every device, after 0 and after half a run, so each kind is exercised.
    extra = [
        MetricConfig(f"{kind}_{d.spec.device_id}_{after}", kind, d.spec.device_id, after_ns=after)
        for d in scenario.devices
        for kind in ("rms_error", "max_abs_error", "mean", "final", "max_lateness", "samples")
        for after in (0, scenario.duration_ns // 2)
    ]
    configs = [*scenario.metrics, *extra]
    session = build_session(scenario, scenario.seed)
    for episode in range(scenario.episodes):
        if episode:
            session.reset_episode()
        session.run_until(session.episode_start_ns + scenario.duration_ns)
    samples = list(session.samples)  # a Session keeps them by default
    assert len(samples) > 100
    expected = _bits({c.name: _whole_list(c, samples) for c in configs})
    for size in (1, 7, 64, len(samples)):
        assert _bits(_feed(configs, samples, size).values()) == expected, size
    assert _bits(compute_metrics(configs, samples)) == expected
    result = run_scenario(scenario)
    assert _bits(dict(result.metrics)) == {c.name: expected[c.name] for c in scenario.metrics}


def test_C_SWEEP_1_run_scenario_keeps_no_sample_after_a_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run folds each chunk's samples into counts and metrics and drops them."""
    pytest.importorskip("mujoco")
    from simclock.sim import _scenario
    from simclock.sim._scenario_file import load_scenario

    made = []
    real = _scenario.build_session

    def capture(*args: object, **kwargs: object) -> object:
        session = real(*args, **kwargs)  # type: ignore[arg-type]
        made.append(session)
        return session

    monkeypatch.setattr(_scenario, "build_session", capture)
    kept: list[int] = []
    scenario = load_scenario(SCENARIOS[0])
    result = _scenario.run_scenario(
        scenario, progress=lambda done, total: kept.append(len(made[0].samples))
    )
    assert len(kept) == 100  # 10 s in chunks of 100 ms
    assert set(kept) == {0}
    assert made[0].samples == []
    assert result.samples == {"imu0": 1429, "encoder0": 5001}


def _sums_agree(values: list[float], size: int) -> None:
    acc = ExactSum()
    for start in range(0, len(values), size):
        acc.extend(values[start : start + size])
    try:
        want: object = math.fsum(values).hex()
    except (ValueError, OverflowError) as exc:
        with pytest.raises(type(exc), match=f"^{re.escape(str(exc))}$"):
            acc.value()
        return
    got = acc.value()
    assert (got.hex() if not math.isnan(got) else "nan") == (
        want if not math.isnan(math.fsum(values)) else "nan"
    )


@pytest.mark.parametrize("seed", range(6))
def test_C_SWEEP_1_exact_sum_is_fsum_of_the_stream(seed: int) -> None:
    """Wide exponents and heavy cancellation: every fold keeps the exact sum."""
    rng = random.Random(seed)
    values = []
    for _ in range(5000):
        v = rng.uniform(-1, 1) * 2.0 ** rng.randint(-1074, 1000)
        values += [v, -v * (1 + 2**-52)] if rng.random() < 0.3 else [v]
    values += [1e300, 1.0, -1e300, 2.0**-1074]
    for size in (1, 333, 1024, len(values)):
        _sums_agree(values, size)


@pytest.mark.parametrize(
    "specials",
    [[math.nan], [math.inf], [-math.inf, -math.inf], [math.inf, -math.inf], [math.nan, math.inf]],
    ids=repr,
)
def test_C_SWEEP_1_exact_sum_handles_non_finite_values_like_fsum(specials: list[float]) -> None:
    values = [0.1 * i for i in range(3000)]
    for where, special in zip((17, 1500, 2999), specials * 3, strict=False):
        values.insert(where, special)
    for size in (1, 1024, len(values)):
        _sums_agree(values, size)


def test_C_SWEEP_1_exact_sum_holds_a_bounded_number_of_values() -> None:
    acc = ExactSum()
    rng = random.Random(3)
    for _ in range(200):
        acc.extend([rng.gauss(0, 1) * 1e-3 for _ in range(500)])
        assert len(acc._terms) < 1024 + 500
    acc.extend([])
    assert acc.value() == acc.value()
