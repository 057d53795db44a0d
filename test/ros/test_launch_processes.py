"""What the launch files rely on, checked on the real executables: node names under launch's `name=` remap and
the generic parameter files the launch files fall back to (test/test_launch_files.py checks the files choose them).

launch's `Node(name="x")` passes `--ros-args -r __node:=x`, a global remap: it applies to every node the process
creates. Nodes run as subprocesses; a probe node in the test process reads the ROS graph.
"""
import pytest
from rclpy.node import Node
from ros_helpers import spin_until

from robokin_ros.core.embedded import example_robot_data_dir

CONFIG = "config"


def _names(node: Node) -> list[str]:
    return [f"{ns.rstrip('/')}/{name}" for name, ns in node.get_node_names_and_namespaces()]


def test_side_node_keeps_its_own_name_under_a_node_remap(launch, probe):
    """path_ik_node serves /joint_states from a side node named <node>_joint_states; under `-r __node:=` the two
    must stay distinct (before the fix both were called /my_path_ik)."""
    node, executor = probe
    path_ik = launch("path_ik_node", "--ros-args", "--params-file", f"{CONFIG}/panda_path_ik.yaml",
                     "-r", "__node:=my_path_ik")
    expected = {"/my_path_ik", "/my_path_ik_joint_states"}
    seen = spin_until(executor, lambda: expected <= set(_names(node)), timeout_s=60.0)
    names = _names(node)
    assert seen, f"graph has {names}; log:\n{path_ik.output[-2000:]}"
    assert names.count("/my_path_ik") == 1 and names.count("/my_path_ik_joint_states") == 1, names
    assert "/path_ik_node" not in names and "/path_ik_node_joint_states" not in names, names


@pytest.mark.parametrize("executable, params_file, robot_args, ready", [
    ("servo_node", "generic_servo.yaml", ["-p", "robot:=ur10"], ("topic", "/servo_node/status")),
    ("path_ik_node", "generic_path_ik.yaml", ["-p", "robot:={ur5_urdf}", "-p", "base_frame:=base_link",
                                              "-p", "tip_frame:=tool0"],
     ("service", "/path_ik_node/execute_cartesian_path/_action/send_goal")),
])
def test_generic_parameters_start_the_node_for_any_robot(launch, probe, executable, params_file, robot_args, ready):
    """The fallback a launch file picks for a robot without its own file (ur10) or a URDF path works: the node
    gets past parameter validation and robot loading, to where it creates its interfaces."""
    node, executor = probe
    ur5_urdf = example_robot_data_dir() / "ur_description" / "urdf" / "ur5_robot.urdf"
    args = [a.format(ur5_urdf=ur5_urdf) for a in robot_args]
    process = launch(executable, "--ros-args", "--params-file", f"{CONFIG}/{params_file}", *args)
    kind, name = ready

    def up() -> bool:
        if kind == "topic":
            return node.count_publishers(name) > 0
        return name in {service for service, _ in node.get_service_names_and_types()}

    assert spin_until(executor, lambda: up() or process.popen.poll() is not None, timeout_s=60.0)
    assert process.popen.poll() is None and up(), f"{executable} did not come up; log:\n{process.output[-3000:]}"


def test_demo_attach_creates_its_output_folder(tmp_path, monkeypatch):
    """demo.launch.py runs `robokin_demo --attach`, which starts no node graph: the output folder for the plot and
    recording must be created all the same (the run itself is replaced here; the nodes are not started)."""
    from robokin_ros.demo import main as demo_main

    out = tmp_path / "nested" / "demo"
    seen = []
    monkeypatch.setattr(demo_main, "_run", lambda *args: seen.append(args[-1].is_dir()) or 0)
    assert demo_main.main(["--attach", "--out", str(out)]) == 0
    assert seen == [True] and out.is_dir()
