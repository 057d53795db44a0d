"""Frames outside the robot model: a tree of the latest transforms (as /tf and /tf_static carry them).

`TransformTree` keeps, for every child frame, its parent and the newest `parent_T_child` received, and
composes the chain between two frames through their common ancestor. It keeps no history and does not
interpolate in time, so a lookup answers with the newest pose of every link of the chain: exact for static
frames, and good for frames that move slowly compared with how often they are looked up. tf2 proper
(`tf2_ros.Buffer`) is used instead wherever it is installed (see `ros/tf_frames.py`).

Errors read like tf2's own, so a user can search for them:
- '"camera" passed to lookupTransform argument source_frame does not exist. '
- "Could not find a connection between 'panda_link0' and 'camera' because they are not part of the same tree.
  Tf has two or more unconnected trees."
"""
from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robokin_ros.core.errors import InvalidInputError, RobokinError
from robokin_ros.core.spatial import pose_from_xyzw


class TransformLookupError(RobokinError):
    """A transform that cannot be looked up; the message is tf2's text (or text worded like it)."""

    def __init__(self, message: str, target: str = "", source: str = "") -> None:
        self.target, self.source = target, source
        super().__init__(message)


def transform_from_translation_quaternion(translation: npt.ArrayLike, quaternion_xyzw: npt.ArrayLike,
                                          child: str = "") -> pin.SE3:
    """`parent_T_child` from a translation [m] and a quaternion (x, y, z, w), as a TransformStamped holds them.

    The quaternion is normalized; one that tf2 would refuse (TF_DENORMALIZED_QUATERNION) is refused, by the rule
    of core/spatial.py that every quaternion input follows.

    Raises:
        InvalidInputError: NaN/inf values or a denormalized quaternion, naming `child`.
    """
    t = np.asarray(translation, dtype=float)                 # (3,)
    q = np.asarray(quaternion_xyzw, dtype=float)             # (4,) x, y, z, w
    if t.shape != (3,) or q.shape != (4,) or not (np.isfinite(t).all() and np.isfinite(q).all()):
        raise InvalidInputError(f"transform of frame '{child}' has NaN/inf or wrong sizes: translation {t.tolist()}, "
                                f"quaternion {q.tolist()}")
    return pose_from_xyzw(t, q, f"transform of frame '{child}' has a denormalized quaternion:")


def _strip(frame: str) -> str:
    return frame.lstrip("/")


class TransformTree:
    """The newest `parent_T_child` per child frame; `lookup` composes chains. Thread-safe (one lock).

    A child has one parent; a transform naming a new parent re-parents the child (as tf2 does).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parents: dict[str, tuple[str, pin.SE3]] = {}      # child -> (parent, parent_T_child)
        self._known: set[str] = set()

    def set_transform(self, parent: str, child: str, parent_T_child: pin.SE3) -> None:
        """Store the newest pose of `child` in `parent` (frame names may carry a tf-style leading '/').

        Raises:
            InvalidInputError: an empty frame name, or a frame that is its own parent.
        """
        parent, child = _strip(parent), _strip(child)
        if not parent or not child:
            raise InvalidInputError(f"transform with an empty frame name (parent '{parent}', child '{child}')")
        if parent == child:
            raise InvalidInputError(f"transform from frame '{child}' to itself")
        with self._lock:
            self._parents[child] = (parent, parent_T_child.copy())
            self._known.update((parent, child))

    @property
    def frames(self) -> tuple[str, ...]:
        """Every frame named by a stored transform, sorted."""
        with self._lock:
            return tuple(sorted(self._known))

    def lookup(self, target: str, source: str) -> pin.SE3:
        """`target_T_source`: the pose of frame `source` in frame `target`, from the newest transforms.

        Raises:
            TransformLookupError: a frame never seen, or two frames in unconnected trees (tf2's wording).
        """
        target, source = _strip(target), _strip(source)
        with self._lock:
            for argument, frame in (("target_frame", target), ("source_frame", source)):
                if frame not in self._known:
                    raise TransformLookupError(f'"{frame}" passed to lookupTransform argument {argument} does not '
                                               "exist. ", target, source)
            if target == source:
                return pin.SE3.Identity()
            root_T_target, target_chain = self._to_root(target)
            root_T_source, source_chain = self._to_root(source)
        if target_chain[-1] != source_chain[-1]:
            raise TransformLookupError(f"Could not find a connection between '{target}' and '{source}' because they "
                                       "are not part of the same tree.Tf has two or more unconnected trees.",
                                       target, source)
        return root_T_target.actInv(root_T_source)

    def _to_root(self, frame: str) -> tuple[pin.SE3, list[str]]:
        """(root_T_frame, [frame, parent, ..., root]); a cycle in the data stops at the repeated frame."""
        root_T_frame = pin.SE3.Identity()
        chain = [frame]
        while frame in self._parents:
            parent, parent_T_frame = self._parents[frame]
            if parent in chain:                     # a cycle: stop at the repeat rather than loop forever
                break
            root_T_frame = parent_T_frame * root_T_frame
            chain.append(parent)
            frame = parent
        return root_T_frame, chain
