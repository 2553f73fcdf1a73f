"""The suite's isolation from the pytest environment around it (C-CONF-1, C-CONF-5).

``looptime`` is installed in the test environment and registers pytest plugins
that break every test's setup when pytest-asyncio is absent: the command
must still give the backend's real verdict, and the pytest plugin route must
stop as a usage error naming looptime's plugin, never fail clauses. (Run this
file with ``-p no:looptime_plugin``: the same plugin breaks ``tmp_path`` here.)
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


@needs_looptime
def test_C_CONF_1_pytest_route_stops_as_a_usage_error_naming_the_breaking_plugin(
    tmp_path: Path,
) -> None:
    out = tmp_path / "report.json"
    proc = _run(
        "-m", "pytest", "-c", os.devnull, "-p", "no:cacheprovider", "-q",
        "--simclock-backend", "simclock_conformance:heap_factory", "-k", "C_TIE_1",
        "--simclock-json", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stdout + proc.stderr
    message = re.search(r"Exit: (the pytest plugin .*?) !?$", proc.stdout + proc.stderr, re.M)
    assert message is not None, proc.stdout + proc.stderr
    assert re.fullmatch(
        r"the pytest plugin 'looptime_plugin' failed in the setup of "
        r"test_C_TIE_1_equal_times_fire_in_push_order \(AttributeError: 'NoneType' object has "
        r"no attribute '__name__', at \S+/looptime/_internal/plugin\.py:\d+\); this is not the "
        r"backend's failure: run with -p no:looptime_plugin \(or --disable-plugin-autoload "
        r"-p simclock_conformance\._plugin -p _hypothesis_pytestplugin\)",
        message.group(1),
    ), message.group(1)
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
