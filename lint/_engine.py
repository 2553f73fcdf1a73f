"""Lint one source text: pre-filter, parse, analyse, run rules, apply ``# noqa``.

Pipeline per file (SPEC §13): a rule whose ``may_match`` is false for the raw
bytes is skipped, and a file no selected rule may match is never parsed; one
``libcst.parse_module`` and one binding walk then serve every rule, and the
positions of the (rare) findings are computed last, for those nodes only. A
file that does not parse yields a single ``SC000`` finding carrying the
parser's message; an exception inside the linter yields ``SC999`` instead of
stopping the run. libcst is imported on the first file that needs a parse, so
a run served by the cache never pays for it.
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from collections.abc import Iterable

from lint._prune import prune
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
_ERROR_AT = re.compile(r"error at (?P<line>\d+):(?P<col>\d+): ")


def _relevant(raw: bytes, text: str, rules: list[Rule]) -> frozenset[str] | None:
    """The names the rules need: the walk records bindings and loads of these only.

    They are every identifier of an import statement that mentions a module a
    rule tracks (so aliases and whatever shadows them are seen), plus the
    rules' own words. None (track every name) after a star import of a
    tracked module, where any name may denote it.
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
            return None
    return frozenset(names)


def _cut(
    raw: bytes, text: str, rules: list[Rule], names: frozenset[str] | None
) -> tuple[str, list[int]] | None:
    """The text cut to the statements that can matter, and its line map (None: keep all)."""
    if names is None or any(not rule.anchors for rule in rules):
        return None  # a star import, or a rule that cannot say what it needs
    anchors = {anchor for rule in rules for anchor in rule.anchors}
    triggers = set(anchors)
    encoded = {anchor.encode() for anchor in anchors}
    for identifiers in import_statements(raw):
        if identifiers & encoded:
            triggers.update(word.decode() for word in identifiers)
    return prune(text, triggers - _KEYWORDS, set(names))


def _parse_error(error: Exception) -> tuple[int, int, str]:
    """Line, column (1-based) and message of a libcst parse failure.

    libcst's native parser names its position in the message (``error at
    3:5: expected ...``, 0-based column, at or just after the offending token);
    its ``raw_line``/``raw_column`` attributes are less reliable, so the
    message's position wins when it has one.
    """
    import libcst

    if isinstance(error, libcst.ParserSyntaxError):
        message = error.message.removeprefix("parser error: ")
        at = _ERROR_AT.match(message)
        if at is None:
            return max(error.raw_line, 1), error.raw_column + 1, message
        return max(int(at["line"]), 1), int(at["col"]) + 1, message[at.end() :]
    return 1, 1, f"{type(error).__name__}: {error}"


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
    except (UnicodeDecodeError, LookupError, SyntaxError, ValueError) as error:
        return [Finding(path, 1, 1, PARSE_ERROR, f"could not parse: {error}")]
    import libcst

    from lint._analysis import analyse
    from lint._positions import start_positions

    try:
        names = _relevant(raw, text, active)
        cut = _cut(raw, text, active, names)
    except Exception as error:  # a linter bug must not hide the other files' findings
        return [_internal(path, error)]
    tree: libcst.Module | None = None
    line_map: list[int] | None = None
    if cut is not None:
        try:
            tree, line_map = libcst.parse_module(cut[0]), cut[1]
        except Exception:
            tree = None  # the cut went wrong somewhere: the whole text decides
    if tree is None:
        try:
            tree = libcst.parse_module(text)
        except RecursionError as error:
            return [Finding(path, 1, 1, PARSE_ERROR, f"could not parse: {error}")]
        except Exception as error:  # ParserSyntaxError, or whatever else the parser refuses with
            line, col, message = _parse_error(error)
            return [Finding(path, line, col, PARSE_ERROR, f"could not parse: {message}")]
    try:
        analysis = analyse(tree, names)
        hits: list[tuple[libcst.CSTNode, str, str]] = []
        for rule in active:
            for node, name in rule.check(analysis):
                hits.append((node, rule.code, rule.message.format(name=name)))
        if not hits:
            return []
        positions = start_positions(tree, (node for node, _, _ in hits))
        # Not str.splitlines(): it also splits at form feeds and other characters
        # that are not line ends for the parser, which would shift line numbers.
        lines = _LINE_END.split(text)
        findings = set()
        for node, code, message in hits:
            line, column = positions[id(node)]
            if line_map is not None:
                line = line_map[line - 1]
            line_text = lines[line - 1] if 0 < line <= len(lines) else ""
            if "noqa" in line_text.lower() and _suppressed(_comment(line_text), code):
                continue
            findings.add(Finding(path, line, column + 1, code, message))
        return sorted(findings)
    except Exception as error:  # a linter bug must not hide the other files' findings
        return [_internal(path, error)]


def _internal(path: str, error: Exception) -> Finding:
    return Finding(path, 1, 1, INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}")
