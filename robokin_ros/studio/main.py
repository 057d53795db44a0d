"""`robokin_studio`: serve the studio on a local port (see docs/studio.md)."""
from __future__ import annotations

import argparse
import importlib
import sys
import time

from robokin_ros.core.embedded import EMBEDDED_ROBOTS
from robokin_ros.core.errors import RobokinError
from robokin_ros.tools.cli_errors import OneLineParser, one_line

PIP_EXTRAS = ("viser", "fast_simplification")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = OneLineParser(prog="robokin_studio", description=__doc__.split(":", 1)[1].strip())
    parser.add_argument("--robot", default="panda",
                        help=f"an embedded robot {sorted(EMBEDDED_ROBOTS)} or a URDF file (then --base-frame and "
                             "--tip-frame too); default panda")
    parser.add_argument("--base-frame", default="", help="chain base frame (default: the embedded robot's)")
    parser.add_argument("--tip-frame", default="", help="chain tip frame (default: the embedded robot's)")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (0.0.0.0 for other machines)")
    parser.add_argument("--port", type=int, default=8080, help="port (viser takes the next free one if busy)")
    parser.add_argument("--rate", type=float, default=60.0, help="update rate [Hz] (default 60)")
    parser.add_argument("--render", choices=("standard", "light"), default="standard",
                        help="standard: lit materials and shadows (a browser with a GPU); light: for software WebGL")
    parser.add_argument("--triangles", type=int, default=0,
                        help="simplify the robot meshes to about this many triangles (default: 30000 standard, 10000 "
                             "light; -1 keeps them all)")
    parser.add_argument("--ros", action="store_true",
                        help="live ROS mode: the arm from --joint-topic, the gizmo drives --servo-node")
    parser.add_argument("--servo-node", default="/servo_node", help="servo node name (live ROS mode)")
    parser.add_argument("--joint-topic", default="/joint_states", help="joint state topic (live ROS mode)")
    parser.add_argument("--command", choices=("pose", "twist"), default="pose",
                        help="live ROS mode: send the gizmo as pose targets (default) or as twists")
    args = parser.parse_args(argv)
    if args.rate <= 0:
        parser.error(f"--rate must be > 0, got {args.rate}")
    if args.triangles < -1:
        parser.error(f"--triangles must be >= -1, got {args.triangles}")
    return args


def missing_extras() -> list[str]:
    """The studio's pip extras that cannot be imported here (rosdep installs neither)."""
    missing = []
    for module in PIP_EXTRAS:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    missing = missing_extras()      # a clear message instead of a traceback when the studio's pip extra is absent
    if missing:
        print(f"robokin_studio needs {', '.join(missing)}: pip install -r requirements/studio.txt "
              "(scripts/setup.sh does)", file=sys.stderr)
        return 2
    from robokin_ros.core.robot import RobotModel
    live = None
    try:
        # the robot is checked before the server exists: a bad name or URDF is refused without viser's banner
        robot = RobotModel.load(args.robot, args.base_frame, args.tip_frame)
        from robokin_ros.studio.app import StudioApp
        if args.ros:
            from robokin_ros.studio.live_ros import LiveRosBridge
            live = LiveRosBridge(robot, args.servo_node, args.joint_topic, args.command)
            live.start()
        app = StudioApp(args.robot, args.base_frame, args.tip_frame, host=args.host, port=args.port,
                        rate=args.rate, render=args.render, triangles=None if args.triangles == -1 else args.triangles,
                        live=live).start()
    except RobokinError as err:
        print(f"robokin_studio: error: {one_line(err)}", file=sys.stderr)
        if live is not None:
            live.stop()
        return 2
    print(f"robokin studio: open {app.url} in a browser (Ctrl-C stops)", flush=True)
    try:
        while True:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        app.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
