"""The pip command a missing extra's message gives: the one that works for this simclock.

No package index has simclock, so ``pip install 'simclock[sweep]'`` fails; the command names
the directory or wheel pip installed simclock from (PEP 610's ``direct_url.json``), else the
clone simclock runs from, else ``/path/to/simclock``. tests/test_install.py runs the command
a wheel install prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simclock.core import _extras
from simclock.core._extras import install_command, require_extra

ROOT = Path(__file__).resolve().parents[1]


class _Dist:
    def __init__(self, direct_url: dict[str, Any] | None) -> None:
        self.text = None if direct_url is None else json.dumps(direct_url)

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return self.text


def _installed(monkeypatch: pytest.MonkeyPatch, direct_url: dict[str, Any] | None) -> None:
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: _Dist(direct_url))


def test_installed_from_a_directory_names_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _installed(monkeypatch, {"url": tmp_path.as_uri(), "dir_info": {"editable": True}})
    assert install_command("sweep") == f'pip install "{tmp_path}[sweep]"'


def test_installed_from_a_wheel_names_its_file_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    wheel = tmp_path / "simclock-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    _installed(monkeypatch, {"url": wheel.as_uri(), "archive_info": {}})
    assert install_command("live") == f'pip install "simclock[live] @ {wheel.as_uri()}"'


@pytest.mark.parametrize(
    "direct_url",
    [None, {"url": "https://example.org/simclock.whl"}, {"url": "file:///nowhere/simclock"}],
)
def test_otherwise_the_clone_it_runs_from(
    monkeypatch: pytest.MonkeyPatch, direct_url: dict[str, Any] | None
) -> None:
    _installed(monkeypatch, direct_url)
    assert install_command("plot") == f'pip install "{ROOT}[plot]"'
    monkeypatch.setattr(_extras, "_clone", lambda: None)
    assert install_command("plot") == 'pip install "/path/to/simclock[plot]"'


def test_a_missing_extra_is_one_line_with_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(
        RuntimeError,
        match=r"^plotting needs the 'plot' extra, which is not installed \(missing: matplotlib\); "
        r"install it with: pip install \".*\[plot\]\"$",
    ):
        require_extra("plot", "plotting")
