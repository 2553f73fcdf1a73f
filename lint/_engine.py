"""Lint one source text: pre-filter, parse, analyse, run rules, apply ``# noqa``.

Pipeline per file (SPEC §13): a rule whose ``may_match`` is false for the raw
bytes is skipped, and a file no selected rule may match is never parsed; one
``ast`` parse and one binding walk then serve every rule. A file that does not
parse yields a single ``SC000`` finding carrying the parser's message; an
exception inside the linter yields ``SC999`` instead of stopping the run.
"""

from __future__ import annotations

import ast
import bisect
import io
import keyword
import re
import tokenize
from collections.abc import Callable, Iterable

from lint._analysis import analyse
from lint._rule import Finding, Rule
from lint._rules import RULES
from lint._rules._common import import_statements, imports_module

__all__ = ["INTERNAL_ERROR", "PARSE_ERROR", "lint_source"]

PARSE_ERROR = "SC000"
INTERNAL_ERROR = "SC999"

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE
)


_LINE_END = re.compile(r"\r\n?|\n")
_KEYWORDS = frozenset(keyword.kwlist)
_STAR_IMPORT = re.compile(rb"\bimport\s*\*")
# Above this many mentions of the names, walking everything is cheaper than pruning.
_DENSE = 300


def _relevant(
    raw: bytes, text: str, rules: list[Rule]
) -> tuple[frozenset[str] | None, Callable[[ast.stmt], bool] | None]:
    """The names the rules need, and a predicate keeping only statements that mention one.

    The names are every identifier of an import statement that mentions a
    module a rule tracks (so aliases and whatever shadows them are seen), plus
    the rules' own words. A statement whose lines mention none of them can
    neither bind nor load them, so the walk skips it. ``(None, None)`` (track
    every name, keep every statement) after a star import of a tracked module,
    where any name may denote it.
    """
    modules = {module for rule in rules for module in rule.modules}
    names: set[str] = set()
    for rule in rules:
        if rule.words is not None:
            names.update(rule.words(text))
    if modules:
        tracked = {module.encode() for module in modules}
        for identifiers in import_statements(raw):
            if identifiers & tracked:
                names.update(word.decode() for word in identifiers)
        names -= _KEYWORDS
        if _STAR_IMPORT.search(raw) and any(imports_module(raw, m) for m in modules):
            return None, None
    if not names:
        return frozenset(), lambda statement: False
    # Substring counts over-estimate mentions, cheaply: only a heuristic threshold.
    if sum(text.count(name) for name in names) > _DENSE:
        return frozenset(names), None  # mentioned everywhere: pruning would cost more than it saves
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    lines: list[int] = []
    line, position = 1, 0
    for match in pattern.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        if not lines or lines[-1] != line:
            lines.append(line)

    def keep(statement: ast.stmt) -> bool:
        start = statement.lineno
        decorators = getattr(statement, "decorator_list", None)
        if decorators:
            start = min(start, decorators[0].lineno)
        index = bisect.bisect_left(lines, start)
        end = statement.end_lineno or start
        return index < len(lines) and lines[index] <= end

    return frozenset(names), keep


def _decode(source: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    return source.decode(encoding)


def _comment(line_text: str) -> str | None:
    """The comment of one physical line, telling a ``#`` in a string from a comment."""
    if "#" not in line_text:
        return None
    try:
        for token in tokenize.generate_tokens(io.StringIO(line_text).readline):
            if token.type == tokenize.COMMENT:
                return token.string
    except (tokenize.TokenError, SyntaxError):
        # The line continues a bracket or a string: fall back to the text after '#'.
        return line_text[line_text.index("#") :]
    return None


def _suppressed(comment: str | None, code: str) -> bool:
    if comment is None:
        return False
    for match in _NOQA.finditer(comment):
        codes = match.group("codes")
        if codes is None:
            return True
        if code in {c.strip().upper() for c in codes.split(",")}:
            return True
    return False


def _column(lines: list[str], line: int, byte_offset: int) -> int:
    """1-based character column from ast's 0-based UTF-8 byte offset."""
    if 0 < line <= len(lines):
        text = lines[line - 1]
        if not text.isascii():
            return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "ignore")) + 1
    return byte_offset + 1


def lint_source(
    source: bytes | str, path: str = "<string>", rules: Iterable[Rule] = RULES
) -> list[Finding]:
    """Findings of ``rules`` on one module's source, sorted by position.

    ``path`` is only echoed in the findings. Never raises for bad input: an
    unparsable file gives ``SC000``, a linter bug ``SC999``.
    """
    raw = source.encode("utf-8") if isinstance(source, str) else source
    active = [rule for rule in rules if rule.may_match(raw)]
    if not active:
        return []
    try:
        text = source if isinstance(source, str) else _decode(raw)
        tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        line = error.lineno or 1
        col = error.offset or 1
        return [Finding(path, line, col, PARSE_ERROR, f"could not parse: {error.msg}")]
    except (UnicodeDecodeError, LookupError, ValueError) as error:
        return [Finding(path, 1, 1, PARSE_ERROR, f"could not parse: {error}")]
    try:
        names, keep = _relevant(raw, text, active)
        analysis = analyse(tree, keep, names)
        hits: list[tuple[int, int, str, str]] = []
        for rule in active:
            for node, name in rule.check(analysis):
                hits.append(
                    (node.lineno, node.col_offset, rule.code, rule.message.format(name=name))
                )
        if not hits:
            return []
        # Not str.splitlines(): it also splits at form feeds and other characters
        # that are not line ends for the parser, which would shift line numbers.
        lines = _LINE_END.split(text)
        findings = set()
        for line, offset, code, message in hits:
            line_text = lines[line - 1] if 0 < line <= len(lines) else ""
            if "noqa" in line_text.lower() and _suppressed(_comment(line_text), code):
                continue
            findings.add(Finding(path, line, _column(lines, line, offset), code, message))
        return sorted(findings)
    except Exception as error:  # a linter bug must not hide the other files' findings
        return [
            Finding(path, 1, 1, INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}")
        ]
