"""Text pre-filters shared by the rules: cheap necessary conditions on raw bytes."""

from __future__ import annotations

import re

__all__ = ["imports_module"]

_IMPORT_CACHE: dict[str, re.Pattern[bytes]] = {}


def imports_module(source: bytes, module: str) -> bool:
    """Whether ``source`` may contain an import binding ``module`` or a name from it.

    Matches ``import a, module``, ``import module.x as y``, ``from module import``
    and ``from pkg import module`` even across backslash continuations; a match
    in a string or comment only costs a parse, never a finding.
    """
    pattern = _IMPORT_CACHE.get(module)
    if pattern is None:
        word = re.escape(module.encode())
        pattern = re.compile(
            rb"\bimport\b(?:[^\n#\\]|\\(?:\r?\n|.))*\b" + word + rb"\b|\bfrom\s+" + word + rb"\b"
        )
        _IMPORT_CACHE[module] = pattern
    return pattern.search(source) is not None
