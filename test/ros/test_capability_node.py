"""capability_node: a real rclpy subscriber checks marker orientation = eigenvectors and scale = semi-axes.

The first test runs the node as its own process (console script); the others compose it in-process to
change parameters and call the export service. Expected values come from the core, computed here.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
import rclpy
from ros_helpers import spin_until
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from visualization_msgs.msg import Marker, MarkerArray

from robokin_ros.core.capability import analysis as cap
from robokin_ros.core.capability.config import CapabilityConfig
from robokin_ros.core.robot import RobotModel
from robokin_ros.nodes.capability_node import CapabilityNode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from capability_arms import PANDA_SINGULAR, chain_urdf  # noqa: E402

Q = np.array([0.2, -0.6, 0.1, -2.1, 0.3, 1.7, 0.5])
CFG = CapabilityConfig()


def _rotation(q) -> np.ndarray:
    """Textbook unit quaternion -> rotation matrix (independent of the node's conversion)."""
    x, y, z, w = q.x, q.y, q.z, q.w
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _state(names, positions) -> JointState:
    return JointState(name=list(names), position=[float(p) for p in positions])


def _by_ns(msg: MarkerArray) -> dict[str, Marker]:
    return {m.ns: m for m in msg.markers}


def _check_sphere(marker: Marker, ellipsoid: cap.Ellipsoid, scale: float, at: np.ndarray) -> None:
    assert marker.type == Marker.SPHERE and marker.action == Marker.ADD
    R = _rotation(marker.pose.orientation)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-9)
    for i in range(3):        # each marker axis is a principal direction (sign is free)
        assert abs(R[:, i] @ ellipsoid.axes[:, i]) == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose([marker.scale.x, marker.scale.y, marker.scale.z],
                               2 * scale * ellipsoid.semi_axes, rtol=1e-9)
    p = marker.pose.position
    np.testing.assert_allclose([p.x, p.y, p.z], at, atol=1e-12)


class _Probe:
    """A subscriber and a joint-state publisher on one node."""

    def __init__(self, context, executor, topic="/capability_node/markers"):
        self.node = rclpy.create_node("capability_probe", context=context)
        executor.add_node(self.node)
        self.received: list[MarkerArray] = []
        self.node.create_subscription(MarkerArray, topic, self.received.append, 10)
        self.states = self.node.create_publisher(JointState, "/joint_states", 10)


def test_subprocess_node_publishes_markers_matching_the_core(ros, launch, panda):
    context, executor = ros
    probe = _Probe(context, executor)
    node = launch("capability_node", "--ros-args", "-p", "robot:=panda", "-p", "rate:=30.0")
    assert spin_until(executor, lambda: probe.states.get_subscription_count() > 0
                      and probe.node.count_publishers("/capability_node/markers") > 0), node.output
    names = list(reversed(panda.joint_names)) + ["panda_finger_joint1"]       # shuffled + an extra joint
    probe.states.publish(_state(names, list(Q[::-1]) + [0.04]))
    assert spin_until(executor, lambda: len(probe.received) > 0), node.output
    expected = cap.analyze(panda, Q, panda.limits.effort)
    markers = _by_ns(probe.received[-1])
    _check_sphere(markers["velocity"], expected.velocity, CFG.velocity_scale, expected.tool_position)
    _check_sphere(markers["force_weighted"], expected.force_weighted, CFG.force_scale, expected.tool_position)
    _check_sphere(markers["acceleration"], expected.acceleration_normalized, CFG.acceleration_scale,
                  expected.tool_position)
    assert markers["polytope"].type == Marker.TRIANGLE_LIST and len(markers["polytope"].points) % 3 == 0
    assert markers["force_rms"].action == Marker.DELETE                      # not in the default show
    assert "cond=" in markers["manipulability"].text
    assert markers["velocity"].header.frame_id == "panda_link0"
    # 30 Hz: count arrivals over one second of spinning (generous bound: the machine is shared).
    count = len(probe.received)
    spin_until(executor, lambda: False, timeout_s=1.0)
    assert len(probe.received) - count >= 15
    # A bad state (missing joint, NaN) is reported and the node keeps publishing.
    probe.states.publish(_state(panda.joint_names[:6], Q[:6]))
    probe.states.publish(_state(panda.joint_names, [np.nan] + list(Q[1:])))
    assert spin_until(executor, lambda: "lacks joints ['panda_joint7']" in node.output
                      or "non-finite" in node.output), node.output
    probe.states.publish(_state(panda.joint_names, Q))
    count = len(probe.received)
    assert spin_until(executor, lambda: len(probe.received) > count + 2), node.output
    assert node.popen.poll() is None


@pytest.fixture
def in_process(ros):
    context, executor = ros

    def start(**overrides):
        node = CapabilityNode(context=context, parameter_overrides=[Parameter(k, value=v)
                                                                    for k, v in overrides.items()])
        executor.add_node(node)
        return node, _Probe(context, executor), executor

    return start


def test_show_is_runtime_changeable_and_validated(in_process, panda):
    node, probe, executor = in_process()
    probe.states.publish(_state(panda.joint_names, Q))
    assert spin_until(executor, lambda: len(probe.received) > 0)
    result = node.set_parameters([Parameter("show", value=["velocity", "forces"])])[0]
    assert not result.successful and "'forces'" in result.reason and "valid items" in result.reason
    assert node.set_parameters([Parameter("show", value=["force_rms"])])[0].successful
    probe.received.clear()
    assert spin_until(executor, lambda: len(probe.received) > 0)
    actions = {m.ns: m.action for m in probe.received[-1].markers}
    assert actions["force_rms"] == Marker.ADD
    assert all(a == Marker.DELETE for ns, a in actions.items() if ns != "force_rms")
    bad = node.set_parameters([Parameter("ellipsoid_scale.force", value=-1.0)])[0]
    assert not bad.successful and "ellipsoid_scale.force" in bad.reason


def test_export_service_writes_stl(in_process, panda, tmp_path):
    path = tmp_path / "poly.stl"
    node, probe, executor = in_process(stl_path=str(path))
    client = probe.node.create_client(Trigger, "/capability_node/export_polytope")
    assert spin_until(executor, lambda: client.service_is_ready())
    future = client.call_async(Trigger.Request())
    assert spin_until(executor, future.done)
    assert not future.result().success and "no joint state" in future.result().message
    probe.states.publish(_state(panda.joint_names, Q))
    assert spin_until(executor, lambda: len(probe.received) > 0)
    future = client.call_async(Trigger.Request())
    assert spin_until(executor, future.done)
    assert future.result().success and str(path) in future.result().message
    assert path.stat().st_size > 84


def test_singular_configuration_gives_finite_flagged_markers(in_process, panda):
    node, probe, executor = in_process(show=["force_weighted", "polytope", "velocity", "manipulability"])
    probe.states.publish(_state(panda.joint_names, PANDA_SINGULAR))
    assert spin_until(executor, lambda: len(probe.received) > 0)
    markers = _by_ns(probe.received[-1])
    for ns in ("force_weighted", "velocity"):
        scales = [markers[ns].scale.x, markers[ns].scale.y, markers[ns].scale.z]
        assert np.isfinite(scales).all() and 0 < min(scales) and max(scales) <= CFG.max_marker_size
    points = np.array([[p.x, p.y, p.z] for p in markers["polytope"].points])
    assert np.isfinite(points).all()
    force_colour = markers["force_weighted"].color
    assert (force_colour.r, force_colour.g, force_colour.b, force_colour.a) == pytest.approx(CFG.color_singular)
    assert "SINGULAR" in markers["manipulability"].text


def test_missing_torque_limits_hide_force_variants(in_process):
    urdf = chain_urdf([("0 0 1", (0, 0, 0)), ("0 1 0", (0, 0, 0.2)), ("0 1 0", (0.3, 0, 0))], (0.2, 0, 0),
                      [5.0, 0.0, 2.0])
    node, probe, executor = in_process(robot_description=urdf, base_frame="base", tip_frame="tip")
    probe.states.publish(_state(["j1", "j2", "j3"], [0.1, 0.4, -0.8]))
    assert spin_until(executor, lambda: len(probe.received) > 0)
    markers = _by_ns(probe.received[-1])
    assert markers["force_weighted"].action == Marker.DELETE and markers["polytope"].action == Marker.DELETE
    assert markers["velocity"].action == Marker.ADD
    assert "no torque limits" in markers["manipulability"].text
    assert RobotModel.from_urdf_string(urdf, "base", "tip").limits.missing_effort == ("j2",)
