"""Getting out of the stretch (issue 11 section 5), through the core Servo with an ideal arm at 500 Hz.

The demo's twist script up to the way back (a square, a tool rotation, 7 s pushing outward into the stretched
Panda, 2 s of the reverse twist) with config/panda_servo.yaml's settings. The arm is ideal: each tick's commanded
positions are the next measurement. Tool motion is FK of the commanded positions, along the commanded direction.
"""
from typing import NamedTuple

import numpy as np
import pytest
import yaml

from robokin_ros.core.servo.config import ServoConfig
from robokin_ros.core.servo.servo import Servo
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.core.servo.types import JointMeasurement, TwistCommand
from robokin_ros.demo.script import demo_phases
from robokin_ros.share_files import config_file

PUSH, BACK = "stretch outward", "back from stretch"

EscapeConfig = ServoConfig


class Run(NamedTuple):
    phase: np.ndarray          # (k,) phase name per tick
    positions: np.ndarray      # (k, n) commanded
    velocities: np.ndarray     # (k, n) commanded
    sigma: np.ndarray          # (k,)
    status: list               # (k,) ServoStatus
    dt: float


def demo_settings() -> dict:
    params = yaml.safe_load(config_file("panda_servo.yaml").read_text())["/**"]["ros__parameters"]
    return {"publish_period": params["publish_period"],
            "max_joint_acceleration": tuple(params["max_joint_acceleration"])}


def run_demo_script(robot, config) -> Run:
    phases = demo_phases()
    phases = phases[:[p.name for p in phases].index(BACK) + 1]
    servo, dt, now = Servo(robot, config), config.publish_period, 0.0
    servo.set_measurement(JointMeasurement(robot.home(), now))
    names, positions, velocities, sigma, status = [], [], [], [], []
    for phase in phases:
        frame = robot.tip_frame if phase.frame == "tool" else phase.frame
        linear, angular = np.array(phase.linear, float), np.array(phase.angular, float)
        for _ in range(round(phase.duration / dt)):
            now += dt
            servo.set_command(TwistCommand(linear, angular, frame, now))
            out = servo.step(now)
            servo.set_measurement(JointMeasurement(out.positions, now))
            names.append(phase.name)
            positions.append(out.positions)
            velocities.append(out.velocities)
            sigma.append(out.sigma_min)
            status.append(out.status)
    return Run(np.array(names), np.array(positions), np.array(velocities), np.array(sigma), status, dt)


@pytest.fixture(scope="module")
def runs(panda):
    """The script with the default settings, and with the escape switched off (the behaviour before it)."""
    return {"default": run_demo_script(panda, ServoConfig(**demo_settings())),
            "no escape": run_demo_script(panda, EscapeConfig(singularity_escape=False, **demo_settings()))}


def commanded_velocity(name: str) -> np.ndarray:
    phase = next(p for p in demo_phases() if p.name == name)
    return np.array(phase.linear) * ServoConfig().scale.linear               # (3,) [m/s], base axes


def tool_along(panda, run: Run, name: str):
    """(speed per tick [m/s], distance [m], largest distance off the commanded line [m]) during a phase."""
    k = np.flatnonzero(run.phase == name)
    tool = np.array([panda.fk(q).translation for q in run.positions[k[0] - 1:k[-1] + 1]])       # (m + 1, 3)
    axis = commanded_velocity(name) / np.linalg.norm(commanded_velocity(name))
    moved = tool - tool[0]
    along = moved @ axis
    off = np.linalg.norm(moved - np.outer(along, axis), axis=1)
    return np.diff(along) / run.dt, along[-1], off.max()


def test_the_push_goes_deep_and_the_escape_does_not_change_it(runs):
    before_back = np.flatnonzero(runs["default"].phase == BACK)[0]
    push_end = before_back - 1
    assert runs["default"].sigma[push_end] < 1e-3, "the set-up must reach deep into the stretch"
    np.testing.assert_array_equal(runs["default"].velocities[:before_back], runs["no escape"].velocities[:before_back])


def test_the_way_back_reaches_half_the_commanded_speed_within_half_a_second(panda, runs):
    speed, distance, _ = tool_along(panda, runs["default"], BACK)
    commanded = np.linalg.norm(commanded_velocity(BACK))
    reached = np.flatnonzero(speed >= 0.5 * commanded)
    assert len(reached) and (reached[0] + 1) * runs["default"].dt <= 0.5, f"first at {reached[:1]} ticks"
    later = speed[round(0.5 / runs["default"].dt):]
    assert np.median(later) >= 0.95 * commanded, "the way back reaches the commanded speed"
    assert distance >= 0.75 * commanded * 2.0, f"{distance * 1e3:.1f} mm back in 2 s"


def test_without_the_escape_the_way_back_crawls(panda, runs):
    """Control for the test above: the damped solve alone stays deep in the stretch."""
    speed, distance, _ = tool_along(panda, runs["no escape"], BACK)
    commanded = np.linalg.norm(commanded_velocity(BACK))
    assert speed[:round(0.5 / runs["no escape"].dt)].max() < 0.5 * commanded
    assert distance < 0.25 * commanded * 2.0


def test_the_way_back_follows_the_commanded_line(panda, runs):
    """Damping alone turns the reverse twist into mostly sideways motion (the undamped part of the command);
    the escape keeps the tool near the commanded line."""
    assert tool_along(panda, runs["default"], BACK)[2] < 0.01
    assert tool_along(panda, runs["no escape"], BACK)[2] > 0.03


def test_push_and_way_back_stay_within_the_acceleration_limits(panda, runs):
    run = runs["default"]
    amax = np.array(demo_settings()["max_joint_acceleration"])
    k = np.flatnonzero(np.isin(run.phase, (PUSH, BACK)))
    jumps = np.abs(run.velocities[k] - run.velocities[k - 1]) / (amax * run.dt)             # (m, n)
    assert jumps.max() <= 1.0 + 1e-6, f"joint {np.unravel_index(jumps.argmax(), jumps.shape)[1] + 1}"
    assert ServoStatus.HALT_FOR_SINGULARITY not in [run.status[i] for i in k]
    speed, _, _ = tool_along(panda, run, PUSH)
    commanded = np.linalg.norm(commanded_velocity(PUSH))
    # along the command, not to zero: the tool keeps sliding along the boundary with the command's tangential part
    assert speed[:round(1.0 / run.dt)].max() > 0.9 * commanded and abs(speed[-1]) < 0.2 * commanded, \
        "the push runs at the commanded speed, then slows down at the boundary"
