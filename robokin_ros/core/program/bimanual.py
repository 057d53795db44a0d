"""Planning a motion program on a robot with several tips (two arms): every tip planned, timed and checked together.

`MotionPlanner.plan` comes here when the robot has more than one tip. The program's moves are grouped into pieces:
- carried-object moves (`Move.carried`) up to an exact stop: the object's path (`build_path`: lines, arcs, blended
  zones) carried by every tip as grasped (`MotionProgram.grasp`, or the grasp at the piece's start:
  `held_object.take_grasp`), with the relative pose held as a task of its own;
- other Cartesian moves up to an exact stop: each names one tip (`Move.tip`, "" = the plan's tip) or several
  (`Move.targets`); the tips it does not name hold their pose. When every move of the stretch moves the same tips,
  their zones are blended per tip and the tips' stretches resampled onto one grid (`blended_per_tip`): they start
  every stretch, blends included, at the same sample and time; otherwise every move ends at rest (a note says so),
  so all tips reach its targets at the same sample and the same time;
- a MoveJ: a joint-space line to joint values, or to a tip's pose by the planner's pose solver.
Each piece is solved by the stacked IK (`TipsIkSolver`), cut at its stops and timed per rest-to-rest section in one
toppra run over the joints under the moves' limits, every tip under the moves' tool speeds; the played trajectory is
measured against each tip's geometry. A piece that fails ends the program: its solved part is timed (ending at rest)
and returned with the failure, which names the tip.
"""
from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

from robokin_ros.core.errors import EmptyPathError, PathInputError
from robokin_ros.core.path.surface import (
    PathStatus,
    PlanningBudget,
    TipMove,
    TipsPath,
    ToolSpeedLimit,
    blended_per_tip,
    carried_paths,
    join_reports,
    per_tip_moves,
    stretch_reports,
    time_tips_section,
)
from robokin_ros.core.program.moves import MotionProgram, MoveKind, check_program, check_tips
from robokin_ros.core.program.pieces import joint_line
from robokin_ros.core.program.result import MotionPlan, MoveReport, with_jerk_shares
from robokin_ros.core.program.runs import empty_reports, point_to_point
from robokin_ros.core.tips.held_object import take_grasp
from robokin_ros.core.trajectory.arrays import concatenate_trajectories, hold_trajectory

ZONE_NOTE = ("zones are blended only between moves that all move the same tips: here each move ends at rest "
             "(a tip holding in one move and moving in the next starts from rest)")


class _Outcome:
    """What the pieces planned so far add up to."""

    def __init__(self, program: MotionProgram) -> None:
        self.program = program
        self.parts, self.reports, self.timings, self.notes = [], [], [], []
        self.offset = 0.0
        self.deviation: dict[str, list[float]] = {}
        self.relative: list[float] | None = None
        self.failure: tuple | None = None        # (move, status, message, tip)
        self.dense = 0


def plan_tips_program(planner, program: MotionProgram, start_positions, tip_frame: str, axis_mask,
                      velocity, acceleration, budget: PlanningBudget) -> MotionPlan:
    """The plan of `program` from `start_positions` on a robot with several tips (see the module docstring)."""
    started = time.perf_counter()
    robot, c = planner.robot, planner.config
    tips = robot.tip_frames
    default_tip = tip_frame or c.tip_frame or robot.tip_frame
    if default_tip not in tips:
        raise PathInputError(f"tip '{default_tip}' is not one of the robot's tips {list(tips)}")
    mask = c.axis_mask if axis_mask is None else tuple(bool(a) for a in np.asarray(axis_mask).ravel())
    if not all(mask) or len(mask) != 6:
        raise PathInputError(f"axis mask {list(mask)}: a robot with several tips plans all six axes of every tip")
    if program.waypoint_path is not None:
        program = _as_program(program)
    q = robot.check_positions(start_positions, "start positions").copy()
    check_program(program, robot.n)
    check_tips(program, tips)
    move_limits = planner.move_limits(program, *planner.scalings(program, velocity, acceleration))
    out = _Outcome(program)
    solver = planner.tips_solver()
    for kind, moves in _pieces(program):
        budget.check("program", moves[0], len(program))
        if kind == "joint":
            q = _joint_piece(planner, program, moves[0], q, move_limits, default_tip, out)
        else:
            q = _cartesian_piece(planner, solver, program, kind, moves, q, default_tip, move_limits, budget, out)
        if out.failure is not None:
            break
    return _plan(robot, program, q, out, started, planner.limits().jerk)


def _as_program(program: MotionProgram) -> MotionProgram:
    """A waypoint path on several tips: its MoveL moves, for the plan's tip (approaches other than PATH refused)."""
    if program.waypoint_path.approach != 0:
        raise PathInputError("a waypoint path on a robot with several tips starts where the tip is (APPROACH_PATH); "
                             "move it to waypoints[0] first")
    return MotionProgram(program.moves, program.velocity_scaling, program.acceleration_scaling, program.name,
                         program.notes)


def _pieces(program: MotionProgram) -> list[tuple[str, list[int]]]:
    """("joint" | "carried" | "tips", move indices): a MoveJ alone, consecutive carried moves up to an exact stop,
    consecutive other Cartesian moves."""
    out: list[tuple[str, list[int]]] = []
    for i, move in enumerate(program.moves):
        kind = "joint" if move.kind is MoveKind.JOINT else "carried" if move.carried else "tips"
        previous = program.moves[out[-1][1][-1]] if out else None
        if out and kind != "joint" and out[-1][0] == kind and not previous.fine:
            out[-1][1].append(i)
        else:
            out.append((kind, [i]))
    return out


def _cartesian_piece(planner, solver, program, kind, moves, q, default_tip, move_limits, budget, out) -> np.ndarray:
    """Solve and time one Cartesian piece from q; returns the positions it ends at."""
    c = planner.config
    poses = solver.poses(q)
    targets = [program.moves[i] for i in moves]
    try:
        if kind == "carried":
            grasp = program.grasp or take_grasp(poses)[1]
            _check_grasp(grasp, poses, solver.tips, c, moves[0])
            path = carried_paths(solver.tips, grasp, grasp.base_T_object(poses[0]), [m.pose for m in targets],
                                 [m.zone for m in targets[:-1]] + [0.0],
                                 [None if m.via is None else np.asarray(m.via, float) for m in targets],
                                 c.sample_step, c.sample_angle_step, clamp_blend=True,
                                 max_unstopped_turn=planner.unstopped_turn(), budget=budget)
        else:
            tip_moves = [_tip_moves(m, default_tip) for m in targets]
            path = blended_per_tip(solver.tips, poses, tip_moves, [m.zone for m in targets[:-1]] + [0.0],
                                   c.sample_step, c.sample_angle_step, planner.unstopped_turn(), budget) \
                if len(targets) > 1 else None
            if path is None:
                path = per_tip_moves(solver.tips, poses, tip_moves, c.sample_step, c.sample_angle_step)
                if any(m.zone > 0 for m in targets[:-1]) and ZONE_NOTE not in out.notes:
                    out.notes.append(ZONE_NOTE)
    except EmptyPathError:
        out.notes.append(f"zero-length move(s) {', '.join(program.moves[i].label(i) for i in moves)}: the targets "
                         "are where the tips are, nothing to move")
        return q
    except PathInputError as err:
        index = moves[err.waypoint] if 0 <= err.waypoint < len(moves) else moves[0]
        raise PathInputError(f"{program.moves[index].label(index)}: {err}", index) from None
    dropped = path.lead.dropped_waypoints
    if dropped:
        out.notes.append(f"zero-length move(s) {', '.join(program.moves[moves[j]].label(moves[j]) for j in dropped)}"
                         ": the targets are where the tips are, nothing to move")
    ik = solver.solve(path, q, budget)
    index = np.asarray(moves)
    labels = index[path.lead.segment[:len(ik.positions)]]
    _time_sections(planner, solver, ik.positions, path, labels, move_limits, budget, out)
    out.dense += len(ik.positions)
    if not ik.success:
        failed = int(index[path.lead.segment[min(max(ik.failed_sample, 0), path.size - 1)]])
        out.failure = (failed, ik.status, f"{program.moves[failed].label(failed)}: {ik.message}", ik.failed_tip)
    return ik.positions[-1]


def _check_grasp(grasp, poses, tips, config, index: int) -> None:
    """PathInputError when a given grasp does not hold the tips where they are (beyond the path tolerance)."""
    base_T_object = grasp.base_T_object(poses[0])
    for tip, pose, held in zip(tips[1:], poses[1:], grasp.base_T_tips(base_T_object)[1:]):
        distance = float(np.linalg.norm(held.translation - pose.translation))
        angle = float(np.linalg.norm(pin.log3(pose.rotation.T @ held.rotation)))
        if distance > config.max_position_deviation or angle > config.max_orientation_deviation:
            raise PathInputError(f"move {index}: the program's grasp puts {tip} {distance * 1e3:.2f} mm / "
                                 f"{angle * 1e3:.2f} mrad from where it is (tolerance "
                                 f"{config.max_position_deviation * 1e3:g} mm / "
                                 f"{config.max_orientation_deviation * 1e3:g} mrad): the hands do not hold the "
                                 "object as grasped", index)


def _tip_moves(move, default_tip: str) -> dict:
    """tip -> TipMove of a move that names tips."""
    if move.targets:
        return {t.tip: TipMove(t.pose, None if t.via is None else np.asarray(t.via, float)) for t in move.targets}
    via = np.asarray(move.via, float) if move.kind is MoveKind.CIRCULAR else None
    return {move.tip or default_tip: TipMove(move.pose, via)}


def _time_sections(planner, solver, Q, path: TipsPath, labels, move_limits, budget, out: _Outcome) -> None:
    """Time the solved samples Q of `path` per rest-to-rest section; add trajectories, reports and deviations."""
    if len(Q) < 2:
        return
    last = len(Q) - 1
    bounds = [0, *(s for s in path.lead.stops if s < last), last]
    v_max, a_max = planner.limits()[:2]
    program, c = out.program, planner.config
    for a, b in zip(bounds[:-1], bounds[1:]):
        moves = labels[a:b + 1].copy()
        moves[0] = moves[1]              # a stop is the last sample of the move before: the section starts after it
        section = time_tips_section(Q[a:b + 1], path.section(a, b), moves, move_limits, solver, planner.limits(), c,
                                    budget)
        rows = stretch_reports(section.timed, section.schedule, v_max, a_max, ToolSpeedLimit(solver.speeds),
                               planner.robot.joint_names, c.control_rate_hz)
        for index, row in zip(np.unique(moves).tolist(), rows):
            move = program.moves[index]
            out.reports.append(MoveReport(index, move.label(index), out.offset + row.start_time,
                                          row.end_time - row.start_time, row.peak_tool_speed,
                                          row.peak_tool_angular_speed, row.limited_by, move.speed,
                                          0.0 if move.fine or index == int(moves[-1]) else move.zone))
        out.parts.append(section.timed.arrays)
        out.timings.append(section.timed.report)
        out.offset += section.timed.arrays.duration
        for tip, position, orientation in zip(solver.tips, section.deviation.positions,
                                              section.deviation.orientations):
            worst = out.deviation.setdefault(tip, [0.0, 0.0])
            worst[0], worst[1] = max(worst[0], position), max(worst[1], orientation)
        if path.relative is not None:
            rel = out.relative or [0.0, 0.0]
            out.relative = [max(rel[0], section.deviation.relative_position),
                            max(rel[1], section.deviation.relative_orientation)]


def _joint_piece(planner, program, index, q, move_limits, default_tip, out: _Outcome) -> np.ndarray:
    """A MoveJ: the synchronised point-to-point move to its joint values or to its tip's pose."""
    robot, c = planner.robot, planner.config
    move = program.moves[index]
    if move.speed > 0 or move.angular_speed > 0:
        raise PathInputError(f"{move.label(index)}: a MoveJ on a robot with several tips takes no tool speed "
                             "(set joint_speed)", index)
    if move.joints is not None:
        target = np.asarray(move.joints, float)
        outside = np.flatnonzero((target < robot.limits.lower) | (target > robot.limits.upper))
        if len(outside):
            j = int(outside[0])
            out.failure = (index, PathStatus.JOINT_LIMIT, f"{move.label(index)}: {robot.joint_names[j]}="
                           f"{target[j]:.4f} is outside its limits", "")
            return q
    else:
        tip = move.tip or default_tip
        found = planner.pose_solver(robot, move.pose, q, robot.frame_id(tip), c.joint_limit_margin)
        if not found.success:
            out.failure = (index, PathStatus.SINGULARITY, f"{move.label(index)}: no joint configuration on the "
                           f"current branch puts {tip} at the pose ({found.position_error * 1e3:.2f} mm remain)", tip)
            return q
        target = found.positions
    if np.abs(target - q).max() < 1e-12:
        return q
    v_max, a_max, jerk = planner.limits()
    v_scale, a_scale = move_limits[index][:2]
    timed, row = point_to_point(q, target, v_max * v_scale, a_max * a_scale, c.joint_move_profile,
                                c.trajectory_rate_hz, c.control_rate_hz, robot.joint_names,
                                planner.tips_solver().speeds, jerk)
    out.reports.append(MoveReport(index, move.label(index), out.offset, row.end_time - row.start_time,
                                  row.peak_tool_speed, row.peak_tool_angular_speed, row.limited_by, 0.0, 0.0))
    out.parts.append(timed.arrays)
    out.timings.append(timed.report)
    out.offset += timed.arrays.duration
    out.dense += len(joint_line(q, target))
    return target


def _plan(robot, program: MotionProgram, q, out: _Outcome, started: float, jerk=None) -> MotionPlan:
    """The MotionPlan of the pieces planned (up to a failure); `jerk`: the joint jerk limits (the move reports'
    peak jerk shares), None = none."""
    count = len(program.moves)
    notes = tuple(out.notes)
    failed, status, message, tip = out.failure if out.failure else (-1, PathStatus.SUCCESS, "", "")
    done = {r.index for r in out.reports}
    reports = sorted(out.reports + [r for r in empty_reports(program) if r.index not in done], key=lambda r: r.index)
    deviations = tuple((t, *out.deviation[t]) for t in robot.tip_frames if t in out.deviation)
    common = dict(failed_move=failed, completed_moves=failed if failed >= 0 else count, notes=notes,
                  failed_tip=tip, tip_deviations=deviations, dense_samples=out.dense,
                  relative_deviation=None if out.relative is None else tuple(out.relative),
                  timings={"total": time.perf_counter() - started})
    if not out.parts:
        text = message or "already there: no move of the program moves a tip"
        hold = None if out.failure else hold_trajectory(robot.joint_names, q)
        return MotionPlan(status, text + "".join(f"; note: {n}" for n in notes), hold, tuple(reports), **common)
    trajectory = concatenate_trajectories(out.parts)
    timing = join_reports(out.timings, trajectory.duration)
    text = (message + f"; the solved part ({failed} of {count} moves done) is timed" if out.failure else
            f"program planned for {len(robot.tip_frames)} tips: {count} moves, cycle time {trajectory.duration:.3f} s")
    reports = with_jerk_shares(reports, trajectory, jerk)
    return MotionPlan(status, text + "".join(f"; note: {n}" for n in notes), trajectory, tuple(reports), timing,
                      max_position_deviation=max((d[1] for d in deviations), default=0.0),
                      max_orientation_deviation=max((d[2] for d in deviations), default=0.0), **common)
