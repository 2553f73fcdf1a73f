"""``[tool.simclock-lint]`` configuration: rule selection, per-path ignores, excludes.

Keys (all optional)::

    [tool.simclock-lint]
    select = ["SCK"]                 # codes or prefixes; default: every default-on rule
    ignore = []                      # codes or prefixes removed from select
    exclude = ["tests/fixtures/**"]  # globs never linted (added to the defaults)
    simulation-code = ["src/sim/**"] # simulation code (SCK201, SCK301, SCK4xx apply); default: none
    simulation-imports = ["mysim"]   # ... and files importing one of these; simclock always
    cache-dir = ".simclock-lint-cache"

    [tool.simclock-lint.per-file-ignores]
    "benchmarks/**" = ["SCK301"]

Globs are relative to the directory holding the pyproject.toml, use ``/``,
``*`` (within one path segment), ``**`` (any number of segments) and ``?``.
A glob without ``/`` matches the file name in any directory.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from simclock_lint._rule import canonical_code
from simclock_lint._rules import RULES_BY_CODE

__all__ = [
    "DEFAULT_EXCLUDE",
    "DEFAULT_SIMULATION_IMPORTS",
    "Config",
    "LintConfigError",
    "load_config",
    "resolve_codes",
]

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache",
    ".ruff_cache", ".pytest_cache", ".hypothesis", ".simclock-lint-cache", "build", "dist",
    "node_modules", "*.egg-info",
)  # fmt: skip
_KEYS = frozenset(
    {
        "select", "ignore", "exclude", "simulation-code", "simulation-imports", "cache-dir",
        "per-file-ignores",
    }
)  # fmt: skip
DEFAULT_SIMULATION_IMPORTS = ("simclock",)


class LintConfigError(ValueError):
    """A bad configuration value or command-line selection (exit status 2).

    The linter stands alone (no import of simclock), so it has its own error.
    """


def _segment_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(re.escape(pattern).replace(r"\*", "[^/]*").replace(r"\?", "[^/]"))


def _glob_regex(pattern: str) -> re.Pattern[str]:
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    # A glob naming a directory also matches everything below it.
    return re.compile("".join(out).rstrip("/") + "(?:/.*)?")


@dataclass(frozen=True, slots=True)
class _Glob:
    pattern: str
    regex: re.Pattern[str]
    # The glob as a pattern for one path segment (used for globs without ``/``).
    name_regex: re.Pattern[str]

    def matches(self, relpath: str) -> bool:
        return self.regex.fullmatch(relpath) is not None


def _glob(pattern: str) -> _Glob:
    return _Glob(pattern, _glob_regex(pattern), _segment_regex(pattern))


def _globs(patterns: Iterable[str]) -> tuple[_Glob, ...]:
    return tuple(_glob(p) for p in patterns)


def resolve_codes(selectors: Sequence[str], what: str) -> frozenset[str]:
    """The rule codes named by ``selectors`` (codes or prefixes such as ``SCK1``).

    A prefix picks the default-on rules only; an opt-in rule (SCK104) is picked
    by its exact code. The former prefix is read as today's (``SC1`` is ``SCK1``,
    ``SC104`` is ``SCK104``; ``canonical_code``).
    """
    codes: set[str] = set()
    for selector in selectors:
        text = canonical_code(selector)
        matched = (
            {
                code
                for code, rule in RULES_BY_CODE.items()
                if code == text or (rule.default and code.startswith(text))
            }
            if text
            else set()
        )
        if not matched:
            known = ", ".join(sorted(RULES_BY_CODE))
            raise LintConfigError(
                f"{what} names unknown code {selector!r}; use one of {known} "
                "or a prefix like 'SCK1'"
            )
        codes |= matched
    return frozenset(codes)


@dataclass(frozen=True, slots=True)
class Config:
    """Resolved configuration; ``root`` anchors every glob."""

    root: Path = field(default_factory=lambda: Path.cwd().resolve())
    select: frozenset[str] = frozenset(c for c, r in RULES_BY_CODE.items() if r.default)
    exclude: tuple[_Glob, ...] = _globs(DEFAULT_EXCLUDE)
    simulation_code: tuple[_Glob, ...] = ()
    simulation_imports: tuple[str, ...] = DEFAULT_SIMULATION_IMPORTS
    per_file_ignores: tuple[tuple[_Glob, frozenset[str]], ...] = ()
    cache_dir: Path | None = None
    source: Path | None = None

    def relpath(self, path: Path | str) -> str:
        """``path`` relative to ``root`` in ``/`` form (absolute if outside it)."""
        root = str(self.root)
        # String arithmetic first: resolving every path costs a syscall per segment.
        absolute = os.path.abspath(path)
        if not absolute.startswith(root + os.sep) and absolute != root:
            absolute = os.path.realpath(path)
        if absolute == root:
            return "."
        if absolute.startswith(root + os.sep):
            return Path(absolute[len(root) + 1 :]).as_posix()
        return Path(absolute).as_posix()

    def is_excluded(self, relpath: str, *, every_segment: bool = False) -> bool:
        """Whether an exclude glob matches ``relpath``.

        A glob without ``/`` is tested against the last segment only (the walk
        has already pruned excluded ancestors, and a directory given on the
        command line is linted even inside, say, ``.venv``), or against every
        segment with ``every_segment`` (for files named on the command line).
        """
        segments = relpath.split("/") if every_segment else [relpath.rpartition("/")[2]]
        for glob in self.exclude:
            if "/" in glob.pattern.rstrip("/"):
                if glob.matches(relpath):
                    return True
            elif any(glob.name_regex.fullmatch(segment) for segment in segments):
                return True
        return False

    def simulation_for(self, relpath: str) -> str | tuple[str, ...]:
        """Why ``relpath`` is simulation code (a matching glob), else the imports that make it so.

        The engine decides from the file's imports when this is a tuple
        (simclock's always counts, C-LINT-1).
        """
        for glob in self.simulation_code:
            if glob.matches(relpath):
                return f"matches simulation-code {glob.pattern!r}"
        return self.simulation_imports

    def codes_for(self, relpath: str) -> frozenset[str]:
        """The codes that apply to one file after per-path ignores (SPEC §13).

        Simulation-only rules stay in: the engine drops them for a file that
        is not simulation code (see ``simulation_for``; one decision, C-LINT-1).
        """
        codes = set(self.select)
        for glob, ignored in self.per_file_ignores:
            if glob.matches(relpath):
                codes -= ignored
        return frozenset(codes)

    def fingerprint(self) -> str:
        """Everything that changes results, for the cache key."""
        parts = [
            ",".join(sorted(self.select)),
            ";".join(g.pattern for g in self.simulation_code),
            ";".join(self.simulation_imports),
            ";".join(f"{g.pattern}={','.join(sorted(c))}" for g, c in self.per_file_ignores),
        ]
        return "|".join(parts)


def _string_list(table: dict[str, object], key: str, where: Path) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LintConfigError(
            f"[tool.simclock-lint] {key} in {where} must be a list of strings, got {value!r}"
        )
    return list(value)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has ``[tool.simclock-lint]``."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                text = candidate.read_text(encoding="utf-8")
                data = tomllib.loads(text)
            except OSError:
                continue
            except tomllib.TOMLDecodeError:
                # A broken file that means to configure us: load_config reports the
                # error instead of silently falling back to a parent or the defaults.
                if "tool.simclock-lint" in text:
                    return candidate
                continue
            if "simclock-lint" in data.get("tool", {}):
                return candidate
    return None


def load_config(pyproject: Path | None = None, start: Path | None = None) -> Config:
    """Read ``[tool.simclock-lint]`` from ``pyproject`` or the nearest one above ``start``.

    With no such file the defaults apply, rooted at ``start`` (default: cwd).
    Raises LintConfigError for unknown keys, bad types and unknown codes.
    """
    base = (start or Path.cwd()).resolve()
    if pyproject is None:
        pyproject = find_pyproject(base)
        if pyproject is None:
            return Config(root=base)
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LintConfigError(f"cannot read config {str(pyproject)!r}: {error}") from None
    table = data.get("tool", {}).get("simclock-lint", {})
    if not isinstance(table, dict):
        raise LintConfigError(f"[tool.simclock-lint] in {pyproject} must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise LintConfigError(
            f"[tool.simclock-lint] in {pyproject} has unknown key {unknown[0]!r}; "
            f"known keys: {', '.join(sorted(_KEYS))}"
        )
    root = pyproject.resolve().parent
    select = resolve_codes(_string_list(table, "select", pyproject) or ["SCK"], "select")
    imports = (
        _string_list(table, "simulation-imports", pyproject)
        if "simulation-imports" in table
        else list(DEFAULT_SIMULATION_IMPORTS)
    )
    ignore = _string_list(table, "ignore", pyproject)
    if ignore:
        select -= resolve_codes(ignore, "ignore")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise LintConfigError(f"per-file-ignores in {pyproject} must be a table of glob = [codes]")
    ignores = tuple(
        (
            _glob(glob),
            resolve_codes(
                _string_list(per_file, glob, pyproject), f"per-file-ignores {glob!r} in {pyproject}"
            ),
        )
        for glob in per_file
    )
    simulation = _string_list(table, "simulation-code", pyproject)
    cache_dir = table.get("cache-dir")
    if cache_dir is not None and not isinstance(cache_dir, str):
        raise LintConfigError(f"cache-dir in {pyproject} must be a string, got {cache_dir!r}")
    return Config(
        root=root,
        select=select,
        exclude=_globs([*DEFAULT_EXCLUDE, *_string_list(table, "exclude", pyproject)]),
        simulation_code=_globs(simulation),
        simulation_imports=tuple(imports),
        per_file_ignores=ignores,
        cache_dir=root / cache_dir if cache_dir is not None else None,
        source=pyproject,
    )
