"""The reference rules on Python's own ``ast``, for files libcst refuses (SPEC §13).

libcst's grammar refuses some files CPython compiles (tab/space indentation
that CPython accepts, ``(name): int`` targets), and its parser slows down
steeply with nesting depth (a 2 000-term sum takes about a minute). For those
files the engine falls back here: CPython's parser, one iterative walk, and
each rule's ``flags`` test on every resolved reference, so SCK101, SCK102,
SCK103, SCK104 and SCK301 still report. The resolution is coarser than the main
path: imports are taken file-wide, whatever their scope, and local rebinding
is not followed; SCK201 and SCK401-SCK403 (which need the concrete tree) are skipped.

Complexity: O(nodes).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from simclock_lint._callinfo import CallInfo
from simclock_lint._rule import Rule

__all__ = ["fallback_hits"]

# Fields holding a type, never a use.
_ANNOTATION_FIELDS = frozenset({"annotation", "returns", "type_comment"})


def _imports(tree: ast.Module) -> tuple[dict[str, str], list[str]]:
    bound: dict[str, str] = {}
    stars: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None:
                    bound.setdefault(alias.asname, alias.name)
                else:
                    top = alias.name.partition(".")[0]
                    bound.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name == "*":
                    stars.append(node.module)
                else:
                    bound.setdefault(alias.asname or alias.name, f"{node.module}.{alias.name}")
    return bound, stars


def _call_info(call: ast.Call, reads: frozenset[str]) -> CallInfo:
    first = call.args[0] if call.args else None
    return CallInfo(
        len(call.args),
        isinstance(first, ast.Constant) and first.value is None,
        {kw.arg: isinstance(kw.value, ast.Constant) and kw.value.value is None
         for kw in call.keywords if kw.arg is not None},
        any(kw.arg is None for kw in call.keywords),
        reads,
    )  # fmt: skip


def fallback_hits(tree: ast.Module, rules: Iterable[Rule]) -> list[tuple[ast.expr, str, str]]:
    """``(node, code, name)`` for every reference a rule's ``flags`` reports."""
    active = [rule for rule in rules if rule.flags is not None]
    bound, stars = _imports(tree)
    refs: dict[int, tuple[str, ast.expr]] = {}
    call_of: dict[int, ast.Call] = {}
    compared: set[int] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Attribute | ast.Name):
            attrs: list[str] = []
            root: ast.expr = node
            while isinstance(root, ast.Attribute):
                attrs.append(root.attr)
                root = root.value
            if isinstance(root, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    base = bound.get(root.id) or (f"{stars[0]}.{root.id}" if stars else None)
                    if base is not None:
                        refs[id(node)] = (".".join([base, *reversed(attrs)]), node)
            else:
                stack.append(root)
            continue
        if isinstance(node, ast.Call):
            call_of[id(node.func)] = node
        elif isinstance(node, ast.Compare):
            compared.add(id(node.left))
            compared.update(id(c) for c in node.comparators)
        for name, value in ast.iter_fields(node):
            if name in _ANNOTATION_FIELDS:
                continue
            if isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    hits: list[tuple[ast.expr, str, str]] = []
    for key, (qualname, node) in refs.items():
        call = call_of.get(key)
        info = None
        if call is not None:
            seed = call.args[0] if call.args else None
            if seed is None:
                seed = next(
                    (k.value for k in call.keywords if k.arg in {"seed", "x", "entropy"}), None
                )
            reads = frozenset(
                refs[id(n)][0]
                for n in (ast.walk(seed) if seed is not None else ())
                if id(n) in refs
            )
            info = _call_info(call, reads)
        for rule in active:
            assert rule.flags is not None
            found = rule.flags(qualname, info, key in compared)
            if found is not None:
                hits.append((node, rule.code, found))
    return hits
