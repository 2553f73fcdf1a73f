"""Hatchling build hook: compile the core with mypyc, or fall back to pure Python (C-NATIVE-1).

The work is done by ``build_native.py`` (importable without hatchling, so the
tests and ``make native`` use the same code). An editable install compiles in
place, next to the sources; a wheel gets the extension files and the manifest
and is then tagged for this interpreter and platform.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _build_native(root: Path) -> Any:
    spec = importlib.util.spec_from_file_location("simclock_build_native", root / "build_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


class NativeBuildHook(BuildHookInterface):  # type: ignore[misc]
    """Runs before the wheel (or editable wheel) is assembled."""

    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        """The build requirements of the compile, only when this build will compile.

        ``[build-system] requires`` holds hatchling alone, so a pure build
        (pre-commit's, ``SIMCLOCK_PURE=1``) installs neither mypy nor setuptools.
        """
        native = _build_native(Path(self.root))
        return [] if native.pure_reason() is not None else list(native.COMPILE_REQUIRES)

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        native = _build_native(root)
        if version == "editable":
            result = native.build(root, root)
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="simclock-wheel-")
            out = Path(self._tmp.name)
            result = native.build(root, out)
            for rel in result.files:
                build_data["force_include"][str(out / rel)] = rel
            if result.compiled:
                build_data["pure_python"] = False
                build_data["infer_tag"] = True
        # pip shows this only with -v; `make` prints the loaded core after installing.
        print(result.line, file=sys.stderr)
