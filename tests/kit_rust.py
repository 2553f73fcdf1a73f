"""The Rust driver kit of ``conformance/drivers/rust`` built for tests (SPEC §18).

:func:`rust_binaries` runs ``cargo build --release --locked`` of the workspace (the
example clocks and the tokio peer) once per source tree and toolchain, with
``CARGO_TARGET_DIR`` in the drivers' cache (``_cache_dir`` of ``wire_drivers``, never
the worktree), and copies the binaries to a folder keyed by a hash of the sources,
so a second run does not even start cargo. :func:`cargo_test` runs the kit's own unit
tests in the same target directory. Both skip the calling test with one reason when
cargo is missing or cannot download the pinned crates, and fail it with cargo's output
when the build breaks.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from wire_drivers import _cache_dir

__all__ = ["KIT_DIR", "RustBinaries", "cargo_test", "rust_binaries"]

ROOT = Path(__file__).resolve().parent.parent
KIT_DIR = ROOT / "conformance" / "drivers" / "rust"

_BUILD_TIMEOUT_S = 600
_OFFLINE = re.compile(
    r"failed to download|failed to get .* as a dependency|Unable to update registry|"
    r"failed to query replaced source|Couldn't resolve host|network failure",
)


class RustBinaries:
    """Paths of the built example clocks and tokio peer."""

    def __init__(self, folder: Path) -> None:
        self.heap_clock = str(folder / "heap_clock")
        self.minimal_clock = str(folder / "minimal_clock")
        self.careless = str(folder / "careless")
        self.tokio_driver = str(folder / "tokio_driver")


def _cargo() -> str:
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not on PATH (the Rust driver kit needs a Rust toolchain >= 1.85)")
    return cargo


def _sources_key(cargo: str) -> str:
    digest = hashlib.sha256()
    for path in sorted(KIT_DIR.rglob("*")):
        rel = path.relative_to(KIT_DIR)
        if path.is_file() and rel.parts[0] != "target":
            digest.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    version = subprocess.run(
        [cargo, "--version"], capture_output=True, text=True, check=False
    ).stdout
    digest.update(version.encode())
    return digest.hexdigest()[:16]


def rust_target_dir() -> Path:
    """The cargo target directory of this checkout's kit, in the drivers' cache.

    One per checkout: the kit's tests read the golden vectors through
    ``env!("CARGO_MANIFEST_DIR")``, compiled in, and cargo reuses a test binary built
    from another checkout of the same crate in a shared target directory, which then
    reads that checkout's vectors.
    """
    key = hashlib.sha256(str(KIT_DIR.resolve()).encode()).hexdigest()[:12]
    return _cache_dir() / f"rust-target-{key}"


def _run_cargo(cargo: str, args: list[str], what: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CARGO_TARGET_DIR=str(rust_target_dir()))
    try:
        done = subprocess.run(
            [cargo, *args],
            cwd=KIT_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=_BUILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"cargo {what} took over {_BUILD_TIMEOUT_S} s", pytrace=False)
    if done.returncode != 0 and _OFFLINE.search(done.stderr):
        tail = done.stderr.strip().splitlines()[-3:]
        pytest.skip("cargo could not download the pinned crates (offline?): " + " | ".join(tail))
    return done


@functools.cache
def rust_binaries() -> RustBinaries:
    """The example heap clock and the tokio peer, built if these sources were not yet."""
    cargo = _cargo()
    folder = _cache_dir() / f"rust-{_sources_key(cargo)}"
    if all(
        (folder / name).exists()
        for name in ("heap_clock", "minimal_clock", "careless", "tokio_driver")
    ):
        return RustBinaries(folder)
    args = ["build", "--release", "--locked", "--workspace", "--bins", "--examples"]
    done = _run_cargo(cargo, args, "build")
    if done.returncode != 0:
        pytest.fail(
            f"cargo {' '.join(args)} failed in {KIT_DIR}, exit {done.returncode}:\n"
            f"{done.stderr[-4000:]}",
            pytrace=False,
        )
    release = rust_target_dir() / "release"
    work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=folder.name + "."))
    try:
        for example in ("heap_clock", "minimal_clock", "careless"):
            shutil.copy2(release / "examples" / example, work / example)
        shutil.copy2(release / "tokio_driver", work / "tokio_driver")
        try:
            work.rename(folder)  # atomic: a concurrent session sees both binaries or none
        except OSError:
            if not (folder / "tokio_driver").exists():
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return RustBinaries(folder)


def cargo_test() -> subprocess.CompletedProcess[str]:
    """``cargo test --release --locked -p simclock-driver``: the kit's own unit tests."""
    return _run_cargo(_cargo(), ["test", "--release", "--locked", "-p", "simclock-driver"], "test")
