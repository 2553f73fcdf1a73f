"""Comparing a driver's replies with the oracle's (SPEC §18): the first difference, both sides.

Rules (C-WIRE-3, C-WIRE-7): the top-level ``message`` of a reply is never
compared (refusal texts are the backend's own); fields the oracle does not
have may be added; ``next_event_ns`` is compared only for a backend with
feature ``peek``; ``stored`` is not compared but bounded (C-CAN-4: the
backend's entries, tombstones included, are at most ``3 * live + 1024``,
``live`` being the oracle's count). Without feature ``bits`` a backend's
random values are its own: a case then compares which draws are equal to
which (the pattern of first occurrences), not the numbers (C-RNG-1..4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

__all__ = ["Difference", "first_difference", "locate_difference", "value_patterns"]

Json = dict[str, Any]
_TOMBSTONE_SLACK = 1024
_MAX = 2**64 - 1


def value_patterns(replies: list[Json]) -> list[Json]:
    """``replies`` with every drawn value replaced by ``#k``, ``k`` its first occurrence."""
    seen: dict[str, int] = {}
    out: list[Json] = []
    for reply in replies:
        values = reply.get("values")
        copy = dict(reply)
        if isinstance(values, list):
            copy["values"] = [f"#{seen.setdefault(str(v), len(seen))}" for v in values]
        out.append(copy)
    return out


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 400 else text[:400] + "...(truncated)"


class Difference(NamedTuple):
    """Where a reply first differs: the field, the item of a list field (else None), the text."""

    field: str
    item: int | None
    text: str


def _fired_difference(name: str, observed: object, expected: list[Any]) -> Difference | None:
    if not isinstance(observed, list):
        return Difference(name, 0, f"{name}: expected a list, observed {_show(observed)}")
    for i, (o, e) in enumerate(zip(observed, expected, strict=False)):
        if not isinstance(o, dict):
            return Difference(name, i, f"{name}[{i}]: expected {_show(e)}, observed {_show(o)}")
        keys = {
            *e,
            *(k for k in ("entry", "now_ns", "nested", "refused", "at_ns", "message") if k in o),
        }
        mine = {k: o.get(k) for k in sorted(keys)}
        theirs = {k: e.get(k) for k in sorted(keys)}
        if mine != theirs:
            return Difference(
                name, i, f"{name}[{i}]: expected {_show(theirs)}, observed {_show(mine)}"
            )
    if len(observed) != len(expected):
        extra = (
            observed[len(expected)] if len(observed) > len(expected) else expected[len(observed)]
        )
        side = "observed" if len(observed) > len(expected) else "expected"
        return Difference(
            name,
            min(len(observed), len(expected)),
            f"{name}: expected {len(expected)} items, observed {len(observed)}; "
            f"first {side} only: {_show(extra)}",
        )
    return None


def first_difference(observed: Json, expected: Json, features: Sequence[str]) -> str | None:
    """How ``observed`` differs from ``expected`` (``field: expected X, observed Y``), or None."""
    diff = locate_difference(observed, expected, features)
    return diff.text if diff else None


def locate_difference(observed: Json, expected: Json, features: Sequence[str]) -> Difference | None:
    """:func:`first_difference` with its place: the reply part a charge is read from."""
    for key, want in expected.items():
        if key == "message":
            continue
        if key == "next_event_ns":
            if "peek" not in features:
                continue
            if want is not None and int(want) > _MAX:
                continue  # past 2**64 - 1 a backend may keep what it likes (C-TIME-4)
        if key == "stored":
            got = observed.get("stored")
            if not (isinstance(got, str) and got.isdigit()):
                return Difference(
                    key, None, f"stored: expected a string of digits, observed {_show(got)}"
                )
            live = int(want)
            if int(got) > 3 * live + _TOMBSTONE_SLACK:
                return Difference(
                    key,
                    None,
                    f"stored: {got} entries held for {live} live ones; C-CAN-4 allows at most "
                    f"2*live + 1024 tombstones ({3 * live + _TOMBSTONE_SLACK} in all)",
                )
            continue
        if key not in observed:
            return Difference(key, None, f"{key}: expected {_show(want)}, observed no such field")
        got = observed[key]
        if key in ("fired", "failures") and isinstance(want, list):
            diff = _fired_difference(key, got, want)
            if diff:
                return diff
            continue
        if got != want:
            return Difference(key, None, f"{key}: expected {_show(want)}, observed {_show(got)}")
    return None
