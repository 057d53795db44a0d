"""Style gate: flake8 over the package, its tests, examples and benchmarks (config in setup.cfg).

A ROS 2 CI runs ament_flake8 with the same setup.cfg; here flake8 itself is a test requirement."""
import subprocess
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def test_flake8_is_clean():
    targets = [PACKAGE_DIR / "robokin_ros", PACKAGE_DIR / "test", PACKAGE_DIR / "examples",
               PACKAGE_DIR / "launch", PACKAGE_DIR / "setup.py", PACKAGE_DIR / "bench"]
    result = subprocess.run([sys.executable, "-m", "flake8", "--config", str(PACKAGE_DIR / "setup.cfg"),
                             *map(str, targets)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"flake8 found problems:\n{result.stdout}{result.stderr}"
