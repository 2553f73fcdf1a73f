"""Validation of time-ints (SPEC §0, C-TIME-3).

A time-int is a Python ``int`` or ``numpy.integer`` of nanoseconds. ``bool`` and
every non-integral number (``float``, ``numpy.floating``, ``Decimal``,
``Fraction``) and ``str`` are refused with ``TypeError``: a float is never
rounded. Negative values are refused with ``ValueError``.
"""

from __future__ import annotations

import math
import operator
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.core._numpy import is_numpy_bool, is_numpy_floating, is_numpy_integer

__all__ = ["check_positive_ns", "check_time_ns", "seconds_to_ns"]


def check_time_ns(value: object, name: str) -> int:
    """Return ``value`` as a non-negative ``int`` of ns, or raise (C-TIME-3).

    ``int`` and ``numpy.integer`` are accepted and normalised with
    ``operator.index``; anything else is a ``TypeError`` naming ``name`` and the
    value; a negative value is a ``ValueError``.
    """
    # type() instead of isinstance() for the fast path: bool is an int subclass.
    if type(value) is int:
        result = value
    elif is_numpy_integer(value):  # numpy.bool_ is not a numpy.integer
        result = operator.index(value)
    else:
        raise SimclockTypeError(
            f"{name} must be an int of nanoseconds, got {type(value).__name__} {safe_repr(value)}; "
            "convert seconds explicitly, e.g. simclock.seconds_to_ns(...)"
        )
    if result < 0:
        raise SimclockValueError(f"{name} must be >= 0 ns, got {safe_repr(result)}")
    return result


def check_positive_ns(value: object, name: str) -> int:
    """Like `check_time_ns` but the value must be > 0 (periods, steps)."""
    try:
        result = check_time_ns(value, name)
    except SimclockValueError:
        # A negative period must not be told ">= 0": 0 is refused too.
        result = operator.index(value)  # type: ignore[arg-type]
    if result <= 0:
        raise SimclockValueError(f"{name} must be > 0 ns, got {safe_repr(result)}")
    return result


# Bounds checked before any exact conversion, so a refusal is cheap: Decimal("1e9999999")
# is 30 bytes, but its Fraction is a 10-million-digit int. 10**30 s is far beyond the
# 2**64 ns that C-TIME-4 asks for; 60 digits hold any exact ns value below it.
_MAX_DECIMAL_DIGITS = 60
_MAX_SECONDS_EXPONENT = 30
_MAX_TEXT = 200


def _bounded_decimal(seconds: Decimal | str, name: str) -> Decimal:
    """``Decimal(seconds)`` with its digits and exponent bounded, or ``ValueError``."""
    if isinstance(seconds, str):
        if len(seconds) > _MAX_TEXT:
            raise SimclockValueError(
                f"{name} must be a decimal number of seconds of at most {_MAX_TEXT} "
                f"characters, got a str of {len(seconds)}"
            )
        try:
            dec = Decimal(seconds)
        except InvalidOperation:
            raise SimclockValueError(
                f"{name} must be a decimal number of seconds, got {safe_repr(seconds)}"
            ) from None
    else:
        dec = seconds
    if not dec.is_finite():
        raise SimclockValueError(f"{name} must be finite, got {safe_repr(seconds)}")
    if dec.is_zero():
        return Decimal(0)
    if dec.adjusted() > _MAX_SECONDS_EXPONENT:
        raise SimclockValueError(
            f"{name} must be below 1e{_MAX_SECONDS_EXPONENT + 1} s, got {safe_repr(seconds)}"
        )
    if dec.adjusted() < -9:
        raise SimclockValueError(
            f"{name} = {safe_repr(seconds)} s is not a whole number of nanoseconds "
            "(it is below 1 ns); refusing to round it"
        )
    # str() first: it is linear in the digits, as_tuple() builds one int object per digit.
    if len(str(dec)) > 2 * _MAX_DECIMAL_DIGITS or len(dec.as_tuple().digits) > _MAX_DECIMAL_DIGITS:
        raise SimclockValueError(
            f"{name} has more than {_MAX_DECIMAL_DIGITS} significant digits, "
            f"got {safe_repr(seconds)}; no time-int needs that many"
        )
    return dec


def seconds_to_ns(seconds: object, name: str = "seconds") -> int:
    """Convert a duration in seconds to an exact int of ns, or refuse (C-GRID-4).

    Accepted: ``int``, ``Fraction``, ``Decimal``, ``str`` (a decimal literal) and
    ``float``/``numpy.floating``. A float goes through its shortest decimal
    ``repr`` (``Decimal(repr(x))``), so MuJoCo's ``0.002`` is exactly 2 000 000
    ns; a ``numpy.floating`` through its shortest decimal at its own precision
    (``numpy.float32(0.002)`` is ``"0.002"`` too). The result must be a whole,
    non-negative number of ns; ``1e-10`` s is 0.1 ns and is refused with
    ``ValueError`` rather than rounded. ``bool``, NaN and infinities are refused.

    Cost: a refusal is O(1) in the size of the value's exponent: ``str`` longer
    than 200 characters, decimals with more than 60 significant digits or of
    1e31 s and more are refused before the exact conversion.
    """
    if isinstance(seconds, bool) or is_numpy_bool(seconds):
        raise SimclockTypeError(
            f"{name} must be a number of seconds, got bool {safe_repr(seconds)}"
        )
    exact: Fraction
    if isinstance(seconds, int) or is_numpy_integer(seconds):
        exact = Fraction(operator.index(seconds))
    elif isinstance(seconds, Fraction):
        exact = seconds
    elif isinstance(seconds, float) or is_numpy_floating(seconds):
        if not math.isfinite(float(seconds)):
            raise SimclockValueError(f"{name} must be finite, got {safe_repr(seconds)}")
        # The shortest decimal at the float's own precision: a float32 0.002 is
        # "0.002", whereas its float64 widening prints 0.0020000000949949026.
        if is_numpy_floating(seconds):
            import numpy as np  # loaded already: seconds is one of its scalars

            text = np.format_float_positional(seconds, unique=True)
        else:
            text = repr(float(seconds))
        exact = Fraction(Decimal(text))
    elif isinstance(seconds, Decimal | str):
        exact = Fraction(_bounded_decimal(seconds, name))
    else:
        raise SimclockTypeError(
            f"{name} must be a number of seconds (int, Fraction, Decimal, str or float), "
            f"got {type(seconds).__name__} {safe_repr(seconds)}"
        )
    ns = exact * 1_000_000_000
    if ns.denominator != 1:
        raise SimclockValueError(
            f"{name} = {safe_repr(seconds)} s is not a whole number of nanoseconds "
            f"({ns} ns); refusing to round it"
        )
    if ns < 0:
        raise SimclockValueError(f"{name} must be >= 0 s, got {safe_repr(seconds)}")
    return int(ns)
