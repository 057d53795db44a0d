#!/usr/bin/env bash
# The README's demo command: builds the venv if needed (scripts/setup.sh), then runs the simulated Panda driven by
# a Cartesian path goal, a motion program and the servo's inputs.
# Usage: scripts/demo.sh [--distro jazzy|kilted] [robokin_demo arguments, see --help]; the distro defaults to
# ROBOKIN_ROS_DISTRO, else jazzy (scripts/distro.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/distro.sh"
take_distro_args "$@"
bash "$ROOT/scripts/setup.sh" --distro "$ROBOKIN_ROS_DISTRO"
source "$ROOT/scripts/ros_env.sh"
cd "$ROOT"
exec "$VENV/bin/robokin_demo" "${ARGS[@]}"
