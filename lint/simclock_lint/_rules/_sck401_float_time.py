"""SCK401: float given as a time to ``advance`` / ``schedule*``.

What it does:
    Flags float-valued expressions passed where simclock takes integer
    nanoseconds: the first argument of ``advance``, ``schedule`` and
    ``schedule_periodic``, the phase (third argument) of ``schedule_periodic``
    and ``schedule_rate``, the rate (first argument) of ``schedule_rate``, and
    any ``*_ns=`` keyword of an ``advance``/``schedule*`` call. Float-valued
    means: a float literal (``1e9``, ``0.5``), a true division (``10**9 / 30``),
    ``float(...)``, a name bound once, in its scope, to a float literal
    (``STEP = 0.001``), or arithmetic involving one of these. Applies to
    simulation code, as SCK201 and SCK301 do (C-LINT-1): every file that
    imports simclock, and every file the configuration declares
    (``simulation-code`` globs, ``simulation-imports``), such as a module
    that is handed a clock and never imports simclock. Elsewhere a
    learning-rate ``schedule(0.0)`` or a game's ``advance(0.5)`` is not a
    clock's and is never flagged.

Why:
    Times are exact integers (SPEC §1); the clock refuses floats with
    ``TypeError`` at run time, and a float of nanoseconds cannot even hold
    every instant beyond about 104 days. Catching the literal at lint time
    turns a crash in a long scenario into an edit.

Example:
    clock.advance(1e6)
    clock.schedule_periodic(10**9 / 30, tick)

Use instead:
    clock.advance(1_000_000)
    clock.schedule_rate(30, tick)  # exact 30 Hz, no drift
    clock.advance(simclock.seconds_to_ns("0.001"))
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from simclock_lint._rule import DECLARED, Rule
from simclock_lint._rules._common import float_names, is_float

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis

CODE = "SCK401"
MESSAGE = "float given as a time to `{name}`; simclock takes int nanoseconds (e.g. 1_500_000)"

# Positional arguments that are times (or, for schedule_rate, the exact rate).
TIME_POSITIONS = {
    "advance": (0,),
    "schedule": (0,),
    "schedule_periodic": (0, 2),
    "schedule_rate": (0, 2),
}

VALID = [
    "import simclock\nclock.advance(1_000_000)",
    "import simclock\nclock.schedule(2 * 10**6, cb)",
    "import simclock\nclock.schedule_periodic(period_ns, cb, phase_ns=0)",
    "import simclock\nclock.advance(int(1e6))",
    "import simclock\nclock.advance(10**9 // 30)",
    "import simclock\nclock.schedule(at_ns, cb, note=0.5)",
    "import simclock\ngain = 0.5\nclock.advance(dt_ns)",
    "import simclock\nSTEP = 0.001\nSTEP = 1_000_000\nclock.advance(STEP)",
    "import simclock\nclock.schedule_rate(Fraction(30000, 1001), cb)",
    "lr = schedule(0.0)",
    # Not simulation code: no simclock import, not declared.
    "def step(clock):\n    clock.advance(0.001)",
    DECLARED + "def step(clock):\n    clock.advance(1_000_000)",
]
INVALID = [
    "import simclock\nclock.advance(1e6)",
    "import simclock\nclock.advance(0.5)",
    "import simclock\nclock.schedule(1.5e9, cb)",
    "import simclock\nclock.schedule_periodic(10**9 / 30, cb)",
    "import simclock\nclock.schedule_periodic(1_000_000, cb, 0.0)",
    "import simclock\nclock.schedule_periodic(1_000_000, cb, phase_ns=2.5)",
    "import simclock\nclock.advance(dt_ns=-1.0)",
    "import simclock\nclock.advance(float(n))",
    "import simclock\nclock.schedule(2 * 1e6, cb)",
    "import simclock\nclock.schedule_rate(29.97, cb)",
    "import simclock\nadvance(1e3)",
    "import simclock\nSTEP = 0.001\ndef step(clock):\n    clock.advance(STEP)",
    # Declared simulation code that is handed a clock and never imports simclock.
    DECLARED + "def step(clock):\n    clock.advance(0.001)",
    DECLARED + "def start(clock, tick):\n    clock.schedule_periodic(1e6, tick)",
]


_CALLEE = re.compile(r"\b(?:advance|schedule\w*)\b")


_CALL = re.compile(rb"\b(?:advance|schedule\w*)\s*\(")


def may_match(source: bytes) -> bool:
    # Whether the file is simulation code is the engine's one decision (C-LINT-1).
    return (b"advance" in source or b"schedule" in source) and _CALL.search(source) is not None


def words(text: str) -> set[str]:
    return set(_CALLEE.findall(text)) | float_names(text)


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    from simclock_lint._analysis import keyword_args, positional_args

    for name, call in analysis.calls:
        if name != "advance" and not name.startswith("schedule"):
            continue
        positional = positional_args(call)
        for index in TIME_POSITIONS.get(name, ()):
            if index < len(positional) and is_float(positional[index].value, analysis):
                yield positional[index].value, f"{name}()"
        for arg in keyword_args(call):
            if (
                arg.keyword is not None
                and arg.keyword.value.endswith("_ns")
                and is_float(arg.value, analysis)
            ):
                yield arg.value, f"{name}()"


RULE = Rule.declared_in(
    globals(), simulation_only=True, words=words, anchors=("advance", "schedule")
)
