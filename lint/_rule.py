"""The shape of one rule and of one finding (SPEC §13)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from lint._analysis import Analysis

__all__ = ["Finding", "Rule"]


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One finding: ``path:line:col: code message`` (line and column are 1-based)."""

    path: str
    line: int
    col: int
    code: str
    message: str

    def format_text(self) -> str:
        """The text form ``path:line:col: CODE message``."""
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule: code, one-line message template (``{name}``), doc and examples.

    ``may_match(source)`` is a cheap necessary condition on the raw bytes: when
    it is false for every selected rule the file is not parsed at all.
    ``check(analysis)`` yields ``(node, name)`` pairs; ``name`` fills the
    message. ``simulation_only`` rules apply only to the configured
    simulation-code paths.

    ``modules`` and ``words`` let the engine skip statements: a statement whose
    lines mention no name bound by an import of ``modules`` and none of
    ``words(text)`` cannot produce this rule's findings.
    """

    code: str
    message: str
    doc: str
    valid: Sequence[str]
    invalid: Sequence[str]
    may_match: Callable[[bytes], bool]
    check: Callable[[Analysis], Iterator[tuple[ast.expr, str]]]
    simulation_only: bool = False
    modules: tuple[str, ...] = ()
    words: Callable[[str], Iterable[str]] | None = None
