"""The simclock determinism linter (SPEC §13, C-RNG-6).

Flags global ``random``/``numpy.random`` use, unseeded generators, dynamic
``.child()`` labels, and in simulation code wall-clock reads, float times given
to ``advance``/``schedule*``, float seconds made into int nanoseconds and float
time sums. Stands alone: it imports nothing from simclock.

Command line: ``simclock-lint [paths]`` or ``python -m simclock_lint``; from Python::

    from simclock_lint import lint_source
    findings = lint_source("import numpy as np\\nnp.random.seed(0)\\n", "demo.py")
"""

from simclock_lint._cli import main
from simclock_lint._config import Config, LintConfigError, load_config
from simclock_lint._engine import INTERNAL_ERROR, NOT_LINTED, PARSE_ERROR, WARNINGS, lint_source
from simclock_lint._rule import Finding, Rule
from simclock_lint._rules import DEFAULT_RULES, RULES, RULES_BY_CODE
from simclock_lint._runner import RunResult, lint_paths

__all__ = [
    "DEFAULT_RULES",
    "INTERNAL_ERROR",
    "NOT_LINTED",
    "PARSE_ERROR",
    "RULES",
    "RULES_BY_CODE",
    "WARNINGS",
    "Config",
    "Finding",
    "LintConfigError",
    "Rule",
    "RunResult",
    "lint_paths",
    "lint_source",
    "load_config",
    "main",
]
