"""RobotModel: a Pinocchio model reduced to one base->tip chain, with limits and fast FK/Jacobian access.

Joint positions convention: everywhere in robokin_ros a configuration is the vector of the chain's joint
positions as `sensor_msgs/JointState` carries them, one entry per degree of freedom (size `n`), in chain
order. Continuous joints are plain angles here; Pinocchio stores them as (cos, sin), and this class does
the conversion. So `positions + velocities * dt` is a valid integration step for every supported joint
type, and callers never handle Pinocchio's `nq != nv` configurations.
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.embedded import EMBEDDED_ROBOTS, embedded_robot
from robokin_ros.core.errors import ModelError, UnknownFrameError, UnknownJointError
from robokin_ros.core.model_source import (choose_source, is_xacro, missing_model_error, robot_file_name,
                                           robot_file_xml)
from robokin_ros.core.native_stderr import captured_native_stderr, pass_on, split_parser_messages
from robokin_ros.core.validation import check_vector

REFERENCE_FRAMES = {
    "local_world_aligned": pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
    "local": pin.ReferenceFrame.LOCAL,
    "world": pin.ReferenceFrame.WORLD,
}


class LinkEdge(NamedTuple):
    """One URDF joint as robot_state_publisher shows it: the pose of `child` link in `parent` link."""

    parent: str
    child: str
    moving: bool          # a chain joint (its pose changes); False: fixed or locked joint (a static transform)


@dataclass(frozen=True)
class JointLimits:
    """Per-joint limits in chain order; +/-inf where the URDF gives none (continuous joints)."""

    lower: np.ndarray          # (n,) [rad | m]
    upper: np.ndarray          # (n,) [rad | m]
    velocity: np.ndarray       # (n,) [rad/s | m/s], inf where the URDF gives 0 or nothing
    effort: np.ndarray         # (n,) [N m | N], nan where the URDF gives 0 or nothing
    missing_effort: tuple[str, ...]
    missing_velocity: tuple[str, ...]


def _load_full_model(source: str | Path) -> pin.Model:
    text = str(source)
    is_xml = text.lstrip().startswith("<")
    if not is_xml and not Path(source).is_file():
        raise ModelError(f"URDF file not found: {source}")
    # urdfdom prints its reasons on fd 2 and Pinocchio then raises a generic error: fold them into one message
    with captured_native_stderr() as printed:
        try:
            model, error = (pin.buildModelFromXML(text) if is_xml else pin.buildModelFromUrdf(text)), None
        except Exception as err:  # pinocchio raises ValueError/RuntimeError with the parser's text
            model, error = None, err
    reasons, other = split_parser_messages(printed)
    pass_on(other if error is not None else printed)
    if error is not None:
        detail = f" ({'; '.join(reasons)})" if reasons else ""
        raise ModelError(f"cannot parse URDF: {' '.join(str(error).split())}{detail}") from error
    return model


def _unknown_robot_message(name: str) -> str:
    """A misspelt robot name is told as such (not as missing frames), with the nearest embedded name."""
    if "/" in name or Path(name).suffix.lower() in (".urdf", ".xacro", ".xml"):
        return f"URDF file not found: {name}"
    close = difflib.get_close_matches(name, list(EMBEDDED_ROBOTS), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return (f"unknown robot '{name}'{hint}; known: {sorted(EMBEDDED_ROBOTS)} (a URDF or xacro file of that name "
            "was not found either)")


def _frame_id(model: pin.Model, name: str) -> int:
    """Frame id by name; a link and a joint may share a name (z1), and the link then wins."""
    try:
        return model.getFrameId(name)
    except (ValueError, RuntimeError):
        return model.getFrameId(name, pin.FrameType.BODY)


def _single_dof_positions_to_q(model: pin.Model, joint_id: int, position: float, q: np.ndarray) -> None:
    joint = model.joints[joint_id]
    if joint.nq == 1:
        q[joint.idx_q] = position
    elif joint.nq == 2 and joint.nv == 1:    # continuous joint: Pinocchio stores (cos, sin)
        q[joint.idx_q] = np.cos(position)
        q[joint.idx_q + 1] = np.sin(position)
    else:
        raise ModelError(f"joint '{model.names[joint_id]}' has {joint.nv} degrees of freedom; "
                         "only revolute, continuous and prismatic joints are supported")


def _tip_names(tip_frame: str | Sequence[str]) -> tuple[str, ...]:
    tips = (tip_frame,) if isinstance(tip_frame, str) else tuple(tip_frame)
    if not tips:
        raise ModelError("no tip frame given")
    repeated = sorted({tip for tip in tips if tips.count(tip) > 1})
    if repeated:
        raise ModelError(f"tip frames named more than once: {repeated}")
    return tips


class RobotModel:
    """A kinematic chain from `base_frame` to `tip_frame`, or a tree to several tips; every other joint is locked.

    FK and Jacobians are expressed in the base frame. Build one with `load`, `from_name`,
    `from_urdf_file` or `from_urdf_string`.

    Several tips (`tip_frame` a sequence, e.g. two hands): the joints are the union of every tip's chain, in the
    URDF's order; joints above the base are locked as for one chain. `tip_frame` is the first tip, which every
    single-tip feature uses; `tip_frames`, `tip_frame_ids` and `tip_joint_indices` describe them all, and a tip's
    Jacobian is zero in the columns of the joints it does not depend on.
    """

    def __init__(self, full_model: pin.Model, base_frame: str, tip_frame: str | Sequence[str],
                 tool_offset: pin.SE3 | npt.ArrayLike | None = None, tool_frame: str = "tool",
                 locked_joints: Mapping[str, float] | None = None, name: str = "robot") -> None:
        self.name = name
        locked_joints = dict(locked_joints or {})
        tips = _tip_names(tip_frame)
        tip_frame = tips[0]
        full_frames = [f.name for f in full_model.frames]
        for frame in (base_frame, *tips):
            if not full_model.existFrame(frame):
                raise UnknownFrameError(frame, full_frames)
        if tool_offset is not None and len(tips) > 1:
            raise ModelError(f"a tool offset needs one tip frame, got {list(tips)} (add a frame per tip to the URDF)")
        base_joint = full_model.frames[_frame_id(full_model, base_frame)].parentJoint
        base_support = set(full_model.supports[base_joint])
        tip_chains = []
        for tip in tips:
            tip_joint = full_model.frames[_frame_id(full_model, tip)].parentJoint
            tip_chain = [j for j in full_model.supports[tip_joint] if j != 0 and j not in base_support]
            if not tip_chain:
                raise ModelError(f"no movable joint between '{base_frame}' and '{tip}'")
            tip_chains.append(tip_chain)
        # One tip: its path from the base, in order. Several: the union in Pinocchio's (depth-first URDF) order.
        chain = tip_chains[0] if len(tips) == 1 else sorted(set().union(*tip_chains))
        all_joints = list(full_model.names)[1:]
        for joint_name in locked_joints:
            if not full_model.existJointName(joint_name):
                raise UnknownJointError(joint_name, all_joints)
            if full_model.getJointId(joint_name) in chain:
                raise ModelError(f"joint '{joint_name}' is in the {base_frame} -> {', '.join(tips)} chain "
                                 "and cannot be locked")
        q_ref = pin.neutral(full_model)
        for joint_name, position in locked_joints.items():
            _single_dof_positions_to_q(full_model, full_model.getJointId(joint_name), float(position), q_ref)
        # A locked joint's frame in the reduced model no longer points at its parent link: remember it here.
        self._joint_parent_links = {f.name: full_model.frames[f.parentFrame].name for f in full_model.frames
                                    if f.type in (pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT)}
        to_lock = [j for j in range(1, full_model.njoints) if j not in chain]
        self.locked_joint_names = tuple(full_model.names[j] for j in to_lock)
        # Kept so collision geometry can be rebuilt on the same reduced chain (core.collision.geometry):
        # the full model's configuration the locked joints are frozen at, and the URDF text when known.
        self.full_reference_q = q_ref
        self.urdf_xml: str | None = None
        self._home_by_joint: dict[str, float] | None = None    # set by from_name for some arms of a multi-arm robot
        self.model = pin.buildReducedModel(full_model, to_lock, q_ref) if to_lock else full_model.copy()

        if tool_offset is not None:
            offset = tool_offset if isinstance(tool_offset, pin.SE3) else pin.SE3(np.asarray(tool_offset, float))
            if self.model.existFrame(tool_frame):
                raise ModelError(f"tool frame name '{tool_frame}' already exists in the model")
            parent = self.model.frames[_frame_id(self.model, tip_frame)]
            placement = parent.placement * offset
            self.model.addFrame(pin.Frame(tool_frame, parent.parentJoint, _frame_id(self.model, tip_frame),
                                          placement, pin.FrameType.OP_FRAME))
            tip_frame = tool_frame
        self.data = self.model.createData()
        self.base_frame, self.tip_frame = base_frame, tip_frame
        self.base_frame_id = _frame_id(self.model, base_frame)
        self.tip_frame_id = _frame_id(self.model, tip_frame)
        self.joint_names = tuple(self.model.names[1:])
        self.tip_frames: tuple[str, ...] = (tip_frame, *tips[1:])
        self.tip_frame_ids: tuple[int, ...] = tuple(_frame_id(self.model, tip) for tip in self.tip_frames)
        chain_names = [[full_model.names[j] for j in tip_chain] for tip_chain in tip_chains]
        # (k,) per tip: the indices in the positions vector of the joints that tip depends on, in chain order
        self.tip_joint_indices: tuple[np.ndarray, ...] = tuple(
            np.array([self.joint_names.index(joint) for joint in names], dtype=int) for names in chain_names)
        self.n = self.model.nv
        self._joint_ids = list(range(1, self.model.njoints))
        self._plain_q = self.model.nq == self.model.nv
        self.limits = self._read_limits()
        self.acceleration_limits = np.full(self.n, np.inf)   # URDF has none; configs override
        # The base frame is not moved by any chain joint, so its pose is fixed once here.
        self._data_ref = self.model.createData()
        pin.framesForwardKinematics(self.model, self._data_ref, pin.neutral(self.model))
        self.world_T_base = self._data_ref.oMf[self.base_frame_id].copy()
        self._base_is_world = self.world_T_base.isIdentity(1e-12)
        self._R_base_T = self.world_T_base.rotation.T.copy()
        self._base_T_world_action = self.world_T_base.inverse().toActionMatrix()

    # ---- construction -------------------------------------------------------------------------------
    @classmethod
    def from_urdf_file(cls, path: str | Path, base_frame: str, tip_frame: str | Sequence[str],
                       **kwargs) -> RobotModel:
        """Load a URDF file; see `__init__` for the keyword arguments."""
        kwargs.setdefault("name", Path(path).stem)
        robot = cls(_load_full_model(Path(path)), base_frame, tip_frame, **kwargs)
        return robot._with_urdf(Path(path).read_text())

    @classmethod
    def from_urdf_string(cls, xml: str, base_frame: str, tip_frame: str | Sequence[str],
                         **kwargs) -> RobotModel:
        """Load a URDF document (e.g. the `robot_description` parameter)."""
        if not xml.lstrip().startswith("<"):
            raise ModelError("robot_description does not look like URDF XML (it does not start with '<')")
        return cls(_load_full_model(xml), base_frame, tip_frame, **kwargs)._with_urdf(xml)

    @classmethod
    def from_name(cls, name: str, base_frame: str | None = None, tip_frame: str | Sequence[str] | None = None,
                  **kwargs) -> RobotModel:
        """Load an embedded robot (`panda`, `ur5e`, `dual_panda`, ...), built in or from an installed description,
        offline (search order: `core.embedded`); a robot with several arms gets all its tips by default."""
        found = embedded_robot(name)
        kwargs.setdefault("name", name)
        xml = found.xml
        full_model = _load_full_model(xml)
        robot = cls(full_model, base_frame or found.robot.base_frame,
                    tip_frame or found.robot.tip_frames or found.robot.tip_frame, **kwargs)._with_urdf(xml)
        if found.robot.tip_frames and len(found.robot.home) != robot.n:
            # some arms of a robot with several: their joints' home is read by name from the whole robot's
            whole = cls(full_model, found.robot.base_frame, found.robot.tip_frames)
            robot._home_by_joint = dict(zip(whole.joint_names, found.robot.home))
        return robot

    @classmethod
    def from_source(cls, robot: str, robot_description: str = "", base_frame: str = "",
                    tip_frame: str = "", xacro_args: str = "", tip_frames: Sequence[str] = ()) -> RobotModel:
        """The chain named by the robot-source parameters every node shares (`schema.NodeConfig`).

        `robot_description` (URDF XML) wins over `robot` (an embedded name, a URDF or a xacro file path; see
        `core.model_source`). With neither, ModelError lists every way to give a model (the ROS layer reads the
        robot_description topic before it comes to that). `tip_frames`, when given, names every tip (the first
        is the tip); `tip_frame` must then be empty or that first tip.
        """
        if tip_frames:
            if tip_frame and tip_frame != tip_frames[0]:
                raise ModelError(f"tip_frame '{tip_frame}' is not the first of tip_frames {list(tip_frames)}: set "
                                 "one of them, or make tip_frame the first tip")
            tip_frame = tuple(tip_frames)
        source = choose_source(robot, robot_description)
        if source == "robot_description":
            if not base_frame or not tip_frame:
                raise ModelError("robot_description is set: base_frame and tip_frame (or tip_frames) must be set too")
            return cls.from_urdf_string(robot_description, base_frame, tip_frame)
        if source == "topic":
            raise missing_model_error(EMBEDDED_ROBOTS, frames_missing=not (base_frame and tip_frame))
        if robot not in EMBEDDED_ROBOTS and not Path(robot).is_file():
            raise ModelError(f"robot '{robot}' is neither an embedded robot {sorted(EMBEDDED_ROBOTS)} nor an "
                             "existing URDF or xacro file (or set robot_description)")
        return cls.load(robot, base_frame, tip_frame, xacro_args=xacro_args)

    @classmethod
    def load(cls, source: str, base_frame: str = "", tip_frame: str | Sequence[str] = "", xacro_args: str = "",
             **kwargs) -> RobotModel:
        """Load from an embedded name, a URDF or xacro path (`xacro_args`: "name:=value ...") or a URDF string;
        empty frames take the robot's defaults."""
        if source in EMBEDDED_ROBOTS:
            if xacro_args.strip():
                raise ModelError(f"xacro_args={xacro_args!r} is set but robot '{source}' is an embedded robot, "
                                 "not a xacro file")
            return cls.from_name(source, base_frame or None, tip_frame or None, **kwargs)
        if not source.lstrip().startswith("<") and not Path(source).is_file():
            raise ModelError(_unknown_robot_message(source))
        if not base_frame or not tip_frame:
            raise ModelError("base_frame and tip_frame are required for a robot that is not embedded "
                             f"(embedded: {sorted(EMBEDDED_ROBOTS)})")
        if source.lstrip().startswith("<"):
            return cls.from_urdf_string(source, base_frame, tip_frame, **kwargs)
        if is_xacro(source) or xacro_args.strip():
            kwargs.setdefault("name", robot_file_name(source))
            return cls.from_urdf_string(robot_file_xml(source, xacro_args), base_frame, tip_frame, **kwargs)
        return cls.from_urdf_file(source, base_frame, tip_frame, **kwargs)

    def _with_urdf(self, xml: str) -> RobotModel:
        self.urdf_xml = xml
        return self

    def _read_limits(self) -> JointLimits:
        m = self.model
        lower, upper = np.full(self.n, -np.inf), np.full(self.n, np.inf)
        for i, joint_id in enumerate(self._joint_ids):
            joint = m.joints[joint_id]
            if joint.nq == joint.nv:      # continuous joints keep +/-inf
                lo, hi = m.lowerPositionLimit[joint.idx_q], m.upperPositionLimit[joint.idx_q]
                # Pinocchio marks "no limit" with +/-max double
                lower[i] = lo if lo > -1e300 else -np.inf
                upper[i] = hi if hi < 1e300 else np.inf
        inverted = [f"'{n}' (lower {lo:.6g} > upper {hi:.6g})" for n, lo, hi in zip(self.joint_names, lower, upper)
                    if lo > hi]
        if inverted:
            raise ModelError(f"joint limits with lower above upper: {', '.join(inverted)}")
        velocity = np.array(m.velocityLimit, dtype=float)
        effort = np.array(m.effortLimit, dtype=float)
        missing_v = tuple(n for n, v in zip(self.joint_names, velocity) if not 0 < v < 1e300)
        missing_e = tuple(n for n, e in zip(self.joint_names, effort) if not 0 < e < 1e300)
        velocity = np.where((velocity > 0) & (velocity < 1e300), velocity, np.inf)
        effort = np.where((effort > 0) & (effort < 1e300), effort, np.nan)
        return JointLimits(lower, upper, velocity, effort, missing_e, missing_v)

    # ---- names and ids --------------------------------------------------------------------------------
    @property
    def frame_names(self) -> tuple[str, ...]:
        """All frame names of the reduced model."""
        return tuple(f.name for f in self.model.frames)

    def frame_id(self, name: str) -> int:
        """Frame id of `name`; `UnknownFrameError` lists the valid names."""
        if not name or not self.model.existFrame(name):
            raise UnknownFrameError(name, self.frame_names)
        return _frame_id(self.model, name)

    def resolve_frame(self, name: str) -> int:
        """Frame id of a frame named by a message or a user: the one rule for every input.

        A tf-style leading "/" is dropped; "" names the base frame; "world" names the URDF world (Pinocchio
        calls it "universe") unless the model has a frame of that name. `UnknownFrameError` lists the valid
        names otherwise.
        """
        name = name.lstrip("/")
        if not name:
            return self.base_frame_id
        if name == "world" and not self.model.existFrame(name):
            name = "universe"
        return self.frame_id(name)

    def joint_index(self, name: str) -> int:
        """Index of a chain joint in the positions vector."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise UnknownJointError(name, self.joint_names) from None

    # ---- configurations -------------------------------------------------------------------------------
    def check_positions(self, positions: npt.ArrayLike, name: str = "joint positions") -> np.ndarray:
        """Validate a positions vector (size n, finite)."""
        return check_vector(name, positions, self.n)

    def to_pinocchio_q(self, positions: np.ndarray) -> np.ndarray:
        """Positions (n,) -> Pinocchio configuration (nq,)."""
        if self._plain_q:
            return positions
        q = np.empty(self.model.nq)
        for i, joint_id in enumerate(self._joint_ids):
            _single_dof_positions_to_q(self.model, joint_id, positions[i], q)
        return q

    def mid_range(self) -> np.ndarray:
        """Middle of each joint's range (0 for unlimited joints)."""
        lo, hi = self.limits.lower, self.limits.upper
        return np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), 0.0)

    def home(self) -> np.ndarray:
        """The embedded robot's home configuration when known (for some arms of a robot with several, theirs),
        else mid-range."""
        by_joint = self._home_by_joint
        if by_joint is not None and all(joint in by_joint for joint in self.joint_names):
            return np.array([by_joint[joint] for joint in self.joint_names], dtype=float)
        robot = EMBEDDED_ROBOTS.get(self.name)
        if robot is not None and len(robot.home) == self.n:
            return np.array(robot.home, dtype=float)
        return self.mid_range()

    def random_positions(self, rng: np.random.Generator, margin: float = 0.0) -> np.ndarray:
        """Uniform random positions inside the limits shrunk by `margin` [rad | m] (+/-pi when unlimited)."""
        lo = np.where(np.isfinite(self.limits.lower), self.limits.lower + margin, -np.pi)
        hi = np.where(np.isfinite(self.limits.upper), self.limits.upper - margin, np.pi)
        return rng.uniform(lo, hi)

    # ---- kinematics -----------------------------------------------------------------------------------
    def fk(self, positions: npt.ArrayLike, frame: str | None = None) -> pin.SE3:
        """Pose of `frame` (default: tip) in the base frame, `base_T_frame`."""
        q = self.to_pinocchio_q(self.check_positions(positions))
        frame_id = self.tip_frame_id if frame is None else self.frame_id(frame)
        pin.forwardKinematics(self.model, self.data, q)
        world_T_frame = pin.updateFramePlacement(self.model, self.data, frame_id)
        if self._base_is_world:
            return world_T_frame.copy()
        return self.world_T_base.actInv(world_T_frame)

    def jacobian(self, positions: npt.ArrayLike, frame: str | None = None,
                 reference: str = "local_world_aligned") -> np.ndarray:
        """Frame Jacobian (6, n) [linear; angular] of `frame` (default: tip).

        `reference`: "local_world_aligned" (frame origin, base-frame axes), "local" (frame origin and
        axes), or "world" (spatial Jacobian: velocity of the point at the base origin, base axes).
        """
        if reference not in REFERENCE_FRAMES:
            raise ModelError(f"unknown Jacobian reference '{reference}'; use one of {sorted(REFERENCE_FRAMES)}")
        q = self.to_pinocchio_q(self.check_positions(positions))
        frame_id = self.tip_frame_id if frame is None else self.frame_id(frame)
        return self.frame_jacobian_fast(q, frame_id, REFERENCE_FRAMES[reference])

    def frame_jacobian_fast(self, q: np.ndarray, frame_id: int,
                            reference: pin.ReferenceFrame = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) -> np.ndarray:
        """Unchecked hot-path Jacobian (6, n) in base axes; `q` is a Pinocchio configuration.

        Also leaves `self.data.oMf[frame_id]` (world frame) up to date for `tip_pose_fast`.
        """
        # reshape: Pinocchio hands a one-joint chain's (6, 1) Jacobian back as a flat (6,) vector
        J = pin.computeFrameJacobian(self.model, self.data, q, frame_id, reference).reshape(6, -1)  # (6, n)
        if self._base_is_world or reference == pin.ReferenceFrame.LOCAL:
            return J
        if reference == pin.ReferenceFrame.WORLD:
            return self._base_T_world_action @ J
        J[:3] = self._R_base_T @ J[:3]
        J[3:] = self._R_base_T @ J[3:]
        return J

    def inertia(self, positions: npt.ArrayLike) -> np.ndarray:
        """Joint-space inertia matrix M(q) (n, n) [kg m^2 | kg], symmetric."""
        q = self.to_pinocchio_q(self.check_positions(positions))
        M = pin.crba(self.model, self.data, q)
        return np.triu(M) + np.triu(M, 1).T    # crba fills the upper triangle only

    def chain_link_frames(self) -> tuple[str, ...]:
        """The link each chain joint moves (its child link), then the tip frame (every tip of a tree, in
        `tip_frames` order): the chain as /tf shows it."""
        names = [link for joint_name in self.joint_names for link in self._moved_link(joint_name)]
        names += [tip for tip in self.tip_frames if tip not in names]
        return tuple(names)

    def _moved_link(self, joint_name: str) -> list[str]:
        """[the link joint `joint_name` moves] (empty if it moves none)."""
        joint_frame = self.model.getFrameId(joint_name, pin.FrameType.JOINT)
        return [f.name for f in self.model.frames if f.type == pin.FrameType.BODY and f.parentFrame == joint_frame][:1]

    def tip_link_frames(self, tip_index: int = 0) -> tuple[str, ...]:
        """The links one tip's chain joints move, then that tip (`tip_frames[tip_index]`): one branch of a tree,
        from the base out (for one tip, `chain_link_frames`)."""
        tip = self.tip_frames[tip_index]
        links = [link for i in self.tip_joint_indices[tip_index] for link in self._moved_link(self.joint_names[i])]
        return tuple(links) + (() if tip in links else (tip,))

    def link_tree(self) -> tuple[LinkEdge, ...]:
        """Every link below the URDF root with its parent link (and a tool frame under its tip link)."""
        frames, edges = self.model.frames, []
        for frame in frames:
            above = frames[frame.parentFrame]
            if frame.type == pin.FrameType.BODY and above.type in (pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT):
                parent = self._joint_parent_links.get(above.name, "universe")
                if parent != "universe":
                    edges.append(LinkEdge(parent, frame.name, above.type == pin.FrameType.JOINT))
            elif frame.type == pin.FrameType.OP_FRAME and above.type == pin.FrameType.BODY:
                edges.append(LinkEdge(above.name, frame.name, False))
        return tuple(edges)

    def link_transforms(self, positions: npt.ArrayLike, edges: tuple[LinkEdge, ...]) -> list[pin.SE3]:
        """`parent_T_child` of each edge (see `link_tree`) at `positions`, from one forward-kinematics pass."""
        q = self.to_pinocchio_q(self.check_positions(positions))
        pin.framesForwardKinematics(self.model, self.data, q)
        placement = {}
        for edge in edges:
            for name in (edge.parent, edge.child):
                if name not in placement:
                    placement[name] = self.data.oMf[self.model.getFrameId(name)]
        return [placement[edge.parent].actInv(placement[edge.child]) for edge in edges]

    def frame_pose(self, positions: npt.ArrayLike, frame_id: int) -> pin.SE3:
        """`base_T_frame` of one frame by id (see `resolve_frame`)."""
        return self.frame_poses(positions, [frame_id])[0]

    def frame_poses(self, positions: npt.ArrayLike, frame_ids: list[int]) -> list[pin.SE3]:
        """`base_T_frame` of several frames (ids) from one forward-kinematics pass."""
        q = self.to_pinocchio_q(self.check_positions(positions))
        pin.forwardKinematics(self.model, self.data, q)
        poses = []
        for frame_id in frame_ids:
            world_T_frame = pin.updateFramePlacement(self.model, self.data, frame_id)
            poses.append(world_T_frame.copy() if self._base_is_world else self.world_T_base.actInv(world_T_frame))
        return poses
