"""Cut a module's text down to the statements that can matter, before parsing (SPEC §13).

libcst's parse is the linter's main cost, and most of a file that may match is
code that cannot produce a finding: in a test module, the functions that never
mention ``random``. This module scans the text (strings, comments, brackets,
indentation: no parse) into statements and drops:

- a ``def`` or ``class`` (decorators included) whose text contains no
  *trigger*, unless it says ``global``/``nonlocal`` or its own name is a
  tracked name: it can only bind its own name, and nothing inside it is a
  finding;
- any other statement whose text contains neither a trigger nor a tracked
  name: it can neither bind nor load one.

A ``def``/``class`` that contains a trigger keeps its decorators and header
and has its body cut the same way (a ``pass`` stands in for an empty body).
Triggers are words that every finding's text contains (``random``, ``time``,
``child``, ...) plus every name an import statement mentioning one binds, so
a finding's statement and every statement enclosing it are kept; tracked names
are the names the binding walk records, so every binding that can shadow one
in a kept scope is kept. The result parses to the findings of the whole file,
at the same lines (whole lines are kept; the map gives each kept line its
original number).

Anything the scanner does not understand (unbalanced brackets, an unterminated
string) returns None: the caller parses the whole text, and any parse failure
of the cut text falls back to the whole text too.

Complexity: O(len(text)) for the scan, O(statements x log(matches)) to decide.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = ["prune"]

_SCAN = re.compile(
    r"""(?P<s3>'''|\"\"\")|(?P<s1>['"])|\#[^\r\n]*|(?P<open>[(\[{])|(?P<close>[)\]}])"""
    r"""|\\(?:\r\n|\r|\n)|(?P<nl>\r\n|\r|\n)"""
)
_STRING_END = {
    "'''": re.compile(r"[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''", re.S),
    '"""': re.compile(r'[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""', re.S),
    "'": re.compile(r"[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'", re.S),
    '"': re.compile(r'[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"', re.S),
}
# The start of a logical line: indentation, then what kind of line it is.
_HEAD = re.compile(
    r"(?P<indent>[ \t\f]*)(?:(?P<blank>[#\r\n]|$)|(?P<decorator>@)"
    r"|(?:async[ \t]+)?(?P<defclass>def|class)[ \t]+(?P<name>\w+)"
    r"|(?P<clause>elif|else|except|finally)\b|)"
)
_NEWLINE = re.compile(r"\r\n|\r|\n")
_SCOPE_KEYWORDS = re.compile(r"\b(?:global|nonlocal)\b")


@dataclass(slots=True)
class _Line:
    """One logical line: [start, end) offsets of its physical lines."""

    start: int
    end: int
    indent: str
    kind: str  # "blank" | "decorator" | "defclass" | "clause" | "other"
    name: str


def _logical_lines(text: str) -> list[_Line] | None:
    """The logical lines of ``text``, or None where the scan cannot be trusted."""
    lines: list[_Line] = []
    depth = 0
    start = 0
    position = 0
    search = _SCAN.search
    while True:
        match = search(text, position)
        if match is None:
            if depth:
                return None
            if start < len(text):
                lines.append(_line(text, start, len(text)))
            return lines
        position = match.end()
        group = match.lastgroup
        if group in {"s3", "s1"}:
            end = _STRING_END[match.group()].match(text, position)
            if end is None:
                return None
            position = end.end()
        elif group == "open":
            depth += 1
        elif group == "close":
            depth -= 1
            if depth < 0:
                return None
        elif group == "nl" and depth == 0:
            lines.append(_line(text, start, position))
            start = position


def _line(text: str, start: int, end: int) -> _Line:
    head = _HEAD.match(text, start)
    if head is None:
        return _Line(start, end, "", "other", "")
    kind = head.lastgroup or "other"
    if kind == "indent":
        kind = "other"
    elif kind == "name":
        kind = "defclass"
    return _Line(start, end, head["indent"], kind, head["name"] or "")


def _deeper(inner: str, outer: str) -> bool:
    return len(inner) > len(outer) and inner.startswith(outer)


class _Cutter:
    def __init__(
        self,
        text: str,
        lines: list[_Line],
        triggers: list[int],
        names: list[int],
        tracked: set[str],
    ) -> None:
        self.text = text
        self.lines = lines
        self.triggers = triggers
        self.names = names
        self.tracked = tracked
        # [first line index, end line index, indentation of a `pass` to add after them]
        self.kept: list[tuple[int, int, list[str]]] = []

    def _mentions(self, offsets: list[int], start: int, end: int) -> bool:
        index = bisect.bisect_left(offsets, start)
        return index < len(offsets) and offsets[index] < end

    def block(self, first: int, end: int) -> None:
        """Cut the statements of lines [first, end), all at one indentation."""
        lines = self.lines
        i = first
        while i < end:
            if lines[i].kind == "blank":
                i += 1
                continue
            start = i
            while i < end and lines[i].kind in ("decorator", "blank"):
                i += 1
            if i == end:
                self.kept.append((start, end, []))
                return
            header = i
            indent = lines[header].indent
            i += 1
            while i < end and (lines[i].kind == "blank" or _deeper(lines[i].indent, indent)):
                i += 1
            if lines[header].kind != "defclass":
                while (
                    i < end and lines[i].kind == "clause" and lines[i].indent == indent
                ):  # elif / else / except / finally continue the statement
                    i += 1
                    while i < end and (
                        lines[i].kind == "blank" or _deeper(lines[i].indent, indent)
                    ):
                        i += 1
            self.statement(start, header, i)

    def statement(self, start: int, header: int, end: int) -> None:
        lines = self.lines
        low, high = lines[start].start, lines[end - 1].end
        triggered = self._mentions(self.triggers, low, high)
        if lines[header].kind != "defclass":
            if triggered or self._mentions(self.names, low, high):
                self.kept.append((start, end, []))
            return
        if not triggered:
            if lines[header].name in self.tracked or _SCOPE_KEYWORDS.search(self.text, low, high):
                self.kept.append((start, end, []))
            return
        body = header + 1
        while body < end and lines[body].kind == "blank":
            body += 1
        if body == end or _SCOPE_KEYWORDS.search(self.text, low, high):
            self.kept.append((start, end, []))  # a one-line body, or scope declarations inside
            return
        entry: tuple[int, int, list[str]] = (start, header + 1, [])
        self.kept.append(entry)
        before = len(self.kept)
        self.block(body, end)
        if len(self.kept) == before:
            entry[2].append(lines[body].indent)  # every statement of the body was cut


def prune(
    text: str, triggers: re.Pattern[str], names: re.Pattern[str] | None, tracked: set[str]
) -> tuple[str, list[int]] | None:
    """The cut text and, for each of its lines, the original 1-based line number.

    None when nothing can be cut or the text is beyond the scanner; the caller
    then parses ``text`` whole.
    """
    lines = _logical_lines(text)
    if not lines:
        return None
    trigger_offsets = [match.start() for match in triggers.finditer(text)]
    name_offsets = [] if names is None else [match.start() for match in names.finditer(text)]
    cutter = _Cutter(text, lines, trigger_offsets, name_offsets, tracked)
    cutter.block(0, len(lines))
    kept = sum(lines[end - 1].end - lines[first].start for first, end, _ in cutter.kept)
    if kept > len(text) * 0.9:
        return None  # too little to gain
    line_starts = [0]
    line_starts.extend(match.end() for match in _NEWLINE.finditer(text))
    pieces: list[str] = []
    line_map: list[int] = []
    for first, end, pass_indent in cutter.kept:
        low, high = lines[first].start, lines[end - 1].end
        chunk = text[low:high]
        first_line = bisect.bisect_right(line_starts, low)
        count = len(_NEWLINE.findall(chunk))
        if not chunk.endswith(("\n", "\r")):
            chunk += "\n"
            count += 1
        pieces.append(chunk)
        line_map.extend(range(first_line, first_line + count))
        if pass_indent:
            pieces.append(pass_indent[0] + "pass\n")
            line_map.append(first_line + count - 1)
    return "".join(pieces), line_map
