"""SCK402: float seconds made into int nanoseconds by ``int()``/``round()``/``floor()``.

What it does:
    Flags ``int(...)``, ``round(...)``, ``math.floor/ceil/trunc(...)``,
    ``numpy.int64/floor/ceil/rint/round/trunc(...)`` (nested ones count once)
    of float arithmetic that scales to nanoseconds:

    * a product or quotient with ``1e9`` (``1e9``, ``1E9``, ``1_000_000_000``,
      ``10**9``), anywhere: ``int(dt * 1e9)``, ``int(1e9 / rate_hz)``;
    * a product or quotient with ``1e6`` or ``1e3`` (milli- and microseconds
      to nanoseconds) only where the result is a time: the time argument of
      ``advance``/``schedule*``, any ``*_ns=`` keyword argument, or an
      assignment to a name or attribute ending in ``_ns``
      (``period_ns = int(period_ms * 1e6)``), also as a term of a sum there;

    when the arithmetic is float: one operand is a float literal,
    ``float(...)``, or a name bound once, in its scope, to a float literal
    (``STEP = 0.01``). ``int(seconds * 10**9)`` and ``ceil(10**9 / rate)``
    with operands of unknown type are not flagged: with an ``int`` or a
    ``Fraction`` there the arithmetic is exact.
    Arithmetic of literals alone (``int(1.001 * 1e9)``) is computed both ways
    and flagged only when float arithmetic gives another integer than exact
    arithmetic: ``int(1.5 * 1e9)`` and ``int(1e6)`` are fine. Applies to
    simulation code (C-LINT-1), as SCK201, SCK301 and SCK401 do.

Why:
    Float seconds rarely hold the decimal the code says: ``1.001 * 1e9`` is
    ``1000999999.9999999``, so ``int(1.001 * 1e9)`` advances 1 000 999 999 ns,
    one short, and everything timed from there is a nanosecond off. ``round()``
    hides it for small values, not in long runs: a float holds every integer
    nanosecond only up to about 104 days. The clock cannot see the mistake: it
    gets a valid int. ``simclock.seconds_to_ns`` converts exactly (a float
    through its shortest decimal) and refuses, rather than rounds, a value that
    is not a whole number of nanoseconds.

Example:
    clock.advance(int(1.001 * 1e9))
    clock.schedule(int(t_s * 1e9), fire)
    period_ns = int(1e9 / rate_hz)

Use instead:
    clock.advance(simclock.seconds_to_ns("1.001"))  # exactly 1_001_000_000
    clock.schedule(simclock.seconds_to_ns(t_s), fire)  # a float through its shortest repr
    clock.schedule_rate(rate_hz, tick)  # or 10**9 // rate_hz for an int rate
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import TYPE_CHECKING

from simclock_lint._rule import DECLARED, Rule
from simclock_lint._rules._common import float_names, is_float
from simclock_lint._rules._sck401_float_time import TIME_POSITIONS

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis

CODE = "SCK402"
MESSAGE = (
    "float seconds made into int nanoseconds by `{name}` can be off by one "
    "(int(1.001 * 1e9) == 1000999999); use simclock.seconds_to_ns(...) or int arithmetic"
)

# Callee's last name -> how it makes an integer of an exact value (for literal arithmetic).
_TRUNC: Callable[[Fraction], int] = math.trunc
CONVERSIONS: dict[str, Callable[[Fraction], int]] = {
    "int": _TRUNC,
    "int64": _TRUNC,
    "uint64": _TRUNC,
    "trunc": _TRUNC,
    "floor": math.floor,
    "ceil": math.ceil,
    "round": round,
    "rint": round,
    "around": round,
}
_NANOS_PER_SECOND = 9  # the power of ten flagged anywhere; 6 and 3 only in a time sink

VALID = [
    "import simclock\nclock.advance(simclock.seconds_to_ns('1.001'))",
    "import simclock\nclock.advance(int(1e6))",
    "import simclock\nclock.advance(int(1.5 * 1e9))",
    "import simclock\nclock.advance(int(0.001 * 1_000_000_000))",
    "import simclock\nns = int(seconds * 1_000_000_000)",
    "import simclock\nperiod_ns = 10**9 // rate_hz",
    "import simclock\nimport math\nfirst_ns = math.ceil(k * 10**9 / rate)",
    "import simclock\nsamples = int(duration * 1e6)",
    "import simclock\nwidth = int(scale * 1000.0)",
    "import simclock\nclock.advance(int(us) * 1_000)",
    # Not simulation code: no simclock import, not declared.
    "def stamp(t):\n    return int(t * 1e9)",
    DECLARED + "def step(clock):\n    clock.advance(simclock.seconds_to_ns(0.001))",
]
INVALID = [
    "import simclock\nclock.advance(int(1.001 * 1e9))",
    "import simclock\nclock.advance(int(dt * 1e9))",
    "import simclock\nt_ns = round(seconds * 1e9)",
    "import simclock\nimport math\nclock.schedule(math.floor(t * 1e9), cb)",
    "import simclock\nclock.advance(int(1.001 * 1_000_000_000))",
    "import simclock\nperiod_ns = int(1e9 / rate_hz)",
    "import simclock\nclock.advance(int(math.ceil(dt * 1e9)))",
    "import simclock\nperiod_ns = int(period_ms * 1e6)",
    "import simclock\nclock.advance(int(us * 1e3))",
    "import simclock\nclock.schedule(start_ns + int(delay_ms * 1e6), cb)",
    "import simclock\nclock.schedule_periodic(period_ns=int(1.0 / hz * 1e9), callback=cb)",
    "import simclock\nimport numpy as np\nstamps = np.int64(times * 1e9)",
    "import simclock\nSTEP = 0.01\nclock.advance(int(STEP * 10**9))",
    # Declared simulation code that is handed a clock and never imports simclock.
    DECLARED + "def step(clock, dt):\n    clock.advance(int(dt * 1e9))",
]

_SCALE_TEXT = re.compile(
    rb"1(?:\.0*)?[eE]\+?0*[369]\b|10\s*\*\*\s*[369]\b|\b1_?000(?:_?000){0,2}\b"
)


def may_match(source: bytes) -> bool:
    # Whether the file is simulation code is the engine's one decision (C-LINT-1).
    return _SCALE_TEXT.search(source) is not None


def _power_of_ten(expr: libcst.BaseExpression) -> int | None:
    """3, 6 or 9 when ``expr`` is the literal 10**3, 10**6 or 10**9 in any spelling."""
    import libcst

    value: Fraction | None = None
    if isinstance(expr, libcst.Float | libcst.Integer):
        value = _literal(expr)
    elif (
        isinstance(expr, libcst.BinaryOperation)
        and isinstance(expr.operator, libcst.Power)
        and isinstance(expr.left, libcst.Integer)
        and isinstance(expr.right, libcst.Integer)
        and expr.left.evaluated_value == 10
    ):
        value = Fraction(10) ** expr.right.evaluated_value
    for power in (3, 6, 9):
        if value == 10**power:
            return power
    return None


def _literal(expr: libcst.Float | libcst.Integer) -> Fraction:
    return Fraction(Decimal(expr.value.replace("_", "")))


def scale(expr: libcst.BaseExpression) -> int | None:
    """The largest power of ten (3, 6, 9) that multiplies or divides in ``expr``, else None."""
    import libcst

    found: int | None = None
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, libcst.UnaryOperation):
            stack.append(node.expression)
        elif isinstance(node, libcst.BinaryOperation):
            if isinstance(node.operator, libcst.Multiply | libcst.Divide):
                for side in (node.left, node.right):
                    power = _power_of_ten(side)
                    if power is not None and (found is None or power > found):
                        found = power
            if not isinstance(node.operator, libcst.Power):
                stack.extend((node.left, node.right))
    return found


def _exact_and_float(expr: libcst.BaseExpression) -> tuple[Fraction, float] | None:
    """``expr`` computed exactly and in float, when it is arithmetic of literals only."""
    import libcst

    try:
        if isinstance(expr, libcst.Float | libcst.Integer):
            return _literal(expr), float(expr.value.replace("_", ""))
        if isinstance(expr, libcst.UnaryOperation) and isinstance(
            expr.operator, libcst.Minus | libcst.Plus
        ):
            inner = _exact_and_float(expr.expression)
            if inner is None:
                return None
            sign = -1 if isinstance(expr.operator, libcst.Minus) else 1
            return sign * inner[0], sign * inner[1]
        if isinstance(expr, libcst.BinaryOperation):
            left, right = _exact_and_float(expr.left), _exact_and_float(expr.right)
            if left is None or right is None:
                return None
            operator = expr.operator
            if isinstance(operator, libcst.Add):
                return left[0] + right[0], left[1] + right[1]
            if isinstance(operator, libcst.Subtract):
                return left[0] - right[0], left[1] - right[1]
            if isinstance(operator, libcst.Multiply):
                return left[0] * right[0], left[1] * right[1]
            if isinstance(operator, libcst.Divide):
                return left[0] / right[0], left[1] / right[1]
            if (
                isinstance(operator, libcst.Power)
                and right[0].denominator == 1
                and abs(right[0]) <= 30
            ):
                return left[0] ** int(right[0]), left[1] ** right[1]
    except (ZeroDivisionError, OverflowError, InvalidOperation, ValueError):
        return None
    return None


def _unwrap(
    expr: libcst.BaseExpression, inner: set[int], imported: dict[int, str]
) -> libcst.BaseExpression:
    """The argument under nested conversions (``int(math.floor(x))`` -> ``x``); notes them."""
    import libcst

    while (
        isinstance(expr, libcst.Call)
        and _conversion(expr, imported) is not None
        and expr.args
        and expr.args[0].keyword is None
        and not expr.args[0].star
    ):
        inner.add(id(expr))
        expr = expr.args[0].value
    return expr


def _conversion(call: libcst.Call, imported: dict[int, str]) -> str | None:
    """The conversion ``call`` makes (``floor``), by the callee's name or what it was imported as.

    ``from math import floor as round_down``: ``round_down(x)`` is ``floor``.
    """
    import libcst

    func = call.func
    name = ""
    if isinstance(func, libcst.Attribute):
        name = func.attr.value
    elif isinstance(func, libcst.Name):
        name = func.value
    if name not in CONVERSIONS:
        name = imported.get(id(func), "").rpartition(".")[2]
    return name if name in CONVERSIONS else None


def _sinks(analysis: Analysis) -> set[int]:
    """ids of the expressions that are times: where a 1e6 or 1e3 scale is flagged too."""
    import libcst

    from simclock_lint._analysis import dotted_name, keyword_args, positional_args

    roots: list[libcst.BaseExpression] = []
    for name, call in analysis.calls:
        if name == "advance" or name.startswith("schedule"):
            positional = positional_args(call)
            roots.extend(
                positional[index].value
                for index in TIME_POSITIONS.get(name, ())
                if index < len(positional)
            )
        roots.extend(
            arg.value
            for arg in keyword_args(call)
            if arg.keyword is not None and arg.keyword.value.endswith("_ns")
        )
    for statement in analysis.assignments:
        if statement.value is None:
            continue
        targets = (
            [target.target for target in statement.targets]
            if isinstance(statement, libcst.Assign)
            else [statement.target]
        )
        if any(
            isinstance(target, libcst.Name | libcst.Attribute)
            and dotted_name(target).endswith("_ns")
            for target in targets
        ):
            roots.append(statement.value)
    sinks: set[int] = set()
    while roots:
        node = roots.pop()
        sinks.add(id(node))
        # A term of a sum is a time too: ``start_ns + int(delay_ms * 1e6)``.
        if isinstance(node, libcst.BinaryOperation) and isinstance(
            node.operator, libcst.Add | libcst.Subtract
        ):
            roots.extend((node.left, node.right))
    return sinks


def check(analysis: Analysis) -> Iterator[tuple[libcst.CSTNode, str]]:
    sinks: set[int] | None = None
    inner: set[int] = set()
    hits: list[tuple[libcst.Call, str]] = []
    # Callees imported under another name: id(callee node) -> dotted name (``math.floor``).
    imported = {id(ref.node): ref.qualname for ref in analysis.references if ref.call is not None}
    for _, call in analysis.calls:
        name = _conversion(call, imported)
        if name is None or id(call) in inner or not call.args:
            continue
        first = call.args[0]
        if first.keyword is not None or first.star:
            continue
        nested: set[int] = set()
        argument = _unwrap(first.value, nested, imported)
        power = scale(argument)
        # A true division alone is not enough: 10**9 / rate is exact for a Fraction rate.
        if power is None or not is_float(argument, analysis, division=False):
            continue
        if power < _NANOS_PER_SECOND:
            if sinks is None:
                sinks = _sinks(analysis)
            if id(call) not in sinks:
                continue
        computed = _exact_and_float(argument)
        if computed is not None:
            exact, approximate = computed
            to_int = CONVERSIONS[name]
            if math.isfinite(approximate) and to_int(exact) == to_int(Fraction(approximate)):
                continue  # literal arithmetic that float gets right: int(1.5 * 1e9)
        inner |= nested
        hits.append((call, f"{name}()"))
    # Invariant: walk order visits an outer call before the calls inside it.
    for call, name in hits:
        if id(call) not in inner:
            yield call, name


RULE = Rule.declared_in(
    globals(),
    simulation_only=True,
    modules=("math", "numpy"),
    words=float_names,
    anchors=tuple(CONVERSIONS),
)
