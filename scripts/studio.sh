#!/usr/bin/env bash
# robokin studio in one command: builds the venv if needed (scripts/setup.sh), then serves the studio on a local
# port (default http://127.0.0.1:8080). Usage: scripts/studio.sh [--distro jazzy|kilted] [robokin_studio arguments:
# --robot ur5, --port 8090, --ros, --help]; the distro matters for --ros only (scripts/distro.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/distro.sh"
take_distro_args "$@"
bash "$ROOT/scripts/setup.sh" --distro "$ROBOKIN_ROS_DISTRO"
source "$ROOT/scripts/ros_env.sh"
exec "$VENV/bin/robokin_studio" "${ARGS[@]}"
