"""Scenario metrics: numbers a sweep puts in each seed's row (C-SWEEP-1).

A scenario declares its metrics in a ``[metrics]`` table; each one is
computed from the run's delivered samples (`Session.samples`), so it is
a pure function of the trace and as deterministic as the fingerprint. A run
folds them in as they arrive (`MetricStream`, fed after each chunk of
simulated time), so its memory does not grow with its length::

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
`metric_violation` says why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simclock.core._kernels import (
    abs_errors,
    acquired_after,
    episode_times,
    lateness,
    split_by_device,
    squared_errors,
    values_at,
)
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
    "ExactSum",
    "MetricConfig",
    "MetricStream",
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

    Errors are `ScenarioError` naming the key
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


_COMPACT_AT = 1024
"""Values an `ExactSum` holds before it folds them into a few exact terms."""


class ExactSum:
    """``math.fsum`` of a stream of floats, in memory that does not grow with the stream.

    `value` is bit-identical to ``math.fsum`` of every value added, in
    order, for finite values and for the non-finite ones (``nan``; ``inf``;
    ``ValueError`` for ``inf`` and ``-inf`` together, as ``fsum`` does). The
    held values are folded, every ``_COMPACT_AT`` of them, into a short
    expansion ``s0, s1, ...`` with ``s0 = fsum(held)``, ``s1 = fsum(held + [-s0])``
    and so on until a term is 0: each term is the correctly rounded rest of
    the exact sum, so the expansion's exact sum is the held values' exact sum
    (Shewchuk's non-overlapping partials, the same invariant ``fsum`` keeps
    internally; a double has about 2 100 bits of range, so at most about 40
    terms, in practice 2 or 3) and ``fsum`` of it is the same correctly rounded
    number. The folding runs in C: a few ``fsum`` passes over the held values.
    A sum that overflows a double keeps its values unfolded, so ``fsum``
    raises its ``OverflowError`` at `value` as it would have.
    """

    __slots__ = ("_inf_sum", "_special_sum", "_terms")

    def __init__(self) -> None:
        # Invariant: exact sum of _terms == exact sum of the finite values added; the
        # non-finite ones are folded into _special_sum and _inf_sum the way fsum does.
        self._terms: list[float] = []
        self._special_sum = 0.0
        self._inf_sum = 0.0

    def extend(self, values: list[float]) -> None:
        """Add ``values``, in order."""
        terms = self._terms
        terms.extend(values)
        if len(terms) >= _COMPACT_AT:
            self._fold()

    def _fold(self) -> None:
        terms = self._terms
        try:
            first = math.fsum(terms)
        except ValueError:  # inf and -inf among the values
            first = math.nan
        except OverflowError:  # fsum would raise it at the end as well: keep the values
            return
        if not math.isfinite(first):
            # Rare: a non-finite value. fsum folds those apart from the finite ones.
            finite = []
            for v in terms:
                if math.isfinite(v):
                    finite.append(v)
                else:
                    if math.isinf(v):
                        self._inf_sum += v
                    self._special_sum += v
            terms[:] = finite
            try:
                first = math.fsum(terms)
            except OverflowError:
                return
        held = len(terms)
        expansion = [first]
        rest = first
        try:
            while rest != 0.0:
                terms.append(-rest)
                rest = math.fsum(terms)
                expansion.append(rest)
        except OverflowError:  # held values near the largest double: keep them as they are
            del terms[held:]
            return
        expansion.pop()  # the final 0.0
        terms[:] = expansion

    def value(self) -> float:
        """``math.fsum`` of every value added (raises what it would raise)."""
        if self._special_sum != 0.0:
            self._fold()  # moves any non-finite value still held into the special sums
            if math.isnan(self._inf_sum):
                raise ValueError("-inf + inf in fsum")
            return self._special_sum
        return math.fsum(self._terms)


class _Accumulator:
    """The running state of one metric: what its final value needs, nothing more."""

    __slots__ = ("config", "count", "last", "peak", "total")

    def __init__(self, config: MetricConfig) -> None:
        self.config = config
        self.count = 0
        self.total = ExactSum()
        self.peak: float | int | None = None
        self.last: float | None = None

    def add(self, chosen: list[Sample], read: list[float]) -> None:
        """Fold ``chosen`` (and its ``read`` values) into the state; O(len(chosen))."""
        kind = self.config.kind
        self.count += len(chosen)
        if not chosen or kind == "samples":
            return
        if kind == "max_lateness":
            self.peak = _fold_max(self.peak, lateness(chosen))
        elif kind == "final":
            self.last = read[-1]
        elif kind == "mean":
            self.total.extend(read)
        elif kind == "max_abs_error":
            self.peak = _fold_max(self.peak, abs_errors(read, self.config.target))
        else:
            # Invariant: load_metrics only accepts METRIC_KINDS; rms_error is the last one.
            assert kind == "rms_error"
            self.total.extend(squared_errors(read, self.config.target))

    def value(self) -> float | int | None:
        """The metric over every sample added: what the whole list would have given."""
        kind = self.config.kind
        if kind == "samples":
            return self.count
        if not self.count:
            return None
        if kind in ("max_lateness", "max_abs_error"):
            return self.peak
        if kind == "final":
            return self.last
        # math.fsum: exactly rounded, so the result does not depend on summation order.
        mean = self.total.value() / self.count
        return mean if kind == "mean" else math.sqrt(mean)


def _fold_max(current: float | int | None, values: list[Any]) -> Any:
    """``max`` of the whole stream so far: continues ``max``'s left fold (``nan`` included)."""
    if current is None:
        return max(values)
    return max([current, *values])


class MetricStream:
    """The metrics of ``configs``, updated batch by batch of delivered samples.

    ``add(samples)`` takes the next samples in delivery order (any split of the
    stream: a session's `samples` after each chunk of a
    run, then cleared); `values` is what `compute_metrics` gives
    over the whole stream, bit for bit. Memory: a few numbers per metric; a
    sum holds at most ``_COMPACT_AT`` values plus its exact terms.
    """

    __slots__ = ("_accumulators", "_devices")

    def __init__(self, configs: Sequence[MetricConfig]) -> None:
        self._accumulators = [_Accumulator(c) for c in configs]
        self._devices = frozenset(c.device for c in configs)

    def add(self, samples: Iterable[Sample]) -> None:
        """Fold the next ``samples`` (in delivery order) into every metric.

        O(samples + metrics * samples of the metric's device), in compiled folds
        (`simclock.core._kernels`) where the core is compiled: one pass sorts
        the samples by device, keeping their order; metrics of the same
        device share the samples' EpisodeTimes, of the same ``after`` their
        selection, and of the same index too their values (``final`` reads
        only its last value).
        """
        by_device: dict[str, list[Sample]] = {d: [] for d in self._devices}
        split_by_device(samples if type(samples) is list else list(samples), by_device)
        self._add_by_device(by_device)

    def _add_by_device(self, by_device: Mapping[str, list[Sample]]) -> None:
        """`add`, for samples already split by device (each list in delivery order).

        ``by_device`` has a list for every metric's device (others are not read):
        a run splits its chunk once, for its counts and for this.
        """
        times_of: dict[str, list[int]] = {}
        selections: dict[tuple[str, int], list[Sample]] = {}
        readings: dict[tuple[str, int, int], list[float]] = {}
        for acc in self._accumulators:
            config = acc.config
            key = (config.device, config.after_ns)
            chosen = selections.get(key)
            if chosen is None:
                of_device = by_device[config.device]
                times = times_of.get(config.device)
                if times is None:
                    times = times_of[config.device] = episode_times(of_device)
                chosen = selections[key] = acquired_after(of_device, times, config.after_ns)
            read: list[float] = []
            if config.kind in _VALUE_KINDS and chosen:
                vkey = (*key, config.index)
                made = readings.get(vkey)
                if made is not None:
                    read = made
                elif config.kind == "final":  # its last value is all it needs
                    read = values_at(chosen[-1:], config.index)
                else:
                    read = readings[vkey] = values_at(chosen, config.index)
            acc.add(chosen, read)

    def values(self) -> dict[str, float | int | None]:
        """Every metric over the samples added so far, in declaration order."""
        return {acc.config.name: acc.value() for acc in self._accumulators}


def compute_metrics(
    configs: Sequence[MetricConfig], samples: Iterable[Sample]
) -> dict[str, float | int | None]:
    """Every metric of ``configs`` over ``samples`` (in delivery order), in declaration order.

    One `MetricStream` fed all of ``samples`` at once.
    """
    stream = MetricStream(configs)
    stream.add(samples)
    return stream.values()


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
