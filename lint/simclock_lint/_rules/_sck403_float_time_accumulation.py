"""SCK403: float time accumulated step by step (``t += 0.01``).

What it does:
    Flags adding a float to a time variable: ``t += 0.01``, ``t -= dt``,
    ``now = now + dt``, ``self.sim_time += 1 / rate`` where the added value is
    float (a float literal, a true division, ``float(...)``, or a name bound
    once, in its scope, to a float literal such as ``DT = 0.01``), and the
    variable is named for a time: ``t``, ``now``, ``time``, ``elapsed``,
    ``timestamp``, ``seconds``, a name starting with ``t_`` or ``time_``, or ending with
    ``_time``, ``_now``, ``_elapsed``, ``_timestamp``, ``_sec``, ``_secs``,
    ``_seconds``, ``_ns``, ``_ms`` or ``_us`` (for an attribute, its last
    name). Other float state (``x += v * 0.01``, ``reward += 1.0``) is not a
    time and is never flagged. Applies to simulation code (C-LINT-1), as
    SCK201, SCK301 and SCK401 do.

Why:
    Each float addition rounds, and the errors pile up: ``0.1`` added ten
    times is ``0.9999999999999999``, and after an hour of 1 kHz steps a float
    clock is off by microseconds, so ``t >= 1.0`` fires a step late and two
    runs on different step sizes disagree. simclock keeps time as exact int
    nanoseconds, so the same sum is exact.

Example:
    t = 0.0
    while t < 10.0:
        t += 0.01

Use instead:
    step_ns = simclock.seconds_to_ns("0.01")  # 10_000_000, exactly
    while clock.now_ns() < 10 * 10**9:
        clock.advance(step_ns)
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

CODE = "SCK403"
MESSAGE = (
    "float time accumulated in `{name}`; each addition rounds and the error grows "
    "(0.1 added ten times is 0.9999999999999999): keep int nanoseconds "
    '(simclock.seconds_to_ns("0.01")) and advance the clock'
)

TIME_NAME = re.compile(
    r"(?:t|now|time|elapsed|timestamp|seconds)"
    r"|(?:t|time)_\w+"
    r"|\w+_(?:time|now|elapsed|timestamp|sec|secs|seconds|ns|ms|us)"
)

VALID = [
    "import simclock\nclock.advance(10_000_000)",
    "import simclock\nt_ns += 10_000_000",
    "import simclock\nx += v * 0.01",
    "import simclock\nreward += 1.0",
    "import simclock\nt += dt",
    "import simclock\nnow = clock.now_ns()",
    "import simclock\ncount += 1",
    "import simclock\nt = start + 0.5",
    "import simclock\ndef f(dt=0.01):\n    t = 0\n    t += dt",
    # Not simulation code: no simclock import, not declared.
    "t = 0.0\nwhile t < 1.0:\n    t += 0.01",
    DECLARED + "def step(clock):\n    clock.advance(10_000_000)",
]
INVALID = [
    "import simclock\nt = 0.0\nwhile t < 10.0:\n    t += 0.01",
    "import simclock\nnow = now + 0.001",
    "import simclock\nself.sim_time += 1 / rate_hz",
    "import simclock\nelapsed -= 0.5",
    "import simclock\nDT = 0.01\ndef step(state):\n    state.t += DT",
    "import simclock\ndef run(n):\n    dt = 1e-3\n    t = 0.0\n    for _ in range(n):\n"
    "        t = t + dt",
    "import simclock\ntime_left -= float(step)",
    "import simclock\nstamp_ns += 0.5",
    # Declared simulation code that is handed a clock and never imports simclock.
    DECLARED + "def loop(clock, n):\n    t = 0.0\n    for _ in range(n):\n        t += 0.001",
]

# ``t += ...``, ``t -= ...``, ``t = t + ...``: the statements this rule may flag.
_ACCUMULATE = re.compile(
    rb"(?<![\w.])([A-Za-z_][\w.]*)[ \t]*(?:[-+]=|=[ \t]*([A-Za-z_][\w.]*)[ \t]*[-+])"
)


def _is_time_name(dotted: str) -> bool:
    return TIME_NAME.fullmatch(dotted.rpartition(".")[2]) is not None


def may_match(source: bytes) -> bool:
    # Whether the file is simulation code is the engine's one decision (C-LINT-1).
    for match in _ACCUMULATE.finditer(source):
        target, right = match.group(1), match.group(2)
        if (right is None or right == target) and _is_time_name(target.decode()):
            return True
    return False


def _same(left: libcst.BaseExpression, right: libcst.BaseExpression) -> bool:
    """Whether two Name/Attribute chains spell the same dotted name."""
    import libcst

    from simclock_lint._analysis import dotted_name

    return (
        isinstance(left, libcst.Name | libcst.Attribute)
        and isinstance(right, libcst.Name | libcst.Attribute)
        and dotted_name(left) == dotted_name(right)
    )


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    import libcst

    from simclock_lint._analysis import dotted_name

    for statement in analysis.assignments:
        if isinstance(statement, libcst.AugAssign):
            target = statement.target
            added: libcst.BaseExpression | None = (
                statement.value
                if isinstance(statement.operator, libcst.AddAssign | libcst.SubtractAssign)
                else None
            )
        elif isinstance(statement, libcst.Assign) and len(statement.targets) == 1:
            target = statement.targets[0].target
            value = statement.value
            added = None
            if isinstance(value, libcst.BinaryOperation) and isinstance(
                value.operator, libcst.Add | libcst.Subtract
            ):
                if _same(value.left, target):
                    added = value.right
                elif isinstance(value.operator, libcst.Add) and _same(value.right, target):
                    added = value.left
        else:
            continue
        if (
            added is None
            or not isinstance(target, libcst.Name | libcst.Attribute)
            or not _is_time_name(dotted_name(target))
        ):
            continue
        if is_float(added, analysis):
            yield target, dotted_name(target)


RULE = Rule.declared_in(globals(), simulation_only=True, words=float_names)
