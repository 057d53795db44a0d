"""The demo's report: tracking per phase, status transitions, capability along the script, the plot."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from robokin_ros.core.robot import RobotModel
from robokin_ros.core.servo.status import ServoStatus
from robokin_ros.demo.script import RAMP_S, Phase, PhaseReport, Recording, tool_velocities

LAG_S = 0.005           # [s] how long the arm lags the command: a phase's samples run this much past its end
END_WINDOW_S = 0.05     # [s] half-width of the window the capability takes the end-of-phase pose from


def status_name(code: int) -> str:
    """The ServoStatus name of a code, or the number when the code is unknown."""
    return ServoStatus(code).name if code in ServoStatus._value2member_map_ else str(code)


def analyse_phase(robot: RobotModel, recording: Recording, phase: Phase, start: float, end: float,
                  scale_linear: float, scale_rotational: float) -> PhaseReport:
    """Compare the measured tool motion of one phase with its command."""
    t, q, _ = recording.arrays(start, end + LAG_S)
    origins, lin, ang = tool_velocities(robot, t, q)
    steady = t >= start + RAMP_S
    rotating = np.linalg.norm(phase.angular) > 0
    if rotating:
        commanded = np.array(phase.angular) * scale_rotational
        if phase.frame == "tool":   # tool-frame angular velocity rotated into base axes per sample
            measured = np.array([robot.fk(qi).rotation.T @ wi for qi, wi in zip(q, ang)])
        else:
            measured = ang
    else:
        commanded, measured = np.array(phase.linear) * scale_linear, lin
    errors = np.linalg.norm(measured[steady] - commanded, axis=1) if steady.any() else np.array([np.nan])
    statuses = [s for s in recording.status if start <= s.time <= end]
    names = tuple(dict.fromkeys(status_name(s.code) for s in statuses))
    locked = tuple(dict.fromkeys(j for s in statuses for j in s.locked_joints))
    sigma = min((s.sigma_min for s in statuses), default=np.nan)
    # rotations: origin travel after the RAMP_S transition (the previous phase's tail is not this phase's
    # doing); translations: the whole phase
    kept = origins[steady] if rotating else origins
    drift = float(np.linalg.norm(kept[-1] - kept[0])) if len(kept) else np.nan
    return PhaseReport(phase.name, float(np.linalg.norm(commanded)), float(np.median(errors)), drift,
                       float(sigma), names, locked)


def print_twist_report(reports: list[PhaseReport], transitions: list[str], stop_s: float | None) -> None:
    print("\nTwist teleoperation report")
    print(f"  {'phase':<30s} {'command':>9s} {'median err':>11s} {'origin moved':>13s} {'min sigma':>10s}  status")
    for r in reports:
        unit = "rad/s" if "rotate" in r.name or "wrist" in r.name else "m/s"
        err = f"{r.median_speed_error * (1 if unit == 'rad/s' else 1000):.3g}{'' if unit == 'rad/s' else ' mm/s'}"
        print(f"  {r.name:<30s} {r.commanded_speed:6.3f} {unit:<5s} {err:>11s} {r.tool_origin_drift * 1000:9.1f} mm "
              f"{r.min_sigma:10.4f}  {', '.join(r.statuses) or '-'}"
              + (f"  locked: {', '.join(r.locked_joints)}" if r.locked_joints else ""))
    print("\n  status transitions:")
    for line in transitions:
        print(f"    {line}")
    print(f"\n  time to stop after silence: {'still moving!' if stop_s is None else f'{stop_s * 1000:.0f} ms'}")


def configured_jerk(params_file: Path, n: int) -> np.ndarray | None:
    """The joint jerk limits (n,) [rad/s^3] a servo parameter file sets, None when it sets none."""
    params = yaml.safe_load(Path(params_file).read_text())["/**"]["ros__parameters"]
    if params.get("max_joint_jerk"):
        return np.array(params["max_joint_jerk"], dtype=float)
    default = float(params.get("default_joint_jerk", 0.0))
    return np.full(n, default) if default > 0.0 else None


def print_jerk_report(recording: Recording, t0: float, jerk_limits: np.ndarray | None) -> None:
    """The twist script's peak jerk over the joints' jerk limits, as the servo reports each window it published (its
    status: the window on the controller's spline, the step from the window before included). The ROS tests measure
    the windows the controller receives (test/ros/test_servo_jerk.py): /joint_states, sampled by a process that ticks
    irregularly, would measure its own timing (two samples 20 us apart divide rounding by their spacing squared)."""
    if jerk_limits is None:
        print("\n  jerk: no jerk limits configured (velocity and acceleration limits only)")
        return
    shares = [s.peak_jerk_share for s in recording.status if s.time >= t0 and np.isfinite(s.peak_jerk_share)]
    print(f"\n  peak jerk over the limits: {max(shares, default=float('nan')) * 100:.1f} % in the windows the servo "
          f"published ({len(shares)} status reports), limits {', '.join(f'{j:g}' for j in jerk_limits)} rad/s^3")


def status_transitions(recording: Recording, t0: float) -> list[str]:
    """One line per change of status code (or of the locked-joint set)."""
    lines, last = [], None
    for sample in recording.status:
        key = (sample.code, sample.locked_joints)
        if key != last:
            lines.append(f"t={sample.time - t0:6.2f} s  {status_name(sample.code):<40s} {sample.message}")
            last = key
    return lines


def write_plot(robot: RobotModel, recording: Recording, t0: float, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, q, dq = recording.arrays()
    origins = np.array([robot.fk(qi).translation for qi in q])
    fig = plt.figure(figsize=(14, 9))
    ax3d = fig.add_subplot(2, 2, 1, projection="3d")
    for phase, start, end in recording.phase_spans:
        keep = (t >= start) & (t <= end)
        ax3d.plot(*origins[keep].T, label=phase.name)
    ax3d.set_title("tool origin path (base frame) [m]")
    ax3d.legend(fontsize=6, loc="upper left")
    ax_v = fig.add_subplot(2, 2, 2)
    ax_v.plot(t - t0, dq)
    ax_v.set_title("joint velocities [rad/s]")
    ax_v.legend(robot.joint_names, fontsize=6)
    ax_q = fig.add_subplot(2, 2, 3)
    span = robot.limits.upper - robot.limits.lower
    ax_q.plot(t - t0, (q - robot.limits.lower) / span)
    ax_q.set_title("joint positions, share of range (0 = lower, 1 = upper limit)")
    ax_s = fig.add_subplot(2, 2, 4)
    if recording.status:
        st = np.array([(s.time - t0, s.sigma_min, s.code) for s in recording.status])
        ax_s.plot(st[:, 0], st[:, 1], label="sigma_min")
        ax_s.step(st[:, 0], st[:, 2] / 10.0, where="post", label="status code / 10")
        ax_s.legend(fontsize=7)
    ax_s.set_title("servo: smallest singular value and status")
    for ax in (ax_v, ax_q, ax_s):
        for span in recording.phase_spans:
            ax.axvline(span.start - t0, color="grey", lw=0.5)
        ax.set_xlabel("time [s]")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def print_capability_along(robot: RobotModel, recording: Recording, out_dir: Path) -> None:
    """How the arm's capability changes along the twist script; a picture at the most stretched pose."""
    from robokin_ros.core.capability.analysis import analyze, torque_limits_of
    from robokin_ros.tools.capability_view import render

    torque = torque_limits_of(robot)
    print("\nCapability along the twist script (translational, at the end of each phase):")
    print(f"  {'phase':<30s} {'yoshikawa':>10s} {'cond':>7s} {'sigma_min':>10s} {'v_max m/s':>10s} "
          f"{'F_min N':>8s} {'F_max N':>8s}")
    worst_q, worst_sigma = None, np.inf
    for phase, _, end in recording.phase_spans:
        q = recording.arrays(end - END_WINDOW_S, end + END_WINDOW_S).positions
        if not len(q):
            continue
        a = analyze(robot, q[-1], torque.limits, torque.reason)
        m = a.manipulability
        force = a.force_weighted.semi_axes if a.force_weighted is not None else (np.nan, np.nan, np.nan)
        print(f"  {phase.name:<30s} {m.yoshikawa:10.4f} {m.condition:7.1f} {m.sigma_min:10.4f} "
              f"{a.velocity.semi_axes[0]:10.3f} {min(force):8.1f} {max(force):8.1f}")
        if m.sigma_min < worst_sigma:
            worst_q, worst_sigma = q[-1], m.sigma_min
    if worst_q is not None:
        picture = out_dir / "capability_stretched.png"
        render(robot, worst_q, picture, views=("iso", "front"))
        print(f"  capability picture at the least dexterous pose (sigma_min {worst_sigma:.4f}): {picture}")
