"""A light, scope-aware binding tracker over a libcst tree (SPEC §13).

One iterative walk of the concrete syntax tree records, per scope, every name
binding (imports with the dotted name they bind, module-level string
constants, everything else) and every load of a name or attribute chain.
Resolution happens after the walk, so a name bound anywhere in a function is
local to the whole function, as Python decides it. Class bodies do not enclose
the functions and comprehensions nested in them; ``global``/``nonlocal``
redirect bindings. Annotations are never walked (types are not uses).

It replaces libcst's ``MetadataWrapper`` + ``ScopeProvider`` /
``QualifiedNameProvider``: no deep copy of the tree, no visitor dispatch per
node, and only the names the rules care about are recorded.

Flow-insensitive on purpose: when a scope binds a name both by an import and by
something else (``try: import numpy as np`` / ``except: np = None``), the
import wins, because missing a use of global randomness costs more than a rare
``# noqa``. Relative imports and ``__import__``/``importlib`` are not resolved.

Complexity: O(nodes) for the walk, O(references x scope depth) to resolve.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from simclock_lint._callinfo import CallInfo

__all__ = [
    "Analysis",
    "Reference",
    "analyse",
    "dotted_name",
    "keyword_args",
    "positional_args",
]

# Binding kinds stored per name: an import stores the dotted name it binds.
_CONST = "\x00const"
_OTHER = "\x00other"
# ``name = <float literal>`` (``DT = 0.01``, ``step = -1e-3``): a float constant if bound once.
_FLOAT = "\x00float"

# The fields of a node that may hold code to walk. Everything else is
# whitespace, punctuation, a binding name (handled by a dedicated handler) or
# an annotation (never walked: types are fine).
_CODE_FIELDS = frozenset(
    {"args", "bases", "body", "cases", "cause", "cls", "comparator", "comparisons", "decorator",
     "decorators", "default", "elements", "elt", "exc", "expression", "finalbody", "for_in",
     "format_spec", "func", "guard", "handlers", "ifs", "inner_for_in", "item", "items", "iter",
     "key", "keywords", "kwds", "left", "lower", "msg", "orelse", "parts", "pattern", "patterns",
     "right", "slice", "step", "subject", "test", "type", "upper", "value"}
)  # fmt: skip
_CHILD_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}
# Leaves that can hold neither a load nor a binding.
_SKIP: frozenset[type[cst.CSTNode]] = frozenset(
    {cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Annotation, cst.Pass,
     cst.Break, cst.Continue, cst.FormattedStringText, cst.Ellipsis, cst.TypeAlias,
     cst.TypeParameters}
)  # fmt: skip
_CONSTANT_NAMES = frozenset({"None", "True", "False"})


def dotted_name(node: cst.BaseExpression) -> str:
    """``a.b.c`` for a Name/Attribute chain (as in an import statement)."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
    return ".".join(reversed(parts))


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def call_info(call: cst.Call) -> CallInfo:
    """The shape of a libcst call (without ``reads``)."""
    positional = positional_args(call)
    keywords = {
        arg.keyword.value: _is_none(arg.value) for arg in call.args if arg.keyword is not None
    }
    return CallInfo(
        len(positional),
        bool(positional) and positional[0].star == "" and _is_none(positional[0].value),
        keywords,
        any(arg.star == "**" for arg in call.args),
    )


def positional_args(call: cst.Call) -> list[cst.Arg]:
    """The positional arguments of ``call``, ``*args`` included."""
    return [arg for arg in call.args if arg.keyword is None and arg.star != "**"]


def keyword_args(call: cst.Call) -> list[cst.Arg]:
    """The keyword arguments of ``call``, ``**kwargs`` included (keyword None)."""
    return [arg for arg in call.args if arg.keyword is not None or arg.star == "**"]


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
    node: cst.BaseExpression
    call: cst.Call | None
    # An operand of a comparison (``rs is np.random``): a test, not a use.
    compared: bool = False


@dataclass(slots=True)
class Analysis:
    """What the rules see of one module: resolved references and method calls."""

    tree: cst.Module
    references: list[Reference]
    # (callee's last name, call) for every call of a name or attribute.
    calls: list[tuple[str, cst.Call]]
    _module: _Scope
    _scope_of: dict[int, _Scope]
    # id(call) -> dotted target of ``target = call(...)`` (``self.rng``).
    assigned_to: dict[int, str] = field(default_factory=dict)
    # Every ``=``, annotated and augmented assignment statement, in walk order.
    assignments: list[cst.Assign | cst.AnnAssign | cst.AugAssign] = field(default_factory=list)
    _by_node: dict[int, str] | None = None

    def seeded_receivers(self) -> set[str]:
        """Dotted receivers of a ``x.seed(value)`` call with a value that is not None."""
        found = set()
        for name, call in self.calls:
            if name != "seed" or not isinstance(call.func, cst.Attribute):
                continue
            receiver = dotted_name(call.func.value)
            if not receiver or not isinstance(call.func.value, cst.Name | cst.Attribute):
                continue
            info = call_info(call)
            if info.seed_given("a") or info.seed_given("seed"):
                found.add(receiver)
        return found

    def call_info(self, call: cst.Call, seed_keyword: str) -> CallInfo:
        """``call``'s shape, with the dotted names its seed argument reads."""
        info = call_info(call)
        seed: cst.CSTNode | None = None
        positional = positional_args(call)
        if positional:
            seed = positional[0].value
        else:
            seed = next(
                (
                    a.value
                    for a in call.args
                    if a.keyword is not None and a.keyword.value == seed_keyword
                ),
                None,
            )
        if seed is None:
            return info
        if self._by_node is None:
            self._by_node = {id(ref.node): ref.qualname for ref in self.references}
        by_node = self._by_node
        found = set()
        stack: list[cst.CSTNode] = [seed]
        while stack:
            node = stack.pop()
            if id(node) in by_node:
                found.add(by_node[id(node)])
            stack.extend(node.children)
        reads = frozenset(found)
        return CallInfo(info.positional, info.first_is_none, info.keywords, info.star_kwargs, reads)

    def is_float_constant(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` is a name whose only binding in its scope is ``name = <float literal>``.

        Only names the walk tracked (the rule's ``words``) can be told; any
        other binding of the name (a parameter, a second assignment, ``+=``)
        makes it not a constant.
        """
        if not isinstance(expr, cst.Name):
            return False
        scope = self._scope_of.get(id(expr))
        if scope is None:
            return False
        owner = _owner(expr.value, scope, self._module)
        return owner is not None and owner.bindings.get(expr.value) == [_FLOAT]

    def is_constant_label(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` is a literal or a module-level name bound once to a str literal."""
        if isinstance(expr, cst.SimpleString | cst.Integer | cst.Float | cst.Imaginary):
            return True
        if isinstance(expr, cst.ConcatenatedString):
            return self.is_constant_label(expr.left) and self.is_constant_label(expr.right)
        if isinstance(expr, cst.FormattedString):
            return all(isinstance(part, cst.FormattedStringText) for part in expr.parts)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return self.is_constant_label(expr.left) and self.is_constant_label(expr.right)
        if isinstance(expr, cst.Name):
            if expr.value in _CONSTANT_NAMES:
                return True
            scope = self._scope_of.get(id(expr))
            if scope is None:
                return False
            owner = _owner(expr.value, scope, self._module)
            return owner is self._module and self._module.bindings.get(expr.value) == [_CONST]
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


def _is_float_literal(expr: cst.BaseExpression) -> bool:
    """A float literal, signed or not (``0.01``, ``-1e-3``)."""
    while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus | cst.Plus):
        expr = expr.expression
    return isinstance(expr, cst.Float)


def _is_str_literal(expr: cst.BaseExpression) -> bool:
    """A str literal: one string or an implicit concatenation of them, no ``b`` prefix."""
    if isinstance(expr, cst.SimpleString):
        return "b" not in expr.prefix.lower()
    if isinstance(expr, cst.ConcatenatedString):
        return _is_str_literal(expr.left) and _is_str_literal(expr.right)
    return False


_Handler = Callable[["_Walker", cst.CSTNode, _Scope], None]


class _Walker:
    """Collects bindings and loads in one iterative pass."""

    def __init__(self, tree: cst.Module, names: frozenset[str] | None) -> None:
        self.names = names
        self.module = _Scope("module", None)
        self.loads: list[tuple[str, _Scope, list[str], cst.BaseExpression]] = []
        self.calls: list[tuple[str, cst.Call]] = []
        self.call_of: dict[int, cst.Call] = {}
        self.scope_of: dict[int, _Scope] = {}
        self.stack: list[tuple[cst.CSTNode, _Scope]] = [(tree, self.module)]
        self.pending: list[tuple[_Scope, str, str]] = []
        self.compared: set[int] = set()
        self.assigned: dict[int, str] = {}
        self.assignments: list[cst.Assign | cst.AnnAssign | cst.AugAssign] = []

    def bind(self, scope: _Scope, name: str, kind: str) -> None:
        if self.names is not None and name not in self.names:
            return
        self.pending.append((scope, name, kind))

    def apply_bindings(self) -> None:
        """Store the bindings, after the walk has seen every ``global``/``nonlocal``.

        The walk visits statements in no particular order, so a declaration may
        be met after the binding it redirects.
        """
        redirected = []
        for scope, name, kind in self.pending:
            if name in scope.globals or name in scope.nonlocals:
                redirected.append((scope, name, kind))
            else:
                scope.bindings.setdefault(name, []).append(kind)
        for scope, name, kind in redirected:
            target = scope
            if name in scope.globals:
                target = self.module
            else:
                # Invariant: nonlocal names live in an enclosing function scope.
                outer = scope.parent
                while outer is not None and (outer.kind == "class" or name not in outer.bindings):
                    if outer.kind == "module":
                        break
                    outer = outer.parent
                if outer is not None and outer.kind != "module":
                    target = outer
            target.bindings.setdefault(name, []).append(kind)

    def bind_target(self, target: cst.CSTNode, scope: _Scope) -> None:
        """A store target: names are bound, attributes and subscripts are walked as loads."""
        if type(target) is cst.Name:
            self.bind(scope, target.value, _OTHER)
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self.bind_target(element.value, scope)
        elif isinstance(target, cst.StarredElement):
            self.bind_target(target.value, scope)
        else:
            self.stack.append((target, scope))

    def bind_alias(self, target: cst.BaseExpression, scope: _Scope, kind: str) -> None:
        """``import x as <target>``: the target is a Name in valid code."""
        if isinstance(target, cst.Name):
            self.bind(scope, target.value, kind)

    def function(self, params: cst.Parameters, body: cst.CSTNode, scope: _Scope) -> None:
        """Defaults run in the enclosing scope, parameters bind in a new one (no annotations)."""
        inner = _Scope("function", scope)
        star_arg = params.star_arg
        every: list[cst.Param] = [*params.posonly_params, *params.params, *params.kwonly_params]
        if isinstance(star_arg, cst.Param):
            every.append(star_arg)
        if params.star_kwarg is not None:
            every.append(params.star_kwarg)
        for param in every:
            if param.default is not None:
                self.stack.append((param.default, scope))
            self.bind(inner, param.name.value, _OTHER)
        self.stack.append((body, inner))

    def run(self) -> None:
        # Identity tests on type(node) for the hot kinds, a dict for the rest:
        # this loop is where the linter spends its time after the parse.
        stack = self.stack
        push = stack.append
        names = self.names
        handlers = _HANDLERS
        skip = _SKIP
        name_type, attribute_type, call_type = cst.Name, cst.Attribute, cst.Call
        while stack:
            node, scope = stack.pop()
            kind = type(node)
            if kind is name_type:
                assert isinstance(node, cst.Name)
                if names is not None and node.value not in names:
                    continue
                self.loads.append((node.value, scope, [], node))
                self.scope_of[id(node)] = scope
                continue
            if kind is attribute_type:
                assert isinstance(node, cst.Attribute)
                attrs = [node.attr.value]
                root = node.value
                while type(root) is attribute_type:
                    assert isinstance(root, cst.Attribute)
                    attrs.append(root.attr.value)
                    root = root.value
                if type(root) is name_type:
                    assert isinstance(root, cst.Name)
                    if names is not None and root.value not in names:
                        continue
                    attrs.reverse()
                    self.loads.append((root.value, scope, attrs, node))
                    self.scope_of[id(root)] = scope
                else:
                    push((root, scope))
                continue
            if kind is call_type:
                assert isinstance(node, cst.Call)
                func = node.func
                self.call_of[id(func)] = node
                if type(func) is attribute_type:
                    assert isinstance(func, cst.Attribute)
                    self.calls.append((func.attr.value, node))
                elif type(func) is name_type:
                    assert isinstance(func, cst.Name)
                    self.calls.append((func.value, node))
                push((func, scope))
                for arg in node.args:
                    push((arg.value, scope))
                continue
            if kind in skip:
                continue
            handler = handlers.get(kind)
            if handler is not None:
                handler(self, node, scope)
                continue
            fields = _CHILD_FIELDS.get(kind)
            if fields is None:
                fields = _CHILD_FIELDS[kind] = tuple(
                    f.name for f in dataclasses.fields(node) if f.name in _CODE_FIELDS
                )
            for field_name in fields:
                value = getattr(node, field_name)
                if type(value) is list or type(value) is tuple:
                    for item in value:
                        if isinstance(item, cst.CSTNode):
                            push((item, scope))
                elif isinstance(value, cst.CSTNode):
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
                yield Reference(
                    qualname, node, self.call_of.get(id(node)), id(node) in self.compared
                )

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


# --- handlers: nodes that bind names or open scopes -------------------------------------


def _import(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.Import)
    for alias in node.names:
        full = dotted_name(alias.name)
        if alias.asname is not None:
            walker.bind_alias(alias.asname.name, scope, full)
        else:
            top = full.partition(".")[0]
            walker.bind(scope, top, top)


def _import_from(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.ImportFrom)
    level = len(node.relative)
    base = "." * level + (dotted_name(node.module) if node.module is not None else "")
    if isinstance(node.names, cst.ImportStar):
        if level == 0:
            scope.star_modules.append(base)
        return
    prefix = base if base.endswith(".") else base + "."
    for alias in node.names:
        name = dotted_name(alias.name)
        if alias.asname is not None:
            walker.bind_alias(alias.asname.name, scope, prefix + name)
        else:
            walker.bind(scope, name, prefix + name)


def _function_def(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.FunctionDef)
    walker.bind(scope, node.name.value, _OTHER)
    for decorator in node.decorators:
        walker.stack.append((decorator.decorator, scope))
    walker.function(node.params, node.body, scope)


def _lambda(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.Lambda)
    walker.function(node.params, node.body, scope)


def _class_def(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.ClassDef)
    walker.bind(scope, node.name.value, _OTHER)
    push = walker.stack.append
    for decorator in node.decorators:
        push((decorator.decorator, scope))
    for arg in (*node.bases, *node.keywords):
        push((arg.value, scope))
    push((node.body, _Scope("class", scope)))


def _comprehension(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp)
    push = walker.stack.append
    inner = _Scope("comprehension", scope)
    comp: cst.CompFor | None = node.for_in
    first = True
    while comp is not None:
        # The first iterable is evaluated in the enclosing scope, the rest inside.
        push((comp.iter, scope if first else inner))
        walker.bind_target(comp.target, inner)
        for condition in comp.ifs:
            push((condition.test, inner))
        comp = comp.inner_for_in
        first = False
    if isinstance(node, cst.DictComp):
        push((node.key, inner))
        push((node.value, inner))
    else:
        push((node.elt, inner))


def _assign(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.Assign)
    walker.assignments.append(node)
    targets = node.targets
    if (
        scope.kind == "module"
        and len(targets) == 1
        and type(targets[0].target) is cst.Name
        and _is_str_literal(node.value)
    ):
        target = targets[0].target
        assert isinstance(target, cst.Name)
        walker.bind(scope, target.value, _CONST)
    elif (
        len(targets) == 1 and type(targets[0].target) is cst.Name and _is_float_literal(node.value)
    ):
        target = targets[0].target
        assert isinstance(target, cst.Name)
        walker.bind(scope, target.value, _FLOAT)
    else:
        if len(targets) == 1 and type(node.value) is cst.Call:
            only = targets[0].target
            if isinstance(only, cst.Name | cst.Attribute):
                walker.assigned[id(node.value)] = dotted_name(only)
        for target_node in targets:
            walker.bind_target(target_node.target, scope)
    walker.stack.append((node.value, scope))


def _ann_assign(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.AnnAssign)
    walker.assignments.append(node)
    # The annotation is a type: never a use of global state.
    if type(node.target) is cst.Name and node.value is not None and _is_float_literal(node.value):
        walker.bind(scope, node.target.value, _FLOAT)
    else:
        walker.bind_target(node.target, scope)
    if node.value is not None:
        walker.stack.append((node.value, scope))


def _aug_assign(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.AugAssign)
    walker.assignments.append(node)
    walker.bind_target(node.target, scope)
    walker.stack.append((node.value, scope))


def _for(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.For)
    walker.bind_target(node.target, scope)
    push = walker.stack.append
    push((node.iter, scope))
    push((node.body, scope))
    if node.orelse is not None:
        push((node.orelse, scope))


def _with(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.With)
    for item in node.items:
        walker.stack.append((item.item, scope))
        if item.asname is not None:
            walker.bind_target(item.asname.name, scope)
    walker.stack.append((node.body, scope))


def _named_expr(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.NamedExpr)
    target_scope = scope
    while target_scope.kind == "comprehension" and target_scope.parent is not None:
        target_scope = target_scope.parent
    walker.bind_target(node.target, target_scope)
    walker.stack.append((node.value, scope))


def _global(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.Global)
    scope.globals.update(item.name.value for item in node.names)


def _nonlocal(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.Nonlocal)
    scope.nonlocals.update(item.name.value for item in node.names)


def _except_handler(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.ExceptHandler | cst.ExceptStarHandler)
    if node.type is not None:
        walker.stack.append((node.type, scope))
    if node.name is not None:
        walker.bind_target(node.name.name, scope)
    walker.stack.append((node.body, scope))


def _del(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.Del)
    walker.bind_target(node.target, scope)


def _match_as(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.MatchAs)
    if node.pattern is not None:
        walker.stack.append((node.pattern, scope))
    if node.name is not None:
        walker.bind(scope, node.name.value, _OTHER)


def _match_star(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.MatchStar)
    if node.name is not None:
        walker.bind(scope, node.name.value, _OTHER)


def _match_mapping(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.MatchMapping)
    for element in node.elements:
        walker.stack.append((element, scope))
    if node.rest is not None:
        walker.bind(scope, node.rest.value, _OTHER)


def _match_keyword(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    # ``Point(x=0)``: ``x`` names an attribute, it is neither a load nor a binding.
    assert isinstance(node, cst.MatchKeywordElement)
    walker.stack.append((node.pattern, scope))


def _comparison(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    assert isinstance(node, cst.Comparison)
    push = walker.stack.append
    walker.compared.add(id(node.left))
    push((node.left, scope))
    for target in node.comparisons:
        walker.compared.add(id(target.comparator))
        push((target.comparator, scope))


def _arg(walker: _Walker, node: cst.CSTNode, scope: _Scope) -> None:
    # A keyword argument's name is not a load; only the value is.
    assert isinstance(node, cst.Arg)
    walker.stack.append((node.value, scope))


_HANDLERS: dict[type[cst.CSTNode], _Handler] = {
    cst.Import: _import,
    cst.ImportFrom: _import_from,
    cst.FunctionDef: _function_def,
    cst.Lambda: _lambda,
    cst.ClassDef: _class_def,
    cst.ListComp: _comprehension,
    cst.SetComp: _comprehension,
    cst.GeneratorExp: _comprehension,
    cst.DictComp: _comprehension,
    cst.Assign: _assign,
    cst.AnnAssign: _ann_assign,
    cst.AugAssign: _aug_assign,
    cst.For: _for,
    cst.With: _with,
    cst.NamedExpr: _named_expr,
    cst.Global: _global,
    cst.Nonlocal: _nonlocal,
    cst.ExceptHandler: _except_handler,
    cst.ExceptStarHandler: _except_handler,
    cst.Del: _del,
    cst.MatchAs: _match_as,
    cst.MatchStar: _match_star,
    cst.MatchMapping: _match_mapping,
    cst.MatchKeywordElement: _match_keyword,
    cst.Arg: _arg,
    cst.Comparison: _comparison,
}


def analyse(tree: cst.Module, names: frozenset[str] | None = None) -> Analysis:
    """Walk ``tree`` once and resolve every load that denotes an import.

    ``names`` (optional) limits the bindings and loads recorded to those
    names (the engine passes the names the rules may care about, found in the
    text); None records every name.
    """
    walker = _Walker(tree, names)
    walker.run()
    walker.apply_bindings()
    references = list(walker.references())
    return Analysis(
        tree,
        references,
        walker.calls,
        walker.module,
        walker.scope_of,
        walker.assigned,
        walker.assignments,
    )
