"""MuJoCo backend: a `GridClock` that steps an MJCF model (extra ``mujoco``).

``MujocoClock(model, seed)`` takes its step from ``model.opt.timestep`` through
`simclock.seconds_to_ns` (C-GRID-4: MuJoCo's float ``0.002`` goes
through its shortest ``repr`` to exactly 2 000 000 ns; a timestep that is not
a whole number of ns, such as ``1e-10``, is refused). Each boundary crossed
runs exactly one ``mujoco.mj_step`` before that boundary's callbacks
(C-GRID-1), so a callback at ``k*s`` sees the state after ``k`` steps.

Simulated time is the integer ``now_ns()``; MuJoCo's ``data.time`` is never
read as the clock. It is a float sum of ``timestep`` and drifts: 10 000 steps of
0.002 s leave ``data.time == 19.999999999999794`` while ``now_ns()`` is exactly
``20_000_000_000``.

``mujoco`` is imported lazily, on first use, so ``import simclock`` works
without the extra; a missing package is a ``SimclockRuntimeError`` saying
the ``mujoco`` extra.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

from simclock.core._bus import Bus
from simclock.core._errors import SimclockRuntimeError, SimclockTypeError, SimclockValueError
from simclock.core._kernels import Forward, SliceReader, StepHook
from simclock.core._names import safe_repr
from simclock.core._random import SeededRandomSource
from simclock.core._timeint import check_time_ns, seconds_to_ns
from simclock.sim._grid import GridClock, Policy

__all__ = [
    "MujocoClock",
    "actuator_of",
    "compiled_model",
    "import_mujoco",
    "keyframe_id",
    "load_model",
    "model_step_ns",
    "sensor_range",
]


def import_mujoco() -> ModuleType:
    """The ``mujoco`` module, or ``SimclockRuntimeError`` telling how to install it."""
    try:
        mujoco: ModuleType = importlib.import_module("mujoco")
    except ImportError as exc:
        from simclock.core._extras import install_command

        raise SimclockRuntimeError(
            f"the MuJoCo backend needs the 'mujoco' package ({exc}); "
            f"install it with: {install_command('mujoco')}"
        ) from None
    return mujoco


def load_model(path: str | os.PathLike[str]) -> Any:
    """Load an MJCF file into an ``MjModel``; ``ValueError`` naming the file if it fails."""
    if not isinstance(path, str | os.PathLike):
        raise SimclockTypeError(f"path must be a str or os.PathLike, got {safe_repr(path)}")
    text = os.fspath(path)
    # Checked before MuJoCo sees it: its loader takes seconds to refuse a 100 kB path.
    if not isinstance(text, str) or len(text) > _MAX_PATH:
        raise SimclockValueError(
            f"path must be a str of at most {_MAX_PATH} characters, got {safe_repr(text)}"
        )
    mujoco = import_mujoco()
    try:
        return mujoco.MjModel.from_xml_path(text)
    except (ValueError, OSError) as exc:
        raise SimclockValueError(
            f"cannot load MuJoCo model {safe_repr(text)}: {str(exc).strip()}"
        ) from None


_MAX_PATH = 4096  # PATH_MAX on Linux
_MAX_COMPILED = 16
# path -> ((mtime_ns, size, inode), MjModel): see compiled_model.
_COMPILED: dict[str, tuple[tuple[int, int, int], Any]] = {}


def compiled_model(path: str | os.PathLike[str]) -> Any:
    """The ``MjModel`` of the MJCF file at ``path``, compiled once per process (shared).

    A scenario's sessions (every seed of a sweep on a worker) share it: parsing
    and compiling the MJCF costs more than a short run. The file is compiled
    again when its modification time, size or inode changes (files pulled
    in with ``<include>`` are not watched). The model is shared: treat it as
    read-only (``copy.copy`` it to change it). Errors as `load_model`.
    At most 16 files are kept, the oldest dropped first.
    """
    if not isinstance(path, str | os.PathLike):
        raise SimclockTypeError(f"path must be a str or os.PathLike, got {safe_repr(path)}")
    text = os.fspath(path)
    try:
        st = os.stat(text)
    except (OSError, ValueError, TypeError):
        return load_model(path)  # the error, worded by load_model
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    hit = _COMPILED.get(text) if isinstance(text, str) else None
    if hit is not None and hit[0] == key:
        return hit[1]
    model = load_model(path)
    _COMPILED.pop(text, None)
    while len(_COMPILED) >= _MAX_COMPILED:
        del _COMPILED[next(iter(_COMPILED))]
    _COMPILED[str(text)] = (key, model)
    return model


def model_step_ns(model: Any) -> int:
    """``model.opt.timestep`` as exact int ns (C-GRID-4); ``ValueError`` if 0 or inexact."""
    step = seconds_to_ns(model.opt.timestep, "model.opt.timestep")
    if step == 0:
        raise SimclockValueError("model.opt.timestep must be > 0 s, got 0.0")
    return step


def keyframe_id(model: Any, keyframe: str) -> int:
    """The id of keyframe ``keyframe``; ``TypeError``/``ValueError`` if it is not in the model."""
    mujoco = import_mujoco()
    _check_name(keyframe, "keyframe")
    key_id = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, keyframe))
    if key_id < 0:
        raise SimclockValueError(
            f"keyframe {safe_repr(keyframe)} is not in the model; "
            f"add <key name={safe_repr(keyframe)}> "
            "to the MJCF or drop keyframe"
        )
    return key_id


def object_id(model: Any, kind: str, name: object, count: int) -> int:
    """The id of the model's ``kind`` (``sensor``, ``actuator``) called ``name``.

    ``TypeError`` for a name that is not a ``str``; ``ValueError`` naming
    the model's objects of that kind when there is none by that name.
    """
    _check_name(name, "name")
    mujoco = import_mujoco()
    found = int(mujoco.mj_name2id(model, getattr(mujoco.mjtObj, f"mjOBJ_{kind.upper()}"), name))
    if found < 0:
        names = [getattr(model, kind)(i).name for i in range(count)]
        raise SimclockValueError(
            f"{kind} {safe_repr(name)} is not in the MuJoCo model; it has {names}"
        )
    return found


def sensor_range(model: Any, name: str) -> tuple[int, int]:
    """``(start, stop)`` of sensor ``name`` in ``data.sensordata``; ``ValueError`` if absent."""
    sensor_id = object_id(model, "sensor", name, model.nsensor)
    start = int(model.sensor_adr[sensor_id])
    return start, start + int(model.sensor_dim[sensor_id])


def actuator_of(model: Any, name: str) -> tuple[int, float | None, float | None]:
    """``(index, low, high)`` of actuator ``name``; bounds ``None`` unless ctrl-limited."""
    act = object_id(model, "actuator", name, model.nu)
    if not bool(model.actuator_ctrllimited[act]):
        return act, None, None
    low, high = (float(x) for x in model.actuator_ctrlrange[act])
    return act, low, high


class MujocoClock(GridClock):
    """A grid clock whose step is ``model.opt.timestep`` and whose ``on_step`` is ``mj_step``.

    ``MujocoClock(model, seed, *, data=None, keyframe=None, bus=None,
    default_policy="strict", start_ns=0)``: ``model`` is an ``MjModel`` or a
    path to an MJCF file; ``data`` defaults to a fresh ``MjData``; ``keyframe``
    names a keyframe that `reset_physics` restores (else the model's
    defaults). The clock starts at ``start_ns`` (a boundary, C-TIME-1) with the
    physics as given; a start other than 0 also sets ``data.time`` to
    ``start_ns / 1e9``, MuJoCo's float view of it (never read back as the
    clock). Starting at a far instant is how a far time is reached without
    one ``mj_step`` per boundary on the way. Everything else is
    [`GridClock`][simclock.GridClock]: one ``mj_step`` per boundary, before the
    callbacks of that boundary.
    """

    def __init__(
        self,
        model: Any,
        seed: int,
        *,
        data: Any = None,
        keyframe: str | None = None,
        bus: Bus | None = None,
        default_policy: Policy | str = Policy.STRICT,
        start_ns: int = 0,
    ) -> None:
        mujoco = import_mujoco()
        if isinstance(model, str | os.PathLike):
            model = load_model(model)
        if not isinstance(model, mujoco.MjModel):
            raise SimclockTypeError(
                f"model must be a mujoco.MjModel or a path to an MJCF file, got {safe_repr(model)}"
            )
        step = model_step_ns(model)
        if data is not None and not isinstance(data, mujoco.MjData):
            raise SimclockTypeError(
                f"data must be a mujoco.MjData made from model, or None, got {safe_repr(data)}"
            )
        key_id = -1 if keyframe is None else keyframe_id(model, keyframe)
        start = check_time_ns(start_ns, "start_ns")
        try:
            # int / int is correctly rounded and overflows only past ~1.8e317 ns.
            seconds = start / 1_000_000_000
        except OverflowError:
            # MuJoCo keeps its time in a double: refuse here, before the bus is bound.
            raise SimclockValueError(
                f"start_ns must fit MuJoCo's time, a double of seconds (below ~1.8e317 ns), "
                f"got {safe_repr(start_ns)}"
            ) from None
        self._mujoco = mujoco
        self.model = model
        """The ``MjModel``."""
        self.data = mujoco.MjData(model) if data is None else data
        """The ``MjData`` stepped once per boundary."""
        self._key_id = key_id
        super().__init__(
            seed,
            step,
            start_ns=start,
            bus=bus,
            default_policy=default_policy,
            # A compiled hook, not a method: it runs at every boundary.
            on_step=StepHook(mujoco.mj_step, model, self.data),
        )
        # The compiled core's now_ns, bound once: forward() asks it at every sensor read.
        self._now = self._inner.now_ns
        # mj_forward at most once per instant, shared by forward() and every sensor reader.
        self._forward = Forward(self._now, mujoco.mj_forward, model, self.data)
        if start:
            self.data.time = seconds

    def forward(self) -> None:
        """Make derived quantities (``sensordata``) match the current state, once per boundary.

        ``mj_step`` evaluates sensors *before* integrating, so after it
        ``sensordata`` describes the previous boundary; a sensor read at
        boundary ``k`` calls this first. ``mj_forward`` does not change the
        state, and it runs at most once per boundary.
        """
        self._forward()

    def _sensor_reader(
        self, start: int, stop: int, noise_std: float, dim: int
    ) -> Callable[[SeededRandomSource], tuple[float, ...]]:
        """Library API: ``read(noise)``, the values of ``sensordata[start:stop]`` at this boundary.

        A compiled `SliceReader` sharing the clock's `forward`: ``mj_forward``
        at most once per instant. With ``noise_std > 0`` each value is
        ``value + draw``, ``dim == stop - start`` normals drawn with
        ``_normal_checked`` (the caller checked ``noise_std`` and ``dim``).
        The values are a tuple of Python floats.
        """
        # The MjData's buffer never moves: one bound item() for the whole session.
        return SliceReader(self._forward, self.data.sensordata.item, start, stop - start, noise_std)

    def sensor_slice(self, name: str) -> slice:
        """Where sensor ``name`` lives in ``data.sensordata``; ``ValueError`` if absent."""
        return slice(*sensor_range(self.model, name))

    def actuator(self, name: str) -> tuple[int, float | None, float | None]:
        """``(index, low, high)`` of actuator ``name``; bounds ``None`` unless ctrl-limited.

        ``ValueError`` naming the model's actuators if there is none by that name.
        """
        return actuator_of(self.model, name)

    def read_sensor(self, name: str) -> tuple[float, ...]:
        """The current values of sensor ``name`` at this boundary (see `forward`)."""
        where = self.sensor_slice(name)
        self.forward()
        return tuple(float(v) for v in self.data.sensordata[where])

    def reset_physics(self) -> None:
        """Restore the initial state (the keyframe if given); the clock does not move.

        Used by [`Session`][simclock.Session] at each episode start (C-EP-1):
        ``data.time`` goes back to the keyframe's time, ``now_ns()`` does not.
        """
        if self._key_id >= 0:
            self._mujoco.mj_resetDataKeyframe(self.model, self.data, self._key_id)
        else:
            self._mujoco.mj_resetData(self.model, self.data)
        self._mujoco.mj_forward(self.model, self.data)
        self._forward.at = self._now()


def _check_name(name: object, argument: str) -> None:
    """A MuJoCo object name must be a ``str``: refused here, not by the binding's raw error."""
    if not isinstance(name, str):
        raise SimclockTypeError(
            f"{argument} must be a str naming an object of the MJCF model, got "
            f"{type(name).__name__} {safe_repr(name)}"
        )
