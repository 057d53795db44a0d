"""The demo's report arithmetic (pure numpy), checked on synthetic recordings with known answers."""
import numpy as np

from robokin_ros.demo.path import distance_to_polyline
from robokin_ros.demo.script import demo_phases, time_to_stop, tool_velocities


def test_tool_velocity_from_joint_samples_matches_the_jacobian(panda):
    dq = np.array([0.1, -0.05, 0.0, 0.08, 0.0, 0.1, 0.2])
    times = np.arange(0.0, 0.2, 0.002)
    positions = panda.home() + np.outer(times, dq)
    _, linear, angular = tool_velocities(panda, times, positions)
    J = panda.jacobian(positions[50])
    np.testing.assert_allclose(linear[50], J[:3] @ dq, atol=1e-5)
    np.testing.assert_allclose(angular[50], J[3:] @ dq, atol=1e-5)


def test_time_to_stop():
    times = np.arange(0.0, 1.0, 0.01)
    velocities = np.zeros((len(times), 2))
    velocities[times < 0.55, 0] = 0.3                          # moving until 0.55 s
    assert abs(time_to_stop(times, velocities, silence_start=0.4) - 0.15) < 1e-9
    assert time_to_stop(times, np.ones((len(times), 2)), 0.4) is None     # never stops: says so
    assert time_to_stop(times, np.zeros((len(times), 2)), 0.4) == 0.0


def testdistance_to_polyline():
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0]], float)
    points = np.array([[0.5, 0.2, 0.0], [1.3, 0.5, 0.0], [2.0, 2.0, 0.0], [0.5, 0.0, 0.4]])
    np.testing.assert_allclose(distance_to_polyline(points, square), [0.2, 0.3, np.hypot(1, 1), 0.4])


def test_demo_script_phases_end_in_silence_after_motion():
    phases = demo_phases()
    assert phases[-1].name == "silence" and np.any(phases[-2].linear)
    assert all(abs(c) <= 1.0 for p in phases for c in (*p.linear, *p.angular)), "unitless commands in [-1, 1]"
