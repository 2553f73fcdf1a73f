"""Lint one source text: pre-filter, parse, analyse, run rules, apply ``# noqa``.

Pipeline per file (SPEC §13): a rule whose ``may_match`` is false for the raw
bytes is skipped, and a file no selected rule may match is never parsed; one
``libcst.parse_module`` and one binding walk then serve every rule, and the
positions of the (rare) findings are computed last, for those nodes only. A
file that does not parse yields a single ``SCK000`` finding carrying the
parser's message; an exception inside the linter yields ``SCK999`` instead of
stopping the run. libcst is imported on the first file that needs a parse, so
a run served by the cache never pays for it.

A file libcst refuses (or would take too long on: a line with more than
``_DEEP_OPERATORS`` operators, where its parser slows down steeply) goes to
CPython's ``ast`` parser instead (``lint/simclock_lint/_fallback.py``): when CPython
compiles it, its findings are reported, so only a file Python itself refuses
is ``SCK000``. A ``# simclock-lint: noqa`` line (optionally ``: SCK301,...``)
skips the whole file (or those codes) before any parse.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from collections.abc import Iterable, Sequence

from simclock_lint._prune import prune
from simclock_lint._rule import Finding, Rule, canonical_code, simulation_imports
from simclock_lint._rules import DEFAULT_RULES
from simclock_lint._rules._common import import_statements, imports_module

__all__ = ["INTERNAL_ERROR", "NOT_LINTED", "PARSE_ERROR", "WARNINGS", "lint_source"]

PARSE_ERROR = "SCK000"
# A path that is not a regular file (a FIFO, a device): skipped, a warning only.
NOT_LINTED = "SCK001"
INTERNAL_ERROR = "SCK999"
# Codes that never fail a run (exit status 0 when they are all there is).
WARNINGS = frozenset({NOT_LINTED})

_FILE_NOQA = re.compile(
    rb"^[ \t]*#[ \t]*simclock-lint:[ \t]*noqa\b(?:[ \t]*:[ \t]*"
    rb"(?P<codes>[A-Za-z]+[0-9]+(?:[ \t]*,[ \t]*[A-Za-z]+[0-9]+)*))?",
    re.MULTILINE,
)
# libcst's parser time grows steeply with nesting (a 1 000-term sum: 2 s, 2 000:
# 49 s); a physical line with this many operators or trailers goes to the fallback.
_DEEP_OPERATORS = 150
# A run of physical lines each ending in an operator, an open parenthesis or a
# backslash, or starting with an operator (a sign before a number is data), a
# dot or a closing parenthesis (one expression split over lines), or one long line.
_LONG_LINE = re.compile(
    rb"(?m)^(?:[^\n]*[-+*/%%|&^@(\\][ \t]*\r?\n|[ \t]*(?:[-+](?![\d.])|[*/%%|&^@.)])[^\n]*\r?\n)+"
    rb"[^\n]*"
    rb"|^[^\n]{%d,}" % (2 * _DEEP_OPERATORS)
)
_OPERATOR = re.compile(rb"\.[A-Za-z_]|[-+*/%|&^@(\[<>]")

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE
)


_LINE_END = re.compile(r"\r\n?|\n")
_KEYWORDS = frozenset(keyword.kwlist)
_STAR_IMPORT = re.compile(rb"\bimport\s*\*")


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
        if code in {canonical_code(c) for c in codes.split(",")}:
            return True
    return False


def _file_noqa(raw: bytes) -> frozenset[str] | None:
    """Codes a ``# simclock-lint: noqa[: codes]`` line silences for the file ("*": all)."""
    if b"simclock-lint" not in raw:
        return None
    codes: set[str] = set()
    for match in _FILE_NOQA.finditer(raw):
        listed = match.group("codes")
        if listed is None:
            return frozenset({"*"})
        codes.update(canonical_code(c) for c in listed.decode().split(","))
    return frozenset(codes) if codes else None


def _deep(raw: bytes) -> bool:
    """Whether a physical line has enough operators to make libcst's parser crawl."""
    return any(
        len(line.group()) > 2 * _DEEP_OPERATORS
        and len(_OPERATOR.findall(line.group())) > _DEEP_OPERATORS
        for line in _LONG_LINE.finditer(raw)
    )


def _simulation_reason(raw: bytes, simulation: str | Sequence[str]) -> str | None:
    """Why the file is simulation code, or None: the one decision for every such rule (C-LINT-1)."""
    if isinstance(simulation, str):
        return simulation
    for module in simulation_imports(simulation):
        if imports_module(raw, module):
            return f"imports {module}"
    return None


def lint_source(
    source: bytes | str,
    path: str = "<string>",
    rules: Iterable[Rule] = DEFAULT_RULES,
    *,
    simulation: str | Sequence[str] = ("simclock",),
) -> list[Finding]:
    """Findings of ``rules`` on one module's source, sorted by position.

    ``path`` is only echoed in the findings. ``simulation`` decides whether
    the simulation-only rules (SCK201, SCK301, SCK401-SCK403) apply, all alike
    (C-LINT-1): a string says the file is declared simulation code and why
    (a ``simulation-code`` glob matched); a sequence of module names makes it
    so when the file imports simclock or one of them. Never raises for bad
    input: a file Python refuses gives ``SCK000``, a linter bug ``SCK999``.
    """
    raw = source.encode("utf-8") if isinstance(source, str) else source
    rules = list(rules)
    silenced = _file_noqa(raw)
    if silenced is not None:
        if "*" in silenced:
            return []
        rules = [rule for rule in rules if rule.code not in silenced]
    # Whether the file is simulation code is asked first, once, and only when a
    # simulation-only rule is selected: outside simulation code their text
    # pre-filters need not run at all.
    reason: str | None = None
    if any(rule.simulation_only for rule in rules):
        reason = _simulation_reason(raw, simulation)
    active = [
        rule
        for rule in rules
        if (reason is not None or not rule.simulation_only) and rule.may_match(raw)
    ]
    if not active:
        return []
    try:
        text = source if isinstance(source, str) else _decode(raw)
    except (UnicodeDecodeError, LookupError, SyntaxError, ValueError) as error:
        return [Finding(path, 1, 1, PARSE_ERROR, f"could not parse: {error}")]
    suffix = {
        rule.code: f" [simulation code: {reason}]" if rule.simulation_only else ""
        for rule in active
    }
    if _deep(raw):
        return _fallback(text, path, active, suffix)
    import libcst

    from simclock_lint._analysis import analyse
    from simclock_lint._positions import start_positions

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
        except Exception:  # ParserSyntaxError, RecursionError, ...: CPython decides
            return _fallback(text, path, active, suffix)
    try:
        analysis = analyse(tree, names)
        hits: list[tuple[libcst.CSTNode, str, str]] = []
        for rule in active:
            for node, name in rule.check(analysis):
                hits.append((node, rule.code, rule.message.format(name=name) + suffix[rule.code]))
        if not hits:
            return []
        positions = start_positions(tree, (node for node, _, _ in hits))
        located = []
        for node, code, message in hits:
            line, column = positions[id(node)]
            if line_map is not None:
                line = line_map[line - 1]
            located.append((line, column + 1, code, message))
        return _unsuppressed(text, path, located)
    except RecursionError:  # a tree too deep for the walk's helpers: CPython's parser
        return _fallback(text, path, active, suffix)
    except Exception as error:  # a linter bug must not hide the other files' findings
        return [_internal(path, error)]


def _unsuppressed(text: str, path: str, located: list[tuple[int, int, str, str]]) -> list[Finding]:
    """The findings whose line has no ``# noqa`` naming their code, sorted."""
    # Not str.splitlines(): it also splits at form feeds and other characters
    # that are not line ends for the parser, which would shift line numbers.
    lines = _LINE_END.split(text)
    comments: dict[int, str | None] = {}  # per line: many findings may share one
    findings = set()
    for line, column, code, message in located:
        if line not in comments:
            line_text = lines[line - 1] if 0 < line <= len(lines) else ""
            comments[line] = _comment(line_text) if "noqa" in line_text.lower() else None
        if _suppressed(comments[line], code):
            continue
        findings.add(Finding(path, line, column, code, message))
    return sorted(findings)


def _fallback(text: str, path: str, rules: list[Rule], suffix: dict[str, str]) -> list[Finding]:
    """Findings from CPython's parser (``_fallback.py``); SCK000 if Python refuses the file."""
    from simclock_lint._fallback import fallback_hits

    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        line = max(error.lineno or 1, 1)
        col = max(error.offset or 1, 1)
        return [Finding(path, line, col, PARSE_ERROR, f"could not parse: {error.msg}")]
    except (RecursionError, MemoryError) as error:
        message = (
            "nested too deeply for Python's parser"
            if isinstance(error, RecursionError)
            else "out of memory in Python's parser"
        )
        return [Finding(path, 1, 1, PARSE_ERROR, f"could not parse: {message}")]
    except ValueError as error:  # null bytes
        return [Finding(path, 1, 1, PARSE_ERROR, f"could not parse: {error}")]
    try:
        hits = fallback_hits(tree, rules)
        if not hits:
            return []
        lines = _LINE_END.split(text)
        messages = {rule.code: rule.message for rule in rules}
        located = []
        for node, code, name in hits:
            line = node.lineno
            # ast columns count UTF-8 bytes; findings count characters.
            line_text = lines[line - 1] if 0 < line <= len(lines) else ""
            column = len(line_text.encode("utf-8")[: node.col_offset].decode("utf-8", "replace"))
            message = messages[code].format(name=name) + suffix[code]
            located.append((line, column + 1, code, message))
        return _unsuppressed(text, path, located)
    except Exception as error:  # a linter bug must not hide the other files' findings
        return [_internal(path, error)]


def _internal(path: str, error: Exception) -> Finding:
    return Finding(path, 1, 1, INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}")
