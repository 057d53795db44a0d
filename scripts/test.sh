#!/usr/bin/env bash
# The README's test command: builds .venv/ if needed (scripts/setup.sh), then runs the whole test suite.
# Extra arguments go to pytest (e.g. -k servo, -x).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/browser.sh"
source "$ROOT/scripts/ros_env.sh"
cd "$ROOT"
echo "[test] ROS_DOMAIN_ID=$ROS_DOMAIN_ID"
exec "$ROOT/.venv/bin/python" -m pytest test "$@"
