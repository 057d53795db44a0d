"""The core's tests live in folders that mirror robokin_ros/core/; their shared modules (panda_paths.py, servo_arm.py,
capability_arms.py) stay here, one import path for every folder below (pytest puts only a test's own folder on
sys.path)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
