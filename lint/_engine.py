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

__all__ = ["PARSE_ERROR", "INTERNAL_ERROR", "lint_source"]

PARSE_ERROR = "SC000"
INTERNAL_ERROR = "SC999"

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE
)


_IMPORT_STATEMENT = re.compile(
    r"(?:\bfrom\s+[\w.]+\s+)?\bimport\b(?:\s*\([^)]*\)|[^\n\\]*(?:\\\r?\n[^\n\\]*)*)"
)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_KEYWORDS = frozenset(keyword.kwlist)
# Above this many mentions of the names, walking everything is cheaper than pruning.
_DENSE = 300


def _statement_filter(text: str, rules: list[Rule]) -> Callable[[ast.stmt], bool] | None:
    """A predicate keeping only statements whose lines mention a name some rule needs.

    The names are every identifier of an import statement that mentions a
    module a rule tracks (so aliases and their shadowing are seen), plus the
    rules' own words. None (keep everything) after a star import of a tracked
    module, where any name may denote it.
    """
    modules = {module for rule in rules for module in rule.modules}
    names: set[str] = set()
    for rule in rules:
        if rule.words is not None:
            names.update(rule.words(text))
    if modules:
        for match in _IMPORT_STATEMENT.finditer(text):
            identifiers = set(_IDENTIFIER.findall(match.group()))
            if identifiers & modules:
                if "*" in match.group():
                    return None
                names.update(identifiers - _KEYWORDS)
    if not names:
        return lambda statement: False
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    if len(pattern.findall(text)) > _DENSE:
        return None  # the names are everywhere: pruning would cost more than it saves
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

    return keep


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


def lint_source(source: bytes | str, path: str = "<string>", rules: Iterable[Rule] = RULES) -> list[Finding]:
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
        analysis = analyse(tree, _statement_filter(text, active))
        hits: list[tuple[int, int, str, str]] = []
        for rule in active:
            for node, name in rule.check(analysis):
                hits.append((node.lineno, node.col_offset, rule.code, rule.message.format(name=name)))
        if not hits:
            return []
        lines = text.splitlines()
        findings = set()
        for line, offset, code, message in hits:
            line_text = lines[line - 1] if 0 < line <= len(lines) else ""
            if "noqa" in line_text.lower() and _suppressed(_comment(line_text), code):
                continue
            findings.add(Finding(path, line, _column(lines, line, offset), code, message))
        return sorted(findings)
    except Exception as error:  # a linter bug must not hide the other files' findings
        return [Finding(path, 1, 1, INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}")]
