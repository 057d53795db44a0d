"""The jerk rule of what path_ik_node runs on everything it sends or returns (trajectory_execution.check_outgoing):
with joint jerk limits in force, a JointTrajectory whose controller spline jerks harder than a joint's limit is an
INTERNAL_ERROR naming the joint, the jerk and the limit; without jerk limits (the default) there is no jerk rule."""
import numpy as np
import pytest
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.trajectory.execution import ExecutionCode
from robokin_ros.ros.conversions import duration_msg
from robokin_ros.ros.goals import GoalAbort
from robokin_ros.ros.trajectory_execution import check_outgoing

JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
VELOCITY, ACCELERATION = np.full(7, 2.175), np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])
FRANKA_JERK = np.array([7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0])


def minimum_jerk_message(joint: int, distance: float, duration: float, k: int = 21) -> JointTrajectory:
    """One joint's minimum-jerk move (textbook: jerk 60 d / T^3 at its ends) as quintic points, the others still."""
    msg = JointTrajectory(joint_names=JOINTS)
    for t in np.linspace(0.0, duration, k):
        s = t / duration
        q, v, a = np.zeros(7), np.zeros(7), np.zeros(7)
        q[joint] = distance * (10 * s**3 - 15 * s**4 + 6 * s**5)
        v[joint] = distance * (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
        a[joint] = distance * (60 * s - 180 * s**2 + 120 * s**3) / duration**2
        msg.points.append(JointTrajectoryPoint(positions=q.tolist(), velocities=v.tolist(), accelerations=a.tolist(),
                                               time_from_start=duration_msg(float(t))))
    return msg


def test_a_trajectory_beyond_a_jerk_limit_never_leaves():
    msg = minimum_jerk_message(1, 0.1, 0.3)                       # 60 * 0.1 / 0.027 = 222.2 rad/s^3 on panda_joint2
    tight = FRANKA_JERK.copy()
    tight[1] = 150.0
    with pytest.raises(GoalAbort, match=r"robokin planned a trajectory it must not have sent, and sent nothing: "
                                        r"joint 'panda_joint2' reaches jerk 222\.222 rad/s\^3 at t = 0\.(000|300) s .* "
                                        r"1\.481 x its limit 150 rad/s\^3") as err:
        check_outgoing(msg, JOINTS, MotionLimits(VELOCITY, ACCELERATION, tight), 0)
    assert err.value.code == ExecutionCode.INTERNAL_ERROR
    check_outgoing(msg, JOINTS, MotionLimits(VELOCITY, ACCELERATION, FRANKA_JERK), 0)       # within Franka's
    check_outgoing(msg, JOINTS, MotionLimits(VELOCITY, ACCELERATION, np.full(7, np.inf)), 0)  # jerk off
    check_outgoing(msg, JOINTS, MotionLimits(VELOCITY, ACCELERATION), 0)                    # no jerk field
