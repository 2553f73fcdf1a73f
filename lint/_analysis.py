"""A light, scope-aware binding tracker over the stdlib ``ast`` (SPEC §13).

One walk of the tree records, per scope, every name binding (imports with the
dotted name they bind, module-level string constants, everything else) and
every load of a name or attribute chain. Resolution happens after the walk, so
a name bound anywhere in a function is local to the whole function, as Python
decides it. Class bodies do not enclose the functions and comprehensions
nested in them; ``global``/``nonlocal`` redirect bindings.

Flow-insensitive on purpose: when a scope binds a name both by an import and by
something else (``try: import numpy as np`` / ``except: np = None``), the
import wins, because missing a use of global randomness costs more than a rare
``# noqa``. Relative imports and ``__import__``/``importlib`` are not resolved.

Complexity: O(nodes) for the walk, O(references x scope depth) to resolve.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = ["Analysis", "Reference", "analyse"]

# Binding kinds stored per name: an import stores the dotted name it binds.
_CONST = "\x00const"
_OTHER = "\x00other"

# Fields that never hold a node worth visiting (contexts, operators, plain values).
_LEAF_FIELDS = frozenset(
    {"ctx", "op", "ops", "type_comment", "type_ignores", "id", "attr", "arg", "conversion",
     "is_async", "level", "module", "kind", "simple", "names", "name"}
)  # fmt: skip
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}
_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})


@dataclass(slots=True, eq=False)
class _Scope:
    kind: str  # "module" | "function" | "class" | "comprehension"
    parent: _Scope | None
    bindings: dict[str, list[str]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    # Star imports of a module: any unresolved name may come from it.
    star_modules: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Reference:
    """A load of a name that resolves to an import, possibly through attributes.

    ``qualname`` is the dotted name the expression denotes (``np.random.seed``
    after ``import numpy as np`` is ``numpy.random.seed``); ``node`` is the
    whole expression; ``call`` is the call whose callee it is, if any.
    """

    qualname: str
    node: ast.expr
    call: ast.Call | None


@dataclass(slots=True)
class Analysis:
    """What the rules see of one module: resolved references and method calls."""

    tree: ast.Module
    references: list[Reference]
    # (callee's last name, call) for every call of a name or attribute.
    calls: list[tuple[str, ast.Call]]
    _module: _Scope
    _scope_of: dict[int, _Scope]

    def is_constant_label(self, expr: ast.expr) -> bool:
        """Whether ``expr`` is a literal or a module-level name bound once to a str literal."""
        if isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, ast.JoinedStr):
            return all(isinstance(v, ast.Constant) for v in expr.values)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self.is_constant_label(expr.left) and self.is_constant_label(expr.right)
        if isinstance(expr, ast.Name):
            scope = self._scope_of.get(id(expr))
            if scope is None:
                return False
            owner = _owner(expr.id, scope, self._module)
            return owner is self._module and self._module.bindings.get(expr.id) == [_CONST]
        return False


def _owner(name: str, scope: _Scope, module: _Scope) -> _Scope | None:
    """The scope whose binding of ``name`` a load in ``scope`` sees (None: builtin)."""
    current: _Scope | None = scope
    first = True
    while current is not None:
        if current.kind == "class" and not first:
            current = current.parent
            continue
        if name in current.globals:
            return module if name in module.bindings else None
        if name in current.bindings and name not in current.nonlocals:
            return current
        current = current.parent
        first = False
    return None


def _resolve(name: str, scope: _Scope, module: _Scope) -> list[str]:
    """Dotted names a load of ``name`` may denote (several only through star imports)."""
    owner = _owner(name, scope, module)
    if owner is None:
        # Not bound anywhere visible: it may come from any star import in reach.
        found: list[str] = []
        current: _Scope | None = scope
        while current is not None:
            found.extend(f"{star}.{name}" for star in current.star_modules)
            current = current.parent
        return found
    for kind in owner.bindings[name]:
        if not kind.startswith("\x00"):
            return [kind]
    return []


class _Walker:
    """Collects bindings and loads in one iterative pass."""

    def __init__(
        self,
        tree: ast.Module,
        keep: Callable[[ast.stmt], bool] | None,
        names: frozenset[str] | None,
    ) -> None:
        self.keep = keep
        self.names = names
        self.module = _Scope("module", None)
        self.loads: list[tuple[str, _Scope, list[str], ast.expr]] = []
        self.calls: list[tuple[str, ast.Call]] = []
        self.call_of: dict[int, ast.Call] = {}
        self.scope_of: dict[int, _Scope] = {}
        self.stack: list[tuple[ast.AST, _Scope]] = [(tree, self.module)]

    def bind(self, scope: _Scope, name: str, kind: str) -> None:
        if self.names is not None and name not in self.names:
            return
        if name in scope.globals:
            scope = self.module
        elif name in scope.nonlocals:
            # Invariant: nonlocal names live in an enclosing function scope.
            outer = scope.parent
            while outer is not None and (outer.kind == "class" or name not in outer.bindings):
                if outer.kind == "module":
                    break
                outer = outer.parent
            scope = outer if outer is not None and outer.kind != "module" else scope
        scope.bindings.setdefault(name, []).append(kind)

    def bind_arguments(self, args: ast.arguments, scope: _Scope) -> None:
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            self.bind(scope, arg.arg, _OTHER)
        if args.vararg is not None:
            self.bind(scope, args.vararg.arg, _OTHER)
        if args.kwarg is not None:
            self.bind(scope, args.kwarg.arg, _OTHER)

    def push_argument_parts(self, args: ast.arguments, scope: _Scope) -> None:
        """Defaults run in the enclosing scope; annotations are skipped (types are fine)."""
        for default in (*args.defaults, *args.kw_defaults):
            if default is not None:
                self.stack.append((default, scope))

    def run(self) -> None:
        # One chain of identity tests on type(node) instead of NodeVisitor's
        # getattr dispatch: this loop is where the linter spends its time.
        stack = self.stack
        push = stack.append
        keep = self.keep
        names = self.names
        stmt = ast.stmt
        while stack:
            node, scope = stack.pop()
            kind = type(node)
            if type(node) is ast.Name:
                if names is not None and node.id not in names:
                    continue
                if type(node.ctx) is ast.Load:
                    self.loads.append((node.id, scope, [], node))
                    self.scope_of[id(node)] = scope
                else:
                    self.bind(scope, node.id, _OTHER)
                continue
            if kind is ast.Constant:
                continue
            if kind is ast.Attribute:
                assert isinstance(node, ast.Attribute)
                attrs = [node.attr]
                root = node.value
                while type(root) is ast.Attribute:
                    attrs.append(root.attr)
                    root = root.value
                if type(root) is ast.Name:
                    if names is not None and root.id not in names:
                        continue
                    attrs.reverse()
                    self.loads.append((root.id, scope, attrs, node))
                    self.scope_of[id(root)] = scope
                else:
                    push((root, scope))
                continue
            if kind is ast.Call:
                assert isinstance(node, ast.Call)
                func = node.func
                self.call_of[id(func)] = node
                if type(func) is ast.Attribute:
                    self.calls.append((func.attr, node))
                elif type(func) is ast.Name:
                    self.calls.append((func.id, node))
                push((func, scope))
                for arg in node.args:
                    push((arg, scope))
                for keyword in node.keywords:
                    push((keyword.value, scope))
                continue
            if keep is not None and isinstance(node, stmt) and not keep(node):
                continue
            if kind is ast.Import:
                assert isinstance(node, ast.Import)
                for alias in node.names:
                    if alias.asname is not None:
                        self.bind(scope, alias.asname, alias.name)
                    else:
                        top = alias.name.partition(".")[0]
                        self.bind(scope, top, top)
                continue
            if kind is ast.ImportFrom:
                assert isinstance(node, ast.ImportFrom)
                base = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name == "*":
                        if node.level == 0:
                            scope.star_modules.append(base)
                        continue
                    bound = alias.asname or alias.name
                    prefix = base if base.endswith(".") else base + "."
                    self.bind(scope, bound, prefix + alias.name)
                continue
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                self.bind(scope, node.name, _OTHER)
                for decorator in node.decorator_list:
                    push((decorator, scope))
                self.push_argument_parts(node.args, scope)
                inner = _Scope("function", scope)
                self.bind_arguments(node.args, inner)
                for statement in node.body:
                    push((statement, inner))
                continue
            if kind is ast.Lambda:
                assert isinstance(node, ast.Lambda)
                self.push_argument_parts(node.args, scope)
                inner = _Scope("function", scope)
                self.bind_arguments(node.args, inner)
                push((node.body, inner))
                continue
            if kind is ast.ClassDef:
                assert isinstance(node, ast.ClassDef)
                self.bind(scope, node.name, _OTHER)
                for expr in (*node.decorator_list, *node.bases):
                    push((expr, scope))
                for keyword in node.keywords:
                    push((keyword.value, scope))
                inner = _Scope("class", scope)
                for statement in node.body:
                    push((statement, inner))
                continue
            if kind in _COMPREHENSIONS:
                assert isinstance(
                    node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
                )
                generators = node.generators
                push((generators[0].iter, scope))
                inner = _Scope("comprehension", scope)
                for index, generator in enumerate(generators):
                    push((generator.target, inner))
                    if index:
                        push((generator.iter, inner))
                    for condition in generator.ifs:
                        push((condition, inner))
                if isinstance(node, ast.DictComp):
                    push((node.key, inner))
                    push((node.value, inner))
                else:
                    push((node.elt, inner))
                continue
            if kind is ast.Assign:
                assert isinstance(node, ast.Assign)
                targets = node.targets
                if (
                    scope.kind == "module"
                    and len(targets) == 1
                    and type(targets[0]) is ast.Name
                    and type(node.value) is ast.Constant
                    and isinstance(node.value.value, str)
                ):
                    self.bind(scope, targets[0].id, _CONST)
                else:
                    for target in targets:
                        push((target, scope))
                push((node.value, scope))
                continue
            if kind is ast.AnnAssign:
                assert isinstance(node, ast.AnnAssign)
                # The annotation is a type: never a use of global state.
                push((node.target, scope))
                if node.value is not None:
                    push((node.value, scope))
                continue
            if kind is ast.NamedExpr:
                assert isinstance(node, ast.NamedExpr)
                target_scope = scope
                while target_scope.kind == "comprehension" and target_scope.parent is not None:
                    target_scope = target_scope.parent
                self.bind(target_scope, node.target.id, _OTHER)
                push((node.value, scope))
                continue
            if kind is ast.Global:
                assert isinstance(node, ast.Global)
                scope.globals.update(node.names)
                continue
            if kind is ast.Nonlocal:
                assert isinstance(node, ast.Nonlocal)
                scope.nonlocals.update(node.names)
                continue
            if kind is ast.ExceptHandler:
                assert isinstance(node, ast.ExceptHandler)
                if node.name is not None:
                    self.bind(scope, node.name, _OTHER)
            elif kind is ast.MatchAs or kind is ast.MatchStar:
                assert isinstance(node, ast.MatchAs | ast.MatchStar)
                if node.name is not None:
                    self.bind(scope, node.name, _OTHER)
            elif kind is ast.MatchMapping:
                assert isinstance(node, ast.MatchMapping)
                if node.rest is not None:
                    self.bind(scope, node.rest, _OTHER)
            fields = _CHILD_FIELDS.get(kind)
            if fields is None:
                fields = _CHILD_FIELDS[kind] = tuple(
                    f for f in node._fields if f not in _LEAF_FIELDS
                )
            for field_name in fields:
                value = getattr(node, field_name, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST):
                            push((item, scope))
                elif isinstance(value, ast.AST):
                    push((value, scope))

    def references(self) -> Iterator[Reference]:
        module = self.module
        scopes = list(self._all_scopes())
        imported = {
            name
            for scope in scopes
            for name, kinds in scope.bindings.items()
            if any(not k.startswith("\x00") for k in kinds)
        }
        any_star = any(s.star_modules for s in scopes)
        for name, scope, attrs, node in self.loads:
            if name not in imported and not any_star:
                continue
            for base in _resolve(name, scope, module):
                qualname = ".".join([base, *attrs]) if attrs else base
                yield Reference(qualname, node, self.call_of.get(id(node)))

    def _all_scopes(self) -> Iterator[_Scope]:
        seen: set[int] = set()
        for _, scope, _, _ in self.loads:
            current: _Scope | None = scope
            while current is not None and id(current) not in seen:
                seen.add(id(current))
                yield current
                current = current.parent
        if id(self.module) not in seen:
            yield self.module


def analyse(
    tree: ast.Module,
    keep: Callable[[ast.stmt], bool] | None = None,
    names: frozenset[str] | None = None,
) -> Analysis:
    """Walk ``tree`` once and resolve every load that denotes an import.

    ``keep(statement)`` (optional) prunes statements that cannot matter: the
    engine passes one that is false only for statements whose source lines
    contain none of the names the rules care about, so they can neither bind
    nor load them. ``names`` (optional) limits the bindings and loads recorded
    to those names; None records every name.
    """
    walker = _Walker(tree, keep, names)
    walker.run()
    references = list(walker.references())
    return Analysis(tree, references, walker.calls, walker.module, walker.scope_of)
