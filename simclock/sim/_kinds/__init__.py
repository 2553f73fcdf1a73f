"""The registry of component kinds: one module per kind, found by name (SPEC §8).

A table's ``kind`` is resolved, in this order:

1. a built-in kind, listed below (sensors: ``basic``; controllers: ``pd``, ``tick``);
2. ``"module:Class"``: the class ``Class`` of module ``module``, taken from
   ``module.py`` beside the scenario file if there is one, else imported
   (installed or on ``sys.path``);
3. a name registered in the Python entry point group ``simclock.components``
   by an installed package (``lqr = "mypkg.kinds:Lqr"``).

Adding a built-in kind touches three files: its module here (``_<name>.py``),
one line in ``BUILTIN``, and its keys in ``docs/scenario-format.md``. A kind of
your own is one Python file (plus the scenario naming it, or an entry point).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import pickle
import sys
from pathlib import Path
from typing import Any

from simclock.core._names import safe_repr
from simclock.sim._kinds import _basic, _pd, _tick
from simclock.sim._kinds._base import ControllerKind, KindParams, KindRun, SensorKind
from simclock.sim._toml import ScenarioError

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "ControllerKind",
    "KindParams",
    "KindRun",
    "SensorKind",
    "check_picklable",
    "resolve_kind",
    "restore_kind",
]

ENTRY_POINT_GROUP = "simclock.components"

BUILTIN: dict[str, type[Any]] = {
    kind.name: kind for kind in (_basic.BasicSensor, _pd.PdConfig, _tick.Tick)
}
"""Every built-in kind by name (sensor and controller names never collide)."""

_METHODS: dict[type, tuple[str, str]] = {
    SensorKind: ("load", "reader"),
    ControllerKind: ("load", "controller"),
}
_COMMON: dict[type, tuple[str, ...]] = {
    SensorKind: ("kind", "period", "phase", "latency", "policy", "topic"),
    ControllerKind: ("kind", "period", "phase", "policy"),
}
_WHAT: dict[type, str] = {SensorKind: "sensor", ControllerKind: "controller"}


def _builtin_names(family: type) -> str:
    return ", ".join(f'"{n}"' for n, k in BUILTIN.items() if issubclass(k, family))


def resolve_kind(value: str, key: str, family: type, base_dir: Path) -> type[Any]:
    """The class of kind ``value`` at scenario key ``key``; `ScenarioError` naming the fix.

    ``family`` is `SensorKind` or `ControllerKind`; the class
    must define that family's methods (subclassing it is how).
    """
    what = _WHAT[family]
    cls: Any
    if value in BUILTIN and issubclass(BUILTIN[value], family):
        return BUILTIN[value]
    if ":" in value:
        cls = _import_class(value, key, base_dir)
    else:
        found = [e for e in _entry_points() if e.name == value]
        if not found:
            raise ScenarioError(
                key,
                f"unknown {what} kind {safe_repr(value)}; use {_builtin_names(family)}, "
                f'"module:Class" for a Python class, or a name registered in the entry point '
                f"group {ENTRY_POINT_GROUP}",
            )
        try:
            cls = found[0].load()
        except Exception as exc:
            raise ScenarioError(
                key,
                f"cannot load kind {safe_repr(value)} from entry point {found[0].value!r} "
                f"({type(exc).__name__}: {exc}); reinstall the package that provides it",
            ) from None
    if not isinstance(cls, type):
        raise ScenarioError(
            key,
            f"{safe_repr(value)} is a {type(cls).__name__}, not a class; "
            f"name a subclass of simclock.{family.__name__}",
        )
    for method in _METHODS[family]:
        if not _defines(cls, family, method):
            raise ScenarioError(
                key,
                f"{safe_repr(value)} has no method {method}(); a {what} kind defines "
                f"{' and '.join(m + '()' for m in _METHODS[family])} "
                f"(subclass simclock.{family.__name__})",
            )
    keys = getattr(cls, "keys", ())
    if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
        raise ScenarioError(
            key, f"{safe_repr(value)}.keys must be a tuple of key names, got {safe_repr(keys)}"
        )
    clash = [k for k in keys if k in _COMMON[family]]
    if clash:
        raise ScenarioError(
            key,
            f"{safe_repr(value)}.keys lists {', '.join(clash)}, which every {what} has; "
            "remove it from keys (the loader reads it)",
        )
    return cls


def _defines(cls: type, family: type, method: str) -> bool:
    """``cls`` has ``method`` of its own, not only the base's placeholder."""
    own = getattr(cls, method, None)
    if not callable(own):
        return False
    base = getattr(family, method)
    return getattr(own, "__func__", own) is not getattr(base, "__func__", base)


def _entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _import_class(value: str, key: str, base_dir: Path) -> Any:
    """``module:Class``: the module beside the scenario if it is there, else imported."""
    module_name, _, attr = value.partition(":")
    parts = module_name.split(".")
    if not attr or not all(p.isidentifier() for p in parts) or not attr.isidentifier():
        raise ScenarioError(
            key,
            f'{safe_repr(value)} is not "module:Class"; write e.g. "my_controllers:Lqr"',
        )
    try:
        module = _import_module(module_name, base_dir)
    except Exception as exc:
        file = Path(*parts).with_suffix(".py")
        raise ScenarioError(
            key,
            f"cannot import module {module_name!r} of kind {value!r} "
            f"({type(exc).__name__}: {exc}); put {file} beside the scenario or install it",
        ) from None
    if not hasattr(module, attr):
        raise ScenarioError(
            key, f"module {module_name!r} has no {attr!r} (kind {value!r}); check the class name"
        )
    return getattr(module, attr)


def _import_module(name: str, base_dir: Path) -> Any:
    """Module ``name``: ``<base_dir>/<name as a path>.py`` if it exists, else ``import name``.

    A module taken from beside the scenario is put in ``sys.modules`` under
    ``name``, so its classes pickle by reference (sweeps) and a second load
    reuses it.
    """
    path = (base_dir / Path(*name.split("."))).with_suffix(".py")
    if not path.is_file():
        return importlib.import_module(name)
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # Invariant: a .py file path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def check_picklable(config: object, value: str, key: str) -> bytes:
    """``config`` pickled (sweeps send it to their workers), or `ScenarioError`."""
    try:
        return pickle.dumps(config)
    except Exception as exc:
        raise ScenarioError(
            key,
            f"the configuration {value!r}.load() returned cannot be pickled "
            f"({type(exc).__name__}: {exc}); sweeps send it to their workers: keep plain "
            "values in it",
        ) from None


def restore_kind(value: str, base_dir: str, data: bytes) -> Any:
    """Unpickle a kind's configuration after making its module importable (sweep workers).

    ``value`` is the ``kind`` as written and ``base_dir`` the scenario's
    directory: a module beside the scenario is loaded from there first.
    """
    if ":" in value and value not in BUILTIN:
        module_name = value.partition(":")[0]
        if module_name not in sys.modules:
            _import_module(module_name, Path(base_dir))
    return pickle.loads(data)
