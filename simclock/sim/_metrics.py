"""Scenario metrics: numbers a sweep puts in each seed's row (C-SWEEP-1).

A scenario declares its metrics in a ``[metrics]`` table; each one is
computed from the run's delivered samples (:attr:`Session.samples`), so it is
a pure function of the trace and as deterministic as the fingerprint::

    [metrics.angle_rms]
    kind = "rms_error"     # sqrt(mean((values[index] - target)**2)) over the samples
    device = "encoder0"    # a [devices.<id>] of the scenario
    index = 0              # which value of the sample, default 0
    target = 0.0           # default 0
    after = "1 s"          # only samples acquired at EpisodeTime >= after, default "0 s"
    max = 0.05             # optional bounds: outside them the seed fails
    # min = 0.0

Kinds (``index``/``target`` apply to the value kinds; ``after`` to all):

* ``rms_error``: RMS of ``values[index] - target`` (a controller's tracking error);
* ``max_abs_error``: largest ``|values[index] - target|``;
* ``mean``: mean of ``values[index]``;
* ``final``: ``values[index]`` of the last delivered sample (a value at the end of the run);
* ``max_lateness``: largest ``delivery_ns - requested_delivery_ns`` in int ns (how much
  the grid delays a device beyond its requested latency, C-DEV-1);
* ``samples``: how many samples were delivered (int).

A metric over no samples is ``None`` (a null in the table). Values are Python
``float`` (or ``int`` for ``max_lateness`` and ``samples``), summed in
delivery order so the same trace gives bit-identical numbers in any process.
A metric with bounds whose value is ``None`` or outside them fails the seed:
:func:`metric_violation` says why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simclock.sim._devices import Sample
from simclock.sim._toml import (
    ScenarioError,
    check_id,
    check_keys,
    choice,
    integer,
    number,
    parse_duration,
    require,
    string,
    subtable,
)

__all__ = [
    "METRIC_KINDS",
    "MetricConfig",
    "compute_metrics",
    "load_metrics",
    "metric_violation",
]

METRIC_KINDS = ("rms_error", "max_abs_error", "mean", "final", "max_lateness", "samples")
_INT_KINDS = frozenset({"max_lateness", "samples"})
_VALUE_KINDS = frozenset({"rms_error", "max_abs_error", "mean", "final"})
_KEYS = ("kind", "device", "index", "target", "after", "min", "max")


@dataclass(frozen=True, slots=True)
class MetricConfig:
    """One ``[metrics.<name>]`` table, validated."""

    name: str
    kind: str
    device: str
    index: int = 0
    target: float = 0.0
    after_ns: int = 0
    minimum: float | None = None
    maximum: float | None = None

    @property
    def integer(self) -> bool:
        """Whether the value is an ``int`` (``max_lateness``, ``samples``), else a ``float``."""
        return self.kind in _INT_KINDS


def load_metrics(table: object, devices: Mapping[str, int]) -> tuple[MetricConfig, ...]:
    """Validate the ``[metrics]`` table; ``devices`` maps each device id to its values per sample.

    Errors are :class:`~simclock.ScenarioError` naming the key
    (``metrics.rms.device: 'imu9' is not a device; ...``), raised before anything runs.
    """
    metrics = []
    for name, raw in subtable(table, "metrics").items():
        prefix = f"metrics.{name}."
        check_id(name, f"metrics.{name}")
        spec = subtable(raw, f"metrics.{name}")
        check_keys(spec, prefix, _KEYS)
        kind = choice(require(spec, "kind", prefix), prefix + "kind", METRIC_KINDS)
        device = string(require(spec, "device", prefix), prefix + "device")
        if device not in devices:
            raise ScenarioError(
                prefix + "device", f"{device!r} is not a device; define [devices.{device}] first"
            )
        for key in ("index", "target"):
            if key in spec and kind not in _VALUE_KINDS:
                raise ScenarioError(prefix + key, f'does not apply to kind "{kind}"; remove it')
        index = integer(spec.get("index", 0), prefix + "index")
        if index >= devices[device]:
            raise ScenarioError(
                prefix + "index",
                f"{index} is out of range: device {device!r} has {devices[device]} values",
            )
        target = number(spec.get("target", 0.0), prefix + "target")
        after = parse_duration(spec.get("after", "0 s"), prefix + "after")
        low = None if "min" not in spec else number(spec["min"], prefix + "min")
        high = None if "max" not in spec else number(spec["max"], prefix + "max")
        if low is not None and high is not None and low > high:
            raise ScenarioError(prefix + "min", f"{low:g} is above max {high:g}")
        metrics.append(MetricConfig(name, kind, device, index, target, after, low, high))
    return tuple(metrics)


def _metric(
    config: MetricConfig, chosen: Sequence[Sample], read: list[float]
) -> float | int | None:
    """``config`` over ``chosen`` (its device's samples from ``after``, in delivery order).

    ``read`` is ``[float(s.values[config.index]) for s in chosen]`` for the
    kinds that read values (made once for all metrics of the same device,
    ``after`` and index), else empty.
    """
    kind = config.kind
    if kind == "samples":
        return len(chosen)
    if not chosen:
        return None
    if kind == "max_lateness":
        return max(s.delivery_ns - s.requested_delivery_ns for s in chosen)
    if kind == "final":
        return read[-1]
    if kind == "mean":
        # math.fsum: exactly rounded, so the result does not depend on summation order.
        return math.fsum(read) / len(read)
    errors = [v - config.target for v in read]
    if kind == "max_abs_error":
        return max(abs(e) for e in errors)
    # Invariant: load_metrics only accepts METRIC_KINDS; rms_error is the last one left.
    assert kind == "rms_error"
    return math.sqrt(math.fsum(e * e for e in errors) / len(errors))


def compute_metrics(
    configs: Sequence[MetricConfig], samples: Sequence[Sample]
) -> dict[str, float | int | None]:
    """Every metric of ``configs`` over ``samples``, in declaration order.

    O(samples + metrics * samples of the metric's device): one pass sorts the
    samples by device, keeping their delivery order; metrics of the same
    device and ``after`` share their selection, and of the same index too
    their values.
    """
    by_device: dict[str, list[Sample]] = {c.device: [] for c in configs}
    for sample in samples:
        of_device = by_device.get(sample.device)
        if of_device is not None:
            of_device.append(sample)
    selections: dict[tuple[str, int], list[Sample]] = {}
    readings: dict[tuple[str, int, int], list[float]] = {}
    result: dict[str, float | int | None] = {}
    for config in configs:
        key = (config.device, config.after_ns)
        chosen = selections.get(key)
        if chosen is None:
            after = config.after_ns
            chosen = selections[key] = [
                s
                for s in by_device[config.device]
                if s.nominal_acquisition_ns - s.episode_start_ns >= after
            ]
        read: list[float] = []
        if config.kind in _VALUE_KINDS and chosen:
            vkey = (*key, config.index)
            made = readings.get(vkey)
            if made is None:
                made = readings[vkey] = [float(s.values[config.index]) for s in chosen]
            read = made
        result[config.name] = _metric(config, chosen, read)
    return result


def metric_violation(configs: Sequence[MetricConfig], values: Mapping[str, Any]) -> str | None:
    """The first bound that ``values`` breaks, as one line, or ``None`` (C-SWEEP-3)."""
    for c in configs:
        if c.minimum is None and c.maximum is None:
            continue
        value = values.get(c.name)
        if value is None:
            return f"metric {c.name} has no value (no samples of {c.device!r}) but has bounds"
        if c.minimum is not None and value < c.minimum:
            return f"metric {c.name} = {value!r} is below min {c.minimum!r}"
        if c.maximum is not None and value > c.maximum:
            return f"metric {c.name} = {value!r} is above max {c.maximum!r}"
    return None
