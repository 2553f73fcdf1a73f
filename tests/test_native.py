"""The compiled core and its pure-Python twin (SPEC §17, C-NATIVE-1).

Which build runs is decided in ``simclock.core._native``; the build itself is
``build_native.py`` (run by the hatchling hook at install). The conformance
suite and the oracle state machine run on both builds in ``make test`` (the
second pass is ``make test-pure``, ``SIMCLOCK_PURE=1``); this file runs in
both passes too, so the traceback tests cover both.
"""

from __future__ import annotations

import json
import operator
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import SupportsIndex

import pytest

import simclock
from simclock import HeapSimClock
from simclock.core import _native

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import build_native  # noqa: E402  (the repository root is not a package)

PROBE = (
    "import json, sys, simclock, simclock.core._heapclock as h, simclock.core._heap as q;"
    "print(json.dumps([simclock.COMPILED, h.__file__, q.COMPILED]))"
)


def _python(
    code: str, env: dict[str, str] | None = None, path: Path | None = None
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "SIMCLOCK_PURE"}
    full.update(env or {})
    if path is not None:
        full["PYTHONPATH"] = str(path)
    # cwd: not the checkout, whose simclock/ would shadow PYTHONPATH's copy.
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=full,
        check=True,
        cwd=path if path is not None else Path(__file__).parent,
    )


def _manifest() -> dict[str, object]:
    """What the install's build wrote (no file: installed some other way, e.g. by hand)."""
    path = ROOT / build_native.MANIFEST
    if not path.exists():
        return {"compiled": False, "reason": f"no {build_native.MANIFEST} (make native writes it)"}
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def _makefile_native_src() -> list[str]:
    """The paths of the Makefile's one ``NATIVE_SRC := ...`` line."""
    lines = [
        line
        for line in (ROOT / "Makefile").read_text().splitlines()
        if re.match(r"^NATIVE_SRC\s*:?=", line)
    ]
    assert len(lines) == 1, lines
    assert not lines[0].endswith("\\"), "NATIVE_SRC must stay on one line"
    return lines[0].split("=", 1)[1].split()


def test_C_NATIVE_1_one_module_list() -> None:
    """The build compiles exactly the modules the loader guards and make rebuilds for.

    The list lives in pyproject's ``[tool.simclock.native]``; ``NATIVE_MODULES``
    and the Makefile's ``NATIVE_SRC`` repeat it, in the same order.
    """
    with (ROOT / "pyproject.toml").open("rb") as f:
        listed = tomllib.load(f)["tool"]["simclock"]["native"]["modules"]
    assert build_native.native_modules(ROOT) == listed
    assert [m.removesuffix(".py").replace("/", ".") for m in listed] == list(_native.NATIVE_MODULES)
    assert _makefile_native_src() == listed


def _require_compiled() -> None:
    """Skip on a machine that cannot compile; fail when the compile itself broke."""
    manifest = _manifest()
    reason = str(manifest.get("reason"))
    if not manifest.get("compiled"):
        if reason.startswith("mypyc build failed"):
            pytest.fail(f"the compiled core did not build: {reason} (see build/native.log)")
        pytest.skip(f"installed without the compiled core: {reason}")


def test_C_NATIVE_1_COMPILED_names_the_loaded_build() -> None:
    _require_compiled()
    default = json.loads(_python(PROBE).stdout)
    assert default[0] is True and default[2] is True
    assert not default[1].endswith(".py")
    pure = _python(PROBE, {"SIMCLOCK_PURE": "1"})
    assert json.loads(pure.stdout) == [False, str(ROOT / "simclock/core/_heapclock.py"), False]
    assert pure.stderr == ""  # forcing the pure build is not a warning
    assert _python(PROBE, {"SIMCLOCK_PURE": "0"}).stdout == _python(PROBE).stdout


def test_C_NATIVE_1_COMPILED_matches_this_process() -> None:
    from simclock.core import _heap

    forced = os.environ.get("SIMCLOCK_PURE", "") not in ("", "0")
    assert simclock.COMPILED is _heap.COMPILED
    assert simclock.COMPILED is (not forced and bool(_manifest().get("compiled")))


def test_C_NATIVE_1_status_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "simclock.core"],
        capture_output=True,
        text=True,
        env={**os.environ, "SIMCLOCK_PURE": "1"},
        check=True,
    )
    assert out.stdout == "simclock: pure-Python core (SIMCLOCK_PURE is set)\n"


def _copy_package(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "simclock", tmp_path / "simclock", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp_path


def test_C_NATIVE_1_stale_compiled_core_is_not_loaded(tmp_path: Path) -> None:
    """An edited .py beside its old .so (an editable checkout): pure, and one line says so."""
    _require_compiled()
    copy = _copy_package(tmp_path)
    fresh = json.loads(_python(PROBE, path=copy).stdout)
    assert fresh[0] is True and fresh[1].startswith(str(copy))
    with (copy / "simclock/core/_heap.py").open("a") as f:
        f.write("# edited after compiling\n")
    stale = _python(PROBE, path=copy)
    assert json.loads(stale.stdout) == [False, str(copy / "simclock/core/_heapclock.py"), False]
    assert stale.stderr == (
        "simclock: using the pure-Python core, the compiled one is stale: "
        "simclock/core/_heap.py changed since it was compiled; rebuild it with `make native`\n"
    )


def test_C_NATIVE_1_compiled_files_without_manifest_are_not_loaded(tmp_path: Path) -> None:
    _require_compiled()
    copy = _copy_package(tmp_path)
    (copy / build_native.MANIFEST).unlink()
    out = _python(PROBE, path=copy)
    assert json.loads(out.stdout) == [False, str(copy / "simclock/core/_heapclock.py"), False]
    assert out.stderr == (
        "simclock: using the pure-Python core, the compiled one is stale: "
        "compiled files without a manifest; rebuild it with `make native`\n"
    )


def test_C_NATIVE_1_missing_shared_library_is_stale(tmp_path: Path) -> None:
    """The modules' .so files without mypyc's shared one would not import: pure, one line."""
    _require_compiled()
    copy = _copy_package(tmp_path)
    (shared,) = (copy / "simclock/core").glob("_native__mypyc*.so")
    rel = shared.relative_to(copy).as_posix()
    assert rel in json.loads((copy / build_native.MANIFEST).read_text())["files"]
    shared.unlink()
    out = _python(PROBE, path=copy)
    assert json.loads(out.stdout) == [False, str(copy / "simclock/core/_heapclock.py"), False]
    assert out.stderr == (
        f"simclock: using the pure-Python core, the compiled one is stale: "
        f"the compiled {rel} is missing; rebuild it with `make native`\n"
    )
    code = (
        "import simclock; c = simclock.HeapSimClock(0); seen = [];"
        "c.schedule(5, lambda: seen.append(c.now_ns())); c.advance(9);"
        "print(simclock.COMPILED, seen, c.now_ns())"
    )
    assert _python(code, path=copy).stdout == "False [5] 9\n"


def test_C_NATIVE_1_other_ext_suffix_is_stale(tmp_path: Path) -> None:
    """A manifest written for another interpreter's EXT_SUFFIX: pure, one line."""
    _require_compiled()
    copy = _copy_package(tmp_path)
    path = copy / build_native.MANIFEST
    manifest = json.loads(path.read_text())
    ours = sysconfig.get_config_var("EXT_SUFFIX")
    assert manifest["ext_suffix"] == ours
    manifest["ext_suffix"] = ".cpython-399-x86_64-linux-gnu.so"
    path.write_text(json.dumps(manifest))
    out = _python(PROBE, path=copy)
    assert json.loads(out.stdout) == [False, str(copy / "simclock/core/_heapclock.py"), False]
    assert out.stderr == (
        "simclock: using the pure-Python core, the compiled one is stale: compiled for "
        f"'.cpython-399-x86_64-linux-gnu.so', not {ours!r}; rebuild it with `make native`\n"
    )


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        (
            {"CC": "/bin/false"},
            re.escape("the C compiler '/bin/false' cannot build a Python extension (CompileError)"),
        ),
        ({"CC": "/nonexistent/cc"}, re.escape("no C compiler ('/nonexistent/cc' not found)")),
        ({"PATH": "/nonexistent"}, r"no C compiler \('[^']+' not found\)"),
    ],
    ids=["CC=/bin/false", "CC missing", "no compiler on PATH"],
)
def test_C_NATIVE_1_no_compiler_installs_pure_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], reason: str
) -> None:
    """What the install hook does without a working compiler: pure files only, one line."""
    monkeypatch.delenv("SIMCLOCK_PURE", raising=False)  # make test-pure sets it
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out = tmp_path / "out"
    result = build_native.build(ROOT, out, log=tmp_path / "native.log")
    assert result.compiled is False
    assert "\n" not in result.line
    assert re.fullmatch(r"simclock: pure-Python core \(" + reason + r"\)", result.line), result.line
    assert result.files == (build_native.MANIFEST,)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        build_native.MANIFEST
    ]
    manifest = json.loads((out / build_native.MANIFEST).read_text())
    assert manifest["compiled"] is False
    assert manifest["reason"] == result.line.removeprefix("simclock: pure-Python core (")[:-1]


@pytest.mark.parametrize("value", ["1", "true"])
def test_C_NATIVE_1_pure_requested_at_build_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """The run-time rule (anything but empty or "0"): nothing compiled, one line."""
    monkeypatch.setenv("SIMCLOCK_PURE", value)
    result = build_native.build(ROOT, tmp_path, log=tmp_path / "native.log")
    assert result == build_native.NativeBuild(
        False,
        "simclock: pure-Python core (SIMCLOCK_PURE is set at build time)",
        (build_native.MANIFEST,),
    )
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "simclock",
        "simclock/core",
        build_native.MANIFEST,
    ]


def test_C_NATIVE_1_pure_install_loads_and_runs(tmp_path: Path) -> None:
    """A package whose build fell back (manifest says so, no .so): pure, silent, working."""
    copy = _copy_package(tmp_path)
    build_native.clean(copy)
    (copy / build_native.MANIFEST).write_text(json.dumps({"compiled": False, "reason": "x"}))
    code = (
        "import simclock; c = simclock.HeapSimClock(0); seen = [];"
        "c.schedule(5, lambda: seen.append(c.now_ns())); c.advance(9);"
        "print(simclock.COMPILED, seen, c.now_ns())"
    )
    out = _python(code, path=copy)
    assert (out.stdout, out.stderr) == ("False [5] 9\n", "")


# -- semantics that a compiler could change ------------------------------------------------


class UserStopError(BaseException):
    """Not an Exception: propagates out of advance (C-ERR-2)."""


def user_callback_that_stops() -> None:
    raise UserStopError("stop")


def test_C_NATIVE_1_traceback_shows_the_user_frame() -> None:
    clock = HeapSimClock(0)
    clock.schedule(3, user_callback_that_stops)
    with pytest.raises(UserStopError, match=r"^stop$") as info:
        clock.advance(10)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert (frames[-1].name, frames[-1].filename) == ("user_callback_that_stops", __file__)
    assert frames[-1].line == 'raise UserStopError("stop")'
    assert clock.now_ns() == 3  # C-ERR-2: now is the failing entry's time


def test_C_NATIVE_1_periodic_traceback_shows_the_user_frame() -> None:
    clock = HeapSimClock(0)
    handle = clock.schedule_periodic(4, user_callback_that_stops, 2)
    with pytest.raises(UserStopError, match=r"^stop$") as info:
        clock.advance(10)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert (frames[-1].name, frames[-1].filename) == ("user_callback_that_stops", __file__)
    assert frames[-1].line == 'raise UserStopError("stop")'
    assert clock.now_ns() == 2  # C-ERR-2: now is the failing entry's time (phase 2)
    assert clock.next_event_ns() == 6  # re-armed after raising (C-PER-2)
    assert handle.stats().fired == 1


def test_C_NATIVE_1_interpreted_subclass_overrides_are_used() -> None:
    """HeapSimClock stays subclassable in the compiled build (backends, tests do it)."""
    calls: list[tuple[str, int]] = []

    class Logged(HeapSimClock):
        def advance(self, dt_ns: SupportsIndex) -> None:
            calls.append(("advance", operator.index(dt_ns)))
            super().advance(dt_ns)

        # Called by the compiled advance() itself, not from Python: the override must
        # still be the one that runs (a compiled direct call would bypass it).
        def _fire(self, limit: int) -> None:
            calls.append(("_fire", limit))
            super()._fire(limit)

    clock = Logged(0, start_ns=1)
    seen: list[int] = []
    clock.schedule(4, lambda: seen.append(clock.now_ns()))
    clock.advance(5)
    assert (calls, seen, clock.now_ns()) == ([("advance", 5), ("_fire", 6)], [4], 6)
    clock._check()


def test_C_NATIVE_1_far_times_and_ties_exact() -> None:
    """Beyond 63 bits the compiled code compares boxed ints: same order (C-TIME-4, C-TIE-1)."""
    clock = HeapSimClock(0)
    order: list[tuple[str, int]] = []
    far = 2**64 - 1

    def note(label: str) -> Callable[[], None]:
        return lambda: order.append((label, clock.now_ns()))

    for label, at in [("c", far), ("a", 2**63), ("d", far), ("b", 2**63 + 1), ("e", 5)]:
        clock.schedule(at, note(label))
    clock.advance(far)
    assert order == [("e", 5), ("a", 2**63), ("b", 2**63 + 1), ("c", far), ("d", far)]
    clock._check()
