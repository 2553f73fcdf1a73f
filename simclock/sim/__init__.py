"""Simulation on a physics grid: GridClock, devices, sessions, MuJoCo and TOML scenarios."""

from simclock.sim._devices import (
    ControllerSpec,
    ControllerStep,
    DeviceRead,
    Sample,
    SensorSpec,
)
from simclock.sim._grid import GridClock, Policy, StepHook
from simclock.sim._kinds import ControllerKind, KindParams, KindRun, SensorKind
from simclock.sim._mujoco import MujocoClock
from simclock.sim._scenario import RunResult, build_session, run_scenario
from simclock.sim._scenario_file import (
    ControllerConfig,
    DeviceConfig,
    PhysicsConfig,
    Scenario,
    ScenarioError,
    load_scenario,
)
from simclock.sim._session import Session, component_stream, episode_seed

__all__ = [
    "ControllerConfig",
    "ControllerKind",
    "ControllerSpec",
    "ControllerStep",
    "DeviceConfig",
    "DeviceRead",
    "GridClock",
    "KindParams",
    "KindRun",
    "MujocoClock",
    "PhysicsConfig",
    "Policy",
    "RunResult",
    "Sample",
    "Scenario",
    "ScenarioError",
    "SensorKind",
    "SensorSpec",
    "Session",
    "StepHook",
    "build_session",
    "component_stream",
    "episode_seed",
    "load_scenario",
    "run_scenario",
]

# Each public name reports its public namespace (simclock, simclock.lowlevel, ...).
from simclock.core._public import fixup_module_metadata

fixup_module_metadata("simclock.sim", globals(), __all__)
