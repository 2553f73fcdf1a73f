"""Replay's random source: the persisted draws handed back per label (C-REP-3).

`ReplayRandomSource` has the `RandomSource` API; each
draw must match the recorded one of the same label (method and arguments),
in order. A draw refused for its arguments, or because it does not match,
consumes nothing: the next draw of that label still gets the recorded one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from simclock.core._errors import SimclockRuntimeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.core._random import (
    LabelledStream,
    check_bounds,
    check_real,
    check_sigma,
    check_size,
    normalise_label,
)
from simclock.recording._fingerprint import canonical_json
from simclock.recording._format import decode_draw_value, encode_draw_value
from simclock.recording._raw import RecordingError
from simclock.recording._reader import RecordingReader

__all__ = ["DrawLog", "ReplayRandomSource"]


class DrawLog:
    """Per-label cursors over the persisted draws of one recording (C-REP-3)."""

    def __init__(self, reader: RecordingReader, labels: tuple[str, ...]) -> None:
        self._reader = reader
        self._labels = frozenset(labels)
        self._cursors: dict[str, Iterator[dict[str, Any]]] = {}
        self._taken: dict[str, int] = {}
        self._peeked: dict[str, dict[str, Any]] = {}
        # A label whose log was found damaged keeps raising that error.
        self._failed: dict[str, RecordingError] = {}

    def take(self, label: str, method: str, args: tuple[Any, ...]) -> Any:
        self._reader.check_open("draws()")
        if label not in self._labels:
            raise SimclockRuntimeError(
                f"no draws were recorded for label {label!r} (recorded labels: "
                f"{sorted(self._labels)}); replay must draw from the same streams as the "
                "recorded run"
            )
        failure = self._failed.get(label)
        if failure is not None:
            raise failure
        cursor = self._cursors.get(label)
        if cursor is None:
            cursor = self._cursors[label] = self._reader.draws(label)
        n = self._taken.get(label, 0)
        # A refused draw changes nothing: the arguments are encoded before anything is
        # read, and a draw is only consumed once it matched.
        asked = canonical_json(encode_draw_value(list(args)), "draw arguments")
        try:
            draw = self._peeked.pop(label, None) or next(cursor, None)
        except RecordingError as exc:
            self._failed[label] = exc
            raise
        if draw is None:
            raise SimclockRuntimeError(
                f"the recorded draws of label {label!r} ran out after {n} draws; the replayed "
                "code draws more than the recorded run did"
            )
        recorded = canonical_json(draw.get("args"), "draw arguments")
        if draw.get("method") != method or asked != recorded:
            self._peeked[label] = draw
            raise SimclockRuntimeError(
                f"draw {n} of label {label!r}: asked {method}{asked} but the recording has "
                f"{draw.get('method')}{recorded}; replay must make the same draws as the "
                "recorded run"
            )
        self._taken[label] = n + 1
        return decode_draw_value(draw["value"])


class ReplayRandomSource(LabelledStream):
    """A [`RandomSource`][simclock.RandomSource] that returns the recorded draws (C-REP-3).

    Each draw must match the recorded one of the same label (method and
    arguments), in order; otherwise, and when the recorded draws run out,
    ``SimclockRuntimeError``. ``numpy_rng()`` is refused: draws made on the
    Generator directly were never recorded.
    """

    __slots__ = ("_log",)

    def __init__(self, log: DrawLog, seed: int, label: str = "/") -> None:
        self._log = log
        self._seed = seed
        self._label = label

    def child(self, label: str) -> ReplayRandomSource:
        """The replayed stream at ``self.label + '/' + label`` (C-RNG-3 label rules)."""
        return ReplayRandomSource(self._log, self._seed, normalise_label(self._label, label))

    # Arguments are checked as the live source checks them (same errors), before the
    # recorded draw is looked at: a refused draw consumes nothing.

    def uniform(self, a: float, b: float) -> float:
        """The next recorded ``uniform(a, b)`` draw of this label."""
        low, high = check_real(a, "a"), check_real(b, "b")
        if not (low <= high and math.isfinite(high - low)):
            raise SimclockValueError(
                f"uniform needs a <= b with a finite b - a, got a={safe_repr(a)}, b={safe_repr(b)}"
            )
        return float(self._log.take(self._label, "uniform", (a, b)))

    def normal(self, mu: float, sigma: float, size: int | tuple[int, ...] | None = None) -> Any:
        """The next recorded ``normal`` draw of this label."""
        check_real(mu, "mu")
        check_sigma(sigma)
        shape = check_size(size)
        return self._log.take(self._label, "normal", (mu, sigma, shape))

    def integers(self, low: int, high: int, size: int | tuple[int, ...] | None = None) -> Any:
        """The next recorded ``integers`` draw of this label."""
        check_bounds(low, high)
        shape = check_size(size)
        return self._log.take(self._label, "integers", (low, high, shape))

    def numpy_rng(self) -> np.random.Generator:
        """Refused: direct Generator draws are not recorded, so they cannot be replayed."""
        raise SimclockRuntimeError(
            "numpy_rng() cannot be replayed: draws made on the Generator directly are not "
            "recorded; use uniform/normal/integers on the source"
        )
