"""Which build of the core runs: the mypyc-compiled modules or the pure-Python ones (C-NATIVE-1).

The modules in `NATIVE_MODULES` exist as ``.py`` and, when the install
could compile them (``build_native.py``), as extension modules beside them
with a manifest, ``_compiled.json``, of the source hashes they were built
from. Python's own finder prefers an extension module to a ``.py`` of the same
name, which is wrong in two cases this module handles with a finder placed
first on ``sys.meta_path`` before any of them is imported:

* ``SIMCLOCK_PURE=1`` (any value but empty or ``0``) in the environment: the
  ``.py`` sources load, silently, as asked;
* a stale build: an editable checkout whose ``.py`` was edited after compiling
  (hash differs), extension files without a valid manifest, a file the
  manifest lists missing (a module's or the shared ``_native__mypyc*`` library),
  or a manifest written for another ``EXT_SUFFIX`` (another interpreter). The
  ``.py`` sources load and one line on stderr says so and how to rebuild.

All of the modules load from the same build, never a mix. ``COMPILED`` in
``simclock`` is `compiled` after the core is imported.
``python -m simclock.core`` prints one line naming the loaded core.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

__all__ = ["NATIVE_MODULES", "compiled", "install", "status_line"]

NATIVE_MODULES: Final = (
    "simclock.core._entry",
    "simclock.core._heap",
    "simclock.core._heapclock",
    "simclock.core._kernels",
    "simclock.core._mcap_records",
    "simclock.core._phases",
    "simclock.core._sample",
    "simclock.core._sender",
)
"""The compiled core; equal to ``[tool.simclock.native] modules`` (a test checks)."""

_CORE = Path(__file__).resolve().parent
_PACKAGE_ROOT = _CORE.parent.parent  # the manifest's paths are relative to it
_MANIFEST = _CORE / "_compiled.json"


def _pure_requested() -> bool:
    """``SIMCLOCK_PURE`` set to anything but empty or ``0`` (the same rule as ``build_native``)."""
    return os.environ.get("SIMCLOCK_PURE", "") not in ("", "0")


def _source(name: str) -> Path:
    return _CORE / (name.rsplit(".", 1)[1] + ".py")


def _extensions(name: str) -> list[Path]:
    stem = name.rsplit(".", 1)[1]
    return [
        _CORE / (stem + suffix)
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        if (_CORE / (stem + suffix)).exists()
    ]


def _verdict() -> tuple[bool, str]:
    """``(load the compiled modules, why)``; the why is for `status_line`."""
    if _pure_requested():
        return False, "SIMCLOCK_PURE is set"
    present = any(_extensions(name) for name in NATIVE_MODULES)
    try:
        manifest = json.loads(_MANIFEST.read_text())
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict):
        return False, ("stale: compiled files without a manifest" if present else "not compiled")
    if not manifest.get("compiled"):
        return False, f"not compiled at install: {manifest.get('reason', 'no reason given')}"
    sources = manifest.get("sources")
    if not isinstance(sources, dict):
        return False, "stale: manifest lists no sources"
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if manifest.get("ext_suffix") != suffix:
        return False, f"stale: compiled for {manifest.get('ext_suffix')!r}, not {suffix!r}"
    files = manifest.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return False, "stale: manifest lists no compiled files"
    for rel in files:
        if not (_PACKAGE_ROOT / rel).is_file():
            return False, f"stale: the compiled {rel} is missing"
    for name in NATIVE_MODULES:
        rel = name.replace(".", "/") + ".py"
        try:
            digest = hashlib.sha256(_source(name).read_bytes()).hexdigest()
        except OSError:
            digest = None
        if sources.get(rel) != digest:
            return False, f"stale: {rel} changed since it was compiled"
        if not _extensions(name):
            return False, f"stale: the compiled {rel} is missing"
    return True, "mypyc"


class _CoreFinder:
    """Loads the core modules from the ``.py`` files when the compiled ones must not be used."""

    def __init__(self) -> None:
        self.use_compiled, self.why = _verdict()
        self.warned = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in NATIVE_MODULES or self.use_compiled:
            return None  # the normal finders: the extension module wins when present
        if self.why.startswith("stale") and not self.warned:
            self.warned = True
            sys.stderr.write(
                f"simclock: using the pure-Python core, the compiled one is {self.why}; "
                "rebuild it with `make native`\n"
            )
        return importlib.util.spec_from_file_location(fullname, _source(fullname))


_finders: list[_CoreFinder] = []  # the one installed finder, once install() ran


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once); call before importing the core."""
    if not _finders:
        _finders.append(_CoreFinder())
        sys.meta_path.insert(0, _finders[0])


def compiled() -> bool:
    """True when every core module in ``sys.modules`` is the compiled extension."""
    loaded = [sys.modules.get(name) for name in NATIVE_MODULES]
    return all(
        module is not None and not str(getattr(module, "__file__", "")).endswith(".py")
        for module in loaded
    )


def status_line() -> str:
    """One line naming the core that is loaded, and why when it is the pure one."""
    if compiled():
        return "simclock: compiled core (mypyc)"
    why = _finders[0].why if _finders else "the core was not imported through simclock.core"
    return f"simclock: pure-Python core ({why})"
