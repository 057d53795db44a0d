"""servo_node as a process takes MoveIt's world: moveit_msgs/CollisionObject on /collision_object and a
moveit_msgs/PlanningScene on the planning scene topic, next to its own ~/scene_objects (conversion: ros/moveit_scene.py,
tested in test_moveit_scene.py)."""
from geometry_msgs.msg import Pose
from moveit_msgs.msg import CollisionObject, PlanningScene
from shape_msgs.msg import SolidPrimitive
from ros_helpers import spin_for, spin_until
from test_servo_inputs import twist_z, panda, start  # noqa: F401

from robokin_ros.core.servo.status import ServoStatus


def test_a_moveit_collision_object_halts_the_arm_and_a_full_planning_scene_removes_it(ros, launch, panda):  # noqa: F811
    c = start(ros, launch, "-p", "check_collisions:=true", "-p", "planning_scene_topic:=/monitored_planning_scene")
    objects = c.node.create_publisher(CollisionObject, "/collision_object", 10)
    scenes = c.node.create_publisher(PlanningScene, "/monitored_planning_scene", 10)
    assert spin_until(c.executor, lambda: objects.get_subscription_count() > 0
                      and scenes.get_subscription_count() > 0, 15.0)
    tool = panda.fk(c.states[-1][1]).translation
    block = CollisionObject(id="block", operation=CollisionObject.ADD)
    block.header.frame_id = "panda_link0"
    block.pose = Pose()
    block.pose.position.x, block.pose.position.y, block.pose.position.z = float(tool[0]) + 0.05, float(tool[1]), 0.25
    block.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.2, 0.2, 0.02]),
                        SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.2, 0.2, 0.02])]
    p2 = Pose()
    p2.position.z = -0.05
    block.primitive_poses = [Pose(), p2]
    objects.publish(block)
    c.every_10_ms(3.5, lambda: c.twists.publish(twist_z(-0.25)))
    halted = c.statuses[-1]
    assert halted.code == ServoStatus.HALT_FOR_COLLISION and "block" in halted.message, halted.message
    still = c.states[-1][1]
    # a full scene without the block removes both of its shapes
    scenes.publish(PlanningScene(is_diff=False))
    c.every_10_ms(0.5, lambda: c.twists.publish(twist_z(-0.25)))
    assert panda.fk(c.states[-1][1]).translation[2] < panda.fk(still).translation[2] - 0.01
    bad = CollisionObject(id="prism", operation=CollisionObject.ADD)
    bad.primitives = [SolidPrimitive(type=SolidPrimitive.PRISM, dimensions=[0.1])]
    objects.publish(bad)
    spin_for(c.executor, 0.3)
    assert any("scene object rejected" in s.message and "PRISM" in s.message for s in c.statuses)
