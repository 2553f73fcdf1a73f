"""The determinism re-run: a failing suite test runs once more (C-DET-1, C-CONF-3).

Every suite test is a fixed program (its Hypothesis searches are
derandomised in the ``ci`` profile, and run from one seed under ``thorough``),
so a deterministic backend fails it the same way twice. :class:`Rerun` runs a
failed test a second time, without reporting the second run to pytest; when
the two outcomes differ (one passes, or the messages differ once object
addresses are left out) the report says at its top that the backend is not
deterministic, with both outcomes, in the text and the JSON. The clause keeps
the first run's result. A test that timed out is not re-run (it would take
the whole limit again), nor is one whose first run took more than
:data:`RERUN_LIMIT_S` of CPU time: a failing state machine spends seconds
shrinking its program, and a second search would double what a broken backend
costs; the fast tests of the same clauses still show a backend that is not
deterministic.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from _pytest.runner import runtestprotocol

__all__ = ["RERUN_LIMIT_S", "Rerun", "describe", "outcome_of", "same_outcome"]

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
_GENERATED = re.compile(r"\bsm\d+(?=t\d+\b|\b)")
"""Clock ids the state machine generates (``sm74``): a counter, so a second run's differ."""

RERUN_LIMIT_S = 2.0
"""A failed test whose first run took more CPU time than this is not run again."""


def _message(report: pytest.TestReport) -> str:
    for key, value in report.user_properties:
        if key == "simclock" and isinstance(value, dict):
            if value.get("timeout"):
                return ""
            return str(value.get("message", ""))
    crash = getattr(report.longrepr, "reprcrash", None)
    return str(getattr(crash, "message", "")) or report.longreprtext.strip()[-500:]


def outcome_of(reports: list[pytest.TestReport]) -> str:
    """``passed``, ``skipped`` or ``failed (PHASE): MESSAGE`` of one run's phase reports."""
    for report in reports:
        if report.failed:
            return f"failed ({report.when}): {_message(report)}"
    if any(report.skipped for report in reports):
        return "skipped"
    return "passed"


def _timed_out(reports: list[pytest.TestReport]) -> bool:
    return any(
        key == "simclock" and isinstance(value, dict) and value.get("timeout")
        for report in reports
        for key, value in report.user_properties
    )


def _normalised(outcome: str) -> str:
    return _GENERATED.sub("sm#", _ADDRESS.sub("0x?", outcome))


def same_outcome(first: str, second: str) -> bool:
    """Equal outcomes once object addresses (``0x7f...``) and generated clock ids are left out."""
    return _normalised(first) == _normalised(second)


class Rerun:
    """Runs each failed suite test twice; hands differing outcomes to ``record``.

    ``wanted(nodeid)`` says whether a test belongs to the suite;
    ``record(nodeid, first, second)`` receives the two outcomes of a test
    whose second run differed.
    """

    def __init__(
        self, wanted: Callable[[str], bool], record: Callable[[str, str, str], None]
    ) -> None:
        self.wanted = wanted
        self.record = record

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        """pytest's own protocol, once more after a failure; only the first run is reported."""
        if not self.wanted(item.nodeid):
            return None
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        started = time.process_time()
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        cheap = time.process_time() - started <= RERUN_LIMIT_S
        if cheap and any(r.failed for r in reports) and not _timed_out(reports):
            again = runtestprotocol(item, nextitem=nextitem, log=False)
            first, second = outcome_of(reports), outcome_of(again)
            if not _timed_out(again) and not same_outcome(first, second):
                self.record(item.nodeid, first, second)
        for report in reports:
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def describe(entries: list[dict[str, str]]) -> list[str]:
    """The lines at the top of the text report for the tests whose two runs differed."""
    if not entries:
        return []
    tests = "1 failed test" if len(entries) == 1 else f"{len(entries)} failed tests"
    lines = [
        f"NOT DETERMINISTIC: {tests} gave a different outcome when run again on a new "
        "clock with the same seed and calls (C-DET-1):"
    ]
    for entry in entries:
        lines.append(f"  {entry['clause']} {entry['test']}:")
        for run in ("first", "second"):
            text = entry[run].splitlines() or [""]
            lines.append(f"    {run} run: {text[0]}")
            lines.extend(f"      {line}" for line in text[1:4])
    lines.append("")
    return lines
