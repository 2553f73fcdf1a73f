"""Run a module again in a child Python process with another ``PYTHONHASHSEED``.

The one child runner of the library: the sweep audit (C-SWEEP-4) and the
conformance suite's cross-process determinism clauses both ask "does this
give the same result in a process whose ``hash()`` salt differs?". The child
is ``sys.executable -m MODULE ARGS...`` with this process's ``sys.path`` as
its ``PYTHONPATH`` (so it imports the same code) and ``PYTHONHASHSEED`` set.
A child that fails is reported with evidence (what it was doing, the seed,
its exit status or signal, the tail of its stderr), never with a traceback of
this process; one that does not finish in time is killed and reported the
same way.
"""

from __future__ import annotations

import importlib.util
import math
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr

__all__ = ["SimclockChildError", "run_in_child"]

_TAIL_LINES = 5
_TAIL_CHARS = 2000


class SimclockChildError(SimclockRuntimeError):
    """A child process of `run_in_child` failed, crashed or timed out.

    ``returncode`` is its exit status (negative: killed by that signal; ``None``
    when it was killed for the timeout) and ``stderr_tail`` the last lines of
    what it wrote on stderr.
    """

    def __init__(self, message: str, returncode: int | None, stderr_tail: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


def _tail(data: bytes | str | None) -> str:
    if data is None:
        return ""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    lines = text.strip().splitlines()[-_TAIL_LINES:]
    return " / ".join(line.strip() for line in lines)[-_TAIL_CHARS:]


def _status(returncode: int) -> str:
    if returncode >= 0:
        return f"exit status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"killed by {name}"


def run_in_child(
    module: str,
    args: Sequence[str] = (),
    *,
    hash_seed: int,
    what: str,
    stdin: bytes = b"",
    timeout_s: float = 120.0,
    cwd: str | os.PathLike[str] | None = None,
) -> bytes:
    """Run ``python -m module *args`` with ``PYTHONHASHSEED=hash_seed``; return its stdout.

    ``what`` names the work in messages (``"audit run of seed 3"``). ``stdin``
    is fed to the child; ``cwd`` is its working directory (default: this
    one). A non-zero exit raises `SimclockChildError` naming ``what``,
    the seed, the exit status or signal and the tail of the child's stderr;
    so does a child still running after ``timeout_s`` seconds (it is killed
    first). Bad arguments are ``TypeError``/``ValueError`` before anything runs.
    """
    if not isinstance(module, str) or not module.replace(".", "").replace("_", "").isalnum():
        raise SimclockValueError(f"module must be a dotted module name, got {safe_repr(module)}")
    if not isinstance(args, list | tuple) or not all(type(a) is str for a in args):
        raise SimclockTypeError(f"args must be a list or tuple of str, got {safe_repr(args)}")
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise SimclockValueError(
            f"module {safe_repr(module)} cannot be found on this sys.path; the child imports "
            "with the same path, so name an importable module"
        )
    if isinstance(hash_seed, bool) or not isinstance(hash_seed, int):
        raise SimclockTypeError(f"hash_seed must be an int, got {safe_repr(hash_seed)}")
    if not 0 <= hash_seed <= 4294967295:
        raise SimclockValueError(
            f"hash_seed must be in 0..4294967295 (PYTHONHASHSEED), got {hash_seed}"
        )
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float):
        raise SimclockTypeError(
            f"timeout_s must be a number of seconds, got {safe_repr(timeout_s)}"
        )
    if not (1 <= timeout_s < 2**53 and math.isfinite(timeout_s)):
        raise SimclockValueError(
            f"timeout_s must be a finite number >= 1 (a Python child needs time to start), "
            f"got {safe_repr(timeout_s)}"
        )
    if cwd is not None and not (isinstance(cwd, str | os.PathLike) and os.path.isdir(cwd)):
        raise SimclockValueError(f"cwd must be None or an existing directory, got {safe_repr(cwd)}")
    if not isinstance(what, str):
        raise SimclockTypeError(f"what must be a str, got {safe_repr(what)}")
    if not isinstance(stdin, bytes):
        raise SimclockTypeError(f"stdin must be bytes, got {safe_repr(stdin)}")
    env = dict(os.environ)
    # Absolute: the child may run in another directory (cwd) and must import the same code.
    paths = [os.path.abspath(p) for p in sys.path if p and os.path.isdir(p)]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONHASHSEED"] = str(hash_seed)
    where = f"{what} in a child process (python -m {module}, PYTHONHASHSEED={hash_seed})"
    try:
        proc = subprocess.run(
            [sys.executable, "-m", module, *args],
            input=stdin,
            capture_output=True,
            env=env,
            check=False,
            timeout=timeout_s,
            cwd=Path(cwd) if cwd is not None else None,
        )
    except subprocess.TimeoutExpired as exc:
        tail = _tail(exc.stderr)
        raise SimclockChildError(
            f"{where} did not finish within {timeout_s:g} s and was killed; "
            f"stderr: {tail or '(empty)'}",
            None,
            tail,
        ) from None
    if proc.returncode != 0:
        tail = _tail(proc.stderr)
        raise SimclockChildError(
            f"{where} failed ({_status(proc.returncode)}); stderr: {tail or '(empty)'}",
            proc.returncode,
            tail,
        )
    return proc.stdout
