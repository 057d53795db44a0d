#!/usr/bin/env bash
# The README's test command: builds .venv/ if needed (scripts/setup.sh), then runs the whole test suite.
# Extra arguments go to pytest (e.g. -k servo, -x).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
# DDS discovery stays on loopback; a per-run domain keeps parallel runs on one machine apart.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 1 ))}
export MPLBACKEND=Agg
cd "$ROOT"
echo "[test] ROS_DOMAIN_ID=$ROS_DOMAIN_ID"
exec "$ROOT/.venv/bin/python" -m pytest robokin_ros/test "$@"
