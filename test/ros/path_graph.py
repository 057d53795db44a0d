"""sim_robot and path_ik_node as separate processes, with a client node: the set-up the path-node tests share.

`PathGraph.start(...)` starts both executables (extra ROS arguments per process), creates a client node in a
context of its own with an action client and a /joint_states list, and waits until the action server is ready
and states arrive. Tests add their own subscriptions to `graph.node`; `close()` stops everything.
"""
import numpy as np
import rclpy
from node_process import PACKAGE_DIR, Process
from rclpy.action import ActionClient
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from ros_helpers import spin_until
from sensor_msgs.msg import JointState

from robokin_interfaces.action import ExecuteCartesianPath

PARAMS = str(PACKAGE_DIR / "config" / "panda_path_ik.yaml")
ACTION = "/path_ik_node/execute_cartesian_path"
READY_TIMEOUT = 60.0      # [s] both processes up, discovered, and the first joint states in


class PathGraph:
    """The processes, the client node and what it receives."""

    def __init__(self, log_dir, client_name: str, sim_args=(), node_args=(), state_depth: int = 10,
                 robot: str = "panda", params: str = PARAMS) -> None:
        self.procs = [Process("sim_robot", ["--ros-args", "-p", f"robot:={robot}", "-p", "publish_tf:=false",
                                            *sim_args], log_dir),
                      Process("path_ik_node", ["--ros-args", "--params-file", params, *node_args], log_dir)]
        self.context = Context()
        rclpy.init(context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.node = rclpy.create_node(client_name, context=self.context)
        self.executor.add_node(self.node)
        self.states: list[JointState] = []
        self.node.create_subscription(JointState, "/joint_states", self.states.append, state_depth)
        self.client = ActionClient(self.node, ExecuteCartesianPath, ACTION)

    def wait_ready(self) -> None:
        ready = spin_until(self.executor, lambda: self.client.server_is_ready() and self.states, READY_TIMEOUT)
        assert ready, "path_ik_node or sim_robot did not come up:\n" + "\n".join(p.output for p in self.procs)

    def close(self) -> None:
        self.client.destroy()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        for p in self.procs:
            p.stop()


def wait_still(executor, states, window=60):
    """Spin until the last `window` joint states agree to 1e-7 rad: the arm is at rest."""
    def still():
        recent = states[-window:]
        return len(recent) == window and np.abs(np.array(recent[-1].position)
                                                - np.array(recent[0].position)).max() < 1e-7
    assert spin_until(executor, still, 20.0), "the arm never came to rest"


def current_pose(model, states):
    """(q, tool pose) of the newest joint state."""
    q = np.array([dict(zip(states[-1].name, states[-1].position))[n] for n in model.joint_names])
    return q, model.fk(q)


def send(graph, goal, timeout=60.0):
    """Send a goal and wait for its result (the goal must be accepted)."""
    future = graph.client.send_goal_async(goal)
    assert spin_until(graph.executor, future.done, 15.0), "goal response timed out"
    assert future.result().accepted
    result = future.result().get_result_async()
    assert spin_until(graph.executor, result.done, timeout), "no result"
    return result.result().result
