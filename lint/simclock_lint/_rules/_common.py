"""Text pre-filters shared by the rules and the engine: cheap conditions on raw bytes."""

from __future__ import annotations

import functools
import re

from simclock_lint._callinfo import CallInfo

__all__ = ["CallInfo", "import_statements", "imports_module"]


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
