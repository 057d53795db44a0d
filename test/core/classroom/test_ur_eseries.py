"""UR e-series models in ROS 2 frames: FK against ur_description's own figures, frames, limits, IK, the generated file.

The reference chain is written out here from ur_description's `config/<type>/default_kinematics.yaml` (the
x/y/z/roll/pitch/yaw of each joint's origin, as `urdf/ur_macro.xacro` uses them) and its fixed frames
(base_link -> base_link_inertia and base_link -> base: 180 deg yaw; wrist_3_link -> flange -> tool0), computed with
plain numpy: independent of the DH toolbox the models are built with. When a ur_description checkout or install
is at hand (ROBOKIN_UR_DESCRIPTION=<its folder>, or in the ament index), the real xacro is expanded and compared too.
"""
import math
import os
from pathlib import Path

import numpy as np
import pytest

from robokin_ros.core.classroom import ur_eseries
from robokin_ros.core.ik.ur import UrGeometry
from robokin_ros.core.embedded import (BUILT_IN_PLACE, EMBEDDED_ROBOTS, ament_share_dir, embedded_robot,
                                       urdf_candidates)
from robokin_ros.core.model_source import expand_xacro
from robokin_ros.core.robot import RobotModel

HALF_PI = 1.570796327               # as the yaml files write it
# default_kinematics.yaml: joint -> (x, y, z, roll, pitch, yaw) [m, rad], shoulder_pan ... wrist_3
WRIST_3_RPY = (1.570796326589793, math.pi, math.pi)
YAML_KINEMATICS = {
    "ur3e": ((0, 0, 0.15185, 0, 0, 0), (0, 0, 0, HALF_PI, 0, 0), (-0.24355, 0, 0, 0, 0, 0),
             (-0.2132, 0, 0.13105, 0, 0, 0), (0, -0.08535, -1.750557762378351e-11, HALF_PI, 0, 0),
             (0, 0.0921, -1.8890025766262e-11, *WRIST_3_RPY)),
    "ur5e": ((0, 0, 0.1625, 0, 0, 0), (0, 0, 0, HALF_PI, 0, 0), (-0.425, 0, 0, 0, 0, 0),
             (-0.3922, 0, 0.1333, 0, 0, 0), (0, -0.0997, -2.044881182297852e-11, HALF_PI, 0, 0),
             (0, 0.09959999999999999, -2.042830148012698e-11, *WRIST_3_RPY)),
    "ur10e": ((0, 0, 0.1807, 0, 0, 0), (0, 0, 0, HALF_PI, 0, 0), (-0.6127, 0, 0, 0, 0, 0),
              (-0.57155, 0, 0.17415, 0, 0, 0), (0, -0.11985, -2.458164590756244e-11, HALF_PI, 0, 0),
              (0, 0.11655, -2.390480459346185e-11, *WRIST_3_RPY)),
    "ur16e": ((0, 0, 0.1807, 0, 0, 0), (0, 0, 0, HALF_PI, 0, 0), (-0.4784, 0, 0, 0, 0, 0),
              (-0.36, 0, 0.17415, 0, 0, 0), (0, -0.11985, -2.458164590756244e-11, HALF_PI, 0, 0),
              (0, 0.11655, -2.390480459346185e-11, *WRIST_3_RPY)),
    "ur20": ((0, 0, 0.2363, 0, 0, 0), (0, 0, 0, HALF_PI, 0, 0), (-0.862, 0, 0, 0, 0, 0),
             (-0.7287, 0, 0.201, 0, 0, 0), (0, -0.1593, -3.267297616249225e-11, HALF_PI, 0, 0),
             (0, 0.1543, -3.1647459019915597e-11, *WRIST_3_RPY)),
    "ur30": ((0, 0, 0.2363, 0, 0, 0), (0, 0, 0, HALF_PI, 0, 0), (-0.637, 0, 0, 0, 0, 0),
             (-0.5037, 0, 0.201, 0, 0, 0), (0, -0.1593, -3.267297616249225e-11, HALF_PI, 0, 0),
             (0, 0.1543, -3.1647459019915597e-11, *WRIST_3_RPY)),
}
TYPES = tuple(YAML_KINEMATICS)


def _origin(x, y, z, roll, pitch, yaw) -> np.ndarray:
    """A URDF <origin> as (4, 4): R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    T = np.eye(4)
    T[:3, :3] = [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                 [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                 [-sp, cp * sr, cp * cr]]
    T[:3, 3] = (x, y, z)
    return T


def _yaml_chain(ur_type: str, q: np.ndarray) -> dict[str, np.ndarray]:
    """base_link_T_<frame> for base, wrist_3_link, flange and tool0, the way ur_macro.xacro chains them."""
    T = _origin(0, 0, 0, 0, 0, math.pi)                                   # base_link -> base_link_inertia
    for origin, angle in zip(YAML_KINEMATICS[ur_type], q):
        T = T @ _origin(*origin) @ _origin(0, 0, 0, 0, 0, angle)         # joint origin, then rotation about z
    flange = T @ _origin(0, 0, 0, 0, -math.pi / 2, -math.pi / 2)
    return {"base": _origin(0, 0, 0, 0, 0, math.pi), "wrist_3_link": T, "flange": flange,
            "tool0": flange @ _origin(0, 0, 0, math.pi / 2, 0, math.pi / 2)}


@pytest.fixture(scope="module", params=TYPES)
def ur(request):
    return RobotModel.from_name(request.param)


def test_the_generated_file_is_what_the_generator_writes():
    assert ur_eseries.GENERATED_MODULE.read_text() == ur_eseries.generated_module(), \
        "regenerate: python -m robokin_ros.core.classroom.ur_eseries"


def test_fk_matches_the_default_kinematics_chain_to_a_nanometre(ur):
    rng = np.random.default_rng(23)
    assert (ur.base_frame, ur.tip_frame) == ("base_link", "tool0")
    for q in [np.zeros(6), ur.home()] + [rng.uniform(-math.pi, math.pi, 6) for _ in range(8)]:
        expected = _yaml_chain(ur.name, q)
        for frame in ("tool0", "flange", "base"):
            got = ur.fk(q, frame).homogeneous
            assert np.abs(got[:3, 3] - expected[frame][:3, 3]).max() < 1e-9, (ur.name, frame, q)
            assert np.abs(got[:3, :3] - expected[frame][:3, :3]).max() < 1e-9, (ur.name, frame, q)


def test_base_is_base_link_turned_by_a_half_turn_yaw(ur):
    base = ur.fk(ur.home(), "base")
    np.testing.assert_allclose(base.rotation, np.diag([-1.0, -1.0, 1.0]), atol=1e-15)
    np.testing.assert_allclose(base.translation, 0.0, atol=1e-15)


def test_names_and_limits_are_ur_descriptions(ur):
    assert ur.joint_names == ur_eseries.JOINT_NAMES
    assert {"base_link", "base", "tool0", "flange"} <= set(ur.frame_names)
    limits = ur_eseries.LIMITS[ur.name]
    np.testing.assert_allclose(ur.limits.velocity, np.radians(limits.velocity_deg))
    np.testing.assert_allclose(ur.limits.effort, limits.effort)
    np.testing.assert_allclose(ur.limits.upper[:5], [2 * math.pi, 2 * math.pi, math.pi, 2 * math.pi, 2 * math.pi])
    np.testing.assert_array_equal(ur.limits.lower, -ur.limits.upper)
    assert ur.limits.upper[5] == (math.inf if ur.name == "ur3e" else 2 * math.pi)


def test_closed_form_ik_solves_the_new_models(ur):
    q = np.array([0.3, -1.2, 1.4, -0.5, 1.1, 0.4])
    result = UrGeometry.from_robot(ur).solve(ur.fk(q), seed=q)
    assert len(result.solutions) == 8
    np.testing.assert_allclose(result.solutions[0].positions, q, atol=1e-9)
    assert max(s.fk_error for s in result.solutions) < 1e-9


def test_built_in_robots_need_no_installed_description():
    assert urdf_candidates("ur5e") == [BUILT_IN_PLACE]
    assert embedded_robot("ur5e").urdf is None and '<robot name="ur5e">' in embedded_robot("ur5e").xml


def test_the_cb3_names_are_kept_and_only_the_short_ones_carry_a_note():
    q = np.array([0.1, -1.0, 1.2, -0.4, 0.9, 0.2])
    for short in ("ur3", "ur5", "ur10"):
        alias, named = RobotModel.from_name(short), RobotModel.from_name(f"{short}_cb3_ros1")
        np.testing.assert_array_equal(alias.fk(q).homogeneous, named.fk(q).homogeneous)
        assert "ROS 1 frames" in EMBEDDED_ROBOTS[short].note and f"{short}e" in EMBEDDED_ROBOTS[short].note
        assert EMBEDDED_ROBOTS[f"{short}_cb3_ros1"].note == ""
    # the CB3 model's base_link is the DH base frame: the e-series' `base`, not its base_link
    ur5 = RobotModel.from_name("ur5")
    assert np.abs(ur5.fk(np.zeros(6)).translation[0] - 0.81725) < 1e-9


def _ur_description() -> Path | None:
    given = os.environ.get("ROBOKIN_UR_DESCRIPTION")
    if given:
        return Path(given)
    return ament_share_dir("ur_description")


@pytest.mark.skipif(_ur_description() is None, reason="no ur_description: set ROBOKIN_UR_DESCRIPTION=<checkout> "
                                                      "or source a ROS install that has it")
@pytest.mark.parametrize("ur_type", TYPES)
def test_tool0_matches_the_real_ur_description_xacro(ur_type, tmp_path, monkeypatch):
    """ur.urdf.xacro needs only ur_description's urdf/ and config/ files: `$(find ur_description)` is served by a
    throw-away ament prefix pointing at the folder given."""
    share = _ur_description()
    prefix = tmp_path / "prefix"
    (prefix / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / "ur_description").write_text("")
    (prefix / "share" / "ur_description").symlink_to(share.resolve())
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    xml = expand_xacro(share / "urdf" / "ur.urdf.xacro", f"ur_type:={ur_type} name:=ur")
    real = RobotModel.from_urdf_string(xml, "base_link", "tool0")
    ours = RobotModel.from_name(ur_type)
    assert real.joint_names == ours.joint_names
    for field in ("lower", "upper", "velocity", "effort"):
        np.testing.assert_allclose(getattr(ours.limits, field), getattr(real.limits, field), rtol=1e-12)
    rng = np.random.default_rng(5)
    for q in [np.zeros(6)] + [rng.uniform(-math.pi, math.pi, 6) for _ in range(5)]:
        for frame in ("tool0", "flange", "base"):
            assert np.abs(ours.fk(q, frame).homogeneous - real.fk(q, frame).homogeneous).max() < 1e-9, (frame, q)
