#!/usr/bin/env bash
# The README's demo command: builds .venv/ if needed (scripts/setup.sh), then runs the simulated Panda driven by
# twist commands and a Cartesian path goal. Extra arguments go to robokin_demo (see --help).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 1 ))}
export MPLBACKEND=Agg
cd "$ROOT"
exec "$ROOT/.venv/bin/robokin_demo" "$@"
