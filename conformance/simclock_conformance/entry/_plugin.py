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
- ``--simclock-timeout SECONDS``: the time limit of each suite test
  (C-CONF-2; default 30 s for ``ci``, 300 s for ``thorough``; 0 turns it off).
- ``--simclock-hang-budget SECONDS``: the run's hang budget (C-CONF-2; default
  60 s for ``ci``, 600 s for ``thorough``; 0 turns it off): once the limits of
  the tests that timed out add up to it, the later tests are skipped, each
  saying so, so a backend that hangs everywhere has its verdict in about a minute.

Beside other plugins: every plugin installed in the environment is loaded
into this pytest too (``python -m simclock_conformance`` loads none of them).
A plugin that would fail the setup of every test of the run is left out when
the suite's tests are collected, with a line saying so at the end of the run
(``_isolation.leave_out_broken_plugins``: looptime's plugin without
pytest-asyncio). When another plugin's code fails a suite test's setup or teardown, the run
stops as a usage error (exit 4) naming the plugin; leave it out with
``-p no:NAME`` (the name the message gives, e.g. ``-p no:looptime_plugin``), or
load only what the suite needs: ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 pytest -p
simclock_conformance.entry._plugin -p _hypothesis_pytestplugin --simclock-backend
MODULE:FACTORY``.

Suite modules are the files ``_suite_*.py`` of the package (most in ``suite/``);
each groups its tests in a ``Test*`` class derived from a suite base (``ClockConformance``). With
``--simclock-backend`` all results form one report; otherwise (in-repo
subclasses) there is one report per test class. The verdict (C-CONF-1) is
CONFORMING only for a full run in which every mandatory test ran and passed:
a test a subclass overrides (or sets to ``None``) or skips, or one that ran
only within the backend's declared horizon (``limited``), is named and makes
it INCOMPLETE; a run restricted by ``-k``/``--clause``/``-x`` is PARTIAL.
"""

from __future__ import annotations

import json
import random
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from simclock_conformance.kit._options import (
    MAX_TIMEOUT_S,
    PROFILES,
    default_hang_budget,
    default_timeout,
)

if TYPE_CHECKING:
    from simclock_conformance.report._outcome import Outcome
    from simclock_conformance.report._report import BackendReport

__all__ = ["MAX_TIMEOUT_S", "PROFILES", "ResultCollector", "default_timeout", "suite_paths"]


def suite_paths() -> list[str]:
    """Paths of every suite module (``_suite_*.py``, in any folder), sorted by file name."""
    package = Path(__file__).resolve().parents[1]
    return [str(p) for p in sorted(package.rglob("_suite_*.py"), key=lambda p: p.name)]


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
        "--simclock-no-shrink",
        action="store_true",
        default=False,
        help="report a failure with its first failing example, not shrunk (a faster verdict)",
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
    group.addoption(
        "--simclock-timeout",
        metavar="SECONDS",
        type=float,
        default=None,
        help="time limit of each conformance test (default 30 for ci, 300 for thorough; 0: none)",
    )
    group.addoption(
        "--simclock-hang-budget",
        metavar="SECONDS",
        type=float,
        default=None,
        help="once the limits of the tests that timed out add up to SECONDS, skip the later "
        "tests (default 60 for ci, 600 for thorough; 0: none)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Check the backend spec early and add the suite modules to the run."""
    from simclock_conformance.kit._options import SHRINK

    SHRINK[0] = not config.getoption("simclock_no_shrink", default=False)
    spec = config.getoption("simclock_backend")
    if (
        spec
        and config.getoption("simclock_profile") == "thorough"
        and getattr(config.option, "hypothesis_seed", "") is None
    ):
        # One seed for the whole run (read by Hypothesis's plugin, configured after
        # this one): a failed test re-run by _rerun searches the same examples again.
        config.option.hypothesis_seed = str(random.SystemRandom().randrange(2**32))
    json_path = config.getoption("simclock_json")
    timeout = config.getoption("simclock_timeout")
    # One check with the CLI and run(): past about 10**8 s the watchdog's timers overflow.
    from simclock_conformance.kit._args import check_timeout

    check_timeout(timeout, pytest.UsageError, pytest.UsageError)
    budget = config.getoption("simclock_hang_budget")
    check_timeout(budget, pytest.UsageError, pytest.UsageError, "hang budget")
    if spec or json_path:
        # Imported here: this module is loaded into every pytest run.
        from simclock_conformance.kit._check import check_factory
        from simclock_conformance.kit._harness import BackendError, check_report_path, load_factory

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
        collector = ResultCollector(config)
        config.pluginmanager.register(collector, "simclock-conformance-results")
        from simclock_conformance.report._rerun import Rerun

        rerun = Rerun(collector.groups.__contains__, collector.record_nondeterminism)
        config.pluginmanager.register(rerun, "simclock-conformance-rerun")
    if spec:
        from simclock_conformance.kit._isolation import ForeignPluginGuard

        config.pluginmanager.register(ForeignPluginGuard(config), "simclock-conformance-guard")


_NOTES = pytest.StashKey[list[str]]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """When the suite is in the run, leave out the plugins that would fail every test's setup."""
    if any(_suite_base(getattr(item, "cls", None)) is not None for item in items):
        from simclock_conformance.kit._isolation import leave_out_broken_plugins

        config.stash.setdefault(_NOTES, []).extend(leave_out_broken_plugins(config))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say which plugins were left out (``pytest_collection_modifyitems``)."""
    for note in config.stash.get(_NOTES, []):
        terminalreporter.write_line(note)


def _suite_base(cls: type | None) -> type | None:
    """The suite class (``ClockConformance``, ...) ``cls`` derives from, or None."""
    if cls is None:
        return None
    for klass in cls.__mro__:
        if klass.__dict__.get("__conformance_suite__"):
            return klass
    return None


def _overridden(cls: type, base: type) -> list[str]:
    """Test names of ``base`` that ``cls`` replaced (or set to something not callable)."""
    return [
        name
        for name in dir(base)
        if name.startswith("test_") and getattr(cls, name, None) is not getattr(base, name)
    ]


def _outcome_of(report: pytest.TestReport, clause: str) -> Outcome:
    from simclock_conformance.kit._harness import NOT_APPLICABLE
    from simclock_conformance.kit._reach import LIMITED_PROPERTY
    from simclock_conformance.report._outcome import (
        FAILED,
        LIMITED,
        PASSED,
        SKIPPED,
        Outcome,
    )
    from simclock_conformance.report._outcome import NOT_APPLICABLE as NA_STATUS
    from simclock_conformance.report._rootkey import falsifying_program

    name = report.nodeid.rsplit("::", 1)[-1]
    extra: dict[str, Any] = {}
    limited = ""
    for key, value in report.user_properties:
        if key == "simclock" and isinstance(value, dict):
            extra = value
        elif key == LIMITED_PROPERTY and not limited:
            limited = str(value)
    if report.failed or hasattr(report, "wasxfail"):
        text = report.longreprtext
        message = extra.get("message") or ""
        if not message:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = str(getattr(crash, "message", "")) or text.strip()[-500:]
        if hasattr(report, "wasxfail"):
            message = f"{message} [marked xfail: {report.wasxfail}]"
        failures = extra.get("failures", [])
        program = failures[0]["program"] if failures else falsifying_program(text)
        return Outcome(
            name,
            FAILED,
            message=_with_clause(clause, message.strip()),
            details=text[-6000:],
            program=program,
            failures=failures if len(failures) > 1 else [],
            root=extra.get("root", ""),
            program_kind=failures[0].get("program_kind", "") if failures and program else "",
        )
    if report.skipped:
        reason = ""
        if isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2])
        status = NA_STATUS if NOT_APPLICABLE in reason else SKIPPED
        return Outcome(name, status, message=reason.removeprefix("Skipped: "))
    if limited:
        # Passed, but only within the backend's declared horizon: never CONFORMING (C-CONF-1).
        return Outcome(name, LIMITED, message=limited)
    return Outcome(name, PASSED)


def _with_clause(clause: str, message: str) -> str:
    """Every failure message starts with its clause id (C-CONF-3)."""
    return message if message.startswith(clause) else f"{clause}: {message}"


class ResultCollector:
    """Groups test outcomes by suite class and clause; prints and writes the report."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.reports: dict[str, BackendReport] = {}
        self.groups: dict[str, str] = {}
        profile = str(config.getoption("simclock_profile") or "ci")
        option = config.getoption("simclock_timeout")
        self.timeout = default_timeout(profile) if option is None else float(option)
        budget = config.getoption("simclock_hang_budget")
        self.hang_budget = default_hang_budget(profile) if budget is None else float(budget)
        self.hung_s = 0.0
        """The limits of the tests that timed out so far, added up (C-CONF-2)."""
        self.hung_tests: list[str] = []
        self.cut_tests = 0
        """Tests skipped because the hang budget was spent."""

    def _report_for(self, group: str) -> BackendReport:
        if group not in self.reports:
            from simclock_conformance.report._report import BackendReport

            spec = self.config.getoption("simclock_backend")
            backend = str(spec) if spec else group
            profile = self.config.getoption("simclock_profile") or "ci"
            self.reports[group] = BackendReport(backend, str(profile))
        return self.reports[group]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Record, before ``-k`` deselects anything, every test each report expects (C-CONF-1)."""
        from simclock_conformance.clauses._clauses import clause_of_test
        from simclock_conformance.report._outcome import OVERRIDDEN, Outcome

        spec = self.config.getoption("simclock_backend")
        seen: set[type] = set()
        for item in items:
            cls = getattr(item, "cls", None)
            base = _suite_base(cls)
            if cls is None or base is None:
                continue
            parts = item.nodeid.split("::")
            group = str(spec) if spec else "::".join(parts[:-1])
            self.groups[item.nodeid] = group
            if cls in seen:
                continue
            seen.add(cls)
            report = self._report_for(group)
            for name in dir(cls):
                clause = clause_of_test(name) if name.startswith("test_") else None
                if clause is not None:
                    report.expect(clause, name)
            for name in _overridden(cls, base) if cls is not base else []:
                clause = clause_of_test(name)
                if clause is not None:
                    why = f"{cls.__qualname__} overrides {base.__qualname__}.{name}"
                    report.add(clause, Outcome(name, OVERRIDDEN, message=why))

    def record_nondeterminism(self, nodeid: str, first: str, second: str) -> None:
        """A failed test whose second run differed (see ``_rerun``): shown at the report's top."""
        name = nodeid.rsplit("::", 1)[-1]
        entry = {"clause": _clause_of_name(name), "test": name, "first": first, "second": second}
        self._report_for(self.groups[nodeid]).nondeterministic.append(entry)

    def _limit(self, item: pytest.Item) -> Any:
        from simclock_conformance.kit._watchdog import watchdog

        # Invariant: every test gets the same limit (C-CONF-2); a test that hung
        # before never shortens another's, whose own failure would read as a hang.
        clause = _clause_of_item(item) if item.nodeid in self.groups else None
        return watchdog(self.timeout if clause else 0.0, clause or "")

    def _charge_hang(self, item: pytest.Item) -> None:
        """Add the limit of a test phase that timed out to the run's hangs (C-CONF-2)."""
        from simclock_conformance.kit._watchdog import RAISED

        if RAISED and item.nodeid in self.groups:
            self.hung_s += RAISED[0].limit_s
            name = item.nodeid.rsplit("::", 1)[-1]
            if name not in self.hung_tests:
                self.hung_tests.append(name)

    def _check_budget(self, item: pytest.Item) -> None:
        """Skip a suite test once the run's hang budget is spent (C-CONF-2)."""
        if item.nodeid not in self.groups or not _clause_of_item(item):
            return
        if self.hang_budget > 0 and self.hung_s >= self.hang_budget:
            shown = ", ".join(self.hung_tests[:3]) + (", ..." if len(self.hung_tests) > 3 else "")
            self.cut_tests += 1
            pytest.skip(
                f"not run: the run's hang budget of {self.hang_budget:g} s (C-CONF-2) was "
                f"spent by {len(self.hung_tests)} test{'s' if len(self.hung_tests) != 1 else ''} "
                f"that timed out ({shown}); rerun with --hang-budget 0 to run every test"
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """Fixtures make clocks through the factory: they run under the time limit too.

        Once the run's hang budget is spent, the test is skipped here, before its
        fixtures make a clock.
        """
        self._check_budget(item)
        try:
            with self._limit(item):
                return (yield)
        finally:
            self._charge_hang(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        """Run the test under its time limit (C-CONF-2)."""
        try:
            with self._limit(item):
                return (yield)
        finally:
            self._charge_hang(item)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        """Drop Hypothesis's failing examples of a suite test before its teardown report.

        From them Hypothesis would write a patch adding ``@example`` lines to the
        suite's own source (in the user's ``.hypothesis/patches``), which no
        backend author can apply; and building it from the clause mixins failed
        inside Hypothesis's report hook, turning a backend's failed clause into
        an internal error of the whole run.
        """
        if item.nodeid in self.groups and getattr(item, "_hypothesis_failing_examples", None):
            item._hypothesis_failing_examples = None  # type: ignore[attr-defined]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Attach the distinct failures, their programs and the root cause to the report."""
        report = yield
        if item.nodeid in self.groups and call.excinfo is not None and call.when != "teardown":
            from simclock_conformance.report._explain import explain

            clause = _clause_of_item(item) or ""
            try:
                extra = explain(call.excinfo.value, clause)
            except Exception as exc:
                extra = {"message": f"{clause}: (could not describe the failure: {exc!r})"}
            report.user_properties = [*report.user_properties, ("simclock", extra)]
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold each phase's report into its clause."""
        from simclock_conformance.clauses._clauses import clause_of_test

        group = self.groups.get(report.nodeid)
        if group is None:
            return
        name = report.nodeid.rsplit("::", 1)[-1].split("[", 1)[0]
        clause = clause_of_test(name)
        if clause is None:
            return
        if report.when == "call" or report.failed or report.skipped:
            self._report_for(group).add(clause, _outcome_of(report, clause))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print one per-clause table per backend."""
        path = self.config.getoption("simclock_json")
        # run() without --json writes to a temporary directory it then removes: not shown.
        shown = path and not Path(path).parent.name.startswith("simclock-conformance-")
        for rep in self.reports.values():
            rep.json_path = str(path) if shown and len(self.reports) == 1 else ""
            terminalreporter.write_line("")
            for line in rep.table().splitlines():
                terminalreporter.write_line(line)
        if self.cut_tests:
            hung = len(self.hung_tests)
            terminalreporter.write_line("")
            terminalreporter.write_line(
                f"hang budget spent: {hung} test{'s' if hung != 1 else ''} timed out "
                f"({self.hung_s:g} s of limits, budget {self.hang_budget:g} s, C-CONF-2); "
                f"{self.cut_tests} later test{'s' if self.cut_tests != 1 else ''} not run "
                "(--hang-budget 0 runs every test)"
            )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Write ``--simclock-json`` (one report, or a list when several backends ran)."""
        path = self.config.getoption("simclock_json")
        # Under pytest-xdist only the controller, which sees every report, writes.
        if not path or hasattr(self.config, "workerinput"):
            return
        reports = [r.to_json() for r in self.reports.values()]
        data: Any = reports[0] if len(reports) == 1 else reports
        Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _clause_of_name(name: str) -> str:
    from simclock_conformance.clauses._clauses import clause_of_test

    return clause_of_test(name.split("[", 1)[0]) or ""


def _clause_of_item(item: pytest.Item) -> str | None:
    from simclock_conformance.clauses._clauses import clause_of_test

    return clause_of_test(item.name.split("[", 1)[0])
