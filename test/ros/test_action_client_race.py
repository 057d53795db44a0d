"""ThreadSafeActionClient can be made while an executor spins on another thread (rclpy 9.1 registers the client as
a waitable before creating its `_lock`): the executor's first look at it, right at registration, must work."""
import rclpy
from control_msgs.action import FollowJointTrajectory
from rclpy.context import Context

from robokin_ros.ros.rclpy_compat import ThreadSafeActionClient


def _first_look_at_registration(node):
    """Make node.add_waitable ask the new waitable for its entities at once, as a spinning executor may."""
    looked = []
    add = node.add_waitable

    def add_and_look(waitable):
        add(waitable)
        looked.append(waitable.get_num_entities())
    node.add_waitable = add_and_look
    return looked


def test_a_client_made_while_an_executor_looks_at_it_is_usable():
    context = Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("action_client_race", context=context)
        looked = _first_look_at_registration(node)
        client = ThreadSafeActionClient(node, FollowJointTrajectory, "/race/follow_joint_trajectory")
        assert len(looked) == 1 and looked[0] is not None
        assert repr(client.get_num_entities()) == repr(looked[0]) and not client.server_is_ready()
        client.destroy()
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
