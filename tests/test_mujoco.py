"""MuJoCo backend: exact step from the model, one mj_step per boundary (C-GRID-1, C-GRID-4)."""

from __future__ import annotations

import re
from typing import Any

import pytest

mujoco = pytest.importorskip("mujoco")

from simclock.sim._grid import Policy  # noqa: E402
from simclock.sim._mujoco import MujocoClock, load_model  # noqa: E402

MS = 1_000_000


def _model(timestep: str = "0.002") -> Any:
    xml = f"""
    <mujoco>
      <option timestep="{timestep}"/>
      <worldbody>
        <body>
          <joint name="hinge" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1"/>
        </body>
      </worldbody>
      <keyframe><key name="start" qpos="0.7"/></keyframe>
    </mujoco>
    """
    return mujoco.MjModel.from_xml_string(xml)


def test_C_GRID_4_mujoco_timestep_0_002_is_exactly_2_000_000_ns() -> None:
    model = _model()
    assert repr(model.opt.timestep) == "0.002"
    assert MujocoClock(model, 0).step_ns() == 2_000_000
    assert MujocoClock(_model("0.0025"), 0).step_ns() == 2_500_000


def test_C_GRID_4_timestep_not_whole_ns_is_refused() -> None:
    with pytest.raises(
        ValueError,
        match=r"^model.opt.timestep = 1e-10 s is not a whole number of nanoseconds "
        r"\(1/10 ns\); refusing to round it$",
    ):
        MujocoClock(_model("1e-10"), 0)


def test_C_GRID_4_data_time_accumulates_float_error_our_clock_is_exact() -> None:
    """10 000 steps of 0.002 s: MuJoCo's float sum drifts, the integer clock does not."""
    clock = MujocoClock(_model(), 0)
    clock.advance(20_000_000_000)
    assert clock.steps == 10_000
    assert clock.now_ns() == 20_000_000_000
    # data.time is 10 000 IEEE-754 double additions of 0.002 (mj_step adds the
    # timestep): the same sum in Python floats predicts it to the last bit.
    expected = 0.0
    for _ in range(10_000):
        expected += 0.002
    assert clock.data.time == expected
    assert expected != 20.0


def test_C_GRID_1_one_mj_step_per_boundary_before_its_callbacks() -> None:
    clock = MujocoClock(_model(), 0, default_policy=Policy.NEXT_BOUNDARY)
    seen: list[tuple[int, int, float]] = []
    clock.schedule_periodic(
        7 * MS,
        lambda: seen.append((clock.now_ns() // MS, clock.steps, round(clock.data.time, 9))),
    )
    clock.advance(15 * MS)
    assert seen == [(0, 0, 0.0), (8, 4, 0.008), (14, 7, 0.014)]
    assert clock.steps == 7  # 15 ms: boundaries 2..14 crossed, 16 not yet
    clock.advance(1 * MS)
    assert clock.steps == 8


def test_reset_physics_restores_keyframe_and_never_moves_the_clock() -> None:
    clock = MujocoClock(_model(), 0, keyframe="start")
    clock.reset_physics()
    assert clock.data.qpos[0] == 0.7
    clock.advance(100 * MS)
    moved = float(clock.data.qpos[0])
    assert moved != 0.7
    clock.reset_physics()
    assert (float(clock.data.qpos[0]), clock.data.time, clock.now_ns()) == (0.7, 0.0, 100 * MS)


def test_model_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match=r"^keyframe 'nope' is not in the model; add <key"):
        MujocoClock(_model(), 0, keyframe="nope")
    with pytest.raises(ValueError, match=r"^cannot load MuJoCo model '/nonexistent.xml': "):
        load_model("/nonexistent.xml")
    with pytest.raises(TypeError, match=r"^model must be a mujoco.MjModel or a path"):
        MujocoClock(3, 0)


def test_argument_types_refused_with_simclock_errors() -> None:
    """Wrong types are named errors, not the binding's raw TypeError or a failure at step 1."""
    with pytest.raises(
        TypeError,
        match=r"^keyframe must be a str naming an object of the MJCF model, got int 3$",
    ):
        MujocoClock(_model(), 0, keyframe=3)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"^data must be a mujoco.MjData made from model, or None, got 3$"
    ):
        MujocoClock(_model(), 0, data=3)
    clock = MujocoClock(_model(), 0)
    for method in (clock.sensor_slice, clock.actuator):
        with pytest.raises(
            TypeError,
            match=r"^name must be a str naming an object of the MJCF model, got int 0$",
        ):
            method(0)  # type: ignore[arg-type]


def test_mujoco_is_imported_lazily_and_missing_package_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import subprocess
    import sys

    code = "import sys, simclock; print('mujoco' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"
    from simclock.core._extras import install_command

    monkeypatch.setitem(sys.modules, "mujoco", None)  # makes `import mujoco` raise ImportError
    with pytest.raises(
        RuntimeError,
        match=r"^the MuJoCo backend needs the 'mujoco' package \(.*\); "
        rf"install it with: {re.escape(install_command('mujoco'))}$",
    ):
        MujocoClock(_model(), 0)


def test_C_TIME_1_a_mujoco_clock_starts_at_start_ns_without_stepping_there() -> None:
    start = 2**60 // (2 * MS) * (2 * MS)  # a boundary of the 2 ms grid, ~36.6 years in
    clock = MujocoClock(_model(), 0, start_ns=start)
    assert (clock.now_ns(), clock.steps, clock.data.time) == (start, start // (2 * MS), start / 1e9)
    seen: list[tuple[int, int]] = []
    clock.schedule(start + 4 * MS, lambda: seen.append((clock.now_ns(), clock.steps)))
    clock.advance(6 * MS)
    # Three mj_steps from the start, not 2**59 / 1e6 of them on the way there.
    assert seen == [(start + 4 * MS, start // (2 * MS) + 2)]
    assert clock.steps == start // (2 * MS) + 3
    assert clock.data.time == pytest.approx(start / 1e9 + 0.006, rel=0, abs=1e-6)


def test_C_TIME_1_start_ns_off_the_grid_is_refused() -> None:
    with pytest.raises(
        ValueError,
        match=r"^start_ns=3 is not on the 2000000 ns grid; start at a multiple of step_ns$",
    ):
        MujocoClock(_model(), 0, start_ns=3)
    with pytest.raises(
        TypeError,
        match=r"^start_ns must be an int of nanoseconds, got float 2\.0; convert seconds "
        r"explicitly, e\.g\. simclock\.seconds_to_ns\(\.\.\.\)$",
    ):
        MujocoClock(_model(), 0, start_ns=2.0)  # type: ignore[arg-type]


def test_C_TIME_4_start_ns_beyond_mujocos_double_is_refused_before_the_bus_is_bound() -> None:
    from simclock import Bus

    bus = Bus()
    data = mujoco.MjData(_model())
    with pytest.raises(
        ValueError,
        match=r"^start_ns must fit MuJoCo's time, a double of seconds \(below ~1\.8e317 ns\), "
        r"got <int of 1329 bits>$",
    ):
        MujocoClock(_model(), 0, data=data, start_ns=10**400, bus=bus)
    assert bus.clock is None
    assert data.time == 0.0
    # A far start that a double holds is accepted (ns precision is the clock's, not MuJoCo's).
    far = (2**64 // 2_000_000 - 1) * 2_000_000
    clock = MujocoClock(_model(), 0, start_ns=far)
    assert (clock.now_ns(), clock.data.time) == (far, far / 10**9)
