"""capability_node on the two-Panda table: markers per tip (ns `<tip>/<item>`) and for the held object.

A real rclpy subscriber receives them; expected values come from the core (per-tip analysis, held-object analysis),
computed here, and the marker checks are those of test_capability_node.
"""
import numpy as np
import pytest
from rclpy.parameter import Parameter
from ros_helpers import spin_until
from test_capability_node import CFG, _check_sphere, _Probe, _state
from visualization_msgs.msg import Marker

from robokin_ros.core.capability import analysis as cap
from robokin_ros.core.capability.held_capability import analyze_held_object
from robokin_ros.core.capability.per_tip import analyze_tip
from robokin_ros.core.robot import RobotModel
from robokin_ros.nodes.capability_node import CapabilityNode

LEFT_Q = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.8, 0.6])
Q = np.concatenate([LEFT_Q, LEFT_Q * [-1.0, 1, -1, 1, -1, 1, -1]])


@pytest.fixture(scope="module")
def dual():
    return RobotModel.from_name("dual_panda")


def _by_ns(msg) -> dict[str, Marker]:
    return {m.ns: m for m in msg.markers}


def test_subprocess_node_draws_both_tips_and_the_held_object(ros, launch, dual):
    context, executor = ros
    probe = _Probe(context, executor)
    node = launch("capability_node", "--ros-args", "-p", "robot:=dual_panda", "-p", "held_object:=true",
                  "-p", "rate:=20.0")
    assert spin_until(executor, lambda: probe.states.get_subscription_count() > 0
                      and probe.node.count_publishers("/capability_node/markers") > 0), node.output
    probe.states.publish(_state(list(reversed(dual.joint_names)), Q[::-1]))
    assert spin_until(executor, lambda: len(probe.received) > 0), node.output
    markers = _by_ns(probe.received[-1])
    tau = dual.limits.effort
    for tip in dual.tip_frames:
        expected = analyze_tip(dual, Q, tip, tau)
        _check_sphere(markers[f"{tip}/velocity"], expected.velocity, CFG.velocity_scale, expected.tool_position)
        _check_sphere(markers[f"{tip}/force_weighted"], expected.force_weighted, CFG.force_scale,
                      expected.tool_position)
        assert markers[f"{tip}/polytope"].type == Marker.TRIANGLE_LIST
        assert markers[f"{tip}/manipulability"].text.startswith(tip)
        assert markers[f"{tip}/velocity"].header.frame_id == "world"
    held = analyze_held_object(dual, Q, tau)
    _check_sphere(markers["held_object/velocity"], held.velocity, CFG.velocity_scale, held.object_position)
    _check_sphere(markers["held_object/force_weighted"], held.force_weighted, CFG.force_scale, held.object_position)
    assert markers["held_object/polytope"].action == Marker.DELETE          # no held-object polytope
    assert markers["held_object/acceleration"].action == Marker.DELETE      # nor acceleration
    assert markers["held_object/manipulability"].text.startswith("held_object")
    assert not any(ns in markers for ns in ("velocity", "polytope"))        # no un-namespaced (single-tip) items
    assert node.popen.poll() is None


def test_held_object_markers_follow_the_parameter_at_run_time(ros, dual):
    context, executor = ros
    node = CapabilityNode(context=context, parameter_overrides=[Parameter("robot", value="dual_panda")])
    executor.add_node(node)
    probe = _Probe(context, executor)
    probe.states.publish(_state(dual.joint_names, Q))
    assert spin_until(executor, lambda: len(probe.received) > 0)
    markers = _by_ns(probe.received[-1])
    assert markers["held_object/velocity"].action == Marker.DELETE            # off by default
    assert markers[f"{dual.tip_frames[1]}/velocity"].action == Marker.ADD
    assert node.set_parameters([Parameter("held_object", value=True)])[0].successful
    probe.received.clear()
    assert spin_until(executor, lambda: len(probe.received) > 0
                      and _by_ns(probe.received[-1])["held_object/velocity"].action == Marker.ADD)
    expected = analyze_held_object(dual, Q, cap.torque_limits_of(dual).limits)
    _check_sphere(_by_ns(probe.received[-1])["held_object/velocity"], expected.velocity, CFG.velocity_scale,
                  expected.object_position)
