#!/usr/bin/env bash
# The README's demo command: builds .venv/ if needed (scripts/setup.sh), then runs the simulated Panda driven by
# a Cartesian path goal and twist commands. Extra arguments go to robokin_demo (see --help).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
source "$ROOT/scripts/ros_env.sh"
cd "$ROOT"
exec "$ROOT/.venv/bin/robokin_demo" "$@"
