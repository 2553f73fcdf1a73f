"""Cut a module's text down to the statements that can matter, before parsing (SPEC §13).

libcst's parse is the linter's main cost, and most of a file that may match is
code that cannot produce a finding: in a test module, the functions that never
mention ``random``. This module scans the text (strings, comments, brackets,
indentation: no parse) into statements and drops:

- a ``def`` or ``class`` (decorators included) whose text contains no
  *trigger*, unless it says ``global``/``nonlocal`` or its own name is a
  tracked name: it can only bind its own name, and nothing inside it is a
  finding;
- any other statement whose text contains no trigger, no ``global``/
  ``nonlocal``, and no tracked name that it could bind: a mention followed
  by ``.``, ``(`` or ``[`` uses the name and cannot bind it, except in an
  import statement (``import numpy.random``), where any mention counts.

A ``def``/``class`` that contains a trigger keeps its decorators and header
and has its body cut the same way (a ``pass`` stands in for an empty body).
Triggers are words that every finding's text contains (``random``, ``time``,
``child``, ...) plus every name an import statement mentioning one binds, so
a finding's statement and every statement enclosing it are kept; tracked names
are the names the binding walk records, so every binding that can shadow one
in a kept scope is kept. The result parses to the findings of the whole file,
at the same lines (whole lines are kept; the map gives each kept line its
original number).

Anything the scanner does not trust (unbalanced brackets, a stray quote,
``\\r`` line ends, a form feed) returns None: the caller parses the whole
text, and any parse failure of the cut text falls back to the whole text too.
A syntax error inside a statement that is cut goes unseen, as in a file the
pre-filter skips.

Complexity: O(len(text)) for the scan, O(statements x log(matches)) to decide.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

__all__ = ["prune"]


class _TranslateTable(dict[int, str | None]):
    """``str.translate`` table: brackets normalised, newlines kept, anything else dropped."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        value = "(" if char in "([{" else ")" if char in ")]}" else "\n" if char == "\n" else None
        self[code] = value
        return value


# Strings and comments (their brackets and newlines do not count), explicit line
# joins, and a quote that starts no valid string (the scan gives up).
_MASK = re.compile(
    r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|#[^\n]*|\\\n|(?P<bad>['\"])",
    re.S,
)
# Keep only brackets and newlines, openers as "(" and closers as ")".
_TRANSLATE = _TranslateTable()
# The start of a logical line: indentation, then what kind of line it is.
_HEAD = re.compile(
    r"(?P<indent>[ \t\f]*)(?:(?P<blank>[#\r\n]|$)|(?P<decorator>@)"
    r"|(?:async[ \t]+)?(?P<defclass>def|class)[ \t]+(?P<name>\w+)"
    r"|(?P<clause>elif|else|except|finally)\b|(?P<import>import|from)\b|)"
)
_NEWLINE = re.compile(r"\r\n|\r|\n")
# After a name: it is used (attribute, call, subscript), so this mention cannot bind it.
_ACCESS = re.compile(r"\s*[.(\[]")
_IDENTIFIER = re.compile(r"\w+")


@dataclass(slots=True)
class _Line:
    """One logical line: [start, end) offsets of its physical lines."""

    start: int
    end: int
    indent: str
    kind: str  # "blank" | "decorator" | "defclass" | "clause" | "other"
    name: str


class _UnscannableError(Exception):
    """A quote that starts no valid string: leave the text to the parser."""


def _blank(match: re.Match[str]) -> str:
    if match.lastgroup == "bad":
        raise _UnscannableError
    return " " * (match.end() - match.start())


def _logical_lines(text: str) -> list[_Line] | None:
    """The logical lines of ``text``, or None where the scan cannot be trusted.

    Strings, comments and line joins are blanked out, then the bracket depth
    at the end of each physical line decides where logical lines end: all in
    C-level string operations but for one step per physical line.
    """
    if "\r" in text or "\f" in text:
        # Old-Mac or mixed line ends, or a form feed (it resets the indentation
        # count): rare, not worth a second scanner.
        return None
    try:
        masked = _MASK.sub(_blank, text)
    except _UnscannableError:
        return None
    ends = [match.end() for match in _NEWLINE.finditer(masked)]
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    per_line = masked.translate(_TRANSLATE).split("\n")
    depths = list(itertools.accumulate(line.count("(") - line.count(")") for line in per_line))
    if depths[-1] != 0 or min(depths) < 0:
        return None
    lines: list[_Line] = []
    start = 0
    for end, depth in zip(ends, depths, strict=False):
        if depth == 0 and end > start:
            lines.append(_line(text, start, end))
            start = end
    return lines


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


def _mentions(offsets: list[int], start: int, end: int) -> bool:
    index = bisect.bisect_left(offsets, start)
    return index < len(offsets) and offsets[index] < end


@dataclass(frozen=True, slots=True)
class _Offsets:
    """Sorted start offsets of the words that decide what is kept."""

    triggers: list[int]
    names: list[int]  # tracked names, anywhere
    bare_names: list[int]  # tracked names not followed by `.`, `(` or `[`: possible bindings
    scope_keywords: list[int]  # global / nonlocal


def _word_end(text: str, start: int) -> int:
    """Length of the identifier at ``start``."""
    match = _IDENTIFIER.match(text, start)
    return match.end() - start if match else 0


def _deeper(inner: str, outer: str) -> bool:
    return len(inner) > len(outer) and inner.startswith(outer)


class _Cutter:
    def __init__(self, text: str, lines: list[_Line], offsets: _Offsets, tracked: set[str]) -> None:
        self.text = text
        self.lines = lines
        self.offsets = offsets
        self.tracked = tracked
        # [first line index, end line index, indentation of a `pass` to add after them]
        self.kept: list[tuple[int, int, list[str]]] = []

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
        offsets = self.offsets
        triggered = _mentions(offsets.triggers, low, high)
        scoped = _mentions(offsets.scope_keywords, low, high)
        if lines[header].kind != "defclass":
            if (
                triggered
                or scoped
                or _mentions(offsets.bare_names, low, high)
                or (lines[header].kind == "import" and _mentions(offsets.names, low, high))
            ):
                self.kept.append((start, end, []))
            return
        if not triggered:
            if lines[header].name in self.tracked or scoped:
                self.kept.append((start, end, []))
            return
        body = header + 1
        while body < end and lines[body].kind == "blank":
            body += 1
        if body == end or scoped:
            self.kept.append((start, end, []))  # a one-line body, or scope declarations inside
            return
        entry: tuple[int, int, list[str]] = (start, header + 1, [])
        self.kept.append(entry)
        before = len(self.kept)
        self.block(body, end)
        if len(self.kept) == before:
            entry[2].append(lines[body].indent)  # every statement of the body was cut


def _word_offsets(text: str, words: set[str], *, prefix: bool = False) -> list[int]:
    """Sorted offsets of ``words`` in ``text`` as whole words (or word prefixes).

    One literal search per word (fast in C), then a boundary test per hit: far
    cheaper than an alternation of the words with ``\\b``.
    """
    offsets: list[int] = []
    size = len(text)
    for word in words:
        if word not in text:
            continue
        length = len(word)
        for match in re.finditer(re.escape(word), text):
            start = match.start()
            if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue
            end = start + length
            if not prefix and end < size and (text[end].isalnum() or text[end] == "_"):
                continue
            offsets.append(start)
    offsets.sort()
    return offsets


def prune(text: str, triggers: set[str], names: set[str] | None) -> tuple[str, list[int]] | None:
    """The cut text and, for each of its lines, the original 1-based line number.

    ``triggers`` are matched as word prefixes, ``names`` (the tracked names)
    as whole words. None when nothing can be cut or the text is beyond the
    scanner; the caller then parses ``text`` whole.
    """
    lines = _logical_lines(text)
    if not lines:
        return None
    name_offsets = _word_offsets(text, names or set())
    offsets = _Offsets(
        _word_offsets(text, triggers, prefix=True),
        name_offsets,
        [
            offset
            for offset in name_offsets
            if not _ACCESS.match(text, offset + _word_end(text, offset))
        ],
        _word_offsets(text, {"global", "nonlocal"}),
    )
    tracked = names or set()
    cutter = _Cutter(text, lines, offsets, tracked)
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
