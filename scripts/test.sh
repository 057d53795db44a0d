#!/usr/bin/env bash
# The README's test command. Each leg builds its venv if needed (scripts/setup.sh), so this runs on a fresh clone.
#
#   bash scripts/test.sh                  both legs (what CI runs): the whole suite and the demo on the primary
#                                         distro (ROBOKIN_ROS_DISTRO, default jazzy) in .venv, then the second leg on
#                                         the other distro in .venv-<distro>: the tests that use ROS, and the demo
#   bash scripts/test.sh --distro kilted  one leg: the whole suite and the demo on that distro, in .venv
#   bash scripts/test.sh -k servo -x      other arguments go to pytest in every leg; with any, the demo is left out
#
# The second leg runs only what can differ between distros: every test that imports rclpy or a ROS interface
# (SECOND_LEG below; test/test_ci_legs.py checks that the list misses none) and the top-level tests. The core
# tests import no ROS and run once, in the first leg.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
source "$ROOT/scripts/distro.sh"
SECOND_LEG=(test/ros test/studio/test_live_ros.py test/test_*.py)

take_distro_args "$@"
PYTEST_ARGS=("${ARGS[@]}")
LEGS=("$ROBOKIN_ROS_DISTRO|$VENV|all")
if [ "$DISTRO_GIVEN" = 0 ]; then
  for other in "${ROBOKIN_DISTROS[@]}"; do
    [ "$other" = "$ROBOKIN_ROS_DISTRO" ] || LEGS+=("$other|$ROOT/.venv-$other|second")
  done
fi

bash "$ROOT/scripts/browser.sh" || exit 1
source "$ROOT/scripts/ros_env.sh"
echo "[test] ROS_DOMAIN_ID=$ROS_DOMAIN_ID"

# run_leg DISTRO VENV SCOPE: set-up, pytest (the whole suite, or the second leg's part), then the demo.
run_leg() {
  local distro=$1 venv=$2 scope=$3 code=0
  echo "[test] === ROS 2 $distro in $venv: $([ "$scope" = all ] && echo "the whole suite" || echo "${SECOND_LEG[*]}") ==="
  ROBOKIN_VENV=$venv bash "$ROOT/scripts/setup.sh" --distro "$distro" || return 1
  local paths=(test)
  [ "$scope" = all ] || paths=("${SECOND_LEG[@]}")
  "$venv/bin/python" -m pytest "${paths[@]}" "${PYTEST_ARGS[@]}" || code=$?
  [ "$code" = 5 ] && code=0          # the arguments selected no test in this leg
  if [ ${#PYTEST_ARGS[@]} -eq 0 ]; then
    echo "[test] the demo on ROS 2 $distro (report and plots in out/demo-$distro)"
    "$venv/bin/robokin_demo" --out "$ROOT/out/demo-$distro" || code=1
  fi
  return $code
}

summary=()
failed=0
for leg in "${LEGS[@]}"; do
  IFS='|' read -r distro venv scope <<< "$leg"
  started=$SECONDS
  if run_leg "$distro" "$venv" "$scope"; then verdict=passed; else verdict=FAILED; failed=1; fi
  summary+=("ROS 2 $distro ($scope): $verdict in $((SECONDS - started)) s")
done
printf '[test] %s\n' "${summary[@]}"
exit $failed
