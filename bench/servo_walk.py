"""The walk of a twist (issue 25): which package files a twist crosses in servo_node, this tree and a git revision.

A walk is the set of robokin_ros files whose code runs during the servo tick that takes a fresh TwistStamped from
its subscription (servo_node's callback is that take: callbacks only store) and publishes the window it produces,
with its status. The node runs in-process on the embedded Panda, warm (a few ticks have run before, with joint
states); files are found by profiling the calls (sys.setprofile), so a module only imported does not count.

Run: source scripts/ros_env.sh && .venv/bin/python bench/servo_walk.py [--rev REV] [--list]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from other_tree import archived_tree, run_python

ROOT = Path(__file__).resolve().parents[1]

WALK_SCRIPT = r'''
import json, sys, time
import rclpy
from geometry_msgs.msg import TwistStamped
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from robokin_ros.nodes.servo_node import ServoNode
rclpy.init()
node = ServoNode(parameter_overrides=[Parameter("robot", value="panda"),
                                      Parameter("command_in_type", value="speed_units")])
node._timer.cancel()                     # the ticks below are driven by hand
client = rclpy.create_node("walk_client")
twists = client.create_publisher(TwistStamped, "/servo_node/delta_twist_cmds", 10)
home = node._robot.home()


def joint_state():
    msg = JointState(name=list(node._joint_names), position=[float(q) for q in home])
    msg.header.stamp = node.get_clock().now().to_msg()
    node._on_joint_state(msg)


def twist():
    msg = TwistStamped()
    msg.header.stamp = client.get_clock().now().to_msg()
    msg.twist.linear.x = 0.02
    twists.publish(msg)
    time.sleep(0.05)                     # delivered on loopback before the tick takes it


for _ in range(5):                       # warm: a few ticks with joint states and twists
    joint_state()
    twist()
    node._tick()
joint_state()
twist()
files = set()


def profile(frame, event, arg):
    if event == "call":
        path = frame.f_code.co_filename
        if "/robokin_ros/" in path:
            files.add(path.split("/robokin_ros/", 1)[1])


sys.setprofile(profile)
node._tick()
sys.setprofile(None)
assert "core/servo/velocity_ik.py" in files, files          # the tick solved the twist
print(json.dumps(sorted(files)))
'''


def walk_of(source_dir: Path) -> list[str]:
    return json.loads(run_python(source_dir, WALK_SCRIPT, what="walking", timeout=600).strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", default="5d782a03d65a00c0a080de04b22af3b7a5b594ab", help="the 'before' revision")
    parser.add_argument("--list", action="store_true", help="list the files of each walk")
    args = parser.parse_args()
    with archived_tree(args.rev) as old_tree:
        before = walk_of(old_tree)
    now = walk_of(ROOT)
    print(f"twist: {len(before)} files before ({args.rev[:7]}), {len(now)} now")
    if args.list:
        print("  before: " + ", ".join(before))
        print("  now: " + ", ".join(now))


if __name__ == "__main__":
    main()
