"""Tool speed limits (max_cartesian_speed, max_cartesian_angular_speed): checked on the timed trajectory with
Pinocchio FK and central differences in time, independent of the compiled Jacobian the timing uses."""
import numpy as np
import pinocchio as pin
import pytest

from robokin_ros.core.errors import ConfigError
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.downsample import path_parameter
from robokin_ros.core.path.result import TimingReport
from robokin_ros.core.path.toppra_run import binding_limits
from robokin_ros.core.path.timing import ToolSpeedLimit, join_reports, time_optimal
from robokin_ros.core.program.moves import waypoint_program
from robokin_ros.core.program.planner import MotionPlanner

PANDA_ACC = (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)
RATE = 2000.0       # [Hz] fine output samples: central differences of FK are then exact to ~1e-7 relative


def _plan(panda, offset, rotation=np.eye(3), **limits):
    planner = MotionPlanner(panda, PathConfig(max_joint_acceleration=PANDA_ACC, trajectory_rate_hz=RATE,
                                              **limits))
    q0 = panda.home()
    T0 = panda.fk(q0)
    target = pin.SE3(T0.rotation @ rotation, T0.translation + np.asarray(offset, float))
    plan = planner.plan(waypoint_program([target], 0.0), q0)
    assert plan.success, plan.path_ik.message
    return planner, plan


def _fk_speeds(panda, trajectory):
    """Linear [m/s] and angular [rad/s] tool speed at the inner points, by central differences of Pinocchio FK."""
    poses = [panda.fk(q) for q in trajectory.positions]
    t = trajectory.times
    dt = (t[2:] - t[:-2])[:, None]
    p = np.array([T.translation for T in poses])
    linear = np.linalg.norm((p[2:] - p[:-2]) / dt, axis=1)
    angular = np.array([np.linalg.norm(pin.log3(a.rotation.T @ b.rotation)) for a, b in zip(poses[:-2], poses[2:])])
    return t[1:-1], linear, angular / dt[:, 0]


def _middle(times, values, share=0.6):
    """Values in the middle `share` of the duration (away from the accelerating and braking ends)."""
    span = times[-1] - times[0]
    keep = np.abs(times - times[0] - 0.5 * span) <= 0.5 * share * span
    return values[keep]


def test_line_cruises_at_the_tool_speed_limit(panda):
    limit = 0.2             # the joints alone allow ~1.06 m/s on this line
    _, plan = _plan(panda, [0, 0.3, 0], max_cartesian_speed=limit)
    times, linear, _ = _fk_speeds(panda, plan.trajectory)
    assert linear.max() / limit <= 1 + 1e-3
    assert _middle(times, linear).min() / limit >= 0.99
    # cruising at the limit: the duration is the cruise plus the short speed-up and slow-down
    assert 0.3 / limit < plan.timing.duration < 0.3 / limit + 0.1


def test_report_names_the_tool_and_measures_its_speed(panda):
    limit = 0.2
    planner, plan = _plan(panda, [0, 0.3, 0], max_cartesian_speed=limit)
    Q = plan.path_ik.positions
    keep = plan.downsample.indices
    tool = ToolSpeedLimit(planner.solver().fk.arrays(), limit)
    timed = time_optimal(path_parameter(Q)[keep], Q[keep], panda.joint_names, panda.limits.velocity, PANDA_ACC,
                         trajectory_rate_hz=RATE, tool=tool)
    _, linear, _ = _fk_speeds(panda, timed.arrays)
    report = timed.report
    assert report.limited_by == "tool speed"
    assert report.peak_tool_speed_ratio == pytest.approx(report.peak_tool_speed / limit)
    assert 0.999 <= report.peak_tool_speed_ratio <= 1 + 1e-3
    # the report's peak is measured at the control rate (500 Hz), the independent one at 2000 Hz
    assert report.peak_tool_speed == pytest.approx(linear.max(), rel=1e-3)
    labels = binding_limits(timed.trajectory, panda.limits.velocity, np.array(PANDA_ACC), tool)
    tool_label = 2 * panda.n
    middle = labels[len(labels) // 4: 3 * len(labels) // 4]
    assert np.all(middle == tool_label)


def test_tool_limit_above_the_joints_changes_nothing(panda):
    _, free = _plan(panda, [0, 0.3, 0])
    _, loose = _plan(panda, [0, 0.3, 0], max_cartesian_speed=5.0)
    times, linear, _ = _fk_speeds(panda, loose.trajectory)
    assert linear.max() < 5.0 * 0.5                       # the joints bind far below the tool limit
    assert loose.timing.duration == pytest.approx(free.timing.duration, rel=1e-12)
    np.testing.assert_allclose(loose.trajectory.positions, free.trajectory.positions, atol=1e-12)


def test_tool_limit_binding_only_part_of_a_path_slows_only_that_part(panda):
    """A limit between the joints' cruise speed and zero binds the fast middle only; the ends still start
    and stop as fast as the joints allow, so the plan beats a whole-path slow-down to the same peak."""
    _, free = _plan(panda, [0, 0.3, 0])
    _, fk_free, _ = _fk_speeds(panda, free.trajectory)
    limit = 0.5 * fk_free.max()
    _, limited = _plan(panda, [0, 0.3, 0], max_cartesian_speed=limit)
    times, linear, _ = _fk_speeds(panda, limited.trajectory)
    assert linear.max() / limit <= 1 + 1e-3
    # uniform post-scaling to the same peak would take free duration / 0.5
    assert limited.timing.duration < 0.9 * free.timing.duration / 0.5


def test_pure_rotation_cruises_at_the_angular_limit(panda):
    limit = 0.3             # [rad/s] far below what the wrist allows
    _, plan = _plan(panda, [0, 0, 0], pin.rpy.rpyToMatrix(0, 0, 0.6), max_cartesian_angular_speed=limit)
    times, linear, angular = _fk_speeds(panda, plan.trajectory)
    assert angular.max() / limit <= 1 + 1e-3
    assert _middle(times, angular).min() / limit >= 0.99
    assert linear.max() < 1e-3                            # the tool origin stays put
    assert 0.6 / limit < plan.timing.duration < 0.6 / limit + 0.1


def test_both_limits_the_tighter_binds(panda):
    """A line with a small turn: the angular limit is far tighter than the linear one here."""
    lin, ang = 1.0, 0.05
    _, plan = _plan(panda, [0, 0.1, 0], pin.rpy.rpyToMatrix(0, 0, 0.2), max_cartesian_speed=lin,
                    max_cartesian_angular_speed=ang)
    times, linear, angular = _fk_speeds(panda, plan.trajectory)
    assert max(linear.max() / lin, angular.max() / ang) <= 1 + 1e-3
    assert _middle(times, angular).min() / ang >= 0.99
    assert linear.max() / lin < 0.5


@pytest.mark.parametrize("name", ["max_cartesian_speed", "max_cartesian_angular_speed"])
def test_negative_tool_limits_are_refused(name):
    with pytest.raises(ConfigError, match=name):
        PathConfig(**{name: -0.1})
    assert getattr(PathConfig(), name) == 0.0             # no tool limit unless set


def test_joined_report_keeps_the_worst_tool_figures():
    a = TimingReport(1.0, 0.5, 0.9, peak_tool_speed=0.2, peak_tool_angular_speed=0.1, peak_tool_speed_ratio=1.0,
                     limited_by="tool speed", compute_time=0.01)
    b = TimingReport(0.5, 0.8, 1.0, peak_tool_speed=0.3, peak_tool_angular_speed=float("nan"),
                     peak_tool_speed_ratio=0.6, limited_by="acceleration of j1", compute_time=0.02)
    joined = join_reports([b, a], 1.5)
    assert (joined.peak_velocity_ratio, joined.peak_acceleration_ratio) == (0.8, 1.0)
    assert (joined.peak_tool_speed, joined.peak_tool_angular_speed, joined.peak_tool_speed_ratio) == (0.3, 0.1, 1.0)
    assert joined.limited_by == "tool speed" and joined.compute_time == pytest.approx(0.03)
