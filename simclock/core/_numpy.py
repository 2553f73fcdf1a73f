"""numpy's scalar types, asked of a value without importing numpy.

``import simclock`` does not load numpy (it is most of an import's cost): the
clock loads it when a random stream is first made. Until then no value can be
a numpy scalar, so a check that finds numpy not loaded answers False, and
answers exactly like ``isinstance(value, numpy.integer)`` once it is.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    import numpy as np

__all__ = ["is_numpy_bool", "is_numpy_floating", "is_numpy_integer"]


def is_numpy_integer(value: object) -> TypeGuard[np.integer[Any]]:
    """``isinstance(value, numpy.integer)``, False while numpy is not loaded."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.integer)


def is_numpy_bool(value: object) -> TypeGuard[np.bool_]:
    """``isinstance(value, numpy.bool_)``, False while numpy is not loaded."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.bool_)


def is_numpy_floating(value: object) -> TypeGuard[np.floating[Any]]:
    """``isinstance(value, numpy.floating)``, False while numpy is not loaded."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.floating)
