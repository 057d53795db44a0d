"""Embedded robots are found through the ament index first, the example-robot-data wheel second.

A fake ament prefix (tmp dir with the resource-index marker and the files) stands in for an installed
moveit_resources_panda_description; its URDF is the wheel's Panda without the TCP link, so the frame robokin adds
can be checked against the wheel's own `panda_hand_tcp`.
"""
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from robokin_ros.core.embedded import EMBEDDED_ROBOTS, embedded_robot, urdf_candidates
from robokin_ros.core.errors import ModelError
from robokin_ros.core.robot import RobotModel

PANDA_PACKAGE = "moveit_resources_panda_description"


def _wheel_panda_urdf() -> Path:
    from robokin_ros.core.embedded import example_robot_data_dir
    return example_robot_data_dir() / EMBEDDED_ROBOTS["panda"].urdf


def _fake_prefix(root: Path, package: str, files: dict[str, str], register: bool = True) -> Path:
    for relative, text in files.items():
        path = root / "share" / package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if register:
        marker = root / "share" / "ament_index" / "resource_index" / "packages" / package
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("")
    return root


def _panda_without_tcp() -> str:
    text = _wheel_panda_urdf().read_text()
    text = re.sub(r'<link name="panda_hand_tcp">.*?</link>', "", text, flags=re.S)
    text = re.sub(r'<joint name="panda_hand_tcp_joint".*?</joint>', "", text, flags=re.S)
    assert "panda_hand_tcp" not in text
    return text


@pytest.fixture
def ament_panda(tmp_path, monkeypatch):
    """An empty prefix, then one that registers the Panda description package."""
    empty = tmp_path / "empty"
    (empty / "share").mkdir(parents=True)
    prefix = _fake_prefix(tmp_path / "prefix", PANDA_PACKAGE, {"urdf/panda.urdf": _panda_without_tcp()})
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(empty), str(prefix)]))
    return prefix / "share" / PANDA_PACKAGE / "urdf" / "panda.urdf"


def test_ament_description_wins_over_the_wheel(ament_panda):
    assert embedded_robot("panda").urdf == ament_panda
    assert urdf_candidates("panda")[0] == str(ament_panda)
    assert urdf_candidates("panda")[1:] and all("example-robot-data" in c for c in urdf_candidates("panda")[1:])


def test_added_tcp_frame_matches_the_wheels_tcp(ament_panda, monkeypatch):
    """The ament copy lacks panda_hand_tcp; the added frame sits where the wheel's URDF puts it."""
    from_ament = RobotModel.from_name("panda")
    monkeypatch.delenv("AMENT_PREFIX_PATH")
    from_wheel = RobotModel.from_name("panda")
    assert embedded_robot("panda").urdf == _wheel_panda_urdf()
    q = from_wheel.home()
    tcp_ament = from_ament.frame_pose(q, from_ament.frame_id("panda_hand_tcp"))
    tcp_wheel = from_wheel.frame_pose(q, from_wheel.frame_id("panda_hand_tcp"))
    np.testing.assert_allclose(tcp_ament.homogeneous, tcp_wheel.homogeneous, atol=1e-9)
    assert from_ament.tip_frame == from_wheel.tip_frame == "panda_hand_tcp"


def test_unregistered_share_folder_is_not_used(tmp_path, monkeypatch):
    """ament's rule: a package exists only where the resource-index marker does."""
    prefix = _fake_prefix(tmp_path, PANDA_PACKAGE, {"urdf/panda.urdf": _panda_without_tcp()}, register=False)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    assert embedded_robot("panda").urdf == _wheel_panda_urdf()


def test_ur_comes_from_the_wheel_even_with_ur_description_installed(tmp_path, monkeypatch):
    """ur_description ships xacro only: robokin does not expand xacro, so the UR5 stays the wheel's."""
    prefix = _fake_prefix(tmp_path, "ur_description", {"urdf/ur.urdf.xacro": "<robot/>"})
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    assert "example-robot-data" in str(embedded_robot("ur5").urdf)
    assert not any("ur_description/urdf/ur.urdf.xacro" in c for c in urdf_candidates("ur5"))


def test_nothing_installed_names_every_place_searched_in_order(tmp_path, monkeypatch):
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    monkeypatch.setattr(sys, "path", [str(tmp_path / "site")])
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    with pytest.raises(ModelError) as raised:
        embedded_robot("panda")
    message = str(raised.value)
    ament = message.index(PANDA_PACKAGE)
    wheel = message.index(str(tmp_path / "site" / "cmeel.prefix" / "share" / "example-robot-data"))
    prefix = message.index(str(tmp_path / "venv" / "share" / "example-robot-data"))
    assert ament < wheel < prefix, message
    assert "pip install example-robot-data" in message


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ModelError, match=r"no embedded robot named 'r2d2'; known: \[.*'panda'.*'ur5'"):
        urdf_candidates("r2d2")
