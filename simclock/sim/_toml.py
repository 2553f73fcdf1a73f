"""The TOML value checks shared by scenario files and their ``[metrics]`` (SPEC §7, C-GRID-3/4).

Every check raises `ScenarioError` naming the exact dotted key at fault,
before anything runs. Kept apart from ``_scenario_file`` and ``_metrics`` so
that both import it and neither imports the other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from simclock.core._errors import SimclockValueError
from simclock.core._names import exact_str, safe_repr
from simclock.sim._grid import Policy, format_ns

__all__ = [
    "ScenarioError",
    "check_id",
    "check_keys",
    "check_on_grid",
    "choice",
    "integer",
    "number",
    "parse_duration",
    "require",
    "string",
    "subtable",
]

_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ns|us|µs|ms|s)\s*")
# C-TIME-4: every time fits the MCAP log time; checked on the digits before any
# arithmetic, so a 10**6-digit duration is refused at the cost of reading it.
_MAX_NS = 2**64 - 1
_MAX_DURATION_TEXT = 64
_SCALE = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


class ScenarioError(SimclockValueError):
    """A scenario file that cannot run; ``key`` is the dotted key at fault (``""``: the file)."""

    def __init__(self, key: str, problem: str) -> None:
        self.key = key
        self.problem = problem
        super().__init__(f"{key}: {problem}" if key else problem)


# -- value parsing ------------------------------------------------------------------


def parse_duration(value: object, key: str = "duration") -> int:
    """``"7 ms"`` -> ``7_000_000``; exact or `ScenarioError` at ``key`` (C-GRID-4)."""
    if not isinstance(value, str):
        raise ScenarioError(
            key,
            f'expected a duration string with a unit such as "7 ms", got '
            f"{type(value).__name__} {safe_repr(value)}",
        )
    match = _DURATION.fullmatch(value) if len(value) <= _MAX_DURATION_TEXT else None
    if match is None:
        raise ScenarioError(
            key,
            f'expected a duration such as "7 ms" (units ns, us, ms, s), got {safe_repr(value)}',
        )
    # Fraction, not Decimal: Decimal arithmetic rounds to 28 digits, so a 29-digit
    # value would load rounded (C-GRID-4: exact or refused).
    exact = Fraction(match.group(1)) * _SCALE[match.group(2)]
    if exact.denominator != 1:
        raise ScenarioError(
            key, f"{safe_repr(value)} is not a whole number of nanoseconds; refusing to round it"
        )
    if exact > _MAX_NS:
        raise ScenarioError(
            key,
            f"{safe_repr(value)} is beyond 2**64 - 1 ns (about 584 years), the largest time-int",
        )
    return int(exact)


def integer(value: object, key: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(
            key, f"expected an integer, got {type(value).__name__} {safe_repr(value)}"
        )
    if value < minimum:
        raise ScenarioError(key, f"must be >= {minimum}, got {value}")
    return value


def number(value: object, key: str, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(
            key, f"expected a number, got {type(value).__name__} {safe_repr(value)}"
        )
    number = float(value)
    if not math.isfinite(number):
        raise ScenarioError(key, f"must be finite, got {safe_repr(value)}")
    if minimum is not None and number < minimum:
        raise ScenarioError(key, f"must be >= {minimum:g}, got {safe_repr(value)}")
    return number


def string(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise ScenarioError(
            key, f"expected a string, got {type(value).__name__} {safe_repr(value)}"
        )
    return value


def choice(value: object, key: str, choices: Sequence[str]) -> str:
    text = exact_str(string(value, key))
    if text not in choices:
        listed = ", ".join(f'"{c}"' for c in choices)
        raise ScenarioError(key, f"must be one of {listed}, got {safe_repr(text)}")
    return text


def subtable(value: object, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(key, f"expected a table, got {type(value).__name__} {safe_repr(value)}")
    return value


def check_keys(table: Mapping[str, Any], prefix: str, allowed: Sequence[str]) -> None:
    for name in table:
        if name not in allowed:
            listed = ", ".join(allowed)
            raise ScenarioError(f"{prefix}{name}", f"unknown key; expected one of {listed}")


def require(table: Mapping[str, Any], name: str, prefix: str) -> Any:
    if name not in table:
        raise ScenarioError(f"{prefix}{name}", "required key is missing")
    return table[name]


def check_id(name: str, key: str) -> str:
    if not _ID.fullmatch(name):
        raise ScenarioError(
            key, f"id {safe_repr(name)} must start with a letter and use only [A-Za-z0-9_.-]"
        )
    return name


def check_on_grid(key: str, value: int, step: int, policy: Policy) -> None:
    """C-GRID-3 with the scenario's wording: the error names the exact key."""
    if policy is Policy.STRICT and value % step:
        raise ScenarioError(
            key,
            f"{format_ns(value)} is not on the {format_ns(step)} grid (policy strict); "
            f'use a multiple of {format_ns(step)} or policy = "next_boundary"',
        )
