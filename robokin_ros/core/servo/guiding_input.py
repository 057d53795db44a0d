"""The hand-guiding input of the servo: the admittance (admittance.py) with the sensor's frame and its last reading.

The wrench is stored whether or not guiding is on, so that enabling guiding can take the latest reading as the
no-push bias; a reading older than `hand_guiding.wrench_timeout` cannot serve as that bias (guiding would stop at
once). While guiding, the admittance's twist turns about the sensor's origin.

A gap in the wrenches longer than `wrench_timeout` pauses guiding: the force counts as zero and the arm ramps to
rest; fresh wrenches within `resume_timeout` of the last one resume it by themselves (a loaded machine or network
delays a reading now and then, and the hand is still on the tool: having to re-enable after each hiccup ended
guiding by itself). A longer gap means the sensor is gone: guiding ends and needs `~/enable_hand_guiding` again.
Both the pause and the resumption are named in the status.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.admittance import AdmittanceOutput, HandGuiding
from robokin_ros.core.servo.config import ServoConfig


class GuidingInput:
    """The admittance, where its sensor is, and why guiding stopped (if it stopped by itself)."""

    def __init__(self, config: ServoConfig) -> None:
        self.admittance = HandGuiding(config.hand_guiding)
        self._sensor: int | pin.SE3 | None = None      # the wrench's frame: model frame id, or base_T_sensor (TF)
        self._raw: np.ndarray | None = None             # (6,) the last wrench as measured (sensor axes)
        self._received_at = -math.inf
        self.stopped = ""                               # why guiding stopped ("" = it did not)
        self.paused = ""                                # why guiding is paused ("" = it is not)
        self._gap = 0.0                                 # [s] the longest wrench age seen during the pause
        self._resume_timeout = config.hand_guiding.resume_timeout

    def update_config(self, config: ServoConfig) -> None:
        self.admittance.params = config.hand_guiding
        self._resume_timeout = config.hand_guiding.resume_timeout

    def set_wrench(self, wrench: np.ndarray, sensor: int | pin.SE3, base_R_sensor: np.ndarray,
                   received_at: float) -> None:
        """A reading (6,) [N, N m] in sensor axes; raises InvalidInputError (kept out) when it is malformed."""
        self.admittance.set_wrench(wrench, received_at, base_R_sensor)
        self._sensor, self._raw, self._received_at = sensor, np.array(wrench, dtype=float), received_at

    def start(self, now: float) -> None:
        """Zero the sensor on its latest reading and restart the admittance at rest.

        Raises:
            InvalidInputError: no reading within `hand_guiding.wrench_timeout`.
        """
        timeout = self.admittance.params.wrench_timeout
        age = now - self._received_at
        if self._raw is None or not age <= timeout:
            why = "none received yet" if self._raw is None else f"the last is {age:.3f} s old"
            raise InvalidInputError(f"hand guiding needs a fresh wrench to zero the sensor against: {why} "
                                    f"(timeout {timeout} s)")
        self.admittance.zero_bias(self._raw)
        self.admittance.reset()
        self.stopped = self.paused = ""

    def step(self, now: float) -> AdmittanceOutput:
        """The admittance's twist at `now` (base axes, about the sensor's origin). A stale wrench sets `paused`,
        or `stopped` once the gap is longer than `resume_timeout`; the first fresh one after a pause says so."""
        guided = self.admittance.step(now)
        gap = now - self._received_at
        timeout = self.admittance.params.wrench_timeout
        if guided.stale:
            if gap <= self._resume_timeout:
                self._gap = max(self._gap, gap) if self.paused else gap
                self.paused = (f"hand guiding paused: no wrench for {gap:.3f} s (wrench_timeout {timeout:g} s), "
                               f"coming to rest; it resumes when wrenches return within resume_timeout "
                               f"{self._resume_timeout:g} s")
            else:
                self.paused = ""
                self.stopped = (f"hand guiding stopped: no wrench for {gap:.3f} s, longer than "
                                f"hand_guiding.resume_timeout {self._resume_timeout:g} s: call "
                                "~/enable_hand_guiding to start again")
        elif self.paused:
            self.paused = ""
            guided = dataclasses.replace(guided, message=f"resumed after a {self._gap:.3f} s wrench gap, "
                                         f"{guided.message}")
        return guided

    def sensor_origin(self, robot: RobotModel, positions: np.ndarray) -> pin.SE3:
        """The sensor's origin in the base frame (base axes), about which the guided twist turns."""
        sensor = self._sensor
        origin = sensor.translation if isinstance(sensor, pin.SE3) else robot.frame_pose(positions, sensor).translation
        return pin.SE3(np.eye(3), origin)
