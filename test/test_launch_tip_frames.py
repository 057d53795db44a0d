"""The simulated arm a launch starts beside a node simulates the same tips' joints (issue 26): tip_frames set in the
node's parameter file reaches sim_robot, as robot, base_frame and tip_frame do; an empty list is left unset."""
from robokin_ros.launch_support import Parameters, sim_parameters

TIPS = ["left_panda_hand_tcp", "right_panda_hand_tcp"]


def _value(name: str) -> str:
    return {"robot": "dual_panda"}.get(name, "")


def _arm(tmp_path, tip_frames) -> Parameters:
    text = f"/**:\n  ros__parameters:\n    robot: dual_panda\n    tip_frames: {tip_frames}\n"
    (tmp_path / "arm.yaml").write_text(text)
    return Parameters("servo", [str(tmp_path / "arm.yaml")], "/servo_node")


def test_tip_frames_of_the_arm_node_reach_the_sim(tmp_path):
    sim = sim_parameters(_value, "servo", _arm(tmp_path, f"[{TIPS[1]}]"))
    assert sim.overrides["tip_frames"] == [TIPS[1]] and sim.overrides["robot"] == "dual_panda"


def test_an_empty_tip_frames_is_not_passed_on(tmp_path):
    sim = sim_parameters(_value, "servo", _arm(tmp_path, "[]"))
    assert "tip_frames" not in sim.overrides and sim.overrides["robot"] == "dual_panda"
