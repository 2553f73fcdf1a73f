"""The Go driver kit of ``conformance/drivers/go`` as commands for tests (SPEC §18).

:func:`go_build` builds one of its programs (the reference heap clock, the minimal
clock, or a peer adapter) with the system ``go`` once per source tree and Go version,
into the drivers' cache directory (``_cache_dir`` of ``tests/wire_drivers.py``), never
into the worktree, and returns its command line; :func:`go_test` runs the kit's own
``go test ./...``.
Each skips the calling test with one clear reason when ``go`` is missing, and fails it
with the tool's output when ``go`` is there but the build breaks. The peers' modules come
from the Go module proxy: a download that fails (offline) skips, as ``npm ci`` does.
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
from wire_drivers import DRIVERS, _cache_dir

__all__ = ["GO_DIR", "PROGRAMS", "go_build", "go_test"]

GO_DIR = DRIVERS / "go"
PROGRAMS: dict[str, tuple[Path, str]] = {
    "heapclock": (GO_DIR, "./examples/heapclock"),
    "minimal": (GO_DIR, "./examples/minimal"),
    "careless": (GO_DIR, "./examples/careless"),
    "clockwork": (GO_DIR / "peers", "./clockwork"),
    "k8sclock": (GO_DIR / "peers", "./k8sclock"),
}
"""Program name -> (the module directory it is built in, its package)."""

_TIMEOUT_S = 600
_OFFLINE = ("dial tcp", "proxy.golang.org", "no such host", "i/o timeout", "connection refused")


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not on PATH (the Go driver kit needs Go >= 1.21, its peers Go >= 1.26)")
    return go


def _env() -> dict[str, str]:
    return {**os.environ, "GOFLAGS": "-mod=mod"}


@functools.cache
def _version(go: str) -> str:
    done = subprocess.run([go, "version"], capture_output=True, text=True, check=False)
    return done.stdout.strip()


def _sources_key(go: str) -> str:
    digest = hashlib.sha256(_version(go).encode())
    for path in sorted(GO_DIR.rglob("*")):
        if path.is_file() and path.suffix in (".go", ".mod", ".sum"):
            digest.update(str(path.relative_to(GO_DIR)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _fail_or_skip(what: str, done: subprocess.CompletedProcess[str]) -> None:
    output = (done.stderr + done.stdout)[-4000:]
    if any(mark in output for mark in _OFFLINE):
        pytest.skip(f"{what}: the Go module proxy is not reachable (offline?)")
    pytest.fail(f"{what} failed, exit {done.returncode}:\n{output}", pytrace=False)


@functools.cache
def go_build(name: str) -> list[str]:
    """The command line of program ``name`` (a key of PROGRAMS), built if needed."""
    if name not in PROGRAMS:
        raise ValueError(f"name must be one of {sorted(PROGRAMS)}, got {name!r}")
    go = _go()
    module, package = PROGRAMS[name]
    binary = _cache_dir() / f"go-{name}-{_sources_key(go)}"
    if binary.exists():
        return [str(binary)]
    fd, tmp = tempfile.mkstemp(dir=binary.parent, prefix=binary.name + ".")
    os.close(fd)
    try:
        done = subprocess.run(
            [go, "build", "-o", tmp, package],
            cwd=module,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            _fail_or_skip(f"go build {package} (in {module.relative_to(GO_DIR.parent)})", done)
        os.replace(tmp, binary)  # atomic: a concurrent session sees a whole binary or none
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return [str(binary)]


def go_test(module: Path = GO_DIR) -> str:
    """The output of ``go test ./...`` in ``module`` (the kit, or its peers); fails the test
    with it when a Go test fails. Go's test cache keeps a rerun quick."""
    go = _go()
    done = subprocess.run(
        [go, "test", "./..."],
        cwd=module,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        _fail_or_skip(f"go test ./... (in {module.relative_to(GO_DIR.parent)})", done)
    return done.stdout
