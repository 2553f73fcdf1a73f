"""The public surface in tiers: export tables, reported modules, lazy loading, the docs' table.

``docs/public-api.md`` carries one table per public namespace; it is
generated from the namespaces themselves (``python tests/test_public_api.py``
rewrites it) and a test fails when it is stale.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import simclock
import simclock.lowlevel
import simclock.records
import simclock.sweeps
from simclock.core import _public

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "public-api.md"
NAMESPACES = ("simclock", "simclock.lowlevel", "simclock.records", "simclock.sweeps")
LAYERS = ("simclock.core", "simclock.recording", "simclock.realtime", "simclock.sim")


def _exported(namespace: str) -> list[str]:
    return list(importlib.import_module(namespace).__all__)


def test_root_exports_are_the_table_plus_version() -> None:
    assert sorted(simclock.__all__) == sorted([*_public.ROOT_NAMES, "__version__"])
    assert len(simclock.__all__) == len(set(simclock.__all__))


def test_lowlevel_exports_are_the_table() -> None:
    assert simclock.lowlevel.__all__ == list(_public.LOWLEVEL_NAMES)


def test_every_layer_name_is_public_in_exactly_one_namespace() -> None:
    public = {name: ns for ns in NAMESPACES for name in _exported(ns)}
    for layer in LAYERS:
        for name in _exported(layer):
            assert name in public, f"{layer}.{name} is in no public namespace"
            homes = [ns for ns in NAMESPACES if name in _exported(ns)]
            assert len(homes) == 1, (name, homes)


@pytest.mark.parametrize("namespace", NAMESPACES + LAYERS)
def test_every_public_name_reports_its_public_module(namespace: str) -> None:
    module = importlib.import_module(namespace)
    wrong = []
    for name in module.__all__:
        value = getattr(module, name)
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        home = next(ns for ns in NAMESPACES if name in _exported(ns))
        if value.__module__ != home:
            wrong.append(f"{namespace}.{name}: {value.__module__} (public in {home})")
    assert wrong == []


def test_pickles_name_the_public_module() -> None:
    """A Scenario sent to Dask workers, or any pickled class, names ``simclock``."""
    for cls in (simclock.Scenario, simclock.HeapSimClock, simclock.PacingMode):
        data = pickle.dumps(cls, protocol=0)
        assert f"csimclock\n{cls.__qualname__}\n".encode() in data or (
            b"simclock" in data and b"._" not in data
        ), data
        assert pickle.loads(data) is cls


def test_a_backend_helper_asked_of_the_root_points_at_lowlevel() -> None:
    with pytest.raises(
        AttributeError,
        match=r"^module 'simclock' has no attribute 'check_time_ns': it is a helper for backend "
        r"authors, in simclock.lowlevel \(from simclock.lowlevel import check_time_ns\)$",
    ):
        simclock.check_time_ns  # noqa: B018
    with pytest.raises(AttributeError, match=r"^module 'simclock' has no attribute 'nope'$"):
        simclock.nope  # noqa: B018


def test_dir_lists_every_export() -> None:
    assert set(simclock.__all__) <= set(dir(simclock))


def _fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return done.stdout


def test_import_simclock_loads_only_the_clock_core() -> None:
    """C-NATIVE-1's core and numpy: no recording, physics, real time, sweeps or their libraries."""
    out = _fresh(
        "import sys, simclock\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}"
        " & {'mcap', 'mcap_ros2', 'zstandard', 'lz4', 'mujoco', 'dask', 'distributed',"
        " 'pyarrow', 'matplotlib', 'rich', 'libcst', 'hypothesis', 'pytest'}))\n"
        "print(sorted(m for m in sys.modules if m.startswith('simclock.')"
        " and m.split('.')[1] in ('recording', 'sim', 'realtime', 'sweeps', 'cli', 'records')))\n"
    )
    assert out == "[]\n[]\n"


def test_a_lazy_name_loads_its_package_on_first_use() -> None:
    out = _fresh(
        "import sys, simclock\n"
        "print('simclock.recording' in sys.modules)\n"
        "r = simclock.Recorder\n"
        "print('simclock.recording' in sys.modules, r.__module__, 'Recorder' in vars(simclock))\n"
    )
    assert out == "False\nTrue simclock True\n"


def render() -> str:
    """The text of docs/public-api.md, from the namespaces themselves."""
    parts = [
        "# The public API, by namespace",
        "",
        "simclock's names are in four public namespaces; every class and function",
        "reports the namespace below as its `__module__`, in reprs, tracebacks and",
        "pickles. The sub-packages (`simclock.core`, `simclock.recording`,",
        "`simclock.realtime`, `simclock.sim`, `simclock.cli`) are the layers of the",
        "implementation, and modules starting with `_` are private.",
        "`import simclock` loads only the clock core: every other name is loaded on first use.",
        "",
        "This page is generated by `python tests/test_public_api.py` and checked by the tests.",
    ]
    intro = {
        "simclock": "the user API.",
        "simclock.lowlevel": "helpers for authors of clock backends.",
        "simclock.records": "the sampling-record scheduler (SPEC §12).",
        "simclock.sweeps": "the sweep table's tools; `simclock.sweep` runs a sweep.",
    }
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        parts += ["", f"## `{namespace}`", "", f"`{namespace}`: {intro[namespace]}", ""]
        parts += ["| name | what it is |", "| --- | --- |"]
        for name in sorted(module.__all__, key=str.lower):
            value = getattr(module, name)
            if name == "__version__":
                summary = "the version of simclock, a string"
            elif inspect.isclass(value) or inspect.isfunction(value):
                summary = (inspect.getdoc(value) or "").split("\n", 1)[0]
            elif type(value).__module__ in ("typing", "types", "collections.abc"):
                summary = "type alias"
            else:
                summary = f"constant ({type(value).__name__})"
            cell = summary.replace("``", "`").replace("|", "\\|")
            parts.append(f"| `{name}` | {cell} |")
    return "\n".join(parts) + "\n"


def test_docs_table_matches_the_namespaces() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/public-api.md is stale: regenerate with python tests/test_public_api.py"
    )


if __name__ == "__main__":
    DOC.write_text(render(), encoding="utf-8")
