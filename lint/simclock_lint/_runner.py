"""Lint many files: discovery, content-hash cache, parallel workers (SPEC §13).

The cache maps each file's path to ``(key, findings)`` where ``key`` hashes
the file's bytes, the codes that apply to it and the linter's own source, so
an edit to the file, the configuration or the linter re-lints it and nothing
else does. It is one JSON file, written atomically at the end of a run.

Files that miss the cache are linted in worker processes when there are
enough of them to pay for the processes; results are identical either way.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from simclock_lint._config import Config
from simclock_lint._engine import NOT_LINTED, lint_source
from simclock_lint._rule import Finding
from simclock_lint._rules import RULES

__all__ = ["RunResult", "discover", "lint_paths"]

_CACHE_FILE = "v1.json"
# Below this many uncached bytes a process pool costs more than it saves.
_PARALLEL_MIN_BYTES = 1_500_000


@dataclass(frozen=True, slots=True)
class RunResult:
    """Findings of a run plus what it cost: files seen, linted, served by the cache.

    ``files - linted - cached`` files had every rule ignored by configuration.
    """

    findings: list[Finding]
    files: int
    linted: int
    cached: int


def _linter_fingerprint() -> str:
    """Changes whenever a module of the linter changes (so does every cache key)."""
    digest = hashlib.blake2b(digest_size=8)
    package = Path(__file__).parent
    for module in sorted((*package.glob("*.py"), *package.glob("_rules/*.py"))):
        stat = module.stat()
        digest.update(f"{module.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()


def discover(paths: Sequence[Path], config: Config) -> Iterator[Path]:
    """Python files under ``paths`` (files given directly included), minus excludes."""
    for path in paths:
        if path.is_dir():
            for directory, subdirs, names in os.walk(path):
                rel_dir = config.relpath(directory)
                prefix = "" if rel_dir == "." else rel_dir + "/"
                subdirs[:] = sorted(d for d in subdirs if not config.is_excluded(prefix + d))
                for name in sorted(names):
                    if name.endswith(".py") and not config.is_excluded(prefix + name):
                        yield Path(directory, name)
        elif not config.is_excluded(config.relpath(path), every_segment=True):
            yield path


_Job = tuple[str, str, frozenset[str], str | tuple[str, ...]]


def _read_regular(filename: str) -> bytes:
    """The bytes of a regular file; OSError for anything else (a FIFO, a device).

    The file is opened without blocking and checked with ``fstat`` before any
    read: a FIFO named ``x.py`` would block forever, and a link to /dev/zero
    would fill the memory.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(filename, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def _lint_file(job: _Job) -> list[Finding]:
    display, filename, codes, simulation = job
    try:
        source = _read_regular(filename)
    except OSError as error:
        reason = error.strerror or str(error)
        return [Finding(display, 1, 1, NOT_LINTED, f"not linted: {reason}")]
    return lint_source(
        source, display, [r for r in RULES if r.code in codes], simulation=simulation
    )


def _lint_chunk(jobs: list[_Job]) -> list[list[Finding]]:
    # Syntax trees are acyclic: reference counting frees them, the cycle collector only costs.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return [_lint_file(job) for job in jobs]
    finally:
        if enabled:
            gc.enable()


def _size(path: Path) -> int:
    try:
        info = path.stat()
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _display(path: Path, cwd: str) -> str:
    """``path`` relative to the working directory when inside it, else absolute."""
    absolute = os.path.abspath(path)
    if absolute.startswith(cwd + os.sep):
        return Path(absolute[len(cwd) + 1 :]).as_posix()
    return Path(absolute).as_posix()


def _load_cache(cache_file: Path) -> dict[str, list[object]]:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _store_cache(cache_dir: Path, entries: dict[str, list[object]]) -> None:
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        ignore = cache_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# created by simclock-lint\n*\n", encoding="utf-8")
        handle, temporary = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(entries, out, separators=(",", ":"))
        os.replace(temporary, cache_dir / _CACHE_FILE)
    except OSError:
        pass  # a read-only tree still gets its findings, just no cache


def lint_paths(
    paths: Sequence[Path],
    config: Config,
    *,
    use_cache: bool = True,
    cache_dir: Path | None = None,
    jobs: int | None = None,
) -> RunResult:
    """Lint every Python file under ``paths`` with ``config``; findings sorted by path.

    ``cache_dir`` overrides the configured one (default ``<root>/.simclock-lint-cache``);
    ``jobs`` caps worker processes (default: CPUs available; 1 runs in-process).
    """
    files = list(dict.fromkeys(discover(paths, config)))
    cwd = os.getcwd()
    directory = cache_dir or config.cache_dir or config.root / ".simclock-lint-cache"
    cache = _load_cache(directory / _CACHE_FILE) if use_cache else {}
    salt = f"{_linter_fingerprint()}|{config.fingerprint()}".encode()
    fresh: dict[str, list[object]] = {}
    results: list[list[Finding]] = [[] for _ in files]
    todo: list[tuple[int, str, str, _Job]] = []
    todo_bytes = 0
    hits = 0
    for index, path in enumerate(files):
        relpath = config.relpath(path)
        codes = config.codes_for(relpath)
        if not codes:
            continue
        display = _display(path, cwd)
        job = (display, str(path), codes, config.simulation_for(relpath))
        if not use_cache:
            todo.append((index, relpath, "", job))
            todo_bytes += _size(path)
            continue
        try:
            data = _read_regular(str(path))
        except OSError:
            todo.append((index, relpath, "", job))  # reported by the worker, never cached
            continue
        digest = hashlib.blake2b(salt + ",".join(sorted(codes)).encode(), digest_size=16)
        digest.update(data)
        key = digest.hexdigest()
        entry = cache.get(relpath)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == key:
            items = cast(list[list[Any]], entry[1])
            results[index] = [Finding(display, *item) for item in items]
            fresh[relpath] = entry
            hits += 1
            continue
        todo.append((index, relpath, key, job))
        todo_bytes += len(data)
    linted = _run_jobs([job for *_, job in todo], todo_bytes, jobs)
    for (index, relpath, key, _), findings in zip(todo, linted, strict=True):
        results[index] = findings
        if key:
            fresh[relpath] = [key, [[f.line, f.col, f.code, f.message] for f in findings]]
    if use_cache and todo:
        # Entries of files outside this run are kept, so linting a subset keeps the rest warm.
        _store_cache(directory, {**cache, **fresh})
    findings = [finding for per_file in results for finding in per_file]
    return RunResult(findings, len(files), len(todo), hits)


def _available_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):  # Linux: honours taskset and cgroup CPU sets
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _run_jobs(jobs: list[_Job], total_bytes: int, max_workers: int | None) -> list[list[Finding]]:
    workers = max_workers or _available_cpus()
    if workers <= 1 or len(jobs) < 2 or total_bytes < _PARALLEL_MIN_BYTES:
        return _lint_chunk(jobs)
    from concurrent.futures import ProcessPoolExecutor

    # Imported once here, so forked workers inherit it instead of each importing it.
    import libcst  # noqa: F401

    # Interleaved chunks spread the big files (sorted paths cluster them) over workers.
    chunks = [jobs[i :: workers * 4] for i in range(workers * 4)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        chunk_results = list(pool.map(_lint_chunk, chunks))
    out: list[list[Finding]] = [[] for _ in jobs]
    for offset, chunk in enumerate(chunk_results):
        for position, findings in enumerate(chunk):
            out[offset + position * workers * 4] = findings
    return out
