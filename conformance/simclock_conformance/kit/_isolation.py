"""The suite's isolation from the pytest environment it runs in (C-CONF-1, C-CONF-5).

``python -m simclock_conformance`` and ``simclock_conformance.run`` start
pytest with plugin autoloading off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``) and
without the caller's ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS``: the only plugins
are the suite's own and Hypothesis's, loaded by name, so a plugin some other
installed package registers cannot break a clause. Whatever still goes wrong
before a test can blame the backend (a plugin that does not load, a suite
module that does not import, pytest's internal error) is collected by
:class:`SetupProblems` and becomes a usage error naming the cause.

Inside a user's own pytest (``pytest --simclock-backend``, or a subclass of
``ClockConformance`` among the user's tests), other plugins do load. A plugin
known to fail every test's setup in the environment it finds itself in is left
out of such a run (:func:`leave_out_broken_plugins`): looptime's plugin wraps
every fixture's setup and then looks up pytest-asyncio's plugin, so without
pytest-asyncio it fails the setup of every test that has a fixture, the
suite's and the user's alike, while the loops it would patch do not exist.
For any other plugin, :class:`ForeignPluginGuard` watches each suite test: when the failure
of a test's setup or teardown happens in another plugin's code (not in the
backend, the suite, pytest or the standard library), the run stops as a usage
error (pytest exit 4) naming that plugin and how to leave it out
(``-p no:NAME``), instead of failing the clause.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, TextIO

import pytest

__all__ = [
    "HYPOTHESIS_PLUGIN",
    "ForeignPluginGuard",
    "SetupProblems",
    "isolated_environ",
    "leave_out_broken_plugins",
]

HYPOTHESIS_PLUGIN = "_hypothesis_pytestplugin"
"""The module Hypothesis registers as its pytest plugin (entry point ``hypothesispytest``)."""

# Variables through which the caller's environment would reach the suite's pytest.
_CLEARED = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")
_OWN_PLUGINS = ("simclock_conformance", "simclock-conformance", HYPOTHESIS_PLUGIN)


@contextlib.contextmanager
def isolated_environ() -> Iterator[None]:
    """Autoloading off and no ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS`` while the suite's pytest runs.

    The variables are restored afterwards, whatever happens (pytest reads
    them while it configures itself, in this process).
    """
    saved = {name: os.environ.get(name) for name in (*_CLEARED, "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    for name in _CLEARED:
        os.environ.pop(name, None)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# (plugin module prefix, the plugin it needs, why it is left out without it)
_NEEDS = (
    (
        "looptime.",
        "asyncio",
        "it fails the setup of every fixture when pytest-asyncio is not installed",
    ),
)


def leave_out_broken_plugins(config: pytest.Config) -> list[str]:
    """Unregister the plugins that would fail every test's setup here; one note per plugin.

    Only a plugin whose failure is certain is left out: one of ``_NEEDS`` whose
    required plugin is not registered. It could do nothing in this run
    anyway (looptime only patches pytest-asyncio's event loops).
    """
    notes = []
    for name, plugin in config.pluginmanager.list_name_plugin():
        module = getattr(plugin, "__name__", "") if isinstance(plugin, ModuleType) else ""
        for prefix, needed, why in _NEEDS:
            if (
                module.startswith(prefix)
                and hasattr(plugin, "pytest_fixture_setup")
                and not config.pluginmanager.has_plugin(needed)
            ):
                config.pluginmanager.unregister(plugin)
                notes.append(
                    f"simclock conformance: left out the pytest plugin {name!r} ({module}): "
                    f"{why} (-p no:{name} leaves it out yourself)"
                )
    return notes


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1].removeprefix("E ").strip() if lines else ""


class _Tee:
    """``sys.stderr`` that also keeps what is written (pytest prints early errors there)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.text: list[str] = []

    def write(self, text: str) -> int:
        if sum(map(len, self.text)) < 20_000:
            self.text.append(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class SetupProblems:
    """Collects what kept pytest from running the suite; see :meth:`cause`."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self._stderr: _Tee | None = None

    @contextlib.contextmanager
    def watching_stderr(self) -> Iterator[None]:
        """Keep what pytest writes to ``sys.stderr`` (a plugin that does not load, a bad option)."""
        saved = sys.stderr
        self._stderr = _Tee(saved)
        sys.stderr = self._stderr
        try:
            yield
        finally:
            sys.stderr = saved

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A suite module that does not import is the environment's problem, not the backend's."""
        if report.failed:
            where = report.nodeid or "the suite"
            self.problems.append(f"collecting {where} failed: {_last_line(report.longreprtext)}")

    def pytest_internalerror(
        self, excrepr: Any, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> None:
        """A plugin hook that crashed."""
        self.problems.append(f"pytest internal error: {excinfo.typename}: {excinfo.value}")

    def cause(self, code: int | pytest.ExitCode) -> str:
        """Why pytest ended with ``code`` without a report, for the usage error."""
        if self.problems:
            return "; ".join(self.problems[:3])
        written = "".join(self._stderr.text) if self._stderr else ""
        lines = [line.strip() for line in written.splitlines() if line.strip()]
        if lines:
            first, last = lines[0], lines[-1].removeprefix("E ").strip()
            return first if first == last else f"{first} {last}"
        return f"pytest exit code {int(code)} ({pytest.ExitCode(code).name})"


def _plugin_files(config: pytest.Config) -> dict[str, str]:
    """``file -> plugin name`` of every registered plugin module that is not the suite's."""
    files: dict[str, str] = {}
    for name, plugin in config.pluginmanager.list_name_plugin():
        if not isinstance(plugin, ModuleType) or name in _OWN_PLUGINS:
            continue
        module_name = getattr(plugin, "__name__", "")
        if module_name.startswith(("_pytest.", "simclock_conformance", "hypothesis")):
            continue
        file = getattr(plugin, "__file__", None)
        if file and not name.startswith("_pytest"):
            files[str(Path(file).resolve())] = name
    return files


def _frames(tb: TracebackType | None) -> list[tuple[str, int]]:
    out = []
    while tb is not None:
        out.append((str(Path(tb.tb_frame.f_code.co_filename).resolve()), tb.tb_lineno))
        tb = tb.tb_next
    return out


class ForeignPluginGuard:
    """Stops the run as a usage error when another pytest plugin breaks a suite test's setup."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._files: dict[str, str] | None = None

    def culprit(self, exc: BaseException) -> tuple[str, str] | None:
        """``(plugin name, file:line)`` when ``exc`` was raised in another plugin's module."""
        if self._files is None:
            self._files = _plugin_files(self.config)
        current: BaseException | None = exc
        seen: set[int] = set()
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            # Innermost first: the plugin frame nearest to where the exception was raised.
            for file, line in reversed(_frames(current.__traceback__)):
                name = self._files.get(file)
                if name is not None:
                    return name, f"{file}:{line}"
            current = current.__cause__ or current.__context__
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A setup or teardown failure raised in another plugin's code ends the run."""
        report = yield
        if call.when in ("setup", "teardown") and call.excinfo is not None:
            found = self.culprit(call.excinfo.value)
            if found is not None:
                name, where = found
                exc = call.excinfo.value
                pytest.exit(
                    f"the pytest plugin {name!r} failed in the {call.when} of {item.name} "
                    f"({type(exc).__qualname__}: {exc}, at {where}); this is not the "
                    f"backend's failure: run with -p no:{name} (or --disable-plugin-autoload "
                    "-p simclock_conformance.entry._plugin -p _hypothesis_pytestplugin)",
                    returncode=pytest.ExitCode.USAGE_ERROR,
                )
        return report
