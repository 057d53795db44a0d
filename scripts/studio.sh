#!/usr/bin/env bash
# robokin studio in one command: builds .venv/ if needed (scripts/setup.sh), then serves the studio on a local port
# (default http://127.0.0.1:8080). Arguments go to robokin_studio (--robot ur5, --port 8090, --ros, --help).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
source "$ROOT/scripts/ros_env.sh"
exec "$ROOT/.venv/bin/robokin_studio" "$@"
