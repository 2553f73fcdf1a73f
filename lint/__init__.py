"""The simclock determinism linter (SPEC §13, C-RNG-6).

Flags global ``random``/``numpy.random`` use, unseeded generators, dynamic
``.child()`` labels, wall-clock reads in simulation code and float times given
to ``advance``/``schedule*``. Stands alone: it imports nothing from simclock.

Command line: ``simclock-lint [paths]`` or ``python -m lint``; from Python::

    from lint import lint_source
    findings = lint_source("import numpy as np\\nnp.random.seed(0)\\n", "demo.py")
"""

from lint._cli import main
from lint._config import Config, LintConfigError, load_config
from lint._engine import INTERNAL_ERROR, NOT_LINTED, PARSE_ERROR, WARNINGS, lint_source
from lint._rule import Finding, Rule
from lint._rules import DEFAULT_RULES, RULES, RULES_BY_CODE
from lint._runner import RunResult, lint_paths

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
