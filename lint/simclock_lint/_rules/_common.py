"""What the rules share: text pre-filters on raw bytes, and the float test of SCK401-SCK403."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from simclock_lint._callinfo import CallInfo

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis

__all__ = ["CallInfo", "float_names", "import_statements", "imports_module", "is_float"]


_IMPORT = re.compile(rb"\bimport\b")
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")


@functools.lru_cache(maxsize=8)
def import_statements(source: bytes) -> tuple[frozenset[bytes], ...]:
    """The identifiers of each import statement in ``source``, over-approximated.

    Each occurrence of the word ``import`` contributes every identifier from
    the start of its line to the end of the statement (through a parenthesised
    list or backslash continuations), so ``from numpy import (random as nr)``,
    ``x = 1; import time`` and ``if TYPE_CHECKING: import numpy`` are all seen.
    Occurrences in strings and comments only add names. Cached: every rule and
    the engine ask about the same file.
    """
    statements = []
    for match in _IMPORT.finditer(source):
        start = source.rfind(b"\n", 0, match.start()) + 1
        while start >= 2 and source[start - 2 : start] == b"\\\n":
            start = source.rfind(b"\n", 0, start - 2) + 1  # the line continues one above
        rest = source[match.end() : match.end() + 64].lstrip(b" \t")
        if rest.startswith(b"("):
            end = source.find(b")", match.end())
        else:
            end = source.find(b"\n", match.end())
            while end > 0 and source[end - 1 : end] == b"\\":
                end = source.find(b"\n", end + 1)
        if end < 0:
            end = len(source)
        statements.append(frozenset(_IDENTIFIER.findall(source, start, end)))
    return tuple(statements)


def imports_module(source: bytes, module: str) -> bool:
    """Whether ``source`` may contain an import binding ``module`` or a name from it.

    True for ``import a, module``, ``import module.x as y``, ``from module import``
    and ``from pkg import module``; a false True only costs a parse.
    """
    word = module.encode()
    return word in source and any(word in names for names in import_statements(source))


def float_names(text: str) -> set[str]:
    """Names ``name = <float literal>`` may bind: the walk records their bindings."""
    return set(_FLOAT_BINDING.findall(text))


# ``name = 0.01`` or ``name: float = -1e-3``: the names whose bindings the walk must record.
_FLOAT_BINDING = re.compile(
    r"(?m)^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*[-+]?[ \t]*(?:\d[\d_]*)?\.?[\d_]*"
    r"(?:\.|[eE][-+]?\d)"
)


def is_float(expr: libcst.BaseExpression, analysis: Analysis, *, division: bool = True) -> bool:
    """Whether ``expr`` is float by its syntax, or through a name bound once to a float literal.

    ``division``: whether a true division makes it float (``1 / rate``); without
    it only float literals, ``float(...)`` and float names do.
    """
    import libcst

    if isinstance(expr, libcst.Float):
        return True
    if isinstance(expr, libcst.Name):
        return analysis.is_float_constant(expr)
    if isinstance(expr, libcst.UnaryOperation):
        return is_float(expr.expression, analysis, division=division)
    if isinstance(expr, libcst.BinaryOperation):
        return (
            (division and isinstance(expr.operator, libcst.Divide))
            or is_float(expr.left, analysis, division=division)
            or is_float(expr.right, analysis, division=division)
        )
    if isinstance(expr, libcst.Call):
        return isinstance(expr.func, libcst.Name) and expr.func.value == "float"
    return False
