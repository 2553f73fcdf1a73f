"""Seeded, labelled random streams (SPEC §2, C-RNG-1..5).

Derivation (C-RNG-2): the stream at label path ``/a/b`` is
``numpy.random.Generator(PCG64(SeedSequence(seed, spawn_key=K)))`` where ``K`` is
four big-endian 32-bit words of ``blake2b(DOMAIN + path)``. It depends only on
the root seed and the full path, never on Python's salted ``hash``, on the order
children were made, or on draws from other streams (C-RNG-4). Changing
``DOMAIN`` or the digest changes every number; it is versioned for that reason.
"""

from __future__ import annotations

import hashlib
import math
import operator
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from simclock.core._errors import SimclockTypeError, SimclockValueError
from simclock.core._names import safe_repr
from simclock.core._numpy import is_numpy_bool, is_numpy_floating, is_numpy_integer
from simclock.core._readonly import ReadOnly

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DrawObserver",
    "LabelledStream",
    "SeededRandomSource",
    "check_bounds",
    "check_real",
    "check_seed",
    "check_sigma",
    "check_size",
    "derive_spawn_key",
    "normalise_label",
]

DOMAIN = b"simclock.random_source.v1\x00"
_SEGMENT = re.compile(r"[A-Za-z0-9_.-]+")

DrawObserver = Callable[[str, str, tuple[Any, ...], Any], None]
"""Called after every draw as ``observer(label, method, args, value)``."""


def normalise_label(parent: str, label: object) -> str:
    """Join ``label`` onto ``parent`` and return the absolute path (C-RNG-3).

    A leading ``/`` is optional and always relative to ``parent``:
    ``child("a").child("b")``, ``child("a/b")`` and ``child("/a/b")`` are the
    same stream. Empty segments, whitespace and characters outside
    ``[A-Za-z0-9_.-]`` raise ``ValueError``; a non-``str`` raises ``TypeError``.
    """
    if not isinstance(label, str):
        raise SimclockTypeError(
            f"label must be a str, got {type(label).__name__} {safe_repr(label)}"
        )
    body = label[1:] if label.startswith("/") else label
    segments = body.split("/")
    for segment in segments:
        if not _SEGMENT.fullmatch(segment):
            raise SimclockValueError(
                f"label {safe_repr(label)} is malformed: segments must be non-empty and use only "
                "[A-Za-z0-9_.-], e.g. '/sensors/imu0/noise'"
            )
    prefix = "" if parent == "/" else parent
    return prefix + "/" + "/".join(segments)


def derive_spawn_key(path: str) -> tuple[int, ...]:
    """Stable 4-word spawn key of a label path (C-RNG-2), these exact words (C-X-BITS)."""
    digest = hashlib.blake2b(DOMAIN + path.encode("ascii"), digest_size=16).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "big") for i in range(0, 16, 4))


def check_seed(seed: object) -> int:
    """``seed`` as an ``int >= 0`` (``int`` or numpy integer, never ``bool``), or refused (C-RNG-1).

    The one seed check of the library: clocks, the recorder, sessions and
    scenarios call it where a seed is handed over.
    """
    if isinstance(seed, bool) or not (isinstance(seed, int) or is_numpy_integer(seed)):
        raise SimclockTypeError(f"seed must be an int, got {type(seed).__name__} {safe_repr(seed)}")
    value = operator.index(seed)
    if value < 0:
        raise SimclockValueError(f"seed must be >= 0, got {safe_repr(value)}")
    return value


# A draw of more elements than this is refused before numpy allocates: size=10**12
# would be a MemoryError after the call had already been judged valid.
MAX_DRAW_ELEMENTS = 1 << 27
# numpy's integers() draws int64: bounds outside it are refused before any draw.
_INT64_MIN = -(1 << 63)
_INT64_END = 1 << 63


def check_real(value: object, name: str) -> float:
    """A finite real parameter of a distribution (``int``/``float``/numpy scalar), as float.

    Checked before the draw: numpy would broadcast an array-like (drawing
    first), overflow on 10**400, or return NaN for a NaN parameter. No clause
    decides which arguments a draw refuses (the clauses draw with valid ones).
    """
    if (
        isinstance(value, bool)
        or is_numpy_bool(value)
        or not (
            isinstance(value, int | float) or is_numpy_integer(value) or is_numpy_floating(value)
        )
    ):
        raise SimclockTypeError(
            f"{name} must be a real number (int or float), got {type(value).__name__} "
            f"{safe_repr(value)}; draw arrays with size=..."
        )
    try:
        result = float(value)
    except OverflowError:
        result = math.inf
    if not math.isfinite(result):
        raise SimclockValueError(f"{name} must be finite, got {safe_repr(value)}")
    return result


def check_size(size: object) -> int | tuple[int, ...] | None:
    """``size`` of a draw: None, an int or a tuple of ints, at most ``MAX_DRAW_ELEMENTS``.

    No clause decides which arguments a draw refuses (the clauses draw with valid
    ones).
    """
    if size is None:
        return None
    if type(size) is int:
        dims: tuple[int, ...] = (size,)
    elif type(size) is tuple and all(type(n) is int for n in size):
        dims = size
    else:
        raise SimclockTypeError(
            f"size must be an int, a tuple of ints or None, got {safe_repr(size)}"
        )
    total = 1
    for n in dims:
        if n < 0:
            raise SimclockValueError(f"size must not be negative, got {safe_repr(size)}")
        # Bounded per factor, so the product of a 10**400 dimension is never formed.
        total = min(total * min(n, MAX_DRAW_ELEMENTS + 1), MAX_DRAW_ELEMENTS + 1)
    if total > MAX_DRAW_ELEMENTS:
        raise SimclockValueError(
            f"size must hold at most {MAX_DRAW_ELEMENTS} elements, got {safe_repr(size)}; "
            "draw in smaller batches"
        )
    return size


def check_sigma(sigma: object) -> None:
    """``sigma`` of ``normal``: finite and ``>= 0``.

    No clause decides which arguments a draw refuses (the clauses draw with valid ones).
    """
    # numpy's own refusal ("scale < 0") names neither the argument nor the value.
    if check_real(sigma, "sigma") < 0:
        raise SimclockValueError(f"sigma must be >= 0, got {safe_repr(sigma)}")


def check_bounds(low: object, high: object) -> None:
    """``integers`` bounds: ints (numpy ints too), ``low < high``; a float is never truncated.

    No clause decides which arguments a draw refuses (the clauses draw with valid ones).
    """
    for name, value in (("low", low), ("high", high)):
        if isinstance(value, bool) or not (isinstance(value, int) or is_numpy_integer(value)):
            raise SimclockTypeError(
                f"{name} must be an int, got {type(value).__name__} {safe_repr(value)}; "
                "integers() draws from [low, high) with int bounds"
            )
    lo, hi = operator.index(low), operator.index(high)  # type: ignore[arg-type]
    if not lo < hi:
        raise SimclockValueError(
            f"high must be > low (high is exclusive), got low={safe_repr(low)}, "
            f"high={safe_repr(high)}"
        )
    if lo < _INT64_MIN or hi > _INT64_END:
        raise SimclockValueError(
            f"integers() draws int64: need -2**63 <= low < high <= 2**63, got "
            f"low={safe_repr(low)}, high={safe_repr(high)}"
        )


class LabelledStream:
    """What every stream of the tree shows: its root seed and its label path (C-RNG-1, C-RNG-3).

    The base of `SeededRandomSource` and of the replayed stream
    (``ReplayRandomSource``); a subclass sets ``_seed`` and ``_label``.
    """

    __slots__ = ("_label", "_seed")

    _seed: int
    _label: str

    seed = ReadOnly[int]("_seed", "The root (scenario) seed this stream derives from.")

    label = ReadOnly[str]("_label", "The absolute label path, ``/`` for the root.")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self._seed}, label={safe_repr(self._label)})"


class SeededRandomSource(LabelledStream):
    """A random stream labelled by its path in the tree of streams (SPEC §2).

    ``SeededRandomSource(seed)`` is the root, label ``/`` (C-RNG-1). Scalar draws
    return Python ``float``/``int``; with ``size`` they return numpy arrays.
    ``numpy_rng()`` returns the same ``Generator`` every call (C-RNG-5); draws
    made on it directly bypass the ``observer``.
    """

    __slots__ = ("_gen", "_observer")

    def __init__(
        self, seed: int, label: str = "/", *, observer: DrawObserver | None = None
    ) -> None:
        self._seed = check_seed(seed)
        if observer is not None and not callable(observer):
            raise SimclockTypeError(
                f"observer must be callable as observer(label, method, args, value) or None, "
                f"got {type(observer).__name__} {safe_repr(observer)}"
            )
        # isinstance first: a str subclass's (or any object's) __eq__ never runs here.
        self._label = "/" if type(label) is str and label == "/" else normalise_label("/", label)
        self._observer = observer
        # numpy is loaded with the first stream, not with ``import simclock``.
        import numpy as np

        seq = np.random.SeedSequence(self._seed, spawn_key=derive_spawn_key(self._label))
        self._gen = np.random.Generator(np.random.PCG64(seq))

    def child(self, label: str) -> SeededRandomSource:
        """The stream at ``self.label + '/' + label`` (C-RNG-2, C-RNG-3).

        O(len(label)); makes a new independent generator each call, so two calls
        with the same label give two objects producing the same numbers.
        """
        path = normalise_label(self._label, label)
        return SeededRandomSource(self._seed, path, observer=self._observer)

    def _emit(self, method: str, args: tuple[Any, ...], value: Any) -> None:
        if self._observer is not None:
            self._observer(self._label, method, args, value)

    def uniform(self, a: float, b: float) -> float:
        """One float from ``[a, b)``.

        ``a``/``b`` are finite real scalars (``TypeError`` for an array-like,
        ``ValueError`` for NaN, infinities or 10**400); a refused call draws nothing.
        """
        low, high = check_real(a, "a"), check_real(b, "b")
        # numpy refuses b < a (and an overflowing b - a) only inside the draw call.
        if not (low <= high and math.isfinite(high - low)):
            raise SimclockValueError(
                f"uniform needs a <= b with a finite b - a, got a={safe_repr(a)}, b={safe_repr(b)}"
            )
        value = float(self._gen.uniform(a, b))
        self._emit("uniform", (a, b), value)
        return value

    def normal(self, mu: float, sigma: float, size: int | tuple[int, ...] | None = None) -> Any:
        """Normal draws: a ``float`` when ``size`` is None, else an ndarray.

        ``mu``/``sigma`` are finite real scalars, ``sigma < 0`` is a ``ValueError``;
        ``size`` holds at most ``MAX_DRAW_ELEMENTS``; a refused call draws nothing.
        """
        check_real(mu, "mu")
        check_sigma(sigma)
        return self._draw("normal", float, (mu, sigma), check_size(size))

    def _normal_checked(self, mu: float, sigma: float, size: int) -> Any:
        """Library API: `normal` for arguments the caller checked once (a sensor's noise).

        ``mu``/``sigma`` finite floats with ``sigma >= 0``, ``size`` an int in
        ``[0, MAX_DRAW_ELEMENTS]``: the same draws and the same observer call
        as ``normal(mu, sigma, size=size)``, without checking them per draw.
        """
        value = self._gen.normal(mu, sigma, size)
        if self._observer is not None:
            self._observer(self._label, "normal", (mu, sigma, size), value)
        return value

    def integers(self, low: int, high: int, size: int | tuple[int, ...] | None = None) -> Any:
        """Integers in ``[low, high)``: an ``int`` when ``size`` is None, else an ndarray.

        ``low``/``high`` must be ints (``TypeError``; a float is not truncated)
        with ``low < high`` (``ValueError``); a refused call draws nothing.
        """
        check_bounds(low, high)
        return self._draw("integers", int, (low, high), check_size(size))

    def _draw(
        self,
        method: str,
        scalar: Callable[[Any], Any],
        args: tuple[Any, ...],
        shape: int | tuple[int, ...] | None,
    ) -> Any:
        """``generator.<method>(*args)`` as a Python scalar, or an ndarray of ``shape``.

        (C-RNG-1 for the root's values, C-RNG-2 for a child's, C-RNG-4: a draw
        changes no other stream; C-X-BITS: the values themselves.)
        """
        draw = getattr(self._gen, method)
        value = scalar(draw(*args)) if shape is None else draw(*args, size=shape)
        self._emit(method, (*args, shape), value)
        return value

    def numpy_rng(self) -> np.random.Generator:
        """The stream's own ``Generator``, the same object on every call (C-RNG-5)."""
        return self._gen
