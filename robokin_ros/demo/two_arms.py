"""The demo's two-arm phase (issue 26): a second launch, on two Pandas on a table (`dual_panda`).

sim_robot, path_ik_node and servo_node start as child processes with the dual Panda's configs (sim_robot starts
with the hands facing each other 0.3 m apart, as around a box: config/dual_panda_servo.yaml's sim_robot section).
Then:
1. the box goes through a 20 cm square in the horizontal plane, centred where it starts: a motion program of
   carried MoveL moves (exact stops at the corners) through path_ik_node's action;
2. servo_node is switched to the coordinated mode (the `tips.mode` parameter, as `ros2 param set` would) and the
   box gets a twist of 5 cm/s along x for 2 s, then the same back.
Everything is judged from /joint_states (two_arms_report.py); the plot is out/demo/two_arms.png.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from robokin_ros.core.robot import RobotModel
from robokin_ros.demo.driver import make_driver, spin_for, spin_until, wait_for
from robokin_ros.demo.graph import NodeGraph, NodeProcess
from robokin_ros.demo.path import ACTION, NO_STATE_RETRIES, RETRY_PAUSE_S, execute_goal
from robokin_ros.demo.script import Recording
from robokin_ros.demo.two_arms_report import (
    CarryFigures,
    COMMAND_TIMEOUT,
    Span,
    TwoArmReport,
    carry_figures,
    object_move_figures,
    print_carry,
    print_object_move,
    print_verdict,
    write_two_arm_plot,
)
from robokin_ros.share_files import config_file

ROBOT = "dual_panda"
SQUARE_OFFSETS = ((0.1, 0.0, 0.0), (0.1, 0.1, 0.0), (-0.1, 0.1, 0.0), (-0.1, -0.1, 0.0), (0.1, -0.1, 0.0),
                  (0.1, 0.0, 0.0), (0.0, 0.0, 0.0))     # [m] the box's corners from its start, base axes
CARRY_SPEED = 0.1              # [m/s] the box's peak speed on each side
BOX_SPEED = 0.05               # [m/s] the coordinated servo's twist of the box, along BOX_AXIS
BOX_AXIS = (1.0, 0.0, 0.0)
# the twist is streamed this long; the servo follows the last one until it is stale (dual_panda_servo.yaml's
# incoming_command_timeout, 0.1 s), so the box moves for 2 s: 100 mm
STREAM_S = 1.9
TWIST_PERIOD_S = 0.01          # [s] 100 Hz, as a client would
START_TIMEOUT_S = 60.0         # [s] for the three nodes (the 14-joint model and its collision pairs load slower)
STILL_TIMEOUT_S = 10.0         # [s] for the arms to come to rest
STILL_STATES = 20              # the arms are at rest when this many last joint states are equal
DRAIN_S = 0.3                  # [s] joint states still in flight when a result arrives


def start_two_arm_graph(log_dir: Path) -> NodeGraph:
    """sim_robot, path_ik_node and servo_node on the dual Panda, logs in `log_dir`."""
    servo_config = config_file(f"{ROBOT}_servo.yaml")        # its sim_robot section: the hands around the box
    graph = NodeGraph(log_dir)
    graph.start(NodeProcess("sim_robot", params_files=[config_file("sim_robot.yaml"), servo_config],
                            params={"robot": ROBOT, "publish_tf": "false"}))
    graph.start(NodeProcess("path_ik_node", params_files=[config_file(f"{ROBOT}_path_ik.yaml")]))
    graph.start(NodeProcess("servo_node", params_files=[servo_config]))
    return graph


def run_two_arms(executor, out: Path) -> int:
    """The whole two-arm phase in a graph of its own; 0 when it passed."""
    t0 = time.monotonic()
    robot = RobotModel.load(ROBOT)
    recording = Recording()
    print(f"\n=== Two arms: a second launch on {ROBOT} (sim_robot, path_ik_node, servo_node) ===", flush=True)
    graph = start_two_arm_graph(out / "logs" / "two_arms")
    driver = make_driver(robot, recording, "robokin_demo_two_arms")   # a new name: rosout keeps one per name
    executor.add_node(driver)
    try:
        report = _run(executor, driver, robot, recording, graph, out, t0)
    except RuntimeError as err:
        print(f"  two-arm phase: FAILED: {err}")
        return 1
    finally:
        executor.remove_node(driver)
        driver.destroy_node()
        graph.stop()
    print(f"  two-arm phase took {time.monotonic() - t0:.1f} s (start-up included)")
    return 0 if report.ok else 1


def _run(executor, driver, robot: RobotModel, recording: Recording, graph: NodeGraph, out: Path,
         t0: float) -> TwoArmReport:
    from rclpy.action import ActionClient
    from rcl_interfaces.srv import SetParameters

    from robokin_interfaces.action import ExecuteCartesianPath

    client = ActionClient(driver, ExecuteCartesianPath, ACTION)
    parameters = driver.create_client(SetParameters, "/servo_node/set_parameters")
    wait_for(executor, lambda: recording.times and recording.status and client.server_is_ready()
             and parameters.service_is_ready() and driver.twist_pub.get_subscription_count() > 0,
             START_TIMEOUT_S, "sim_robot, path_ik_node and servo_node on the dual Panda", graph)
    _wait_still(executor, recording)
    start = recording.positions[-1].copy()
    left, right = (robot.fk(start, tip).translation for tip in robot.tip_frames)
    box_start = 0.5 * (left + right)
    box_corners = box_start + np.array(SQUARE_OFFSETS)
    spans: list[Span] = []

    print(f"\nCarried square: both hands ({np.linalg.norm(left - right):.3f} m apart) carry a box through a "
          f"{_side(SQUARE_OFFSETS) * 100:.0f} cm square (horizontal, {len(SQUARE_OFFSETS)} carried MoveL moves at "
          f"{CARRY_SPEED:.1f} m/s, exact stops), through {ACTION}", flush=True)
    goal = ExecuteCartesianPath.Goal(program=_carried_square(robot, box_corners))
    t_start, stamp_start = time.monotonic(), driver.get_clock().now().nanoseconds
    result, goals = None, 0
    for _attempt in range(NO_STATE_RETRIES):
        result = execute_goal(executor, client, goal)
        goals += result is not None
        if result is None or result.error_code != ExecuteCartesianPath.Result.NO_JOINT_STATE:
            break
        spin_for(executor, RETRY_PAUSE_S)
    t_end, stamp_end = time.monotonic(), driver.get_clock().now().nanoseconds
    spin_for(executor, DRAIN_S)
    spans.append(Span("carried square", t_start, t_end))
    carry = _report_carry(robot, recording, result, start, box_corners, stamp_start, stamp_end, t_end - t_start)

    servo, servo_error, stream_gap, asked = None, "", 0.0, BOX_SPEED * (STREAM_S + COMMAND_TIMEOUT)
    if result is not None and result.error_code == 0:
        servo, servo_error, stream_gap = _coordinated_box_move(executor, driver, parameters, robot, recording,
                                                               spans)
        if servo is not None:
            print_object_move(servo, asked, _statuses(recording, spans[-1].start, spans[-1].end), stream_gap)
    else:
        servo_error = "not run: the carried square failed"
    report = TwoArmReport(tuple(robot.tip_frames), None if result is None else result.error_code,
                          "" if result is None else result.message, carry, servo, asked, goals,
                          recording.trajectories_sent, tuple(recording.rejections), tuple(graph.dead()), servo_error,
                          stream_gap)
    print_verdict(report)
    t, q, _ = recording.arrays()
    plot = out / "two_arms.png"
    write_two_arm_plot(robot, t, q, start, spans, box_corners, t0, plot)
    np.savez_compressed(out / "two_arms_recording.npz", time=t - t0, positions=q,
                        joint_names=np.array(robot.joint_names),
                        spans=np.array([(s.start - t0, s.end - t0) for s in spans]))
    print(f"  plot written to {plot}")
    return report


def _side(offsets) -> float:
    span = np.ptp(np.array(offsets), axis=0)
    return float(span.max())


def _carried_square(robot: RobotModel, box_corners: np.ndarray) -> list:
    """The program: one carried MoveL per corner, the box keeping its base axes (the grasp taken where the hands
    are when the goal starts)."""
    from geometry_msgs.msg import PoseStamped

    from robokin_interfaces.msg import MotionMove
    from robokin_ros.ros.path_conversions import pose_msg

    moves = []
    for k, corner in enumerate(box_corners, 1):
        target = PoseStamped(pose=pose_msg(pin.SE3(np.eye(3), corner)))
        target.header.frame_id = robot.base_frame
        moves.append(MotionMove(type=MotionMove.MOVE_L, name=f"corner {k}", pose=target, carried=True,
                                speed=CARRY_SPEED))
    return moves


def _report_carry(robot, recording, result, start, box_corners, stamp_start, stamp_end,
                  elapsed) -> CarryFigures | None:
    from robokin_ros.ros.conversions import duration_seconds

    if result is None:
        print("  the goal was rejected or got no result")
        return None
    points = result.trajectory.points
    duration = duration_seconds(points[-1].time_from_start) if points else 0.0
    print(f"  result: code {result.error_code}: {result.message}")
    print(f"  trajectory: {len(points)} points for {len(result.trajectory.joint_names)} joints, {duration:.2f} s; "
          f"executed in {elapsed:.2f} s (planning included)")
    if list(result.tip_names):
        print("  the node's own figures (planned trajectory): " + ", ".join(
            f"{tip} {d * 1e3:.4f} mm" for tip, d in zip(result.tip_names, result.tip_position_deviations))
            + f"; relative {result.relative_position_deviation * 1e3:.4f} mm")
    if result.error_code != 0:
        return None
    samples = recording.between_stamps(stamp_start, stamp_end)
    carry = carry_figures(robot, samples.positions, start, SQUARE_OFFSETS, samples.times)
    print_carry(carry, box_corners)
    return carry


def _coordinated_box_move(executor, driver, parameters, robot, recording, spans):
    """Switch the servo to the coordinated mode, move the box out along BOX_AXIS and back: (figures, '', the
    longest pause between two published twists [s]) or (None, why, 0) when the mode could not be set."""
    from geometry_msgs.msg import TwistStamped

    print(f"\nCoordinated servo: tips.mode coordinated, the box's twist {BOX_SPEED * 100:.0f} cm/s along x for "
          f"{STREAM_S + COMMAND_TIMEOUT:.0f} s, then back, on /servo_node/delta_twist_cmds", flush=True)
    refused = _set_mode(executor, parameters, "coordinated")
    if refused:
        return None, f"tips.mode coordinated refused: {refused}", 0.0
    _wait_still(executor, recording)
    start = recording.positions[-1].copy()
    t_start = time.monotonic()
    turns, gap = [], 0.0
    for sign in (1.0, -1.0):
        msg = TwistStamped()
        msg.header.frame_id = robot.base_frame
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = (sign * BOX_SPEED * a for a in BOX_AXIS)
        gap = max(gap, _stream(executor, lambda m=msg: driver.twist_pub.publish(m), STREAM_S))
        _wait_still(executor, recording)
        turns.append(time.monotonic())
    spans.append(Span("coordinated servo", t_start, time.monotonic()))
    t, q, _ = recording.arrays(t_start)
    turn = int(np.searchsorted(t, turns[0]) - 1)
    return object_move_figures(robot, q, start, max(turn, 0), BOX_AXIS), "", gap


def _set_mode(executor, client, mode: str) -> str:
    """Set the servo's tips.mode through its parameter service; '' when done, else the reason."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    request = SetParameters.Request(parameters=[Parameter(
        name="tips.mode", value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=mode))])
    future = client.call_async(request)
    if not spin_until(executor, future.done, 10.0):
        return "no answer from /servo_node/set_parameters"
    result = future.result().results[0]
    return "" if result.successful else result.reason


def _stream(executor, publish, seconds: float) -> float:
    """Call `publish` every TWIST_PERIOD_S on a fixed schedule (a late one goes at once; the schedule does not
    slip), the last exactly `seconds` after the first. Returns the longest pause between two calls [s]."""
    start = time.monotonic()
    count = int(round(seconds / TWIST_PERIOD_S))
    last, longest = None, 0.0
    for k in range(count + 1):
        due = start + k * TWIST_PERIOD_S
        while time.monotonic() < due:
            executor.spin_once(timeout_sec=min(0.002, max(due - time.monotonic(), 0.0)))
        publish()
        now = time.monotonic()
        longest = max(longest, now - last) if last is not None else 0.0
        last = now
    return longest


def _wait_still(executor, recording: Recording) -> None:
    """Spin until the last STILL_STATES joint states are equal (the arms at rest); RuntimeError after
    STILL_TIMEOUT_S."""
    def still() -> bool:
        last = recording.positions[-STILL_STATES:]
        return len(last) == STILL_STATES and float(np.ptp(np.array(last), axis=0).max()) < 1e-9

    spin_for(executor, DRAIN_S)
    if not spin_until(executor, still, STILL_TIMEOUT_S):
        raise RuntimeError(f"the arms did not come to rest within {STILL_TIMEOUT_S:.0f} s")


def _statuses(recording: Recording, start: float, end: float) -> list[str]:
    from robokin_ros.demo.report import status_name

    return list(dict.fromkeys(status_name(s.code) for s in recording.status if start <= s.time <= end))
