"""The shape of one rule and of one finding (SPEC §13)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # libcst is imported only when a file is parsed
    import libcst

    from simclock_lint._analysis import Analysis
    from simclock_lint._callinfo import CallInfo

__all__ = [
    "DECLARED",
    "OLD_PREFIX",
    "PREFIX",
    "SIMCLOCK",
    "Finding",
    "Rule",
    "canonical_code",
    "simulation_imports",
]

PREFIX = "SCK"
"""Every code starts with this: no common flake8 plugin or ruff rule uses it.

Three letters then three digits is also the code shape flake8 accepts in its
own ``select``/``extend-ignore`` and ``# noqa`` lists.
"""
OLD_PREFIX = "SC"
"""The former prefix, which flake8-spellcheck's SC100/SC200 share.

Still accepted wherever a code or prefix is read: ``# noqa: SC401``,
``select``/``ignore``/``per-file-ignores``, ``--select``, ``--explain``;
``SC401`` means ``SCK401`` and the prefix ``SC4`` means ``SCK4``.
"""
_OLD_FORM = re.compile(r"SC(?P<digits>[0-9]*)")

SIMCLOCK = "simclock"
"""A file that imports this module is simulation code whatever the configuration (C-LINT-1)."""

DECLARED = "# simulation code: declared by the configuration\n"
"""The first line of a rule example that is linted as declared simulation code.

Such a module need not import simclock (a function handed a clock, under a
``simulation-code`` glob); every other example is linted with the defaults,
where simulation code is what imports simclock.
"""


def canonical_code(text: str) -> str:
    """``text`` as a code or prefix of today: upper case, ``SC<digits>`` read as ``SCK<digits>``.

    ``SC`` alone (the old all-rules prefix) becomes ``SCK``; anything else is
    returned upper-cased for the caller to accept or refuse.
    """
    code = text.strip().upper()
    old = _OLD_FORM.fullmatch(code)
    return PREFIX + old["digits"] if old is not None else code


def simulation_imports(configured: Iterable[str]) -> tuple[str, ...]:
    """The modules whose import makes a file simulation code: simclock, then ``configured``.

    The one definition of simulation code (C-LINT-1) is: a file matching a
    ``simulation-code`` glob, or importing one of these modules.
    """
    return tuple(dict.fromkeys((SIMCLOCK, *configured)))


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One finding: ``path:line:col: code message`` (line and column are 1-based)."""

    path: str
    line: int
    col: int
    code: str
    message: str

    def format_text(self) -> str:
        """The text form ``path:line:col: CODE message``."""
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule: code, one-line message template (``{name}``), doc and examples.

    ``may_match(source)`` is a cheap necessary condition on the raw bytes: when
    it is false for every selected rule the file is not parsed at all.
    ``check(analysis)`` yields ``(node, name)`` pairs, ``node`` a libcst node
    whose start is the finding's position; ``name`` fills the message.
    ``simulation_only`` rules apply only to simulation code, one definition
    for all of them (C-LINT-1): files that import simclock or a configured
    ``simulation-imports`` module, and files matching a ``simulation-code`` glob.
    ``default`` is False for an opt-in rule: it runs only when its exact code
    is selected (a prefix such as ``SCK`` or ``SCK1`` does not pick it).

    ``modules`` and ``words`` limit what the walk records: only names bound
    by an import of ``modules`` (found in the text) and ``words(text)`` can
    produce this rule's findings.

    ``anchors`` let the engine cut the text before parsing: every finding of
    the rule lies in a statement whose text contains an anchor (as a word
    prefix) or a name bound by an import statement that mentions one. A rule
    without anchors turns the cut off.
    """

    code: str
    message: str
    doc: str
    valid: Sequence[str]
    invalid: Sequence[str]
    may_match: Callable[[bytes], bool]
    check: Callable[[Analysis], Iterator[tuple[libcst.CSTNode, str]]]
    simulation_only: bool = False
    modules: tuple[str, ...] = ()
    words: Callable[[str], Iterable[str]] | None = None
    anchors: tuple[str, ...] = ()
    default: bool = True
    # ``flags(qualname, call_info, compared)``: the rule as a test of one resolved
    # reference, shared by the libcst check and the ``ast`` fallback (None: the
    # rule needs libcst's tree and the fallback skips it).
    flags: Callable[[str, CallInfo | None, bool], str | None] | None = None

    @property
    def alias(self) -> str:
        """The code with the former prefix (``SC401`` for ``SCK401``), accepted where codes are."""
        return OLD_PREFIX + self.code.removeprefix(PREFIX)

    @classmethod
    def declared_in(
        cls,
        namespace: Mapping[str, Any],
        *,
        simulation_only: bool = False,
        modules: tuple[str, ...] = (),
        words: Callable[[str], Iterable[str]] | None = None,
        anchors: tuple[str, ...] = (),
        default: bool = True,
    ) -> Rule:
        """The rule a rule module declares: ``Rule.declared_in(globals(), ...)``.

        Reads ``CODE``, ``MESSAGE``, the module docstring, ``VALID``, ``INVALID``,
        ``may_match`` and ``check`` from ``namespace``, so each rule stays one
        file with all its parts and none of them can be left out: a missing
        name or an empty docstring raises ``TypeError`` at import (SPEC §13:
        every rule has a code, a message and a doc).
        """
        required = ("CODE", "MESSAGE", "VALID", "INVALID", "may_match", "check")
        missing = [name for name in required if name not in namespace]
        module = namespace.get("__name__", "?")
        if missing:
            raise TypeError(f"rule module {module!r} does not define {', '.join(missing)}")
        doc = namespace.get("__doc__")
        if not isinstance(doc, str) or not doc.strip():
            raise TypeError(f"rule module {module!r} has no docstring; every rule needs a doc")
        return cls(
            namespace["CODE"],
            namespace["MESSAGE"],
            doc,
            namespace["VALID"],
            namespace["INVALID"],
            namespace["may_match"],
            namespace["check"],
            simulation_only=simulation_only,
            modules=modules,
            words=words,
            anchors=anchors,
            default=default,
            flags=namespace.get("flags"),
        )
