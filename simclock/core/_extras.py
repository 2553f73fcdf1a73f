"""The optional parts of simclock and the one error for a missing one.

The base install is what the clock, recording/replay, the CLI and the linter
need; each other job is an extra of the distribution. A job whose extra is
missing says so in one line, as a ``SimclockRuntimeError`` (the CLI prints it
and exits 2), with the pip command that installs it (`install_command`).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["EXTRAS", "install_command", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "sweep": ("dask", "distributed", "pyarrow", "cloudpickle"),
    "plot": ("matplotlib",),
    "mujoco": ("mujoco",),
    "conformance": ("pytest", "hypothesis"),
    "live": ("foxglove",),
    "mavlink": ("pymavlink",),
}
"""Each extra -> the import names it provides (pyproject's optional-dependencies)."""


def require_extra(extra: str, what: str) -> None:
    """Raise ``SimclockRuntimeError`` naming ``extra`` if one of its modules is missing.

    ``what`` names the job in the message ("simclock sweep", "plotting a
    timeline"). Costs one finder look-up per module, no import.
    """
    from simclock.core._errors import SimclockRuntimeError

    missing = [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if missing:
        raise SimclockRuntimeError(
            f"{what} needs the {extra!r} extra, which is not installed (missing: "
            f"{', '.join(missing)}); install it with: {install_command(extra)}"
        )


def install_command(extra: str) -> str:
    """``pip install ...`` that adds ``extra`` to the simclock that is running, as written.

    No package index has simclock, so the command names where this simclock
    came from: the directory or wheel it was installed from (PEP 610's
    ``direct_url.json``: ``pip install "/clone[extra]"``, ``pip install
    "simclock[extra] @ file:///.../simclock-X-py3-none-any.whl"``), else the
    clone it runs from (a ``pyproject.toml`` beside the package), else
    ``/path/to/simclock`` for the user's clone.
    """
    source = _installed_from() or _clone()
    if source is not None and source.endswith(".whl"):
        return f'pip install "simclock[{extra}] @ {Path(source).as_uri()}"'
    return f'pip install "{source or "/path/to/simclock"}[{extra}]"'


def _installed_from() -> str | None:
    """The local directory or wheel the installed distribution came from, if pip recorded it."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution("simclock").read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    try:
        url = urlparse(str(json.loads(text or "{}").get("url", "")))
    except (ValueError, AttributeError):
        return None
    if url.scheme != "file":
        return None
    path = unquote(url.path)
    return path if os.path.exists(path) else None


def _clone() -> str | None:
    """The clone this simclock runs from (its ``pyproject.toml`` names simclock), if any."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return str(root) if 'name = "simclock"' in text else None
