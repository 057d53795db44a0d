"""Incremental path IK of several tips: one stacked damped-least-squares step per dense sample.

The single-tip solver (`solver.PathIkSolver`) does one bounded DLS step per sample on one tip's six rows. Here the
task stacks six rows per tip (a tip that holds its pose asks for zero motion), and, for a carried object, six more:
the second tip's pose seen from the first (`held_object.relative_jacobian` / `relative_pose_error`), so that the
hands' relative pose is held as a task of its own and not only as the result of two tracked paths. With the relative
rows the stacked Jacobian is rank deficient by construction (they are combinations of the tips' rows), so the step
is the damped least-squares solution through an SVD that drops the null directions; the damping starts when the
smallest singular value of any tip's own Jacobian falls below the threshold (that tip is named when it fails).
Joint position limits with margin are velocity bounds (active set, as `core.dls`); the null-space push (posture,
limit avoidance) acts only on joints of moving tips, so a holding arm keeps its elbow too.

Checks (every sample and joint-space midpoint, per tip, in blocks of CHECK_BLOCK; never relaxed): each tip's pose
against its path, the joint step, and for a carried object the relative pose; the failure names the tip.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robokin_ros.core.dls import damping_factor
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.limits import avoidance_zone_widths, nullspace_velocity
from robokin_ros.core.path.budget import UNLIMITED, PlanningBudget
from robokin_ros.core.path.chain import pose_error_norms
from robokin_ros.core.path.config import PathConfig
from robokin_ros.core.path.deviation import AxisSelection
from robokin_ros.core.path.result import Deviations, PathStatus
from robokin_ros.core.path.tips_chain import TipFk, TipsSpeeds, tip_chain
from robokin_ros.core.path.tips_geometry import TipsPath
from robokin_ros.core.robot import RobotModel
from robokin_ros.core.tips.held_object import relative_jacobian, relative_pose_error

CHECK_BLOCK = 64
ALL_AXES = AxisSelection(np.arange(6), False)
_RANK_RTOL = 1e-5        # singular values below this share of the largest are null directions (relative rows)


@dataclass(frozen=True)
class TipsIkResult:
    """The outcome of a multi-tip path IK; on failure `positions` is the solved prefix (row 0 = start)."""

    status: PathStatus
    message: str
    positions: np.ndarray              # (K, n)
    path: TipsPath
    fraction: float                    # share of the path reached
    deviations: tuple[Deviations, ...]  # per tip, on the solved samples
    relative_deviation: tuple[float, float] = (0.0, 0.0)   # [m, rad] largest drift of the held relative pose
    failed_sample: int = -1
    failed_tip: str = ""
    failed_joint: str = ""
    compute_time: float = 0.0          # [s]

    @property
    def success(self) -> bool:
        """True when the whole path was solved within tolerance."""
        return self.status == PathStatus.SUCCESS


@dataclass(frozen=True)
class _Failure:
    sample: int
    status: PathStatus
    tip: int                 # index of the tip, -1 = the relative pose
    detail: str
    joint: int = -1


def stacked_dls(A: np.ndarray, b: np.ndarray, z: np.ndarray, lo: np.ndarray, hi: np.ndarray, lam: float,
                max_damping: float) -> np.ndarray:
    """dq (n,) of min |A dq - b|^2 + lam^2 |dq|^2 plus the faded null-space part of z, with lo <= dq <= hi: a joint
    leaving its bound is fixed there and the rest solved again (the worst first), as `core.dls` does for <= 6
    rows. A (m, n) may have more rows than columns and be rank deficient."""
    n = A.shape[1]
    free = np.ones(n, dtype=bool)
    dq = np.zeros(n)
    fade = (1.0 - lam / max_damping) ** 2 if max_damping > 0 else 1.0
    for _ in range(n + 1):
        W = A[:, free]
        r = b - A[:, ~free] @ dq[~free]
        U, s, Vt = np.linalg.svd(W, full_matrices=False)
        keep = s > _RANK_RTOL * max(s[0], 1e-300)
        Vk = Vt[keep]
        gain = s[keep] / (s[keep] ** 2 + lam * lam)
        zf = z[free]
        dq[free] = Vk.T @ (gain * (U[:, keep].T @ r)) + fade * (zf - Vk.T @ (Vk @ zf))
        excess = np.maximum(lo - dq, dq - hi)
        excess[~free] = 0.0
        worst = int(np.argmax(excess))
        if excess[worst] <= 1e-12:
            break
        free[worst] = False
        dq[worst] = lo[worst] if dq[worst] < lo[worst] else hi[worst]
    return np.clip(dq, lo, hi)


class TipsIkSolver:
    """Solves `TipsPath`s for every tip of a robot at once; reuse it across paths."""

    def __init__(self, robot: RobotModel, config: PathConfig | None = None) -> None:
        self.robot = robot
        self.config = c = config or PathConfig()
        self.chains = tuple(tip_chain(robot, tip) for tip in robot.tip_frames)
        self.fks = tuple(TipFk(chain) for chain in self.chains)
        self.speeds = TipsSpeeds(self.chains)
        lim = robot.limits
        self.lower, self.upper = lim.lower + c.joint_limit_margin, lim.upper - c.joint_limit_margin
        self.zone_width = avoidance_zone_widths(lim.lower, lim.upper, c.joint_limit_avoidance_zone)
        self.home = np.asarray(c.home_positions, float) if c.home_positions else robot.home()

    @property
    def tips(self) -> tuple[str, ...]:
        return self.robot.tip_frames

    def poses(self, q: np.ndarray) -> tuple[pin.SE3, ...]:
        """Every tip's pose at positions q (n,), base frame."""
        out = []
        for fk in self.fks:
            R, p = fk(q[None])
            out.append(pin.SE3(R[0], p[0]))
        return tuple(out)

    def solve(self, path: TipsPath, start_positions: np.ndarray, budget: PlanningBudget = UNLIMITED) -> TipsIkResult:
        """Solve every dense sample of `path` (its tips in the robot's order) from `start_positions` (n,)."""
        t0 = time.perf_counter()
        if path.tips != self.tips:
            raise InvalidInputError(f"the path's tips {list(path.tips)} are not the robot's {list(self.tips)}")
        q0 = self.robot.check_positions(start_positions, "start positions")
        Q = np.empty((path.size, self.robot.n))
        Q[0] = q0
        sigma = np.full((path.size, len(self.tips)), np.inf)
        worst = [Deviations() for _ in self.tips]
        relative = [0.0, 0.0]
        failure = self._start_outside_limits(q0)
        k = 1
        while failure is None and k < path.size:
            budget.check("IK", k - 1, path.size - 1)
            end = min(k + CHECK_BLOCK, path.size)
            for j in range(k, end):
                Q[j] = self._step(path, Q[j - 1], j, sigma[j])
            failure = self._check(path, Q, k, end, worst, relative)
            k = end
        return self._result(path, Q, sigma, failure, worst, relative, time.perf_counter() - t0)

    def _start_outside_limits(self, q0: np.ndarray) -> _Failure | None:
        lim = self.robot.limits
        outside = np.flatnonzero((q0 < lim.lower) | (q0 > lim.upper))
        if len(outside) == 0:
            return None
        j = int(outside[0])
        return _Failure(0, PathStatus.JOINT_LIMIT, self._tip_of_joint(j), "the start state is outside the joint "
                        f"limits: '{self.robot.joint_names[j]}' at {q0[j]:.4f}", j)

    def _tip_of_joint(self, joint: int) -> int:
        return next(i for i, chain in enumerate(self.chains) if joint in chain.columns)

    def _task(self, path: TipsPath, q: np.ndarray, k: int, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The stacked task (A (m, n), b (m,)) at q toward sample k; sigma (tips,) gets each tip's sigma_min."""
        n = self.robot.n
        rows, errors, poses, jacobians = [], [], [], []
        for i, fk in enumerate(self.fks):
            R, p, J = fk.pose_jacobian(q, n)
            target = path.paths[i]
            errors.append(np.r_[target.positions[k] - p, pin.log3(target.rotations[k] @ R.T)])
            rows.append(J)
            poses.append(pin.SE3(R, p))
            jacobians.append(J)
            sigma[i] = np.linalg.svd(J[:, self.chains[i].columns], compute_uv=False)[-1]
        if path.relative is not None:
            rows.append(relative_jacobian(jacobians[0], jacobians[1], poses[0], poses[1]))
            errors.append(-relative_pose_error(poses[0], poses[1], path.relative))
        return np.vstack(rows), np.concatenate(errors)

    def _step(self, path: TipsPath, q_prev: np.ndarray, k: int, sigma_out: np.ndarray) -> np.ndarray:
        """The DLS steps (up to `max_optimizer_iterations`) of sample k from q_prev."""
        c = self.config
        q = q_prev.copy()
        sigma = np.empty(len(self.tips))
        for it in range(int(c.max_optimizer_iterations)):
            A, b = self._task(path, q, k, sigma)
            if it == 0:
                sigma_out[:] = sigma
            elif np.abs(b).max() < c.convergence_tolerance:
                break
            lam = damping_factor(float(sigma.min()), c.singularity_sigma_threshold, c.max_damping)
            z = self._secondary(q, path)
            dq = stacked_dls(A, b, z, self.lower - q, self.upper - q, lam, c.max_damping)
            q = q + dq
        return q

    def _secondary(self, q: np.ndarray, path: TipsPath) -> np.ndarray:
        """The null-space push (limit avoidance, posture), on the joints of moving tips only."""
        c = self.config
        z = np.zeros(self.robot.n)
        if c.joint_limit_avoidance_gain_per_sample > 0.0 or c.posture_gain_per_sample > 0.0:
            nullspace_velocity(q, self.lower, self.upper, self.zone_width,
                               float(c.joint_limit_avoidance_gain_per_sample), self.home,
                               float(c.posture_gain_per_sample), z)
            still = np.ones(self.robot.n, dtype=bool)
            for chain, moving in zip(self.chains, path.moving):
                if moving:
                    still[chain.columns] = False
            z[still] = 0.0
        return z

    def _check(self, path: TipsPath, Q: np.ndarray, k0: int, k1: int, worst: list, relative: list) -> _Failure | None:
        """Check samples k0..k1-1 and the midpoints before them (every tip); the first failure, maxima updated."""
        c = self.config
        m = k1 - k0
        tp, tr = c.max_position_deviation, c.max_orientation_deviation
        mids = 0.5 * (Q[k0 - 1:k1 - 1] + Q[k0:k1])
        errors, poses = [], []
        for fk, dense in zip(self.fks, path.paths):
            R, p = fk(np.vstack([Q[k0:k1], mids]))
            poses.append((R[:m], p[:m]))
            pos, rot = pose_error_norms(R[:m], p[:m], dense.rotations[k0:k1], dense.positions[k0:k1], ALL_AXES)
            mpos, mrot = pose_error_norms(R[m:], p[m:], dense.mid_rotations[k0 - 1:k1 - 1],
                                          dense.mid_positions[k0 - 1:k1 - 1], ALL_AXES)
            errors.append((pos, rot, mpos, mrot))
        step = np.abs(Q[k0:k1] - Q[k0 - 1:k1 - 1])
        rel = relative_errors(poses, path.relative, m)
        ratio = np.array([np.maximum.reduce([pos / tp, rot / tr, mpos / tp, mrot / tr])
                          for pos, rot, mpos, mrot in errors] + [np.maximum(rel[0] / tp, rel[1] / tr)])   # (tips+1, m)
        jump = step.max(axis=1) / c.max_joint_step
        failing = (ratio.max(axis=0) > 1.0) | (jump > 1.0)
        first = int(np.argmax(failing)) if failing.any() else m
        for i, (pos, rot, mpos, mrot) in enumerate(errors):
            if first > 0:
                worst[i] = Deviations(max(worst[i].position, float(pos[:first].max())),
                                      max(worst[i].orientation, float(rot[:first].max())),
                                      max(worst[i].mid_position, float(mpos[:first].max())),
                                      max(worst[i].mid_orientation, float(mrot[:first].max())),
                                      max(worst[i].joint_step, float(step[:first].max())))
        if first > 0:
            relative[0] = max(relative[0], float(rel[0][:first].max()))
            relative[1] = max(relative[1], float(rel[1][:first].max()))
        if first == m:
            return None
        k = k0 + first
        if jump[first] > 1.0:
            j = int(np.argmax(step[first]))
            return _Failure(k, PathStatus.JOINT_JUMP, self._tip_of_joint(j),
                            f"joint step {step[first, j]:.4f} rad > jump bound {c.max_joint_step}", j)
        tip = int(np.argmax(ratio[:, first]))
        if tip == len(self.tips):
            return _Failure(k, PathStatus.PATH_DEVIATION, -1, f"relative pose drift {rel[0][first] * 1e3:.3f} mm / "
                            f"{rel[1][first] * 1e3:.3f} mrad (tolerance {tp * 1e3:.3f} mm / {tr * 1e3:.3f} mrad)")
        pos, rot, mpos, mrot = (e[first] for e in errors[tip])
        return _Failure(k, PathStatus.PATH_DEVIATION, tip,
                        f"deviation at the sample {pos * 1e3:.3f} mm / {rot * 1e3:.3f} mrad, at the midpoint before it "
                        f"{mpos * 1e3:.3f} mm / {mrot * 1e3:.3f} mrad (tolerance {tp * 1e3:.3f} mm / "
                        f"{tr * 1e3:.3f} mrad)")

    def _result(self, path: TipsPath, Q, sigma, failure: _Failure | None, worst, relative,
                elapsed: float) -> TipsIkResult:
        lead = path.lead
        deviations = tuple(worst)
        if failure is None:
            return TipsIkResult(PathStatus.SUCCESS, f"path solved for {len(self.tips)} tips: {path.size} samples",
                                Q, path, 1.0, deviations, tuple(relative), compute_time=elapsed)
        k, status, tip, joint = failure.sample, failure.status, failure.tip, failure.joint
        good = max(k - 1, 0)
        if status in (PathStatus.PATH_DEVIATION, PathStatus.JOINT_JUMP) and k > 0:
            limited = self._limited_joint(Q[k])
            if limited is not None:
                status, joint, tip = PathStatus.JOINT_LIMIT, limited, self._tip_of_joint(limited)
            elif sigma[k].min() < self.config.singularity_sigma_threshold:
                status, tip = PathStatus.SINGULARITY, int(np.argmin(sigma[k]))
        name = self.tips[tip] if tip >= 0 else ""
        joint_name = self.robot.joint_names[joint] if joint >= 0 else ""
        own = path.paths[tip] if tip >= 0 else lead
        where = (f"at dense sample {k} of {path.size} ({own.arc_length[k] * 1e3:.1f} mm of {own.length * 1e3:.1f} mm"
                 f"{' of its path' if tip >= 0 else ''}, {lead.progress[k] * 100:.1f} % of the path)")
        text = f"{tip_sentence(status, name, self.tips)} {where}"
        if status == PathStatus.JOINT_LIMIT and joint >= 0:
            text += f": joint '{joint_name}' at {Q[k, joint]:.4f} reaches its limit (margin included)"
        elif status == PathStatus.SINGULARITY:
            text += f": smallest singular value {sigma[k].min():.2e}"
        text += f"; {failure.detail}"
        return TipsIkResult(status, text, Q[:good + 1].copy(), path, float(lead.progress[good]), deviations,
                            tuple(relative), k, name, joint_name, elapsed)

    def _limited_joint(self, q: np.ndarray) -> int | None:
        gap = np.minimum(q - self.lower, self.upper - q)
        j = int(np.argmin(gap))
        return j if gap[j] <= 1e-9 else None


def tip_sentence(status: PathStatus, tip: str, tips: tuple[str, ...]) -> str:
    """The status's sentence naming the tip ("" = the hands' relative pose)."""
    if not tip:
        return f"the relative pose of {tips[1]} in {tips[0]} (the carried object's grasp) left the path tolerance"
    return {PathStatus.PATH_DEVIATION: f"{tip} left the path tolerance",
            PathStatus.JOINT_LIMIT: f"a joint of {tip}'s chain reached its position limit",
            PathStatus.SINGULARITY: f"the arm of {tip} reached a singularity (or the edge of its workspace)",
            PathStatus.JOINT_JUMP: f"a joint of {tip}'s chain moved more than the jump bound between two samples",
            }.get(status, f"{tip}: {status.sentence}")


def relative_errors(poses: list, held: pin.SE3 | None, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Position [m] and angle [rad] (m,) of the second tip's drift from its held pose in the first tip's frame."""
    if held is None:
        return np.zeros(m), np.zeros(m)
    (Ra, pa), (Rb, pb) = poses[0], poses[1]
    local_p = np.einsum("kji,kj->ki", Ra, pb - pa)                        # (m, 3) Ra^T (pb - pa)
    local_R = np.einsum("kji,kjl->kil", Ra, Rb)                           # (m, 3, 3) Ra^T Rb
    position = np.linalg.norm(local_p - held.translation, axis=1)
    angle = np.array([np.linalg.norm(pin.log3(R @ held.rotation.T)) for R in local_R])
    return position, angle
