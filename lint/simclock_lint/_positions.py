"""Line and column of a few libcst nodes, without ``MetadataWrapper`` (SPEC §13).

libcst nodes carry no positions; ``PositionProvider`` computes one for every
node of the tree, behind a ``MetadataWrapper`` that deep-copies it first, which
costs more than the parse itself. Findings are rare, so this module replays
libcst's code generation over the tree with a state that only counts lines and
characters (no output is kept), notes the position where each wanted node's
syntactic range starts (after its parentheses, as ``PositionProvider`` reports
it), and stops as soon as the last one is found.

Relies on libcst's code generation protocol (``CSTNode._codegen`` calling
``CodegenState.add_token`` / ``record_syntactic_position``), the same one its
own ``PositionProvider`` uses.

Complexity: O(size of the code up to the last wanted node).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable

import libcst as cst
from libcst._nodes.internal import CodegenState

__all__ = ["start_positions"]

_LINE_END = re.compile(r"\r\n?|\n")
_NO_OP = contextlib.nullcontext()


class _FoundAllError(Exception):
    """Every wanted node has been located: abandon the rest of the code generation."""


class _PositionState(CodegenState):
    """Counts lines and characters of the generated code; records wanted starts."""

    def __init__(self, module: cst.Module, wanted: dict[int, tuple[int, int] | None]) -> None:
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.line = 1
        self.column = 0
        self.wanted = wanted
        self.missing = len(wanted)

    def add_token(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = _LINE_END.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.column += len(token)

    def pop_trailing_newline(self) -> None:
        pass  # nothing is kept, and the end of the file matters to no finding

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        # A shared no-op context instead of the base's generator: cheaper per node.
        key = id(node)
        if key in self.wanted and self.wanted[key] is None:
            self.wanted[key] = (self.line, self.column)
            self.missing -= 1
            if self.missing == 0:
                raise _FoundAllError
        return _NO_OP


def start_positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, tuple[int, int]]:
    """``id(node) -> (line, column)`` (1-based line, 0-based character column) of each node.

    A node whose type records no syntactic position is absent from the result.
    """
    wanted: dict[int, tuple[int, int] | None] = dict.fromkeys(map(id, nodes))
    if not wanted:
        return {}
    state = _PositionState(module, wanted)
    with contextlib.suppress(_FoundAllError):
        module._codegen(state)
    return {key: value for key, value in wanted.items() if value is not None}
