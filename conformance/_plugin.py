"""The pytest plugin (entry point ``pytest11``: ``simclock_conformance``).

Options:

- ``--simclock-backend MODULE:FACTORY``: run the conformance suite on that
  backend. Without explicit test paths only the suite is collected; with paths
  the suite is added to them. A bad spec, an import failure or a factory that
  raises is a usage error (pytest exits 4 with the message).
- ``--simclock-profile ci|thorough``: Hypothesis budget (default ``ci``).
- ``--simclock-json PATH``: write the per-clause report as JSON.
- ``--simclock-report``: print the per-clause table even without
  ``--simclock-backend`` (e.g. for in-repo subclasses of ``ClockConformance``).

Suite modules are the files ``conformance/_suite_*.py``; each groups its tests
in a ``Test*`` class. With ``--simclock-backend`` all results form one report;
otherwise (in-repo subclasses) there is one report per test class.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conformance._report import BackendReport, Outcome

__all__ = ["PROFILES", "ResultCollector", "suite_paths"]

PROFILES = ("ci", "thorough")
"""The Hypothesis budgets of the suite: ``ci`` (default, derandomised) and ``thorough``."""


def suite_paths() -> list[str]:
    """Paths of every suite module (``conformance/_suite_*.py``), sorted."""
    here = Path(__file__).resolve().parent
    return [str(p) for p in sorted(here.glob("_suite_*.py"))]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--simclock-*`` options."""
    group = parser.getgroup("simclock-conformance", "simclock conformance suite")
    group.addoption(
        "--simclock-backend",
        metavar="MODULE:FACTORY",
        default=None,
        help="run the simclock conformance suite on FACTORY(seed, bus) -> SimClock",
    )
    group.addoption(
        "--simclock-profile",
        choices=PROFILES,
        default=None,
        help="Hypothesis budget of the conformance suite (default: ci)",
    )
    group.addoption(
        "--simclock-json",
        metavar="PATH",
        default=None,
        help="write the per-clause conformance report as JSON to PATH",
    )
    group.addoption(
        "--simclock-report",
        action="store_true",
        default=False,
        help="print the per-clause conformance table at the end of the run",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Check the backend spec early and add the suite modules to the run."""
    spec = config.getoption("simclock_backend")
    json_path = config.getoption("simclock_json")
    if spec or json_path:
        # Imported here: this module is loaded into every pytest run.
        from conformance._harness import (
            BackendError,
            check_factory,
            check_report_path,
            load_factory,
        )

        try:
            if json_path:
                check_report_path(json_path, "--simclock-json")
            if spec:
                check_factory(load_factory(spec), spec)
        except BackendError as exc:
            raise pytest.UsageError(str(exc)) from None
    if spec:
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            config.args.extend(p for p in suite_paths() if p not in config.args)
        else:
            config.args[:] = suite_paths()
    if spec or json_path or config.getoption("simclock_report"):
        config.pluginmanager.register(ResultCollector(config), "simclock-conformance-results")


def _outcome_of(report: pytest.TestReport) -> Outcome:
    from conformance._harness import NOT_APPLICABLE
    from conformance._report import FAILED, NOT_RUN, PASSED, Outcome, falsifying_program
    from conformance._report import NOT_APPLICABLE as NA_STATUS

    name = report.nodeid.rsplit("::", 1)[-1]
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = str(getattr(crash, "message", "")) or report.longreprtext.strip()[-500:]
        text = report.longreprtext
        return Outcome(
            name,
            FAILED,
            message=message.strip(),
            details=text[-6000:],
            program=falsifying_program(text),
        )
    if report.skipped:
        reason = ""
        if isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2])
        status = NA_STATUS if NOT_APPLICABLE in reason else NOT_RUN
        return Outcome(name, status, message=reason.removeprefix("Skipped: "))
    return Outcome(name, PASSED)


class ResultCollector:
    """Groups test outcomes by suite class and clause; prints and writes the report."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.reports: dict[str, BackendReport] = {}

    def _report_for(self, group: str) -> BackendReport:
        if group not in self.reports:
            from conformance._report import BackendReport

            spec = self.config.getoption("simclock_backend")
            backend = str(spec) if spec else group
            profile = self.config.getoption("simclock_profile") or "ci"
            self.reports[group] = BackendReport(backend, str(profile))
        return self.reports[group]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold each phase's report into its clause."""
        from conformance._clauses import clause_of_test

        parts = report.nodeid.split("::")
        name = parts[-1].split("[", 1)[0]
        clause = clause_of_test(name)
        if clause is None:
            return
        if report.when == "call" or report.failed or report.skipped:
            # One backend on the command line: every suite class reports into one
            # table. In-repo subclasses: one table per class (one per backend).
            spec = self.config.getoption("simclock_backend")
            group = str(spec) if spec else "::".join(parts[:-1])
            self._report_for(group).add(clause, _outcome_of(report))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print one per-clause table per backend."""
        for rep in self.reports.values():
            terminalreporter.write_line("")
            for line in rep.table().splitlines():
                terminalreporter.write_line(line)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Write ``--simclock-json`` (one report, or a list when several backends ran)."""
        path = self.config.getoption("simclock_json")
        # Under pytest-xdist only the controller, which sees every report, writes.
        if not path or hasattr(self.config, "workerinput"):
            return
        reports = [r.to_json() for r in self.reports.values()]
        data: Any = reports[0] if len(reports) == 1 else reports
        Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
