"""Clearance: the nearest robot-robot or robot-object pair, its distance and the distance's gradient, per tick.

What is exact and what is a bound:

- A pair distance is coal's GJK/EPA distance between the two shapes (signed: negative = penetration depth).
  Polytopes (boxes, hulls) converge to rounding; curved primitives (cylinders, cones) against hulls to about
  2e-5 m when the previous check was at a far-away configuration (measured), better when warm-started nearby.
  Robot and scene meshes are their convex hulls, so their distance is a lower bound of the mesh distance (equal
  where the mesh is convex, as the Panda's collision meshes are).
- Every check first bounds every pair from below (`bounds.PairBounds`: bounding balls, and the objects' boxes),
  then computes the exact distance of the pair with the lowest bound, and of every pair whose bound is below
  min(that distance, `relevant_distance`), in one C++ call (pin.computeDistances on the active pairs).
- When the nearest distance is at most `relevant_distance`, the reported pair is the nearest one (`exact`).
  Otherwise every pair is known to be at least `lower_bound` (>= relevant_distance) apart, and the reported pair
  is the nearest of those computed (usually, not provably, the nearest).

The gradient is the derivative of the reported pair's distance with respect to the chain positions: for witness
points p_a, p_b (fixed on their bodies) and the unit normal n from a to b, d_dot = n . (v_b(p_b) - v_a(p_a)), and a
point's velocity comes from its joint's Jacobian, v(p) = v_j + w_j x (p - o_j). It is exact for the (hull) shapes
where the witness points are unique; where they are not (parallel faces) it is one valid subgradient.

Scene objects are fixed in the base frame. They are paired with every robot geometry that a chain joint moves;
geometry on the robot's fixed base never moves relative to them (a table under the base touches it forever).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robokin_ros.core.collision.bounds import PairBounds, select_pairs
from robokin_ros.core.collision.geometry import RobotGeometry, build_robot_geometry
from robokin_ros.core.collision.scene import SceneObject, collision_shape
from robokin_ros.core.errors import InvalidInputError
from robokin_ros.core.robot import RobotModel

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@dataclass(frozen=True)
class Clearance:
    """The nearest pair at one configuration; points and normal in the base frame."""

    distance: float               # [m] signed distance of the reported pair (<= 0: contact or penetration)
    exact: bool                   # True: the reported pair is the nearest pair (distance <= relevant_distance)
    lower_bound: float            # [m] every pair is at least this far apart (== distance when exact)
    names: tuple[str, str]        # (robot geometry, robot geometry or scene object id); ("", "") without pairs
    point_a: np.ndarray           # (3,) [m] witness point on names[0]
    point_b: np.ndarray           # (3,) [m] witness point on names[1]; point_b - point_a = distance * normal
    normal: np.ndarray            # (3,) unit, from a towards b
    gradient: np.ndarray          # (n,) [m/rad | m/m] d distance / d positions; d_dot = gradient @ velocities
    evaluated: int                # exact pair distances computed for this check

    @property
    def in_contact(self) -> bool:
        """True when the reported pair touches or penetrates."""
        return self.distance <= 0.0


@dataclass(frozen=True)
class PairDistances:
    """Exact (hull) distance of every checked pair [m], with the pair names, in pair order."""

    names: tuple[tuple[str, str], ...]
    distances: np.ndarray         # (pairs,) [m]


class ClearanceChecker:
    """Self- and scene-collision clearance of a RobotModel's chain; create once, call `check` every tick.

    Not thread-safe: one checker per thread (it owns its Pinocchio data and coal results).
    """

    def __init__(self, robot: RobotModel, geometry: RobotGeometry | None = None,
                 objects: tuple[SceneObject, ...] = (), relevant_distance: float = 0.25) -> None:
        """Args:
            robot: the chain; positions follow its convention.
            geometry: the robot's collision geometry; default `build_robot_geometry(robot)`.
            objects: initial scene objects (base frame).
            relevant_distance: [m] (> 0) pairs provably farther apart are not computed exactly.
        """
        if not relevant_distance > 0.0:
            raise InvalidInputError(f"relevant_distance must be > 0 [m], got {relevant_distance!r}")
        self.robot = robot
        self.geometry = geometry if geometry is not None else build_robot_geometry(robot)
        self.relevant_distance = float(relevant_distance)
        self._model, self._data = robot.model, robot.model.createData()
        robot_model = self.geometry.geometry_model
        self._robot_names = {g.name for g in robot_model.geometryObjects}
        self._bounds = PairBounds(robot_model, self.geometry.self_pairs)
        self._world_T_base = robot.world_T_base.copy()
        self._base_T_world = self._world_T_base.inverse()
        self._base_is_world = self._world_T_base.isIdentity(1e-12)
        self._objects: dict[str, SceneObject] = {}
        for obj in objects:
            self._objects[obj.id] = self._checked(obj)
        self._rebuild()
        self.check(np.zeros(robot.n))      # loads the numba kernels now (~0.3 s), not in the first servo tick

    # ---- scene ------------------------------------------------------------------------------------------
    @property
    def objects(self) -> tuple[SceneObject, ...]:
        """The scene objects, in insertion order."""
        return tuple(self._objects.values())

    def add_object(self, obj: SceneObject) -> None:
        """Add a scene object; one with the same id is replaced (as MoveIt's CollisionObject ADD does)."""
        self._objects[obj.id] = self._checked(obj)
        self._rebuild()

    def move_object(self, object_id: str, position, orientation=(0.0, 0.0, 0.0, 1.0)) -> None:
        """Move a scene object to a new pose in the base frame (position [m], quaternion x, y, z, w)."""
        moved = self._known(object_id).moved(position, orientation)
        self._objects[object_id] = moved
        index = self._object_index[object_id]
        self._geometry_model.geometryObjects[index].placement = self._world_T_base * moved.base_T_object
        self._refresh_object_bounds()

    def remove_object(self, object_id: str) -> None:
        """Remove a scene object by id."""
        self._known(object_id)
        del self._objects[object_id]
        self._rebuild()

    def set_objects(self, objects: tuple[SceneObject, ...]) -> None:
        """Replace the whole scene (e.g. after reloading the scene file)."""
        checked = {obj.id: self._checked(obj) for obj in objects}
        if len(checked) != len(objects):
            raise InvalidInputError(f"scene object ids must be unique, got {[obj.id for obj in objects]}")
        self._objects = checked
        self._rebuild()

    def _known(self, object_id: str) -> SceneObject:
        if object_id not in self._objects:
            raise InvalidInputError(f"no scene object '{object_id}'; objects: {sorted(self._objects)}")
        return self._objects[object_id]

    def _checked(self, obj: SceneObject) -> SceneObject:
        if obj.id in self._robot_names:
            raise InvalidInputError(f"scene object id '{obj.id}' is the name of a robot collision geometry")
        return obj

    def _rebuild(self) -> None:
        """Geometry model = robot geometry + scene objects; pairs = self pairs + (moving robot geometry, object)."""
        gm = self.geometry.geometry_model.copy()
        gm.removeAllCollisionPairs()
        self._object_index = {}
        for obj in self._objects.values():
            placement = self._world_T_base * obj.base_T_object
            self._object_index[obj.id] = gm.addGeometryObject(pin.GeometryObject(obj.id, 0, 0, placement,
                                                                                 collision_shape(obj)))
        pairs = list(self.geometry.self_pairs)
        pairs += [(int(g), index) for index in self._object_index.values() for g in self._bounds.moving]
        pairs = [(min(a, b), max(a, b)) for a, b in pairs]     # bounds are symmetric; the active map is upper
        for a, b in pairs:
            gm.addCollisionPair(pin.CollisionPair(a, b))
        self._geometry_model, self._geometry_data = gm, pin.GeometryData(gm)
        self._first = np.array([a for a, _ in pairs], dtype=np.int64)
        self._second = np.array([b for _, b in pairs], dtype=np.int64)
        self._names = tuple(g.name for g in gm.geometryObjects)
        self._joint_of = [int(g.parentJoint) for g in gm.geometryObjects]
        self._active_map = np.zeros((gm.ngeoms, gm.ngeoms), dtype=bool)
        self._refresh_object_bounds()

    def _refresh_object_bounds(self) -> None:
        self._bounds.set_objects([self._geometry_model.geometryObjects[i] for i in self._object_index.values()])

    # ---- checks -----------------------------------------------------------------------------------------
    def check(self, positions, with_gradient: bool = True) -> Clearance:
        """The nearest pair at `positions` (n,) [rad | m] (see the module docstring for what is exact).

        Raises:
            InvalidInputError: positions of the wrong size or with NaN/inf.
        """
        q = self.robot.to_pinocchio_q(self.robot.check_positions(positions))
        if with_gradient:
            pin.computeJointJacobians(self._model, self._data, q)    # also runs forward kinematics
        else:
            pin.forwardKinematics(self._model, self._data, q)
        if len(self._first) == 0:
            return self._no_pairs()
        pin.updateGeometryPlacements(self._model, self._data, self._geometry_model, self._geometry_data)
        bounds, best = self._bounds.update(self._data)               # (pairs,), index of the lowest
        result = pin.computeDistance(self._geometry_model, self._geometry_data, best)
        best_distance = result.min_distance
        cutoff = min(best_distance, self.relevant_distance)
        count, rest = select_pairs(bounds, cutoff, best, self._first, self._second, self._active_map)
        if count:
            self._geometry_data.setActiveCollisionPairs(self._geometry_model, self._active_map, True)
            nearest = pin.computeDistances(self._geometry_model, self._geometry_data)
            candidate = self._geometry_data.distanceResults[nearest]
            if candidate.min_distance < best_distance:
                best, result, best_distance = nearest, candidate, candidate.min_distance
        exact = best_distance <= cutoff      # every pair left out has a bound >= cutoff
        lower_bound = best_distance if exact else min(best_distance, rest)
        evaluated = 1 + count
        return self._clearance(best, result, exact, lower_bound, evaluated, with_gradient)

    def pair_distances(self, positions) -> PairDistances:
        """Exact (hull) distance of every pair, for diagnostics and markers; costs one distance per pair."""
        q = self.robot.to_pinocchio_q(self.robot.check_positions(positions))
        gm, gd = self._geometry_model, self._geometry_data
        pin.updateGeometryPlacements(self._model, self._data, gm, gd, q)
        self._active_map[:] = False
        self._active_map[self._first, self._second] = True
        gd.setActiveCollisionPairs(gm, self._active_map, True)
        pin.computeDistances(gm, gd)
        names = tuple((self._names[a], self._names[b]) for a, b in zip(self._first, self._second))
        return PairDistances(names, np.array([r.min_distance for r in gd.distanceResults]))

    @property
    def pair_names(self) -> tuple[tuple[str, str], ...]:
        """(first, second) name of every checked pair, in pair order."""
        return tuple((self._names[a], self._names[b]) for a, b in zip(self._first, self._second))

    def _clearance(self, pair: int, result, exact: bool, lower_bound: float, evaluated: int,
                   with_gradient: bool) -> Clearance:
        a, b = int(self._first[pair]), int(self._second[pair])
        point_a, point_b, normal = result.getNearestPoint1(), result.getNearestPoint2(), result.normal
        distance = float(result.min_distance)
        if not 0.99 < float(normal @ normal) < 1.01:     # coal leaves it unset for some touching contacts
            normal = (point_b - point_a) / distance if abs(distance) > 1e-12 else np.zeros(3)
        gradient = self._gradient(a, b, point_a, point_b, normal) if with_gradient else np.zeros(self.robot.n)
        if not self._base_is_world:
            R, t = self._base_T_world.rotation, self._base_T_world.translation
            point_a, point_b, normal = R @ point_a + t, R @ point_b + t, R @ normal
        return Clearance(distance, exact, float(lower_bound), (self._names[a], self._names[b]), point_a, point_b,
                         normal, gradient, evaluated)

    def _gradient(self, a: int, b: int, point_a: np.ndarray, point_b: np.ndarray, normal: np.ndarray) -> np.ndarray:
        """d distance / d positions (n,): n . (J_b(p_b) - J_a(p_a)) with point Jacobians from joint Jacobians."""
        gradient = np.zeros(self.robot.n)
        weights = np.empty(6)
        for joint, point, sign in ((self._joint_of[a], point_a, -1.0), (self._joint_of[b], point_b, 1.0)):
            if joint == 0:
                continue
            J = pin.getJointJacobian(self._model, self._data, joint, LWA).reshape(6, -1)     # (6, n) at o_j
            lever = point - self._data.oMi[joint].translation                                # (3,)
            # n . (v + w x r) = n . v + w . (r x n)
            weights[:3] = normal
            weights[3:] = pin.skew(lever) @ normal
            gradient += sign * (weights @ J)
        return gradient

    def _no_pairs(self) -> Clearance:
        nan3 = np.full(3, np.nan)
        return Clearance(np.inf, True, np.inf, ("", ""), nan3, nan3.copy(), nan3.copy(), np.zeros(self.robot.n), 0)
