"""ament_python package: `ros2 run robokin_ros <node>` finds the console scripts under lib/robokin_ros.

The repository root is this package. Only what users need is installed: the Python package, launch files,
configs and the example waypoint files (share/robokin_ros/examples); tests, benchmarks and scripts stay in the
source tree. At run time robokin_ros.share_files finds these files and the executables through the ament index first.
"""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robokin_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.rviz")),
        (f"share/{PACKAGE}/examples", glob("examples/paths/*.yaml") + glob("examples/paths/*.csv")),
        (f"share/{PACKAGE}/examples/programs", glob("examples/programs/*.yaml")),
        (f"share/{PACKAGE}/examples/dh", glob("examples/dh/*.yaml")),
    ],
    install_requires=["setuptools"],
    # colcon test runs pytest (not unittest) when the package names pytest as its test extra; tests_require is
    # left out: setuptools no longer reads it
    extras_require={"test": ["pytest"]},
    zip_safe=True,
    maintainer="robokin_ros developers",
    maintainer_email="robokin@example.com",
    description="Real-time velocity IK (twist servo) and Cartesian path IK on Pinocchio.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "servo_node = robokin_ros.nodes.servo_node:main",
            "sim_robot = robokin_ros.nodes.sim_robot:main",
            "path_ik_node = robokin_ros.nodes.path_ik_node:main",
            "capability_node = robokin_ros.nodes.capability_node:main",
            "robokin_demo = robokin_ros.demo.main:main",
            "plan_path = robokin_ros.tools.plan_path:main",
            "capability_view = robokin_ros.tools.capability_view:main",
            "robokin = robokin_ros.tools.robokin_cli:main",
            "robokin_studio = robokin_ros.studio.main:main",
        ],
    },
)
