"""Running the suite: ``simclock_conformance.run`` and ``python -m simclock_conformance``.

The suite is run by ``pytest.main`` on the suite modules with the plugin; the
per-clause report comes back through ``--simclock-json``. That pytest is
isolated (``_isolation``): plugin autoloading off, only the suite's plugin and
Hypothesis's, no caller's ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS``, configuration,
``conftest.py`` or cache; what still keeps it from running the suite is a usage
error naming the cause. Exit codes of the
command, one per verdict (C-CONF-1): 0 CONFORMING, 1 NOT CONFORMING, 2 usage
error (bad ``MODULE:FACTORY``, import failure, factory raising or returning
something that is not a clock), 3 PARTIAL (``--clause`` or ``-x`` left
clauses out), 4 INCOMPLETE (a mandatory test was skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from simclock_conformance.clauses._clauses import CLAUSES
from simclock_conformance.entry import _plugin
from simclock_conformance.kit._args import (
    check_bool,
    check_profile,
    check_timeout,
    plain_str,
    quote,
    read_iterable,
    typed,
)
from simclock_conformance.kit._check import check_factory
from simclock_conformance.kit._harness import (
    BackendError,
    BackendTypeError,
    BackendValueError,
    check_report_path,
    load_factory,
)
from simclock_conformance.kit._isolation import HYPOTHESIS_PLUGIN, SetupProblems, isolated_environ
from simclock_conformance.kit._options import PROFILES

__all__ = ["main", "run"]

EXIT_CONFORMING = 0
EXIT_NOT_CONFORMING = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3
EXIT_INCOMPLETE = 4

# More --clause options than this is a mistake (there are a few dozen clauses), and an
# endless iterable passed as clauses= is never read to its end.
_MAX_CLAUSES = 10_000

_EXIT = {
    "CONFORMING": EXIT_CONFORMING,
    "NOT CONFORMING": EXIT_NOT_CONFORMING,
    "PARTIAL": EXIT_PARTIAL,
    "INCOMPLETE": EXIT_INCOMPLETE,
}


def _pytest_args(
    spec: str,
    profile: str,
    json_path: str,
    clauses: Sequence[str],
    exitfirst: bool,
    quiet: bool,
    timeout: float | None,
    shrink: bool = True,
    hang_budget: float | None = None,
) -> list[str]:
    args = [
        *_plugin.suite_paths(),
        # The suite must not pick up the caller's pytest configuration or cache.
        "-c",
        os.devnull,
        "--rootdir",
        str(Path(_plugin.__file__).resolve().parents[1]),  # the package: node ids name suite/...
        "-p",
        "no:cacheprovider",
        # No conftest.py of the folders around the suite (or the caller's) either.
        "--noconftest",
        # Plugin autoloading is off (see _isolation): Hypothesis's plugin by name.
        "-p",
        HYPOTHESIS_PLUGIN,
        # The plugin is passed as an object below; block its entry point so it
        # is not registered twice.
        "-p",
        "no:simclock_conformance",
        "--simclock-backend",
        spec,
        "--simclock-profile",
        profile,
        "--simclock-json",
        json_path,
        *([] if shrink else ["--simclock-no-shrink"]),
        # This process imported the conformance package before pytest started,
        # so pytest cannot rewrite it; the suite module itself is rewritten.
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        # The suite's report shows each failure (its message, program and root cause):
        # pytest's tracebacks and list of failed tests would show each one again.
        "--tb=no",
        "-rN",
        "-q",
    ]
    if quiet:
        args += ["-q", "--no-header", "-p", "no:warnings"]
    if clauses:
        args += ["-k", " or ".join(c.replace("-", "_") + "_" for c in clauses)]
    if exitfirst:
        args.append("-x")
    if timeout is not None:
        args += ["--simclock-timeout", repr(float(timeout))]
    if hang_budget is not None:
        args += ["--simclock-hang-budget", repr(float(hang_budget))]
    return args


def run(
    spec: str,
    *,
    profile: str = "ci",
    json_path: str | None = None,
    clauses: Sequence[str] = (),
    exitfirst: bool = False,
    quiet: bool = False,
    timeout: float | None = None,
    shrink: bool = True,
    hang_budget: float | None = None,
) -> tuple[int, dict[str, Any]]:
    """Run the suite on ``spec``; return ``(exit code, JSON report)``.

    The exit code follows the verdict (C-CONF-1): 0 CONFORMING, 1 NOT
    CONFORMING, 3 PARTIAL, 4 INCOMPLETE. ``timeout`` is the limit per test
    in seconds (C-CONF-2; default per profile, 0 for none); ``hang_budget``
    the run's: once the limits of the tests that timed out add up to it, the
    later tests are skipped (default 60 s for ``ci``, 600 s for ``thorough``;
    0 for none). ``shrink=False``
    reports each failure with its first failing example instead of its
    minimal one: the same verdict, sooner for a broken backend. Raises
    :class:`~simclock_conformance.BackendError` for a usage error (an unknown clause
    id, an unwritable ``json_path``, a bad backend, a negative timeout)
    before running anything: a refused argument is a ``BackendTypeError``
    or ``BackendValueError`` (also ``TypeError``/``ValueError``). Nothing is
    written in the working directory (C-CONF-5).
    """
    profile = check_profile(profile, BackendTypeError, BackendValueError)
    if isinstance(clauses, str):
        raise BackendTypeError(
            f"clauses must be a list of clause ids, got the str {quote(clauses)}"
        )
    ids = read_iterable(
        clauses,
        "clauses",
        "a list of clause ids",
        _MAX_CLAUSES,
        BackendTypeError,
        BackendValueError,
    )
    selected: list[str] = []
    for clause in ids:
        if not isinstance(clause, str):
            raise BackendTypeError(f"clauses must hold clause ids (str), got {typed(clause)}")
        selected.append(plain_str(clause))
    unknown = [c for c in selected if c not in CLAUSES]
    if unknown:
        raise BackendValueError(
            f"unknown clause ids [{', '.join(quote(c) for c in unknown[:10])}]; known: "
            f"{', '.join(CLAUSES)}"
        )
    check_bool(exitfirst, "exitfirst", BackendTypeError)
    check_bool(quiet, "quiet", BackendTypeError)
    check_bool(shrink, "shrink", BackendTypeError)
    check_timeout(timeout, BackendTypeError, BackendValueError)
    check_timeout(hang_budget, BackendTypeError, BackendValueError, "hang_budget")
    if json_path is not None:
        if not isinstance(json_path, str | os.PathLike):
            raise BackendTypeError(
                "json_path must be a file path (str or os.PathLike) or None, got "
                f"{typed(json_path)}"
            )
        json_path = check_report_path(os.fspath(json_path), "--json")
    check_factory(load_factory(spec), spec)
    with tempfile.TemporaryDirectory(prefix="simclock-conformance-") as tmp:
        path = json_path or str(Path(tmp) / "report.json")
        problems = SetupProblems()
        try:
            with isolated_environ(), problems.watching_stderr():
                args = _pytest_args(
                    spec, profile, path, selected, exitfirst, quiet, timeout, shrink, hang_budget
                )
                code = pytest.main(args, plugins=[_plugin, problems])
        except BrokenPipeError:  # stdout closed by its reader: the CLI ends quietly (141)
            raise
        except Exception as exc:  # a plugin that does not load: pytest lets it through
            raise BackendError(
                f"pytest could not run the conformance suite: {type(exc).__qualname__}: {exc}"
            ) from None
        if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or problems.problems:
            raise BackendError(
                f"pytest could not run the conformance suite: {problems.cause(code)}"
            )
        report: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return _EXIT[report["verdict"]], report


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m simclock_conformance MODULE:FACTORY [--json REPORT] [--profile ci|thorough]``."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "report":
        # Many JSON reports as one HTML page (no backend runs).
        from simclock_conformance.report._html import report_main

        return report_main(args_list[1:])
    if (args_list and args_list[0] in ("serve", "vectors")) or "--driver" in args_list:
        # The wire profile (SPEC §18): drivers, serve and the golden vectors.
        from simclock_conformance.entry._wire_cli import wire_main

        return wire_main(args_list)
    parser = argparse.ArgumentParser(
        prog="python -m simclock_conformance",
        description="Run the simclock conformance suite (SPEC §14) on a clock backend. "
        "Exit 0: CONFORMING; 1: NOT CONFORMING; 2: usage error; 3: PARTIAL (some "
        "clauses not run); 4: INCOMPLETE (a mandatory test skipped). Backends in other "
        "languages: --driver [options] -- CMD ARG... (the wire profile); also "
        "'serve MODULE:FACTORY', 'vectors --driver -- CMD' and 'report REPORT.json ...' "
        "(an HTML matrix of many reports).",
    )
    parser.add_argument("backend", metavar="MODULE:FACTORY", help="FACTORY(seed, bus) -> SimClock")
    parser.add_argument("--json", metavar="REPORT", help="write the per-clause report as JSON")
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default="ci",
        help="Hypothesis budget: ci (default, derandomised, fast) or thorough",
    )
    parser.add_argument(
        "--clause",
        action="append",
        default=[],
        metavar="ID",
        help="run only this clause (repeatable), e.g. --clause C-TIE-1",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="time limit of each test, in CPU seconds (a backend that blocks without "
        "computing: ten times as long in wall-clock time, at least a minute more); a test "
        "that hits it fails its clause, naming where the backend was running (default 30 "
        "for ci, 300 for thorough; 0: none)",
    )
    parser.add_argument(
        "--hang-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the run's budget for hangs: once the limits of the tests that timed out add "
        "up to SECONDS, the later tests are skipped, each saying so, so a backend that hangs "
        "everywhere has its verdict in about that time (default 60 for ci, 600 for "
        "thorough; 0: run every test)",
    )
    parser.add_argument(
        "--no-shrink",
        action="store_true",
        help="report each failure with its first failing example, not its minimal one "
        "(the same verdict, sooner for a broken backend)",
    )
    parser.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    parser.add_argument("-q", "--quiet", action="store_true", help="less pytest output")
    args = parser.parse_args(argv)
    try:
        code, _ = run(
            args.backend,
            profile=args.profile,
            json_path=args.json,
            clauses=args.clause,
            exitfirst=args.exitfirst,
            quiet=args.quiet,
            timeout=args.timeout,
            shrink=not args.no_shrink,
            hang_budget=args.hang_budget,
        )
    except BackendError as exc:
        print(f"python -m simclock_conformance: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return code
