"""Build step for the compiled core (C-NATIVE-1): mypyc over the core modules, or pure Python.

Run by the hatchling build hook (``hatch_build.py``) whenever the project is
installed (``pip install .``, ``pip install -e .``, ``make``), and by hand as
``python build_native.py`` (``make native``) to rebuild an editable checkout
in place after editing a compiled module.

Contract:

* The modules listed in ``pyproject.toml`` under ``[tool.simclock.native]``
  (repeated as ``simclock.core._native.NATIVE_MODULES`` and the Makefile's
  ``NATIVE_SRC``; ``test_C_NATIVE_1_one_module_list`` checks all three agree)
  are compiled by mypyc from the same typed source when a C compiler and the
  Python headers work; the extension files go to ``<out>/simclock/core/``
  next to a manifest, ``_compiled.json``, holding the SHA-256 of every source
  they were compiled from. ``simclock.core._native`` loads them only while
  those hashes match and every file the manifest lists is present, so an
  edited ``.py`` is never shadowed by a stale ``.so``.
* When compiling is impossible (no compiler, no headers, ``CC=/bin/false``,
  a mypyc error) or refused (``SIMCLOCK_PURE`` set to anything but empty or
  ``0`` at build time, the run-time rule) the build
  still succeeds: no extension is left behind, the manifest records
  ``compiled: false`` with the reason, and exactly one line saying so is
  printed (:func:`build`'s return value). The package then runs as pure Python.

The compile runs in a child process (mypyc and setuptools keep global state)
with its full output in ``build/native.log``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MANIFEST", "NativeBuild", "build", "native_modules", "source_hashes"]

MANIFEST = "simclock/core/_compiled.json"
GROUP = "simclock.core._native"  # the mypyc shared library: simclock/core/_native__mypyc*.so

# A C file that needs both the compiler and Python.h: compiled (not linked) by the
# same compiler setuptools would use (honours CC, CFLAGS, ...), before the slow mypyc
# step, so a missing toolchain costs a fraction of a second, not a mypy run.
_PROBE = """
import os, shutil, sys, sysconfig, tempfile
from setuptools._distutils.ccompiler import new_compiler
from setuptools._distutils.sysconfig import customize_compiler
cc = new_compiler()
customize_compiler(cc)
include = sysconfig.get_paths()["include"]
exe = (getattr(cc, "compiler_so", None) or ["?"])[0]
if not os.path.exists(os.path.join(include, "Python.h")):
    sys.exit(f"no Python headers (no Python.h in {include})")
if shutil.which(exe) is None:
    sys.exit(f"no C compiler ({exe!r} not found)")
with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "probe.c")
    with open(src, "w") as f:
        f.write("#include <Python.h>\\nint simclock_probe(void) { return PY_MAJOR_VERSION; }\\n")
    try:
        cc.compile([src], output_dir=tmp, include_dirs=[include])
    except Exception as exc:
        sys.exit(f"the C compiler {exe!r} cannot build a Python extension ({type(exc).__name__})")
"""

# The compile proper: argv = build_lib, build_temp, c_dir, module paths...
_COMPILE = """
import sys, os
from mypyc.build import mypycify
from setuptools import setup
build_lib, build_temp, c_dir, *paths = sys.argv[1:]
extensions = mypycify(
    # The build environment has mypy but not the project's dependencies (numpy, mcap):
    # modules reached through imports are read for types but not judged here; the
    # compiled ones are (and every module is, strictly, by `make check`).
    ["--ignore-missing-imports", "--follow-imports=silent", *paths],
    opt_level="3",
    group_name=os.environ["SIMCLOCK_NATIVE_GROUP"],
    target_dir=c_dir,
)
setup(
    name="simclock-native",
    packages=[],
    py_modules=[],
    ext_modules=extensions,
    script_args=["build_ext", "--build-lib", build_lib, "--build-temp", build_temp],
)
"""


@dataclass(frozen=True)
class NativeBuild:
    """What :func:`build` did: ``files`` are the written paths relative to ``out``."""

    compiled: bool
    line: str
    files: tuple[str, ...]


def native_modules(root: Path) -> list[str]:
    """The source paths listed in ``[tool.simclock.native] modules`` of ``root/pyproject.toml``."""
    with (root / "pyproject.toml").open("rb") as f:
        config = tomllib.load(f)
    modules = config["tool"]["simclock"]["native"]["modules"]
    if not isinstance(modules, list) or not all(isinstance(m, str) for m in modules):
        raise TypeError(f"[tool.simclock.native] modules must be a list of paths, got {modules!r}")
    return modules


def source_hashes(root: Path, modules: list[str]) -> dict[str, str]:
    """SHA-256 of each module's source, keyed by its path (as in the manifest)."""
    return {m: hashlib.sha256((root / m).read_bytes()).hexdigest() for m in modules}


def _suffix() -> str:
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return suffix if isinstance(suffix, str) else ".so"


def clean(out: Path) -> None:
    """Remove compiled core files and the manifest from ``out/simclock/core``."""
    core = out / "simclock" / "core"
    for path in core.glob("*" + _suffix()):
        path.unlink()
    (out / MANIFEST).unlink(missing_ok=True)


def _write_manifest(out: Path, data: dict[str, object]) -> None:
    path = out / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def _last_error(text: str) -> str:
    """The most telling line of a failed compile's output (for the one-line message)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for marker in ("error:", "Error:", "fatal error", "No such file"):
        for line in reversed(lines):
            if marker in line:
                return line[:200]
    return lines[-1][:200] if lines else "no output"


def _pure(out: Path, reason: str) -> NativeBuild:
    clean(out)
    _write_manifest(out, {"compiled": False, "reason": reason})
    return NativeBuild(False, f"simclock: pure-Python core ({reason})", (MANIFEST,))


# What the compile needs in the build environment (hatch_build.py asks for it).
COMPILE_REQUIRES = ("mypy>=1.10", "setuptools>=68")


def pure_reason() -> str | None:
    """Why this build is pure Python by request, or ``None`` when it should compile.

    ``SIMCLOCK_PURE`` (anything but empty or ``0``, the run-time rule of
    ``simclock.core._native``) asks for pure; so does ``PRE_COMMIT=1``, which
    pre-commit sets while it installs a hook's environment: the linter's hook
    never runs the core, so it should not wait for a C compile.
    """
    if os.environ.get("SIMCLOCK_PURE", "") not in ("", "0"):
        return "SIMCLOCK_PURE is set at build time"
    if os.environ.get("PRE_COMMIT", "") == "1":
        return "installed by pre-commit (PRE_COMMIT=1), which runs only the linter"
    return None


def build(root: Path, out: Path, log: Path | None = None) -> NativeBuild:
    """Compile the native modules of ``root`` into ``out`` (``out == root``: in place).

    Never raises for a missing or broken toolchain: the result then says
    ``compiled=False`` and its ``line`` gives the reason in one line.
    """
    modules = native_modules(root)
    reason = pure_reason()
    if reason is not None:
        return _pure(out, reason)
    log = log if log is not None else root / "build" / "native.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=root, check=False
    )
    if probe.returncode != 0:
        log.write_text(probe.stdout + probe.stderr)
        lines = probe.stderr.strip().splitlines()
        return _pure(out, lines[-1][:300] if lines else f"compiler probe exit {probe.returncode}")
    with tempfile.TemporaryDirectory(prefix="simclock-native-") as tmp:
        lib = Path(tmp) / "lib"
        run = subprocess.run(
            [sys.executable, "-c", _COMPILE, str(lib), f"{tmp}/temp", f"{tmp}/c", *modules],
            capture_output=True,
            text=True,
            cwd=root,
            check=False,
            env={**os.environ, "SIMCLOCK_NATIVE_GROUP": GROUP},
        )
        log.write_text(run.stdout + run.stderr)
        built = sorted(lib.rglob("*" + _suffix())) if run.returncode == 0 else []
        if not built:
            return _pure(out, f"mypyc build failed: {_last_error(run.stdout + run.stderr)}")
        clean(out)
        files = []
        for path in built:
            rel = path.relative_to(lib)
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(path.read_bytes())
            files.append(rel.as_posix())
    _write_manifest(
        out,
        {
            "compiled": True,
            "ext_suffix": _suffix(),
            "files": files,
            "sources": source_hashes(root, modules),
        },
    )
    line = f"simclock: compiled core ({len(modules)} modules, mypyc)"
    return NativeBuild(True, line, (*files, MANIFEST))


def main() -> int:
    """``python build_native.py``: rebuild this checkout in place, print the one line."""
    root = Path(__file__).resolve().parent
    result = build(root, root)
    print(result.line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
