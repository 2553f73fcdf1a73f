"""The wire-protocol drivers of ``conformance/drivers/`` as commands for tests (SPEC §18).

* :func:`cpp_driver` builds the C++17 driver kit's heap-clock example (or one of its
  broken variants, or another example) with the system ``g++``/``c++`` once per source,
  compiler and variant, in a cache directory
  (``$SIMCLOCK_DRIVER_CACHE``, else ``$XDG_CACHE_HOME/simclock-drivers``, else
  ``~/.cache/simclock-drivers``), and returns its command line.
* :func:`sinon_driver` installs the JavaScript kit's pinned packages
  (``@sinonjs/fake-timers``, ``@jest/fake-timers``) with ``npm ci`` into the same cache
  (never into the worktree) and returns the ``@sinonjs/fake-timers`` driver's command line;
  :func:`jest_driver` does the same for Jest's fake timers (modern or legacy).
* :func:`node_test_driver` returns the command line of the ``node:test`` mock-timers
  driver (no npm needed).

Each skips the calling test with one clear reason when its tool is missing, and fails it
(with the tool's output) when the tool is there but the build or install breaks.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from simclock_conformance.report._report import BackendReport

__all__ = [
    "BROKEN_VARIANTS",
    "CPP_KIT",
    "CPP_SOURCE",
    "JS_DIR",
    "SLOW_FAR_ADVANCE",
    "assert_judged",
    "cpp_driver",
    "jest_driver",
    "node_test_driver",
    "sinon_driver",
]

ROOT = Path(__file__).resolve().parent.parent
DRIVERS = ROOT / "conformance" / "drivers"
CPP_KIT = DRIVERS / "cpp"
CPP_SOURCE = CPP_KIT / "examples" / "heap_clock.cpp"
JS_DIR = DRIVERS / "js"
"""The JavaScript kit (npm package ``simclock-driver``); its peer drivers are in ``peers/``."""

BROKEN_VARIANTS: dict[str, str] = {
    "BROKEN_FLOAT64": "C-TIME-4",
    "BROKEN_LIFO_TIES": "C-TIE-1",
    "BROKEN_NUMBER_TIMES": "C-TIME-3",
    "BROKEN_NESTED_ADVANCE": "C-ADV-4",
    "BROKEN_NO_COMPACT": "C-CAN-4",
    "BROKEN_BITS": "C-X-BITS",
    "BROKEN_CRASH": "C-WIRE-5: exit",
    "BROKEN_HANG": "C-WIRE-5: no reply",
}
"""Broken variant macro -> what the suite must catch it on.

A clause id, or for the two process failures ``"C-WIRE-5: exit"`` (the driver aborts
on its 4th advance) and ``"C-WIRE-5: no reply"`` (it stops answering on an advance whose
target is at or beyond 2**62 ns), which fail whatever clause was running.
"""

_BUILD_TIMEOUT_S = 300
_NPM_TIMEOUT_S = 300


def _cache_dir() -> Path:
    """The drivers' build/install cache; created on first use."""
    explicit = os.environ.get("SIMCLOCK_DRIVER_CACHE")
    if explicit:
        base = Path(explicit)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "simclock-drivers"
    try:
        base.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=base):
            pass  # the directory is writable
    except OSError:
        base = Path(tempfile.gettempdir()) / f"simclock-drivers-{os.getuid()}"
        base.mkdir(parents=True, exist_ok=True)
    return base


def _compiler() -> str | None:
    for name in (os.environ.get("CXX"), "g++", "c++"):
        if name and (path := shutil.which(name)):
            return path
    return None


def _kit_sources(example: str) -> tuple[Path, bytes]:
    """The example's source file and the bytes its build depends on (the kit's headers too)."""
    source = CPP_KIT / "examples" / f"{example}.cpp"
    files = [source, *sorted((CPP_KIT / "include").rglob("*.hpp"))]
    files += sorted((CPP_KIT / "examples").glob("*.hpp"))
    blob = b"".join(
        f.relative_to(CPP_KIT).as_posix().encode() + b"\0" + f.read_bytes() for f in files
    )
    return source, blob


@functools.cache
def _build(variant: str | None, example: str = "heap_clock") -> str:
    compiler = _compiler()
    if compiler is None:
        pytest.skip("no C++ compiler (g++ or c++) on PATH")
    source, blob = _kit_sources(example)
    key = hashlib.sha256(blob + b"\0" + compiler.encode() + b"\0" + str(variant).encode())
    binary = _cache_dir() / f"{example}-{variant or 'good'}-{key.hexdigest()[:16]}"
    if binary.exists():
        return str(binary)
    flags = ["-std=c++17", "-O2", "-pthread", f"-I{CPP_KIT / 'include'}"]
    if variant is not None:
        flags += [f"-D{variant}", f'-DBROKEN_VARIANT_NAME="{variant}"']
    fd, tmp = tempfile.mkstemp(dir=binary.parent, prefix=binary.name + ".")
    os.close(fd)
    try:
        done = subprocess.run(
            [compiler, *flags, "-o", tmp, str(source)],
            capture_output=True,
            text=True,
            timeout=_BUILD_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(
                f"{compiler} failed to build {source.name} ({variant or 'conforming'}), "
                f"exit {done.returncode}:\n{done.stderr[-4000:]}",
                pytrace=False,
            )
        os.replace(tmp, binary)  # atomic: a concurrent session sees a whole binary or none
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return str(binary)


def cpp_driver(variant: str | None = None, example: str = "heap_clock") -> list[str]:
    """The command line of a C++ kit example, built if needed.

    ``variant`` is None or a key of BROKEN_VARIANTS (for the heap clock); ``example`` the
    name of a file ``conformance/drivers/cpp/examples/<example>.cpp``.
    """
    if variant is not None and variant not in BROKEN_VARIANTS:
        raise ValueError(
            f"variant must be None or one of {sorted(BROKEN_VARIANTS)}, got {variant!r}"
        )
    if not (CPP_KIT / "examples" / f"{example}.cpp").is_file():
        raise ValueError(
            f"example must name a file conformance/drivers/cpp/examples/<example>.cpp, "
            f"got {example!r}"
        )
    return [_build(variant, example)]


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH (the JavaScript drivers need Node.js >= 20)")
    return node


@functools.cache
def _node_modules() -> str:
    """``npm ci`` of conformance/drivers/js into the cache; the path of its node_modules."""
    _node()
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not on PATH (needed to install the JavaScript drivers' packages)")
    manifest = (JS_DIR / "package.json").read_bytes()
    lock = (JS_DIR / "package-lock.json").read_bytes()
    key = hashlib.sha256(manifest + b"\0" + lock).hexdigest()[:16]
    target = _cache_dir() / f"js-{key}"
    # Installed as a whole (the work directory is renamed): one package marks them all.
    marker = target / "node_modules" / "@jest" / "fake-timers" / "package.json"
    if marker.exists():
        return str(target / "node_modules")
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=target.name + "."))
    try:
        (work / "package.json").write_bytes(manifest)
        (work / "package-lock.json").write_bytes(lock)
        try:
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=_NPM_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(
                f"npm ci of the JavaScript drivers' packages took over {_NPM_TIMEOUT_S} s "
                "(offline?)"
            )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            pytest.skip(
                "npm ci of the JavaScript drivers' packages failed (offline or no registry?): "
                + " | ".join(tail)
            )
        try:
            work.rename(target)
        except OSError:
            if not marker.exists():  # not a concurrent install that won the race
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return str(target / "node_modules")


def sinon_driver() -> list[str]:
    """The command line of the ``@sinonjs/fake-timers`` driver (installing it if needed)."""
    modules = _node_modules()
    return [_node(), str(JS_DIR / "peers" / "sinon.mjs"), "--node-modules", modules]


def jest_driver(legacy: bool = False) -> list[str]:
    """The command line of the ``@jest/fake-timers`` driver: modern timers, or legacy ones."""
    modules = _node_modules()
    flags = ["--legacy"] if legacy else []
    return [_node(), str(JS_DIR / "peers" / "jest.mjs"), *flags, "--node-modules", modules]


def node_test_driver() -> list[str]:
    """The command line of the ``node:test`` mock-timers driver."""
    node = _node()
    version = subprocess.run(
        [node, "-p", "process.versions.node"], capture_output=True, text=True, check=False
    ).stdout.strip()
    major, minor = (int(part) for part in [*version.split("."), "0", "0"][:2])
    if (major, minor) < (20, 4):
        pytest.skip(f"node {version} has no node:test mock.timers (needs >= 20.4)")
    return [node, "--no-warnings", str(JS_DIR / "peers" / "node-mock-timers.mjs")]


SLOW_FAR_ADVANCE: dict[str, tuple[str, ...]] = {"C-PER-3": ("C-ADV-1", "failed")}
"""per-3/no-drift's far advance, its interval clamped to 1 unit, fires until the kit stops it
(about 39 000 callbacks, 3 s on an idle machine) with an error reply: an advance refused,
C-ADV-1's. On a loaded machine the deadline comes first, and a hang fails its own test."""


def assert_judged(
    report: BackendReport,
    failed: list[str],
    blocked: dict[str, str],
    timed: dict[str, tuple[str, ...]],
) -> None:
    """``report`` fails ``failed`` less ``blocked``, blocks ``blocked``; ``timed`` either way."""
    seen = report.blocked()
    for clause, statuses in timed.items():
        status = seen.pop(clause, "failed" if clause in report.failed() else "passed")
        assert status in statuses, (clause, status)
    assert seen == {c: b for c, b in blocked.items() if c not in timed}
    assert [c for c in report.failed() if c not in timed] == [
        c for c in failed if c not in blocked and c not in timed
    ]
