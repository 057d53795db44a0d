# Sourced by setup.sh, test.sh, demo.sh and studio.sh: which ROS 2 distro the venv holds, and where the venv is.
#
# The distro comes from `--distro NAME` among the script's arguments, else from ROBOKIN_ROS_DISTRO, else jazzy
# (the LTS most MoveIt and ros2_control users run; Kilted ends on 2026-12-31). The venv is ROBOKIN_VENV, else
# .venv in the repository; it holds one distro and records it in .robokin-distro, and setup.sh rebuilds it when
# another distro is asked for, so the two sets of wheels never mix.
#
# After `take_distro_args "$@"`: ROBOKIN_ROS_DISTRO and VENV are set and exported, DISTRO_GIVEN is 1 when the
# arguments named the distro (else 0), and ARGS holds the other arguments, in order.
ROBOKIN_DISTROS=(jazzy kilted)
ROBOKIN_DEFAULT_DISTRO=jazzy

take_distro_args() {
  ARGS=()
  DISTRO_GIVEN=0
  local distro=${ROBOKIN_ROS_DISTRO:-$ROBOKIN_DEFAULT_DISTRO}
  while [ $# -gt 0 ]; do
    case "$1" in
      --distro) [ $# -ge 2 ] || { echo "--distro needs a value: ${ROBOKIN_DISTROS[*]}" >&2; exit 2; }
                distro=$2; DISTRO_GIVEN=1; shift 2 ;;
      --distro=*) distro=${1#--distro=}; DISTRO_GIVEN=1; shift ;;
      *) ARGS+=("$1"); shift ;;
    esac
  done
  check_distro "$distro"
  export ROBOKIN_ROS_DISTRO=$distro
  export VENV=${ROBOKIN_VENV:-$ROOT/.venv}
}

check_distro() {
  local known
  for known in "${ROBOKIN_DISTROS[@]}"; do [ "$1" = "$known" ] && return 0; done
  echo "unknown ROS 2 distro '$1' (from --distro or ROBOKIN_ROS_DISTRO); choose one of: ${ROBOKIN_DISTROS[*]}" >&2
  exit 2
}

# Remove $VENV when it holds another distro than $1, or one it did not record (made before distros were
# recorded), so that the two sets of wheels never mix; setup.sh then builds it afresh.
drop_venv_of_other_distro() {
  local wanted=$1 held
  [ -e "$VENV" ] || return 0
  held=$(cat "$VENV/.robokin-distro" 2>/dev/null || echo "an unrecorded distro")
  [ "$held" = "$wanted" ] && return 0
  if [ ! -f "$VENV/pyvenv.cfg" ]; then
    echo "[setup] $VENV exists and is not a venv; move it away or set ROBOKIN_VENV" >&2
    exit 1
  fi
  echo "[setup] $VENV holds ROS 2 $held; rebuilding it for $wanted (one distro per venv)"
  rm -rf "$VENV"
}
