"""TrajectoryExecutor on its topic backend, with a recording publisher and measured states given by the test (no
processes): what it sends is the checked message, stamped START_LEAD ahead, sharing its points (built once); the
checked message itself keeps its zero stamp (the action result's); an interruption stops the arm with a stop
checked and stamped in the running trajectory's time."""
import numpy as np
import pytest
from rclpy.clock import Clock
from trajectory_msgs.msg import JointTrajectory

from robokin_ros.core.limits import MotionLimits
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.trajectory.arrays import JointTrajectoryArrays
from robokin_ros.core.trajectory.execution import ExecutionCode
from robokin_ros.ros.goals import GoalAbort
from robokin_ros.ros.joint_state_cache import StateWait
from robokin_ros.ros.path_conversions import joint_trajectory_msg
from robokin_ros.ros.runtime import ThrottledLogger
from robokin_ros.ros.trajectory_executor import START_LEAD, TrajectoryExecutor

DURATION = 0.3               # [s]
STEP = 0.02                  # [rad] of every joint, rest to rest


class Recorder:
    """Stands in for the node: its clock, and a publisher that keeps what it is given."""

    def __init__(self) -> None:
        self.sent: list[JointTrajectory] = []
        self.clock = Clock()

    def get_clock(self) -> Clock:
        return self.clock

    def create_publisher(self, _type, _topic, _qos):
        return self

    def publish(self, msg) -> None:
        self.sent.append(msg)

    def get_logger(self):
        return self

    def warning(self, _text) -> None:
        pass


class States:
    """Measured positions the test chooses."""

    def __init__(self, positions) -> None:
        self.positions = np.asarray(positions, dtype=float)

    def wait_fresh(self, _max_age, _first_wait) -> StateWait:
        return StateWait(self.positions, "")


def rest_to_rest(q0: np.ndarray) -> JointTrajectoryArrays:
    """A quintic rest-to-rest move of STEP per joint in DURATION, sampled exactly (the controller's quintic
    reproduces it)."""
    tau = np.linspace(0.0, 1.0, 16)[:, None]
    s = 10 * tau ** 3 - 15 * tau ** 4 + 6 * tau ** 5
    ds = (30 * tau ** 2 - 60 * tau ** 3 + 30 * tau ** 4) / DURATION
    dds = (60 * tau - 180 * tau ** 2 + 120 * tau ** 3) / DURATION ** 2
    n = len(q0)
    return JointTrajectoryArrays(tuple(f"panda_joint{i + 1}" for i in range(n)), tau[:, 0] * DURATION,
                                 q0 + STEP * s * np.ones(n), STEP * ds * np.ones((1, n)), STEP * dds * np.ones((1, n)))


@pytest.fixture
def setup(panda):
    node = Recorder()
    trajectory = rest_to_rest(panda.home())
    states = States(trajectory.positions[-1])
    limits = MotionLimits(np.full(7, 2.0), np.full(7, 10.0))
    executor = TrajectoryExecutor(node, panda.joint_names, lambda: limits, states, ThrottledLogger(node, 1.0), None,
                                  "joint_trajectory")
    return node, trajectory, states, executor


def test_a_run_sends_the_checked_message_stamped_ahead_and_leaves_it_unstamped(setup):
    node, trajectory, _, executor = setup
    checked = executor.check(joint_trajectory_msg(trajectory), "returned")
    progress = []
    before = node.clock.now().nanoseconds
    executor.run(checked, trajectory, PathConfig(execution="topic"), lambda: None, progress.append)
    assert len(node.sent) == 1
    sent = node.sent[0]
    assert sent.points is checked.msg.points and list(sent.joint_names) == list(checked.msg.joint_names)
    stamp = sent.header.stamp.sec * 10 ** 9 + sent.header.stamp.nanosec
    assert 0 <= stamp - before - START_LEAD * 1e9 < 0.05e9
    assert checked.msg.header.stamp.sec == 0 and checked.msg.header.stamp.nanosec == 0
    assert progress[-1] == 1.0


def test_an_interruption_stops_along_the_path_in_the_running_trajectorys_time(setup):
    node, trajectory, states, executor = setup
    states.positions = trajectory.positions[0]            # the arm is at the start: it follows the plan
    checked = executor.check(joint_trajectory_msg(trajectory))
    with pytest.raises(GoalAbort) as stopped:
        executor.run(checked, trajectory, PathConfig(execution="topic"), lambda: (ExecutionCode.CANCELED, "canceled"),
                     lambda _: None)
    assert stopped.value.code == ExecutionCode.CANCELED
    message = str(stopped.value)
    assert message.startswith("canceled after ") and "stopped along the path within the acceleration limits" in message
    assert "s after the request (measured)" in message
    run, stop = node.sent
    run_stamp = run.header.stamp.sec * 10 ** 9 + run.header.stamp.nanosec
    stop_stamp = stop.header.stamp.sec * 10 ** 9 + stop.header.stamp.nanosec
    assert 0 <= stop_stamp - run_stamp <= DURATION * 1e9            # a point of the running trajectory's time
    assert stop.points[-1].velocities == pytest.approx([0.0] * 7)
