"""The suite's isolation from the pytest environment around it (C-CONF-1, C-CONF-5).

``looptime`` is installed in the test environment and registers pytest plugins
that break every test's setup when pytest-asyncio is absent: the command
never loads them, and the pytest routes (``--simclock-backend``, a subclass of
``ClockConformance``) leave looptime's plugin out and give the backend's real
verdict. Other autoloaded plugins are installed here into a temporary
directory (a ``.dist-info`` with a ``pytest11`` entry point, which pytest
autoloads like any installed plugin): one that reorders tests and reseeds the
global generators before each (as pytest-randomly does) changes no verdict,
and one whose code fails a suite test's setup stops the run as a usage error
naming it. (Run this file with ``-p no:looptime_plugin``: the same plugin
breaks ``tmp_path`` here; pyproject's ``addopts`` does.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def _looptime_plugin_installed() -> bool:
    return any(ep.name == "looptime_plugin" for ep in metadata.entry_points(group="pytest11"))


needs_looptime = pytest.mark.skipif(
    not _looptime_plugin_installed(), reason="looptime (a third-party pytest plugin) not installed"
)


def _run(
    *args: str, extra_path: str = "", cwd: Path = ROOT, **env_extra: str
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    paths = [p for p in (extra_path, str(TESTS), str(ROOT), env.get("PYTHONPATH", "")) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd,
        check=False, timeout=300,
    )  # fmt: skip


def _installed_plugin(site: Path, name: str, source: str) -> str:
    """Install the pytest plugin module ``name`` into ``site`` as pytest finds installed ones."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{name}.py").write_text(source)
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[pytest11]\n{name} = {name}\n")
    return str(site)


# Like pytest-randomly: tests in reverse order, global generators reseeded before each.
_SHUFFLING = """\
import random

import numpy
import pytest


RESEEDED = []


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.reverse()


def pytest_runtest_setup(item):
    random.seed(1234)
    numpy.random.seed(1234)
    RESEEDED.append(item.nodeid)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"shuffling_plugin: reseeded before {len(RESEEDED)} tests")
"""

_BREAKING = """\
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    result = yield
    raise RuntimeError("broken on purpose")
"""

_SUBCLASS = """\
import pytest
from simclock_conformance import ClockConformance, Factory

import simclock


def make_clock(seed: int, bus: simclock.Bus) -> simclock.SimClock:
    return simclock.HeapSimClock(seed, bus=bus)


class TestMyClockConformance(ClockConformance):
    @pytest.fixture
    def clock_factory(self) -> Factory:
        return make_clock
"""

_LOOPTIME_LEFT_OUT = (
    "simclock conformance: left out the pytest plugin 'looptime_plugin' "
    "(looptime._internal.plugin): it fails the setup of every fixture when pytest-asyncio "
    "is not installed (-p no:looptime_plugin leaves it out yourself)"
)


def _pytest_route(route: str, tmp_path: Path, out: Path, extra_path: str = "") -> list[str]:
    """The arguments of ``python -m pytest`` for one documented route, in ``tmp_path``."""
    common = ["-m", "pytest", "-c", os.devnull, "-p", "no:cacheprovider", "-q"]
    if route == "backend":
        return [*common, "--simclock-backend", "simclock_conformance:heap_factory",
                "--simclock-json", str(out)]  # fmt: skip
    (tmp_path / "test_my_clock.py").write_text(_SUBCLASS)
    return [*common, "test_my_clock.py", "--simclock-json", str(out)]


@needs_looptime
@pytest.mark.parametrize("route", ["backend", "subclass"])
def test_C_CONF_1_pytest_routes_leave_out_looptime_and_give_the_backends_verdict(
    tmp_path: Path, route: str
) -> None:
    out = tmp_path / "report.json"
    proc = _run(*_pytest_route(route, tmp_path, out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(out.read_text())["verdict"] == "CONFORMING"
    lines = proc.stdout.splitlines()
    assert lines.count(_LOOPTIME_LEFT_OUT) == 1, proc.stdout
    assert re.fullmatch(r"96 passed in .*", lines[-1]), proc.stdout


def test_C_CONF_1_a_plugin_reordering_and_reseeding_tests_changes_no_verdict(
    tmp_path: Path,
) -> None:
    site = _installed_plugin(tmp_path / "site", "shuffling_plugin", _SHUFFLING)
    out = tmp_path / "report.json"
    proc = _run(
        *_pytest_route("backend", tmp_path, out), "-p", "no:looptime_plugin",
        extra_path=site, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(out.read_text())["verdict"] == "CONFORMING"
    assert "shuffling_plugin: reseeded before 96 tests" in proc.stdout.splitlines()


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {row["id"]: row["status"] for row in report["clauses"]}


@needs_looptime
def test_C_CONF_1_cli_verdict_is_the_backends_with_a_breaking_plugin_installed(
    tmp_path: Path,
) -> None:
    # The caller's PYTEST_ADDOPTS and PYTEST_PLUGINS do not reach the suite either.
    out = tmp_path / "report.json"
    proc = _run(
        "-m", "simclock_conformance", "backends.broken:lifo_ties", "-q",
        "--clause", "C-TIE-1", "--clause", "C-STEP-1", "--json", str(out),
        PYTEST_ADDOPTS="--no-such-option", PYTEST_PLUGINS="no_such_plugin_module",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["failed"] == ["C-TIE-1"]
    assert _statuses(report)["C-STEP-1"] == "passed"
    assert [c["cause"] for c in report["root_causes"]] == [
        "first differing reply: fired order differs at equal now_ns"
    ]
    assert "looptime" not in proc.stdout + proc.stderr


def test_C_CONF_1_a_plugin_of_the_suite_that_does_not_load_is_a_usage_error(
    tmp_path: Path,
) -> None:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "_hypothesis_pytestplugin.py").write_text('raise RuntimeError("broken on purpose")\n')
    out = tmp_path / "report.json"
    proc = _run(
        "-m", "simclock_conformance", "simclock_conformance:heap_factory",
        "--clause", "C-TIE-1", "--json", str(out), extra_path=str(shadow),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "python -m simclock_conformance: error: pytest could not run the conformance suite: "
        'Error while loading plugin "_hypothesis_pytestplugin". RuntimeError: broken on purpose'
    )
    assert not out.exists()


def test_C_CONF_1_pytest_route_stops_as_a_usage_error_naming_the_breaking_plugin(
    tmp_path: Path,
) -> None:
    site = _installed_plugin(tmp_path / "site", "breaking_plugin", _BREAKING)
    out = tmp_path / "report.json"
    proc = _run(
        "-m", "pytest", "-c", os.devnull, "-p", "no:cacheprovider", "-q",
        "-p", "no:looptime_plugin",
        "--simclock-backend", "simclock_conformance:heap_factory", "-k", "C_TIE_1",
        "--simclock-json", str(out), extra_path=site, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stdout + proc.stderr
    message = re.search(r"Exit: (the pytest plugin .*?) !?$", proc.stdout + proc.stderr, re.M)
    assert message is not None, proc.stdout + proc.stderr
    assert message.group(1) == (
        "the pytest plugin 'breaking_plugin' failed in the setup of "
        "test_C_TIE_1_equal_times_fire_in_push_order (RuntimeError: broken on purpose, at "
        f"{tmp_path / 'site' / 'breaking_plugin.py'}:7); this is not the backend's failure: "
        "run with -p no:breaking_plugin (or --disable-plugin-autoload "
        "-p simclock_conformance.entry._plugin -p _hypothesis_pytestplugin)"
    )
    report = json.loads(out.read_text())
    assert report["failed"] == []
    assert report["verdict"] == "PARTIAL"


@needs_looptime
def test_pytest_route_beside_the_plugin_left_out_gives_the_real_verdict(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    proc = _run(
        "-m", "pytest", "-c", os.devnull, "-p", "no:cacheprovider", "-q",
        "-p", "no:looptime_plugin",
        "--simclock-backend", "backends.broken:lifo_ties", "-k", "C_TIE_1 or C_STEP_1",
        "--simclock-json", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["failed"] == ["C-TIE-1"]
    assert _statuses(report)["C-STEP-1"] == "passed"
