"""The optional parts of simclock and the one error for a missing one.

The base install is what the clock, recording/replay, the CLI and the linter
need; each other job is an extra of the distribution (``pip install
'simclock[sweep]'``). A job whose extra is missing says so in one line, as a
``SimclockRuntimeError`` (the CLI prints it and exits 2).
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRAS", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "sweep": ("dask", "distributed", "pyarrow", "cloudpickle"),
    "plot": ("matplotlib",),
    "mujoco": ("mujoco",),
    "conformance": ("pytest", "hypothesis"),
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
            f"{', '.join(missing)}); install it with: pip install 'simclock[{extra}]'"
        )
